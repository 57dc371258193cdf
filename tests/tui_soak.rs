//! Soak with the TUI attached (issue 7, item 5): `kexplore serve --no-demo --scenario` (six
//! nodes) as a process, the kexplore TUI in a private tmux server on serve's kubeconfig, on
//! view 5 with the pods list open (its watch keeps it current), while KEXPLORE_TUI_SOAK_CLIENTS
//! (default 200) mTLS clients, each on its own connection, create, update and delete pods for
//! KEXPLORE_TUI_SOAK_SECS (default 60). Checked:
//! - the TUI stays alive and its RSS stays under twice its value after warm-up (once the view
//!   holds the load's steady number of pods);
//! - the screen keeps changing (its event count grows during the load);
//! - `1` then `5` are answered within `KEY_BOUND` during the load;
//! - after the load its pod count equals the server's within `CONVERGE`;
//! - updates were coalesced (far fewer re-simulations than events, redraws bounded by frames);
//! - `q` exits 0 with the terminal restored.
//!
//! Prints `TUI-SOAK | ...` lines that docs/RELIABILITY.md (5b) quotes. Skipped where tmux is
//! not installed.

mod tmux_support;

mod apiserver_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kexplore::tui::sched::watch::COALESCE;
use serde_json::{Value, json};
use tmux_support::{Tmux, quit_and_check_restored, start_with, tmux_available};

/// A key must be answered within this, even on a loaded 2-core machine.
const KEY_BOUND: Duration = Duration::from_secs(10);
/// After the load, the TUI's pod count must equal the server's within this.
const CONVERGE: Duration = Duration::from_secs(20);
/// Pods each client keeps at most.
const LIVE_PER_CLIENT: usize = 2;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Six nodes with room for everything the clients create.
fn nodes_yaml() -> String {
    (1..=6)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: soak-{i}\n  labels:\n    kubernetes.io/hostname: soak-{i}\nstatus:\n  allocatable: {{cpu: \"64\", memory: 256Gi, pods: \"500\"}}\n  capacity: {{cpu: \"64\", memory: 256Gi, pods: \"500\"}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

struct Serve {
    child: Child,
    port: u16,
    pki: PathBuf,
    kubeconfig: PathBuf,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        let scenario = dir.join("nodes.yaml");
        std::fs::write(&scenario, nodes_yaml()).expect("scenario");
        let pki = dir.join("pki");
        let kubeconfig = dir.join("kubeconfig");
        let mut command = Command::new(env!("CARGO_BIN_EXE_kexplore"));
        command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--no-demo",
                "--scenario",
            ])
            .arg(&scenario)
            .arg("--pki-dir")
            .arg(&pki)
            .arg("--kubeconfig-out")
            .arg(&kubeconfig)
            .stderr(Stdio::null());
        let (child, _, port) =
            apiserver_support::spawn_listening(&mut command, Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("{e}"));
        Serve {
            child,
            port,
            pki,
            kubeconfig,
        }
    }

    /// A client of its own (its own connection), every request bounded at 30 s.
    fn client(&self) -> reqwest::Client {
        let read = |f: &str| std::fs::read_to_string(self.pki.join(f)).expect("pki");
        let identity = format!("{}{}", read("admin.crt"), read("admin.key"));
        reqwest::Client::builder()
            .tls_certs_only(
                reqwest::Certificate::from_pem_bundle(read("ca.crt").as_bytes()).expect("ca"),
            )
            .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("identity"))
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client")
    }

    fn base(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rss_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// One client: create a pod, label it, delete the oldest beyond `LIVE_PER_CLIENT`, until stopped.
async fn client_loop(c: reqwest::Client, base: String, id: usize, stop: Arc<AtomicBool>) -> u64 {
    let pods = format!("{base}/api/v1/namespaces/default/pods");
    let mut live: Vec<String> = Vec::new();
    let mut ops = 0;
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let name = format!("t{id}-{n}");
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"gen": "0"}},
            "spec": {"containers": [{"name": "a", "image": "b",
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}});
        if matches!(c.post(&pods).json(&pod).send().await, Ok(r) if r.status().as_u16() == 201) {
            ops += 1;
            live.push(name.clone());
        }
        let url = format!("{pods}/{name}");
        if let Ok(r) = c.get(&url).send().await
            && let Ok(mut v) = r.json::<Value>().await
            && v["metadata"]["name"] == json!(name)
        {
            v["metadata"]["labels"]["gen"] = json!("1");
            // A 409 when the scheduler bound it meanwhile is part of the load, not a failure.
            if c.put(&url).json(&v).send().await.is_ok() {
                ops += 1;
            }
        }
        while live.len() > LIVE_PER_CLIENT {
            let old = live.remove(0);
            if c.delete(format!("{pods}/{old}")).send().await.is_ok() {
                ops += 1;
            }
        }
    }
    ops
}

/// How many pods the server holds, cluster-wide (what the TUI's status line counts).
fn server_pods(serve: &Serve, rt: &tokio::runtime::Runtime) -> Option<usize> {
    let c = serve.client();
    let url = format!("{}/api/v1/pods", serve.base());
    rt.block_on(async {
        let v: Value = c.get(&url).send().await.ok()?.json().await.ok()?;
        Some(v["items"].as_array()?.len())
    })
}

/// The watch line's numbers: (pods, events).
fn status_numbers(screen: &str) -> Option<(usize, u64)> {
    let line = screen.lines().find(|l| l.contains(" live · "))?;
    let num_before = |what: &str| -> Option<u64> {
        let i = line.find(what)?;
        line[..i].split_whitespace().last()?.parse().ok()
    };
    Some((num_before(" pods ·")? as usize, num_before(" events ·")?))
}

/// Presses `key` and returns how long until `pred` holds for the screen.
fn answer_time(tmux: &Tmux, key: &str, what: &str, pred: impl Fn(&str) -> bool) -> Duration {
    let t = Instant::now();
    tmux.keys(&[key]);
    loop {
        let s = tmux.screen();
        if pred(&s) {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < KEY_BOUND,
            "{what}: no answer to {key} within {KEY_BOUND:?}:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tui_keeps_up_with_mtls_clients_writing_pods() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the TUI soak");
        return;
    }
    let secs = env_or("KEXPLORE_TUI_SOAK_SECS", 60);
    let clients = env_or("KEXPLORE_TUI_SOAK_CLIENTS", 200) as usize;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::start(dir.path());
    let stats = dir.path().join("stats.json");
    let tui_started = Instant::now();
    let tmux = start_with(
        "soak",
        dir.path(),
        &format!("--kubeconfig '{}'", serve.kubeconfig.display()),
        (120, 40),
        &format!("KEXPLORE_TUI_STATS='{}'", stats.display()),
    );
    // serve's admin is in system:masters: view 1 shows that warning as the context's verdict.
    tmux.wait_all(
        "view 1",
        &["Contexts (", "resolves; auth client-certificate"],
    );
    tmux.keys(&["5"]);
    tmux.wait_all("view 5 watching", &[" live · watching", "6 nodes"]);
    tmux.keys(&["w"]);
    tmux.wait_all("the pods list", &["Pods: ", "Enter simulates"]);
    let pid = tmux.kexplore_pid().expect("the TUI's pid");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|id| {
            let (c, base, stop, ops) = (serve.client(), serve.base(), stop.clone(), ops.clone());
            rt.spawn(async move {
                let n = client_loop(c, base, id, stop).await;
                ops.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();

    // Warm-up: until the view holds the load's steady number of pods (every client at its
    // `LIVE_PER_CLIENT`; memory follows the objects held) and at least a sixth of the run, at
    // most half of it; then RSS is sampled every second.
    let end = started + Duration::from_secs(secs);
    let steady = clients * LIVE_PER_CLIENT;
    loop {
        let elapsed = started.elapsed();
        let held = status_numbers(&tmux.screen()).map_or(0, |(p, _)| p);
        if elapsed >= Duration::from_secs(secs / 2)
            || (held >= steady && elapsed >= Duration::from_secs((secs / 6).max(5)))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let warm = started.elapsed();
    let rss_warm = rss_kib(pid).expect("the TUI is alive after warm-up");
    let (held_warm, events_warm) = status_numbers(&tmux.screen()).unwrap_or((0, 0));
    let mut rss_max = rss_warm;
    // The view holds every pod, so its memory follows their number: when the writers' deletes
    // lag and more pods are live than at warm-up, the bound grows with them.
    let mut held_max = held_warm;
    let mut latencies = Vec::new();
    let mut events_mid = events_warm;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_secs(1));
        let rss = rss_kib(pid).expect("the TUI stays alive during the load");
        rss_max = rss_max.max(rss);
        if let Some((held, _)) = status_numbers(&tmux.screen()) {
            held_max = held_max.max(held);
        }
        if latencies.is_empty() && started.elapsed() > Duration::from_secs(secs / 2) {
            if let Some((_, e)) = status_numbers(&tmux.screen()) {
                events_mid = e;
            }
            latencies.push(answer_time(&tmux, "1", "view 1", |s| {
                s.contains("Contexts (") && !s.contains(" live · ")
            }));
            latencies.push(answer_time(&tmux, "5", "view 5", |s| {
                s.contains(" live · ") && s.contains("Pods: ")
            }));
        }
    }
    stop.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for h in handles {
            let _ = h.await;
        }
    });
    let load_secs = started.elapsed().as_secs_f64();
    let screen = tmux.screen();
    let (_, events_end) = status_numbers(&screen).expect("the watch line");
    assert!(
        events_end > events_warm && events_mid > events_warm,
        "the screen follows the load: events {events_warm} → {events_mid} → {events_end}\n{screen}"
    );

    // The pod count follows the server's (deletions may still be finishing: poll both).
    let t = Instant::now();
    let (mut want, mut shown) = (None, None);
    // When the server's own count last moved (pods deleted under load finish terminating).
    let mut settled = Duration::ZERO;
    while t.elapsed() < CONVERGE {
        let now = server_pods(&serve, &rt);
        if now != want {
            settled = t.elapsed();
        }
        want = now;
        shown = status_numbers(&tmux.screen()).map(|(p, _)| p);
        if want.is_some() && want == shown {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let converge = t.elapsed();
    assert!(
        want.is_some() && want == shown,
        "after the load the TUI shows {shown:?} pods, the server holds {want:?}:\n{}",
        tmux.screen()
    );
    let rss_end = rss_kib(pid).expect("alive after the load");
    quit_and_check_restored(&tmux);

    let s: Value = std::fs::read_to_string(&stats)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .expect("the TUI wrote its stats on exit");
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    let ops = ops.load(Ordering::Relaxed);
    println!(
        "TUI-SOAK | clients {clients} | load {load_secs:.1} s | {ops} acknowledged writes ({:.0}/s)",
        ops as f64 / load_secs
    );
    println!(
        "TUI-SOAK | RSS after warm-up ({:.0} s) {rss_warm} KiB | max {rss_max} KiB ({:.2}×) | end {rss_end} KiB",
        warm.as_secs_f64(),
        rss_max as f64 / rss_warm as f64
    );
    println!(
        "TUI-SOAK | watch events {} | updates applied {} | re-simulations {} | redraws {} | messages {} | largest batch {}",
        n("watch_events"),
        n("live_updates_applied"),
        n("resimulations"),
        n("redraws"),
        n("messages"),
        n("largest_batch")
    );
    println!(
        "TUI-SOAK | key latency: 1 → view 1 {:?}, 5 → view 5 {:?} | pod count equal {converge:?} after the load, the server's settled after {settled:?} ({} pods)",
        latencies.first(),
        latencies.get(1),
        want.unwrap_or(0)
    );
    assert_eq!(latencies.len(), 2, "the keys were pressed during the load");
    let growth = (held_max as f64 / held_warm.max(1) as f64).max(1.0);
    let rss_bound = (2.0 * rss_warm as f64 * growth) as u64;
    println!(
        "TUI-SOAK | pods held: {held_warm} after warm-up, {held_max} at most → RSS bound {rss_bound} KiB"
    );
    assert!(
        rss_max < rss_bound,
        "RSS grew from {rss_warm} KiB to {rss_max} KiB (bound {rss_bound} KiB: twice, times the growth of pods held {held_warm} → {held_max})"
    );
    // Coalesced: re-simulations bounded by the publisher's period (at most one update per
    // COALESCE), whatever the event rate; redraws by the frame interval (plus the tests' own
    // keys).
    let run_secs = tui_started.elapsed().as_secs_f64();
    let resim_bound = (run_secs / COALESCE.as_secs_f64()) as u64 + 20;
    assert!(
        n("resimulations") <= resim_bound,
        "{} re-simulations in {run_secs:.0} s",
        n("resimulations")
    );
    assert!(
        n("watch_events") > n("resimulations"),
        "events were coalesced: {} events, {} re-simulations",
        n("watch_events"),
        n("resimulations")
    );
    let redraw_bound = (run_secs / 0.033) as u64 + 50;
    assert!(n("redraws") <= redraw_bound, "{} redraws", n("redraws"));
}

//! A live cluster at scale, every process its own: `cargo bench --bench live_cluster` (release)
//! generates `scenario generate --nodes N --pods-per-node P` (5,000 × 30 unless
//! KEXPLORE_LIVE_NODES / KEXPLORE_LIVE_PODS_PER_NODE say otherwise), starts `kexplore serve
//! --scenario` on it, and measures what a user waits for: serve's ready time and memory; the
//! whole pods list and the same list page by page; the TUI in a private tmux server on serve's
//! kubeconfig (view 5 ready after `5`, the progress it showed, a key answered while it loads,
//! its peak memory, a created and a deleted pod on screen, a burst of creates, another pod
//! chosen in the pods list and placed); `kexplore schedule --kubeconfig`; and the peer in the
//! same run, `kubectl get pods -A -o json` and `kubectl get nodes -o json` to /dev/null. Wall time and peak RSS of one-shot commands come
//! from `/usr/bin/time -v`; of the long-running ones from /proc (VmHWM). Results go to stdout
//! as a Markdown table (docs/BENCHMARKS.md records a run made on a quiet machine).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "../tests/apiserver_support/mod.rs"]
mod apiserver_support;
#[path = "../tests/tmux_support/mod.rs"]
mod tmux_support;

use tmux_support::{Tmux, start_with, tmux_available};

/// Generous bounds: a measurement that does not finish is reported, never waited on forever.
const LOAD_BOUND: Duration = Duration::from_secs(600);
const EVENT_BOUND: Duration = Duration::from_secs(60);

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Serve {
    child: Child,
    pki: PathBuf,
    kubeconfig: PathBuf,
    port: u16,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// VmHWM (peak) and VmRSS of a live process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

/// A one-shot command's wall time and peak RSS, from `/usr/bin/time -v`; stdout to /dev/null.
fn timed(program: &Path, args: &[&str]) -> Result<(Duration, u64), String> {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("/usr/bin/time: {e}"))?;
    let wall = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{} failed: {}", program.display(), err.trim()));
    }
    let rss = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or("no maximum resident set size in /usr/bin/time's report")?;
    Ok((wall, rss))
}

fn start_serve(dir: &Path, scenario: &Path) -> Result<(Serve, Duration), String> {
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
        .arg(scenario)
        .arg("--pki-dir")
        .arg(&pki)
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .stderr(Stdio::null());
    let t = Instant::now();
    let (child, _, port) = apiserver_support::spawn_listening(&mut command, LOAD_BOUND)?;
    Ok((
        Serve {
            child,
            pki,
            kubeconfig,
            port,
        },
        t.elapsed(),
    ))
}

fn client(serve: &Serve) -> reqwest::Client {
    let read = |f: &str| std::fs::read_to_string(serve.pki.join(f)).unwrap_or_default();
    let identity = format!("{}{}", read("admin.crt"), read("admin.key"));
    reqwest::Client::builder()
        .tls_certs_only(
            reqwest::Certificate::from_pem_bundle(read("ca.crt").as_bytes()).expect("ca"),
        )
        .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("identity"))
        .timeout(Duration::from_secs(600))
        .build()
        .expect("client")
}

/// The whole pods list in one response, then page by page (limit=500): time and bytes.
async fn lists(c: &reqwest::Client, base: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let t = Instant::now();
    match c.get(format!("{base}/api/v1/pods")).send().await {
        Ok(r) => {
            let n = r.bytes().await.map_or(0, |b| b.len());
            out.push((
                "GET /api/v1/pods (whole list)".into(),
                format!("{:.2} s, {} MiB", t.elapsed().as_secs_f64(), n >> 20),
            ));
        }
        Err(e) => out.push((
            "GET /api/v1/pods (whole list)".into(),
            format!("failed: {e}"),
        )),
    }
    let t = Instant::now();
    let (mut pages, mut bytes, mut token) = (0, 0, String::new());
    loop {
        let url = format!("{base}/api/v1/pods?limit=500&continue={token}");
        let Ok(r) = c.get(url).send().await else {
            break;
        };
        let Ok(body) = r.bytes().await else { break };
        pages += 1;
        bytes += body.len();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        match v["metadata"]["continue"].as_str() {
            Some(t) if !t.is_empty() => token = t.to_string(),
            _ => break,
        }
    }
    out.push((
        "GET /api/v1/pods?limit=500 (every page)".into(),
        format!(
            "{:.2} s, {pages} pages, {} MiB",
            t.elapsed().as_secs_f64(),
            bytes >> 20
        ),
    ));
    out
}

/// `N nodes · P pods · E events` from view 5's watch line.
fn watch_numbers(screen: &str) -> Option<(u64, u64)> {
    let line = screen.lines().find(|l| l.contains(" live · "))?;
    let before = |what: &str| -> Option<u64> {
        let i = line.find(what)?;
        line[..i].split_whitespace().last()?.parse().ok()
    };
    Some((before(" pods ·")?, before(" events ·")?))
}

/// Polls the pane (every 10 ms) until `pred`; `None` past `bound`.
fn until(tmux: &Tmux, bound: Duration, pred: impl Fn(&str) -> bool) -> Option<Duration> {
    let t = Instant::now();
    while t.elapsed() < bound {
        if pred(&tmux.screen()) {
            return Some(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("did not happen".into(), |d| format!("{} ms", d.as_millis()))
}

async fn create(c: &reqwest::Client, base: &str, name: &str) -> bool {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "i",
            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}});
    let url = format!("{base}/api/v1/namespaces/default/pods");
    matches!(c.post(url).json(&pod).send().await, Ok(r) if r.status().as_u16() == 201)
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let nodes = env_or("KEXPLORE_LIVE_NODES", 5_000);
    let per_node = env_or("KEXPLORE_LIVE_PODS_PER_NODE", 30);
    let burst = env_or("KEXPLORE_LIVE_BURST", 1_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("big.yaml");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kexplore"));
    let yaml = Command::new(&bin)
        .args(["scenario", "generate", "--nodes", &nodes.to_string()])
        .args(["--pods-per-node", &per_node.to_string()])
        .output()
        .expect("scenario generate");
    std::fs::write(&scenario, &yaml.stdout).expect("big.yaml");
    let mut rows: Vec<(String, String)> = Vec::new();
    println!(
        "# live_cluster: {nodes} nodes, {} bound pods ({} MiB of YAML)\n",
        nodes * per_node,
        yaml.stdout.len() >> 20
    );

    let (serve, ready) = match start_serve(dir.path(), &scenario) {
        Ok(s) => s,
        Err(e) => {
            println!("serve did not start: {e}");
            return;
        }
    };
    let serve_pid = serve.child.id();
    let (peak, now) = memory_kib(serve_pid);
    rows.push((
        "serve --scenario: ready (listening)".into(),
        format!("{:.2} s", ready.as_secs_f64()),
    ));
    rows.push((
        "serve RSS when ready (peak / now)".into(),
        format!("{} / {}", mib(peak), mib(now)),
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let c = client(&serve);
    let base = format!("https://127.0.0.1:{}", serve.port);
    rows.extend(rt.block_on(lists(&c, &base)));

    // The peer, on the same server.
    let kubeconfig = serve.kubeconfig.display().to_string();
    for (what, args) in [
        ("pods", vec!["get", "pods", "-A", "-o", "json"]),
        ("nodes", vec!["get", "nodes", "-o", "json"]),
    ] {
        let mut full = vec!["--kubeconfig", kubeconfig.as_str()];
        full.extend(args.iter());
        let line = match timed(Path::new("kubectl"), &full) {
            Ok((wall, rss)) => format!("{:.2} s, {} peak", wall.as_secs_f64(), mib(rss)),
            Err(e) => e,
        };
        rows.push((format!("kubectl get {what} -o json > /dev/null"), line));
    }
    let line = match timed(&bin, &["schedule", "--kubeconfig", &kubeconfig]) {
        Ok((wall, rss)) => format!("{:.2} s, {} peak", wall.as_secs_f64(), mib(rss)),
        Err(e) => e,
    };
    rows.push((
        "kexplore schedule --kubeconfig (every pending pod)".into(),
        line,
    ));
    let (peak, now) = memory_kib(serve_pid);
    rows.push((
        "serve RSS after the lists (peak / now)".into(),
        format!("{} / {}", mib(peak), mib(now)),
    ));

    if tmux_available() {
        rows.extend(tui(&rt, &serve, &c, &base, dir.path(), burst));
    } else {
        rows.push(("TUI".into(), "not measured: tmux is not installed".into()));
    }
    let (peak, _) = memory_kib(serve_pid);
    rows.push(("serve peak RSS over the run".into(), mib(peak)));

    println!("| measurement | result |\n|---|---|");
    for (k, v) in rows {
        println!("| {k} | {v} |");
    }
}

/// The TUI on serve's kubeconfig, in a private tmux server.
fn tui(
    rt: &tokio::runtime::Runtime,
    serve: &Serve,
    c: &reqwest::Client,
    base: &str,
    dir: &Path,
    burst: usize,
) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let tmux = start_with(
        "live-bench",
        dir,
        &format!("--kubeconfig '{}'", serve.kubeconfig.display()),
        (140, 45),
        "",
    );
    if until(&tmux, LOAD_BOUND, |s| s.contains("Contexts (")).is_none() {
        rows.push(("TUI".into(), "view 1 never appeared".into()));
        return rows;
    }
    let pid = tmux.kexplore_pid();
    let t = Instant::now();
    tmux.keys(&["5"]);
    // The progress the user sees, and a key answered while it loads.
    let mut progress = None;
    let mut key = None;
    let mut ready = None;
    while t.elapsed() < LOAD_BOUND {
        let s = tmux.screen();
        if s.contains(" live · watching") {
            ready = Some(t.elapsed());
            break;
        }
        if progress.is_none()
            && let Some(l) = s
                .lines()
                .find(|l| l.contains(" pods ") && l.contains(" / "))
        {
            progress = Some(format!(
                "at {} ms: {}",
                t.elapsed().as_millis(),
                l.trim_matches(|c: char| c == '│' || c.is_whitespace())
            ));
            // `?` opens help over whatever is loading; `?` again closes it.
            let k = Instant::now();
            tmux.keys(&["?"]);
            key =
                until(&tmux, Duration::from_secs(10), |s| s.contains("Keys")).map(|_| k.elapsed());
            tmux.keys(&["?"]);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    rows.push(("TUI: view 5 ready after `5`".into(), ms(ready)));
    rows.push((
        "TUI: progress shown while loading".into(),
        progress.unwrap_or_else(|| "none seen (loaded before the first poll?)".into()),
    ));
    rows.push(("TUI: a key (`?`) answered while loading".into(), ms(key)));
    if ready.is_none() {
        return rows;
    }
    if let Some(pid) = pid {
        let (peak, now) = memory_kib(pid);
        rows.push((
            "TUI RSS after loading (peak / now)".into(),
            format!("{} / {}", mib(peak), mib(now)),
        ));
    }
    // One pod created, then deleted: from the request to the pods count on screen changing.
    let mut latencies = Vec::new();
    for i in 0..5 {
        let before = watch_numbers(&tmux.screen()).map_or(0, |(p, _)| p);
        let t = Instant::now();
        let name = format!("bench-{i}");
        if !rt.block_on(create(c, base, &name)) {
            rows.push(("TUI: watch latency".into(), "a create failed".into()));
            return rows;
        }
        let added = until(&tmux, EVENT_BOUND, |s| {
            watch_numbers(s).is_some_and(|(p, _)| p > before)
        })
        .map(|_| t.elapsed());
        let t = Instant::now();
        let url = format!("{base}/api/v1/namespaces/default/pods/{name}");
        let _ = rt.block_on(async { c.delete(url).send().await });
        let deleted = until(&tmux, EVENT_BOUND, |s| {
            watch_numbers(s).is_some_and(|(p, _)| p == before)
        })
        .map(|_| t.elapsed());
        latencies.push((added, deleted));
    }
    let fmt = |v: Vec<Option<Duration>>| {
        v.iter()
            .map(|d| d.map_or("—".into(), |d| d.as_millis().to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    rows.push((
        "TUI: pod created → on screen (ms, 5 runs)".into(),
        fmt(latencies.iter().map(|l| l.0).collect()),
    ));
    rows.push((
        "TUI: pod deleted → on screen (ms, 5 runs)".into(),
        fmt(latencies.iter().map(|l| l.1).collect()),
    ));
    // A burst: `burst` creates over one second from 50 clients, then how long until the view
    // holds them all.
    let before = watch_numbers(&tmux.screen()).map_or(0, |(p, _)| p);
    let t = Instant::now();
    let made = rt.block_on(async {
        let per = burst.div_ceil(50);
        let tasks: Vec<_> = (0..50)
            .map(|w| {
                let (c, base) = (c.clone(), base.to_string());
                tokio::spawn(async move {
                    let mut ok = 0;
                    for i in 0..per {
                        let due = Duration::from_secs_f64(i as f64 / per as f64);
                        tokio::time::sleep(due.saturating_sub(t.elapsed())).await;
                        ok += usize::from(create(&c, &base, &format!("burst-{w}-{i}")).await);
                    }
                    ok
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            ok += t.await.unwrap_or(0);
        }
        ok
    });
    let sent = t.elapsed();
    let caught_up = until(&tmux, EVENT_BOUND, |s| {
        watch_numbers(s).is_some_and(|(p, _)| p >= before + made as u64)
    });
    rows.push((
        format!(
            "TUI: burst of {made} creates in {:.2} s",
            sent.as_secs_f64()
        ),
        format!("all on screen {} after the last", ms(caught_up)),
    ));
    // Another pod simulated: `w` lists the pods, Enter places the one under the cursor on the
    // cluster the watch keeps (it used to list the whole cluster again, as `5` does).
    tmux.keys(&["w"]);
    let placed = until(&tmux, EVENT_BOUND, |s| s.contains("Pods: ")).and_then(|_| {
        tmux.keys(&["Down", "Enter"]);
        until(&tmux, EVENT_BOUND, |s| {
            s.contains("step 1/") && !s.contains("Pods: ") && !s.contains("Placing ")
        })
    });
    rows.push((
        "TUI: another pod simulated (`w`, Enter) → on screen".into(),
        ms(placed),
    ));
    if let Some(pid) = pid {
        let (peak, now) = memory_kib(pid);
        rows.push((
            "TUI RSS after the events (peak / now)".into(),
            format!("{} / {}", mib(peak), mib(now)),
        ));
    }
    tmux.keys(&["q"]);
    rows
}

//! The etcd backend against the in-memory store and against etcd itself:
//! `cargo bench --bench etcd_store` (release). In one run, on this machine:
//! 1. pod creates/s through `kexplore serve` on etcd, and on the in-memory store;
//! 2. GETs/s of one pod through each (etcd's answered from the watch-fed cache);
//! 3. a plain etcd put loop through the same client and TLS the store uses
//!    (`etcd_baseline::put_rate`), of values the size of a stored pod: the most this backend
//!    can write here;
//! 4. etcd's own create loop (`etcd_baseline::create_rate`): the store's create transaction
//!    and the watch event it brings back, with no API server: what etcd alone allows of
//!    creates here.
//!
//! The pods name a scheduler no profile serves, so only the create path is measured, not the
//! scheduler's and kubelets' writes that follow. `KEXPLORE_BENCH_PODS` (default 3,000) and
//! `KEXPLORE_BENCH_WRITERS` (default 64) change the sizes, and `KEXPLORE_BENCH_PUT_BYTES` the
//! put loop's value size (by default that of a pod the run stored). Results go to stdout as Markdown.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kexplore::apiserver::storage::etcd_baseline;
use kexplore::apiserver::storage::etcd_local::LocalEtcd;
use serde_json::json;

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn start_serve(pki: &std::path::Path, extra: &[String]) -> (Proc, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["serve", "--listen", "127.0.0.1:0", "--no-demo", "--pki-dir"])
        .arg(pki)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kexplore serve");
    let mut line = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_string();
    (Proc(child), url)
}

fn client(pki: &std::path::Path) -> reqwest::Client {
    let read = |f: &str| std::fs::read(pki.join(f)).unwrap_or_default();
    let identity = [read("admin.crt"), read("admin.key")].concat();
    reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(&read("ca.crt")).expect("ca"))
        .identity(reqwest::Identity::from_pem(&identity).expect("identity"))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// The ServiceAccount admission plugin wants `default` before any pod: its controller makes it.
async fn ready(c: &reqwest::Client, base: &str) {
    let url = format!("{base}/api/v1/namespaces/default/serviceaccounts/default");
    for _ in 0..300 {
        if c.get(&url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no default ServiceAccount at {base}");
}

/// `n` pod creates by `writers` concurrent clients: the 201s per second, and what the others
/// got (a status, or the client's own error), counted.
async fn creates(
    c: &reqwest::Client,
    base: &str,
    tag: &str,
    n: usize,
    writers: usize,
) -> (f64, BTreeMap<String, usize>) {
    let url = format!("{base}/api/v1/namespaces/default/pods");
    let per = n.div_ceil(writers);
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..writers {
        let (c, url, tag) = (c.clone(), url.clone(), tag.to_string());
        tasks.spawn(async move {
            let mut ok = 0;
            let mut failed: BTreeMap<String, usize> = BTreeMap::new();
            for i in 0..per {
                let pod = json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("{tag}-{w}-{i}"), "labels": {"app": "bench"}},
                    "spec": {"schedulerName": "bench-unscheduled",
                        "containers": [{"name": "c", "image": "nginx",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}});
                let what = match c.post(&url).json(&pod).send().await {
                    // The body is read: a response dropped unread is a CANCEL, and the
                    // server's data still arriving on more than ten cancelled streams makes
                    // the client's h2 reset them itself, then give up the connection.
                    Ok(r) if r.status().as_u16() == 201 => {
                        if r.bytes().await.is_ok() {
                            ok += 1;
                            continue;
                        }
                        "body not read whole".to_string()
                    }
                    Ok(r) => r.status().to_string(),
                    Err(e) => {
                        let mut s: &dyn std::error::Error = &e;
                        while let Some(inner) = s.source() {
                            s = inner;
                        }
                        format!("client error: {s}")
                    }
                };
                *failed.entry(what).or_default() += 1;
            }
            (ok, failed)
        });
    }
    let (mut ok, mut failed) = (0, BTreeMap::new());
    while let Some(r) = tasks.join_next().await {
        let (o, f) = r.expect("writer");
        ok += o;
        for (k, v) in f {
            *failed.entry(k).or_default() += v;
        }
    }
    (ok as f64 / start.elapsed().as_secs_f64(), failed)
}

/// `n` GETs of one pod by `readers` concurrent clients: GETs/s.
async fn gets(c: &reqwest::Client, base: &str, name: &str, n: usize, readers: usize) -> f64 {
    let url = format!("{base}/api/v1/namespaces/default/pods/{name}");
    let per = n.div_ceil(readers);
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..readers {
        let (c, url) = (c.clone(), url.clone());
        tasks.spawn(async move {
            for _ in 0..per {
                let r = c.get(&url).send().await.expect("get");
                assert!(r.status().is_success());
                let _ = r.bytes().await;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("reader");
    }
    (per * readers) as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let pods = env_or("KEXPLORE_BENCH_PODS", 3000);
    let writers = env_or("KEXPLORE_BENCH_WRITERS", 64);
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = LocalEtcd::start(
        Some(&dir.path().join("pki")),
        Some(&dir.path().join("etcd")),
        Duration::from_secs(300),
    )
    .expect("etcd from PATH (Debian: apt-get install etcd-server)");
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let o = &etcd.options;
    let flags = vec![
        format!("--etcd-servers={}", o.servers.join(",")),
        format!("--etcd-cafile={}", path(&o.cafile)),
        format!("--etcd-certfile={}", path(&o.certfile)),
        format!("--etcd-keyfile={}", path(&o.keyfile)),
    ];
    let pki = dir.path().join("pki");
    let mut rows = Vec::new();
    let only = std::env::var("KEXPLORE_BENCH_STORES").unwrap_or_default();
    for (store, extra) in [("etcd", flags), ("in-memory", Vec::new())] {
        if !only.is_empty() && !only.split(',').any(|s| s == store) {
            continue;
        }
        let (_serve, base) = start_serve(&pki, &extra);
        let c = client(&pki);
        ready(&c, &base).await;
        let (created, failed) = creates(&c, &base, store, pods, writers).await;
        for (what, n) in &failed {
            println!("{store}: {n} create(s) not acknowledged: {what}");
        }
        let read = gets(&c, &base, &format!("{store}-0-0"), pods * 4, writers).await;
        rows.push((store, created, read));
    }
    // The yardstick, after the server has stopped: puts of values the size of a pod this
    // benchmark stored (with what admission and the server added: its service-account volume,
    // tolerations, managedFields), read back from etcd.
    let Some(on_etcd) = rows.iter().find(|r| r.0 == "etcd").map(|r| r.1) else {
        print_rows(&rows);
        return;
    };
    let size = match std::env::var("KEXPLORE_BENCH_PUT_BYTES") {
        Ok(v) => v
            .parse()
            .expect("KEXPLORE_BENCH_PUT_BYTES: a number of bytes"),
        Err(_) => {
            let o = etcd.options.clone();
            tokio::task::spawn_blocking(move || {
                etcd_baseline::stored_len(&o, "/registry/pods/default/etcd-0-0")
            })
            .await
            .expect("stored")
            .expect("a stored pod")
        }
    };
    let o = etcd.options.clone();
    let baseline =
        tokio::task::spawn_blocking(move || etcd_baseline::put_rate(&o, pods, writers, size))
            .await
            .expect("baseline")
            .expect("put loop");
    let o = etcd.options.clone();
    let bare =
        tokio::task::spawn_blocking(move || etcd_baseline::create_rate(&o, pods, writers, size))
            .await
            .expect("create loop")
            .expect("create loop");
    print_rows(&rows);
    println!(
        "| etcd put loop (same client, {writers} writers, {size}-byte values) | {baseline:.0} puts/s | – |"
    );
    println!(
        "| etcd create loop (the store's transaction and its watch event, no API server) | {bare:.0} creates/s | – |"
    );
    println!(
        "\npod creates on etcd: {:.0} % of the put loop (goal ≥ 50 %), {:.0} % of etcd's own create loop; {pods} pods, {writers} writers",
        100.0 * on_etcd / baseline,
        100.0 * on_etcd / bare
    );
}

fn print_rows(rows: &[(&str, f64, f64)]) {
    println!("| store | pod creates/s | GETs/s of one pod |");
    println!("|---|---|---|");
    for (store, created, read) in rows {
        println!("| {store} | {created:.0} | {read:.0} |");
    }
}

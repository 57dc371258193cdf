//! Workload benchmarks of `kexplore serve` with its controllers, scheduler loop and simulated
//! kubelets, driven over mTLS from a second process: `cargo bench --bench workloads` (release).
//! On a cluster of 100 nodes (`scenario generate --nodes 100 --pods-per-node 0`):
//! 1. a Deployment of 1,000 replicas from create until every pod is Running and available;
//! 2. a rolling update of those 1,000 to a new image until the rollout is complete;
//! 3. the server's RSS once the Deployment is scaled to 10,000 Running pods
//!    (`KEXPLORE_BENCH_SCALE` changes that number; 0 skips the step).
//!
//! Results go to stdout as a Markdown table (docs/BENCHMARKS.md records a run).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A cluster with room for the benchmark's pods: 100 nodes of 110 pods each (the demo cluster's
/// three workers hold 330 pods, so 1,000 replicas would stay Pending there, as upstream's would).
fn nodes_scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args([
            "scenario",
            "generate",
            "--nodes",
            "100",
            "--pods-per-node",
            "0",
            "--pending",
            "0",
        ])
        .output()
        .expect("kexplore scenario generate");
    let path = dir.join("nodes.yaml");
    std::fs::write(&path, out.stdout).expect("write the scenario");
    path
}

fn start_serve(dir: &std::path::Path) -> (Proc, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--no-demo",
            "--scenario",
        ])
        .arg(nodes_scenario(dir))
        .arg("--pki-dir")
        .arg(dir.join("pki"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kexplore serve");
    let mut line = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("listening line");
    (Proc(child), port)
}

fn client(pki: &std::path::Path) -> reqwest::Client {
    let read = |f: &str| std::fs::read(pki.join(f)).unwrap_or_default();
    let identity = [read("admin.crt"), read("admin.key")].concat();
    reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(&read("ca.crt")).expect("ca"))
        .identity(reqwest::Identity::from_pem(&identity).expect("identity"))
        .build()
        .expect("client")
}

fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn deployment(c: &reqwest::Client, base: &str) -> Value {
    match c.get(format!("{base}{DEPLOYMENT}/bench")).send().await {
        Ok(r) => r.json().await.unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

/// Wait until the rollout of `want` replicas is complete, as `kubectl rollout status` decides:
/// every replica updated, available, none old left, the latest generation observed.
async fn rolled_out(
    c: &reqwest::Client,
    base: &str,
    want: i64,
    limit: Duration,
) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let d = deployment(c, base).await;
        let n = |p: &str| d.pointer(p).and_then(Value::as_i64).unwrap_or(-1);
        if n("/status/updatedReplicas") == want
            && n("/status/replicas") == want
            && n("/status/availableReplicas") == want
            && n("/status/observedGeneration") >= n("/metadata/generation")
        {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

fn secs(d: Option<Duration>, limit: Duration) -> String {
    match d {
        Some(d) => format!("{:.2} s", d.as_secs_f64()),
        None => format!("not done in {} s", limit.as_secs()),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let (serve, port) = start_serve(dir.path());
    let c = client(&dir.path().join("pki"));
    let base = format!("https://127.0.0.1:{port}");
    let idle_rss = rss_mib(serve.0.id());

    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bench"},
        "spec": {"replicas": 1000, "selector": {"matchLabels": {"app": "bench"}},
                 "template": {"metadata": {"labels": {"app": "bench"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    });
    let limit = Duration::from_secs(120);
    let created = c
        .post(format!("{base}{DEPLOYMENT}"))
        .json(&body)
        .send()
        .await
        .map(|r| r.status().as_u16());
    assert_eq!(created.ok(), Some(201), "create the Deployment");
    let create = rolled_out(&c, &base, 1000, limit).await;

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}}});
    let patched = c
        .patch(format!("{base}{DEPLOYMENT}/bench"))
        .header("Content-Type", "application/strategic-merge-patch+json")
        .body(patch.to_string())
        .send()
        .await
        .map(|r| r.status().as_u16());
    assert_eq!(patched.ok(), Some(200), "patch the image");
    let update = rolled_out(&c, &base, 1000, limit).await;
    let rss_1000 = rss_mib(serve.0.id());

    let scale_to: i64 = std::env::var("KEXPLORE_BENCH_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let mut scale_row = None;
    if scale_to > 0 {
        let scale_limit = Duration::from_secs(1200);
        let _ = c
            .patch(format!("{base}{DEPLOYMENT}/bench/scale"))
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({"spec": {"replicas": scale_to}}).to_string())
            .send()
            .await;
        let took = rolled_out(&c, &base, scale_to, scale_limit).await;
        scale_row = Some((secs(took, scale_limit), rss_mib(serve.0.id())));
    }

    println!("| measure | result | target |");
    println!("|---|---|---|");
    println!(
        "| 1,000-replica Deployment, create → all Running and available | {} | ≤ 5 s |",
        secs(create, limit)
    );
    println!(
        "| rolling update of the 1,000 to a new image, patch → rollout complete | {} | ≤ 10 s |",
        secs(update, limit)
    );
    println!("| server RSS idle / with 1,000 pods | {idle_rss:.0} MiB / {rss_1000:.0} MiB | – |");
    if let Some((took, rss)) = scale_row {
        println!("| scale to {scale_to} pods → all Running and available | {took} | – |");
        println!(
            "| server RSS with {scale_to} pods, their ReplicaSets and Events | {rss:.0} MiB | < 500 MiB |"
        );
    }
}

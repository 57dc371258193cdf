//! Shared by the remote-cluster tests: run the kexplore binary, and talk to a server through a
//! kubeconfig with kexplore's own client (to look at what a command left behind).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// `kexplore ARGS...`, stdin closed.
pub fn kexplore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kexplore")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One request with the kubeconfig's current context: (status, JSON body or Null).
pub fn request(kubeconfig: &Path, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let ctx = kexplore::kubeconfig::Kubeconfig::load_file(kubeconfig)
            .expect("kubeconfig")
            .resolve(None)
            .expect("context");
        let api = kexplore::client::http::ApiClient::connect(&ctx)
            .await
            .expect("client");
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let r = api
            .send(
                method,
                path,
                body.map(|b| (b.as_bytes().to_vec(), "application/json")),
            )
            .await
            .expect("request");
        (r.status, r.json().unwrap_or(Value::Null))
    })
}

/// The raw body of a request (a watch stream's lines), with its status.
pub fn request_raw(kubeconfig: &Path, path: &str) -> (u16, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let ctx = kexplore::kubeconfig::Kubeconfig::load_file(kubeconfig)
            .expect("kubeconfig")
            .resolve(None)
            .expect("context");
        let api = kexplore::client::http::ApiClient::connect(&ctx)
            .await
            .expect("client");
        let r = api
            .send(reqwest::Method::GET, path, None)
            .await
            .expect("request");
        (r.status, String::from_utf8_lossy(&r.body).into_owned())
    })
}

/// The store's revision now (a list's resourceVersion).
pub fn revision(kubeconfig: &Path) -> u64 {
    let (code, list) = request(kubeconfig, "GET", "/api/v1/namespaces?limit=1", None);
    assert_eq!(code, 200, "{list}");
    list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a list has a resourceVersion")
}

/// How many writes after revision `from` were not Lease renewals. Leader election and the
/// kubelets' heartbeats renew Leases every few seconds, as on a real cluster, so "nothing was
/// written" means: every revision since `from` is a Lease's.
pub fn writes_besides_leases(kubeconfig: &Path, from: u64) -> u64 {
    let now = revision(kubeconfig);
    let (code, stream) = request_raw(
        kubeconfig,
        &format!(
            "/apis/coordination.k8s.io/v1/leases?watch=1&resourceVersion={from}&timeoutSeconds=1"
        ),
    );
    assert_eq!(code, 200, "{stream}");
    let leases = stream
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| {
            e["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
        })
        .filter(|rv| *rv <= now)
        .count() as u64;
    (now - from).saturating_sub(leases)
}

/// The names (`ns/name`) of every pod the server holds.
pub fn pod_names(kubeconfig: &Path) -> Vec<String> {
    let (code, list) = request(kubeconfig, "GET", "/api/v1/pods", None);
    assert_eq!(code, 200, "{list}");
    list["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap_or_default(),
                p["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

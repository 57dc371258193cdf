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

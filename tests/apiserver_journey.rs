//! `kexplore journey` end to end: the in-process embedded server (default) and a separate
//! `kexplore serve` reached through its kubeconfig, checked against the contract's JSON shape.

use std::process::Command;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::{SEED_POD, ServeProcess};

const STAGES: [&str; 12] = [
    "tls-handshake",
    "authentication",
    "authorization",
    "admission",
    "validation",
    "storage",
    "response",
    "watch",
    "filter",
    "score",
    "binding",
    "kubelet",
];

fn journey(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .arg("journey")
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("run journey");
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
    )
}

fn check_shape(j: &Value) -> Vec<(String, String, String)> {
    let stages = j["stages"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = stages.iter().filter_map(|s| s["stage"].as_str()).collect();
    assert_eq!(names, STAGES, "{j}");
    for s in &stages {
        let keys: Vec<&String> = s
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys.len(), 4, "{s}");
        assert!(s["detail"].is_object());
    }
    stages
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap_or_default().into(),
                s["status"].as_str().unwrap_or_default().into(),
                s["source"].as_str().unwrap_or_default().into(),
            )
        })
        .collect()
}

#[test]
fn embedded_journey_reports_every_server_stage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = dir.path().join("app.json");
    std::fs::write(&pod, SEED_POD).expect("write");
    let (code, j) = journey(&["-f", pod.to_str().unwrap_or_default()]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["pod"], Value::from("default/app"));
    assert!(
        j["server"]
            .as_str()
            .is_some_and(|s| s.starts_with("https://127.0.0.1:"))
    );
    for (stage, status, source) in check_shape(&j) {
        assert_eq!(status, "ok", "{stage}");
        let want = match stage.as_str() {
            "tls-handshake" | "response" | "watch" => "observed",
            _ => "reported",
        };
        assert_eq!(source, want, "{stage}");
    }
    let score = &j["stages"][9]["detail"];
    assert_eq!(score["selected"], Value::from("node-3"));
    // Upstream's order: the defaults set while the body was decoded, then the mutating
    // plugins, NamespaceLifecycle first (it implements Admit, not Validate).
    let records: Vec<(String, String)> = j["stages"][3]["detail"]["plugins"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let s = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            (s("plugin"), s("phase"))
        })
        .collect();
    let phases = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| {
                let phase = if *n == "defaulting (decode)" {
                    "decode"
                } else {
                    "mutating"
                };
                (n.to_string(), phase.to_string())
            })
            .collect()
    };
    assert_eq!(
        records,
        phases(&[
            "defaulting (decode)",
            "NamespaceLifecycle",
            "LimitRanger",
            "ServiceAccount",
            "Priority",
            "DefaultTolerationSeconds",
            "RuntimeClass",
        ])
    );
}

#[test]
fn journey_through_a_kubeconfig_and_a_refused_create() {
    let srv = ServeProcess::start(&[]);
    let pod = srv.dir.path().join("app.json");
    std::fs::write(&pod, SEED_POD).expect("write");
    let kc = srv.kubeconfig();
    let (code, j) = journey(&[
        "--kubeconfig",
        kc.to_str().unwrap_or_default(),
        "-f",
        pod.to_str().unwrap_or_default(),
        "--for-real",
    ]);
    assert_eq!(code, 0, "{j}");
    let stages = check_shape(&j);
    assert_eq!(stages[1].2, "reported");
    // The same pod again: 409 AlreadyExists, exit 1, the server stages end where the request did.
    let (code, j) = journey(&[
        "--kubeconfig",
        kc.to_str().unwrap_or_default(),
        "-f",
        pod.to_str().unwrap_or_default(),
        "--for-real",
    ]);
    assert_eq!(code, 1);
    let stages = check_shape(&j);
    assert_eq!(
        (stages[6].0.as_str(), stages[6].1.as_str()),
        ("response", "failed")
    );
    assert_eq!(
        j["stages"][6]["detail"]["status"]["reason"],
        Value::from("AlreadyExists")
    );
}

/// A pod that fits no node: the journey ends on the scheduler's verdict (PodScheduled False,
/// Unschedulable) instead of waiting out `--timeout` for a bind that cannot come.
#[test]
fn an_unschedulable_pod_ends_its_journey_on_the_verdict() {
    let srv = ServeProcess::start(&[]);
    let mut pod: Value = serde_json::from_str(SEED_POD).expect("seed pod");
    pod["metadata"]["name"] = "huge".into();
    pod["spec"]["containers"][0]["resources"] = serde_json::json!({"requests": {"cpu": "100"}});
    let file = srv.dir.path().join("huge.json");
    std::fs::write(&file, pod.to_string()).expect("write");
    let kc = srv.kubeconfig();
    let started = std::time::Instant::now();
    let (code, j) = journey(&[
        "--kubeconfig",
        kc.to_str().unwrap_or_default(),
        "-f",
        file.to_str().unwrap_or_default(),
        "--for-real",
        "--timeout",
        "600",
    ]);
    // Well within the 600 s it would otherwise wait (generous: a loaded CI machine).
    assert!(started.elapsed().as_secs() < 300, "{j}");
    let stages = check_shape(&j);
    assert_eq!(stages[8].1, "failed", "filter: {j}");
    assert_eq!(stages[10].1, "skipped", "binding: {j}");
    let binding = &j["stages"][10]["detail"];
    assert_eq!(binding["condition"]["reason"], "Unschedulable", "{j}");
    assert!(
        binding["note"]
            .as_str()
            .is_some_and(|n| n.contains("the scheduler found no node")),
        "{j}"
    );
    assert_ne!(code, 0, "{j}");
}

#[test]
fn journey_rejects_bad_input_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "kind: Service\nmetadata: {name: x}\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["journey", "-f"])
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a journey follows one object of kind Pod")
    );
}

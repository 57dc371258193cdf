//! `serve --scheduler-config`: kube-scheduler's profiles in the embedded cluster, each placing
//! the pods whose spec.schedulerName names it (events under the profile's name), pods naming
//! no profile left Pending, and a broken file refused naming itself — driven by kubectl.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for};

const CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/lessons/workloads/bin-packing-scheduler.yaml"
);

fn deployment(name: &str, scheduler: &str) -> String {
    format!(
        r#"{{"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {{"name": "{name}"}},
  "spec": {{"replicas": 6, "selector": {{"matchLabels": {{"app": "{name}"}}}},
    "template": {{"metadata": {{"labels": {{"app": "{name}"}}}},
      "spec": {{"schedulerName": "{scheduler}",
        "containers": [{{"name": "web", "image": "nginx",
          "resources": {{"requests": {{"cpu": "100m", "memory": "128Mi"}}}}}}]}}}}}}}}"#
    )
}

/// Pods of `app` per node, once all six are bound.
fn placement(k: &Kubectl, app: &str) -> BTreeMap<String, usize> {
    wait_for(Duration::from_secs(60), || {
        let out = k.ok(&["get", "pods", "-l", &format!("app={app}"), "-o", "json"]);
        let v: Value = serde_json::from_str(&out).ok()?;
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        let items = v["items"].as_array()?;
        for p in items {
            let node = p.pointer("/spec/nodeName").and_then(Value::as_str)?;
            *per.entry(node.to_string()).or_default() += 1;
        }
        (items.len() == 6).then_some(per)
    })
    .unwrap_or_else(|| panic!("{}: the six pods of {app} were not all bound", k.label))
}

fn run(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&["--scheduler-config", CONFIG]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, scheduler) in [("spread", "default-scheduler"), ("packed", "bin-packing")] {
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, deployment(name, scheduler)).expect("write");
        k.ok(&["apply", "-f", file.to_str().expect("utf-8")]);
    }
    let spread = placement(&k, "spread");
    let packed = placement(&k, "packed");
    assert_eq!(
        spread.len(),
        3,
        "{label}: the default profile spreads: {spread:?}"
    );
    assert!(
        packed.len() < spread.len() && packed.values().max() > spread.values().max(),
        "{label}: bin-packing fills fewer nodes: {packed:?} against {spread:?}"
    );
    // The profile that placed a pod reports its Scheduled event.
    let events = k.ok(&["get", "events", "-o", "json"]);
    let events: Value = serde_json::from_str(&events).expect("events");
    let reporters: Vec<(&str, &str)> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["reason"] == "Scheduled")
        .map(|e| {
            (
                e.pointer("/involvedObject/name")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                e["reportingComponent"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        reporters
            .iter()
            .any(|(pod, by)| pod.starts_with("packed-") && *by == "bin-packing"),
        "{label}: {reporters:?}"
    );
    assert!(
        reporters
            .iter()
            .all(|(pod, by)| !pod.starts_with("spread-") || *by == "default-scheduler"),
        "{label}: {reporters:?}"
    );
    // A pod naming no profile is another scheduler's: it stays Pending, unbound.
    k.ok(&[
        "run",
        "elsewhere",
        "--image=nginx",
        "--overrides={\"spec\": {\"schedulerName\": \"nobody\"}}",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    let node = k.ok(&["get", "pod", "elsewhere", "-o", "jsonpath={.spec.nodeName}"]);
    assert_eq!(node, "", "{label}: nobody's pod was bound");
}

#[test]
fn each_profile_places_the_pods_that_name_it() {
    with_one_kubectl(run);
}

#[test]
fn a_broken_scheduler_config_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("sched.yaml");
    std::fs::write(
        &bad,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Sideways}}\n",
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["serve", "--listen", "127.0.0.1:0", "--scheduler-config"])
        .arg(&bad)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("sched.yaml") && err.contains("Sideways"),
        "{err}"
    );
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["serve", "--scheduler-config", "/nonexistent/sched.yaml"])
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/sched.yaml"));
}

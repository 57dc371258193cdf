//! Helpers for the plugins' unit tests: objects from JSON, a snapshot, one plugin run.

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

use super::plugins::PluginArgs;
use super::version::NEWEST;
use super::{Code, PodInfo, Snapshot, run_filter_plugin, run_score_plugin};

pub fn node(name: &str, labels: Value, extra_spec: Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": extra_spec,
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .unwrap()
}

pub fn pod(name: &str, labels: Value, spec: Value) -> Pod {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c"}]);
    }
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "default", "labels": labels}, "spec": spec}),
    )
    .unwrap()
}

pub fn world(nodes: &[Node], running: &[Pod], pending: &Pod) -> (Snapshot, PodInfo) {
    let mut snap = Snapshot::build(nodes, running, true).unwrap();
    let p = snap.pod_info(pending).unwrap();
    (snap, p)
}

/// (node, code, reasons) for every node.
pub fn filter(
    nodes: &[Node],
    running: &[Pod],
    pending: &Pod,
    plugin: &str,
) -> Vec<(String, Code, Vec<String>)> {
    let (snap, p) = world(nodes, running, pending);
    run_filter_plugin(&snap, &p, NEWEST, plugin, &PluginArgs::default())
        .unwrap()
        .nodes
        .into_iter()
        .map(|(n, s)| (n, s.code, s.reasons))
        .collect()
}

pub fn scores(nodes: &[Node], running: &[Pod], pending: &Pod, plugin: &str) -> Vec<i64> {
    let (snap, p) = world(nodes, running, pending);
    run_score_plugin(&snap, &p, NEWEST, plugin, &PluginArgs::default(), None)
        .unwrap()
        .scores
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

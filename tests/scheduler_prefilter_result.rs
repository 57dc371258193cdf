//! Nodes left outside a PreFilterResult (issue 12 B9): `kexplore schedule` lists every one of
//! them, in the text table and in the JSON `filter` array (one entry per node), with the status
//! kube-scheduler gives them — UnschedulableAndUnresolvable, "node(s) didn't satisfy
//! plugin(s) [NodeAffinity]" — and counts them in the FitError as upstream's absent-nodes
//! status. The cases are upstream's, transcribed below with their source; where upstream used
//! a fake PreFilter plugin, NodeAffinity's `matchFields metadata.name In [...]` (the only
//! in-tree plugin that returns a PreFilterResult) produces the same result set.

use std::process::{Command, Output};

use serde_json::{Value, json};

fn kexplore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .output()
        .expect("run kexplore")
}

fn node(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": labels},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
}

/// A pending pod whose required node affinity is `terms`.
fn pod(terms: Value, cpu: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                        {"nodeSelectorTerms": terms}}}}})
}

fn names_in(names: &[&str]) -> Value {
    json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]})
}

/// Runs `schedule` on the objects as one List, text and JSON.
fn run(objects: Vec<Value>, extra: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("case.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&path, list.to_string()).unwrap();
    let p = path.display().to_string();
    let mut args = vec!["schedule", "-f", &p];
    args.extend(extra);
    let text = kexplore(&args);
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    args.extend(["-o", "json"]);
    let out = kexplore(&args);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        String::from_utf8(text.stdout).unwrap(),
        v["pods"][0].clone(),
    )
}

const ABSENT: &str = "node(s) didn't satisfy plugin(s) [NodeAffinity]";

/// The pod's `filter` entry for `node`.
fn verdict<'a>(pod: &'a Value, node: &str) -> &'a Value {
    pod["filter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["node"] == node)
        .unwrap_or_else(|| panic!("no filter entry for {node}: {pod}"))
}

fn assert_outside(text: &str, pod: &Value, node: &str) {
    let v = verdict(pod, node);
    assert_eq!(v["passed"], false, "{v}");
    assert_eq!(v["code"], "UnschedulableAndUnresolvable", "{v}");
    assert_eq!(v["reasons"], json!([ABSENT]), "{v}");
    assert_eq!(v["plugin"], "NodeAffinity", "{v}");
    assert_eq!(v["pre_filter"], true, "{v}");
    let line = text
        .lines()
        .find(|l| {
            let row = l.trim_start();
            row.starts_with(&format!("{node} ")) && row.contains('✗')
        })
        .unwrap_or_else(|| panic!("no line for {node} in:\n{text}"));
    assert!(
        line.contains("✗ fail")
            && line.contains(ABSENT)
            && line.contains("UnschedulableAndUnresolvable"),
        "{line}"
    );
}

// kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
// TestNodeAffinity: "Pod with matchFields using In operator that matches the existing node"
// (PreFilterResult {node1}) — the DaemonSet pod: with the cluster's other nodes beside node1,
// those are outside the result.
#[test]
fn daemonset_pod_lists_every_other_node() {
    let (text, pod) = run(
        vec![
            node("node1", json!({})),
            node("node2", json!({})),
            node("node3", json!({})),
            pod(json!([names_in(&["node1"])]), "0"),
        ],
        &[],
    );
    assert_eq!(pod["filter"].as_array().unwrap().len(), 3, "{pod}");
    assert_eq!(verdict(&pod, "node1")["passed"], true);
    assert_outside(&text, &pod, "node2");
    assert_outside(&text, &pod, "node3");
    assert_eq!(pod["selected"], "node1");
    assert!(text.contains("Filter — 1 of 3 node(s) evaluated"), "{text}");
}

// node_affinity_test.go TestNodeAffinity: "Pod with two terms of node.Name affinity"
// (PreFilterResult {node1, node2}: terms are unioned); node3 added beside them.
#[test]
fn two_name_terms_union_and_the_rest_is_outside() {
    let (text, pod) = run(
        vec![
            node("node1", json!({})),
            node("node2", json!({})),
            node("node3", json!({})),
            pod(json!([names_in(&["node1"]), names_in(&["node2"])]), "0"),
        ],
        &[],
    );
    assert_eq!(verdict(&pod, "node1")["passed"], true);
    assert_eq!(verdict(&pod, "node2")["passed"], true);
    assert_outside(&text, &pod, "node3");
}

// node_affinity_test.go TestNodeAffinity: "Pod with one term: matchFields does not match, but
// matchExpressions matches" (PreFilterResult {node1}; node2 carries foo=bar). In a cycle node2
// never reaches Filter: it is outside the result, and the FitError says so.
#[test]
fn matching_labels_do_not_bring_a_node_back_into_the_result() {
    let term = json!({"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}],
                      "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node1"]}]});
    let (text, pod) = run(
        vec![
            node("node2", json!({"foo": "bar"})),
            pod(json!([term]), "0"),
        ],
        &["--kube-version", "1.33"],
    );
    assert_outside(&text, &pod, "node2");
    assert_eq!(
        pod["message"],
        "0/1 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. \
         preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
}

// kubernetes/kubernetes pkg/scheduler/schedule_one_test.go TestSchedulerSchedulePod: "test
// prefilter plugin returned an invalid node" — nodes "1" and "2", PreFilterResult
// {"invalid-node"}: no node is filtered, NodeToStatus is empty and every node gets the absent
// status "node(s) didn't satisfy plugin(s) [FakePreFilter]" (here [NodeAffinity]).
#[test]
fn a_result_naming_no_existing_node_leaves_every_node_outside() {
    let (text, pod) = run(
        vec![
            node("1", json!({"kubernetes.io/hostname": "1"})),
            node("2", json!({"kubernetes.io/hostname": "2"})),
            pod(json!([names_in(&["invalid-node"])]), "0"),
        ],
        &["--kube-version", "1.33"],
    );
    assert_outside(&text, &pod, "1");
    assert_outside(&text, &pod, "2");
    assert_eq!(pod["nodes_feasible"], 0);
    assert_eq!(
        pod["message"],
        "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. \
         preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert!(text.contains("Filter — 0 of 2 node(s) evaluated"), "{text}");
}

// schedule_one_test.go TestSchedulerSchedulePod: "test some nodes are filtered out by prefilter
// plugin and other are filtered out by filter plugin" — PreFilterResult {node2}, and a Filter
// rejects node2 as Unschedulable (here NodeResourcesFit: 2 cpu wanted, 1 free). node1 gets the
// absent status, node2 the filter's; the FitError counts both.
#[test]
fn outside_nodes_and_filtered_nodes_share_the_fit_error() {
    let busy = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "busy", "namespace": "default"},
        "spec": {"nodeName": "node2",
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}});
    let (text, pod) = run(
        vec![
            node("node1", json!({})),
            node("node2", json!({})),
            busy,
            pod(json!([names_in(&["node2"])]), "2"),
        ],
        &["--kube-version", "1.33"],
    );
    assert_outside(&text, &pod, "node1");
    let v = verdict(&pod, "node2");
    assert_eq!(v["code"], "Unschedulable");
    assert_eq!(v["reasons"], json!(["Insufficient cpu"]));
    assert!(v.get("pre_filter").is_none(), "{v}");
    assert_eq!(
        pod["message"],
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]. \
         preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, \
         1 Preemption is not helpful for scheduling."
    );
}

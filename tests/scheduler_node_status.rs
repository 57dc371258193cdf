//! Nodes as kube-apiserver accepts them (issue 12 B8): a Node that has not posted status, or
//! whose `status.allocatable` leaves resources out, is valid. kube-scheduler's NodeInfo reads
//! what is missing as zero — so such a node holds no pod ("Too many pods": allowed pods 0) —
//! and `kexplore schedule` does the same and says so: "node1: no allocatable reported:
//! treated as 0".

use std::process::{Command, Output};

use serde_json::Value;

fn kexplore(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .output()
        .expect("run kexplore")
}

/// `schedule -f` on `yaml`: (text, JSON).
fn schedule(yaml: &str) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nodes.yaml");
    std::fs::write(&path, yaml).unwrap();
    let p = path.display().to_string();
    let text = kexplore(&["schedule", "-f", &p]);
    assert!(
        text.status.success(),
        "exit {:?}: {}",
        text.status.code(),
        String::from_utf8_lossy(&text.stderr)
    );
    let json = kexplore(&["schedule", "-f", &p, "-o", "json"]);
    assert!(json.status.success());
    (
        String::from_utf8(text.stdout).unwrap(),
        serde_json::from_slice(&json.stdout).unwrap(),
    )
}

fn verdict<'a>(pod: &'a Value, node: &str) -> &'a Value {
    pod["filter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["node"] == node)
        .unwrap_or_else(|| panic!("no entry for {node}: {pod}"))
}

/// What `kubectl get nodes -o yaml` prints for a Node object created without status (no
/// kubelet has posted one yet): a NodeList whose items have no `kind` and no `status`.
const NODE_LIST_WITHOUT_STATUS: &str = r#"
apiVersion: v1
kind: NodeList
metadata:
  resourceVersion: ""
items:
- apiVersion: v1
  metadata:
    creationTimestamp: "2026-11-25T07:00:00Z"
    labels:
      kubernetes.io/hostname: node1
    name: node1
    resourceVersion: "512"
    uid: 4f3b1c8e-0000-4000-8000-000000000001
  spec: {}
- apiVersion: v1
  metadata:
    name: node2
    labels:
      kubernetes.io/hostname: node2
  spec: {}
  status:
    allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 500m, memory: 256Mi}}
"#;

#[test]
fn a_node_without_status_is_read_as_zero_and_said_so() {
    let (text, v) = schedule(NODE_LIST_WITHOUT_STATUS);
    assert!(
        text.contains("note: node1: no allocatable reported: treated as 0"),
        "{text}"
    );
    assert_eq!(
        v["notes"],
        serde_json::json!(["node1: no allocatable reported: treated as 0"])
    );
    let pod = &v["pods"][0];
    // Allowed pods 0: NodeResourcesFit's first check; cpu and memory are short too.
    let n1 = verdict(pod, "node1");
    assert_eq!(n1["plugin"], "NodeResourcesFit");
    assert_eq!(
        n1["reasons"],
        serde_json::json!(["Too many pods", "Insufficient cpu", "Insufficient memory"])
    );
    assert_eq!(pod["selected"], "node2");
    assert!(!text.contains("node2: no allocatable"), "{text}");
}

#[test]
fn a_node_reporting_only_cpu_names_what_it_left_out() {
    let yaml = r#"
apiVersion: v1
kind: Node
metadata: {name: node1}
status:
  capacity: {cpu: "4"}
  allocatable: {cpu: "4"}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: 100m}}}]
"#;
    let (text, v) = schedule(yaml);
    assert!(
        text.contains("note: node1: no allocatable memory or pods reported: treated as 0"),
        "{text}"
    );
    let pod = &v["pods"][0];
    // cpu fits; the pod count does not (0 pods allowed), and that is Unschedulable.
    let n1 = verdict(pod, "node1");
    assert_eq!(n1["reasons"], serde_json::json!(["Too many pods"]));
    assert_eq!(n1["code"], "Unschedulable");
    assert_eq!(
        pod["message"],
        "0/1 nodes are available: 1 Too many pods. no new claims to deallocate, \
         preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

/// What kube-apiserver refuses stays refused, in its words: ValidateNode checks every
/// allocatable quantity with ValidateNonnegativeQuantity.
#[test]
fn a_negative_allocatable_is_refused_as_kube_apiserver_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("neg.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"-1\", pods: \"10\"}}\n",
    )
    .unwrap();
    let out = kexplore(&["schedule", "-f", &path.display().to_string()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "Node n1: status.allocatable.cpu: Invalid value: \"-1\": must be greater than or equal to 0"
        ),
        "{err}"
    );
}

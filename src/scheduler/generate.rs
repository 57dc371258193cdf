//! Deterministic synthetic clusters for benchmarks and scale tests: N nodes in three zones,
//! M running pods per node, and pending pods of the four kinds upstream's scheduler_perf
//! measures (plain, node affinity, required pod anti-affinity, pod affinity). No randomness:
//! everything derives from the indices, so every run builds the same cluster.

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

pub const ZONES: [&str; 3] = ["zone-a", "zone-b", "zone-c"];

/// What the pending pods ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    Plain,
    NodeAffinity,
    PodAntiAffinity,
    PodAffinity,
}

pub fn node(i: usize) -> Node {
    let name = format!("node-{i:05}");
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": ZONES[i % 3],
            "node.kubernetes.io/instance-type": if i.is_multiple_of(2) { "m5.8xlarge" } else { "c5.9xlarge" },
        }},
        "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "ephemeral-storage": "500Gi", "pods": "110"},
            "images": [
                {"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 300_000},
                {"names": [format!("example.com/app-{}:1.0", i % 20)], "sizeBytes": 200_000_000},
            ],
        }
    }))
    .expect("static node shape")
}

/// A running pod: 100m-300m cpu, 256Mi-768Mi memory, labelled app=app-(k mod 50).
pub fn running_pod(node: usize, k: usize) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("run-{node:05}-{k:03}"), "namespace": "default",
                     "labels": {"app": format!("app-{}", (node + k) % 50), "color": "blue"}},
        "spec": {
            "nodeName": format!("node-{node:05}"),
            "containers": [{"name": "c", "image": format!("example.com/app-{}:1.0", k % 20),
                "resources": {"requests": {"cpu": format!("{}m", 100 + 100 * (k % 3)),
                                            "memory": format!("{}Mi", 256 * (1 + k % 3))}}}]
        }
    }))
    .expect("static pod shape")
}

pub fn cluster(nodes: usize, pods_per_node: usize) -> (Vec<Node>, Vec<Pod>) {
    let n: Vec<Node> = (0..nodes).map(node).collect();
    let mut p = Vec::with_capacity(nodes * pods_per_node);
    for i in 0..nodes {
        for k in 0..pods_per_node {
            p.push(running_pod(i, k));
        }
    }
    (n, p)
}

/// The i-th pending pod of a kind. Anti-affinity pods form groups of ten that refuse to share a
/// node; affinity pods want a zone that already runs their app.
pub fn pending_pod(kind: PendingKind, i: usize) -> Pod {
    let mut spec = json!({
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]
    });
    let mut labels = json!({"bench": "pending"});
    match kind {
        PendingKind::Plain => {}
        PendingKind::NodeAffinity => {
            spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONES[i % 3], ZONES[(i + 1) % 3]]}]}]}}});
        }
        PendingKind::PodAntiAffinity => {
            let group = format!("group-{}", i % 1000);
            labels["group"] = json!(group);
            spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": group}}, "topologyKey": "kubernetes.io/hostname"}]}});
        }
        PendingKind::PodAffinity => {
            spec["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": format!("app-{}", i % 50)}},
                 "topologyKey": "topology.kubernetes.io/zone"}]}});
        }
    }
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pending-{i:05}"), "namespace": "default", "labels": labels},
        "spec": spec
    }))
    .expect("static pod shape")
}

/// The whole cluster as one multi-document YAML text (`kexplore schedule -f` input).
pub fn cluster_yaml(
    nodes: usize,
    pods_per_node: usize,
    pending: usize,
    kind: PendingKind,
) -> String {
    let (n, p) = cluster(nodes, pods_per_node);
    let mut out = String::new();
    let mut push = |v: serde_json::Value| {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(&v).unwrap_or_default());
    };
    for x in n {
        push(serde_json::to_value(x).unwrap_or_default());
    }
    for x in p {
        push(serde_json::to_value(x).unwrap_or_default());
    }
    for i in 0..pending {
        push(serde_json::to_value(pending_pod(kind, i)).unwrap_or_default());
    }
    out
}

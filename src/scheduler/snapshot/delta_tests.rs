//! The snapshot kept by deltas equals one built afresh from the same objects, after a random
//! mix of a thousand watch events, both in every aggregate and index and in what a scheduling
//! cycle decides on it.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;

use super::*;
use crate::scheduler::{KubeVersion, Scheduler};

/// xorshift: the same mix on every run, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn node(name: &str, zone: usize, tainted: bool, extra: usize) -> Node {
    let taints = if tainted {
        json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    } else {
        json!([])
    };
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": format!("zone-{zone}"),
            "tier": format!("t{extra}"),
        }},
        "spec": {"taints": taints},
        "status": {
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "images": [{"names": [format!("img-{}", zone % 2)], "sizeBytes": 300_000_000}],
        }
    }))
    .expect("node")
}

fn pod(r: &mut Rng, name: &str, node: Option<String>) -> Pod {
    let app = format!("a{}", r.below(5));
    let mut spec = json!({
        "containers": [{
            "name": "c",
            "image": format!("img-{}", r.below(2)),
            "resources": {"requests": {"cpu": format!("{}m", 100 * (1 + r.below(5))), "memory": "128Mi"}},
        }],
    });
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    match r.below(6) {
        0 => {
            spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
            ]}})
        }
        1 => {
            spec["affinity"] = json!({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                    {"key": "app", "operator": "Exists"}]}, "topologyKey": "topology.kubernetes.io/zone"}}
            ]}})
        }
        2 => spec["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 8080}]),
        _ => {}
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": format!("ns{}", r.below(3)), "labels": {"app": app}},
        "spec": spec,
        "status": {"phase": "Running"},
    }))
    .expect("pod")
}

fn key(p: &Pod) -> String {
    super::pod_key(p)
}

/// Everything a cycle reads, independent of pod ids and insertion order.
fn canonical(s: &Snapshot) -> Vec<String> {
    let k = |id: PodId| format!("{}/{}", s.pods[id].namespace, s.pods[id].name);
    let keys = |ids: &[PodId]| {
        let mut v: Vec<String> = ids.iter().map(|&i| k(i)).collect();
        v.sort();
        v
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let mut out = vec![format!(
        "order {:?}",
        s.nodes.iter().map(|n| &n.name).collect::<Vec<_>>()
    )];
    for (i, n) in s.nodes.iter().enumerate() {
        let ports = sorted(n.used_ports.iter().map(|p| format!("{p:?}")).collect());
        let images: BTreeMap<_, _> = n.images.iter().collect();
        out.push(format!(
            "{} index={:?} labels={:?} taints={:?} unschedulable={} allocatable={:?}/{} requested={:?} non-zero={},{} legacy={},{} pods={:?} affinity={:?} anti={:?} ports={ports:?} images={images:?} ids={:?}",
            n.name,
            s.node_index.get(&n.name) == Some(&i),
            n.labels,
            n.taints,
            n.unschedulable,
            n.allocatable,
            n.allowed_pod_number,
            n.requested,
            n.non_zero_milli_cpu,
            n.non_zero_memory,
            n.legacy_non_zero_milli_cpu,
            n.legacy_non_zero_memory,
            keys(&n.pods),
            keys(&n.pods_with_affinity),
            keys(&n.pods_with_required_anti_affinity),
            n.image_ids,
        ));
    }
    out.push(format!("nodes {}", s.node_index.len()));
    let ns: HashMap<u32, &String> = s.namespace_ids.iter().map(|(k, v)| (*v, k)).collect();
    out.extend(sorted(
        (0..s.pods.len())
            .map(|id| {
                format!(
                    "{} on {} in {:?} ({:?})",
                    k(id),
                    s.nodes[s.pod_node[id]].name,
                    ns.get(&s.pod_ns[id]),
                    s.pods[id].node_name
                )
            })
            .collect(),
    ));
    let names = |v: &[usize]| sorted(v.iter().map(|&i| s.nodes[i].name.clone()).collect());
    out.push(format!("with affinity {:?}", names(&s.nodes_with_affinity)));
    out.push(format!(
        "with anti-affinity {:?}",
        names(&s.nodes_with_required_anti_affinity)
    ));
    out.extend(sorted(
        s.label_index
            .iter()
            .flat_map(|(l, m)| m.iter().map(move |(v, ids)| (l, v, ids)))
            .map(|(l, v, ids)| format!("label {l}={v}: {:?}", keys(ids)))
            .collect(),
    ));
    for t in [
        &s.required_affinity_terms,
        &s.required_anti_affinity_terms,
        &s.preferred_affinity_terms,
        &s.preferred_anti_affinity_terms,
    ] {
        let e = sorted(
            t.entries()
                .into_iter()
                .map(|(h, id, i)| format!("{h:?} {} {i}", k(id)))
                .collect(),
        );
        out.push(format!("terms {e:?}"));
    }
    let mut images: Vec<_> = s.image_num_nodes.iter().collect();
    images.sort();
    out.push(format!("images {images:?}"));
    out
}

fn rebuilt(nodes: &BTreeMap<String, Node>, pods: &BTreeMap<String, Pod>) -> Snapshot {
    let nodes: Vec<Node> = nodes.values().cloned().collect();
    let pods: Vec<Pod> = pods.values().cloned().collect();
    Snapshot::build(&nodes, &pods, true).expect("build")
}

#[test]
fn a_thousand_random_events_leave_the_snapshot_a_rebuild_would_make() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut nodes: BTreeMap<String, Node> = (0..12)
        .map(|i| {
            let name = format!("node-{i:02}");
            (name.clone(), node(&name, i % 3, i % 5 == 0, 0))
        })
        .collect();
    let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
    let mut next = 0;
    let mut node_names: Vec<String> = nodes.keys().cloned().collect();
    for _ in 0..80 {
        let n = Some(node_names[r.below(node_names.len())].clone());
        let p = pod(&mut r, &format!("p{next}"), n);
        next += 1;
        pods.insert(key(&p), p);
    }
    let initial: Vec<Pod> = pods.values().cloned().collect();
    let mut live = LiveSnapshot::new(nodes.values().cloned(), &initial, true).expect("live");
    let mut kinds = [0usize; 9];
    for event in 0..1000 {
        let pod_keys: Vec<String> = pods.keys().cloned().collect();
        let any_pod = |r: &mut Rng| pod_keys.get(r.below(pod_keys.len().max(1))).cloned();
        let kind = r.below(100);
        let slot = match kind {
            0..=29 => 0,
            30..=49 => 1,
            50..=64 => 2,
            65..=74 => 3,
            75..=79 => 4,
            80..=87 => 5,
            88..=91 => 6,
            92..=95 => 7,
            _ => 8,
        };
        kinds[slot] += 1;
        match slot {
            // A pod created: Pending, bound, or bound to a node that does not exist (yet).
            0 => {
                let target = match r.below(10) {
                    0..=3 => None,
                    4 => Some("node-new-0".to_string()),
                    _ => Some(node_names[r.below(node_names.len())].clone()),
                };
                let p = pod(&mut r, &format!("p{next}"), target);
                next += 1;
                live.apply_pod(&p, false).expect("apply");
                pods.insert(key(&p), p);
            }
            // A Pending pod bound (or a bound one's MODIFIED resent).
            1 => {
                if let Some(k) = any_pod(&mut r) {
                    let mut p = pods[&k].clone();
                    if let Some(s) = p.spec.as_mut() {
                        s.node_name = Some(node_names[r.below(node_names.len())].clone());
                    }
                    live.apply_pod(&p, false).expect("apply");
                    pods.insert(k, p);
                }
            }
            // A pod deleted.
            2 => {
                if let Some(k) = any_pod(&mut r) {
                    let p = pods.remove(&k).expect("listed");
                    live.apply_pod(&p, true).expect("apply");
                }
            }
            // A pod relabelled.
            3 => {
                if let Some(k) = any_pod(&mut r) {
                    let mut p = pods[&k].clone();
                    p.metadata
                        .labels
                        .get_or_insert_with(Default::default)
                        .insert("app".into(), format!("a{}", r.below(5)));
                    live.apply_pod(&p, false).expect("apply");
                    pods.insert(k, p);
                }
            }
            // A pod finished: it no longer holds capacity.
            4 => {
                if let Some(k) = any_pod(&mut r) {
                    let mut p = pods[&k].clone();
                    if let Some(s) = p.status.as_mut() {
                        s.phase = Some("Succeeded".into());
                    }
                    live.apply_pod(&p, false).expect("apply");
                    pods.insert(k, p);
                }
            }
            // A node tainted or untainted, or relabelled within its zone (in place).
            5 => {
                let name = node_names[r.below(node_names.len())].clone();
                let zone = node_zone(&nodes[&name]);
                let n = node(&name, zone, r.below(2) == 0, r.below(3));
                live.apply_node(&n, false).expect("apply");
                nodes.insert(name, n);
            }
            // A node moved to another zone: the node order changes.
            6 => {
                let name = node_names[r.below(node_names.len())].clone();
                let n = node(&name, r.below(4), false, 0);
                live.apply_node(&n, false).expect("apply");
                nodes.insert(name, n);
            }
            // A node added (sometimes the one orphaned pods were bound to).
            7 => {
                let name = format!("node-new-{}", r.below(3));
                let n = node(&name, r.below(3), false, 0);
                live.apply_node(&n, false).expect("apply");
                nodes.insert(name, n);
            }
            // A node deleted: its pods stay bound to it, out of the snapshot.
            _ => {
                if nodes.len() > 3 {
                    let name = node_names[r.below(node_names.len())].clone();
                    let n = nodes.remove(&name).expect("listed");
                    live.apply_node(&n, true).expect("apply");
                }
            }
        }
        node_names = nodes.keys().cloned().collect();
        if event % 50 == 49 {
            assert_eq!(
                canonical(&live.snapshot),
                canonical(&rebuilt(&nodes, &pods)),
                "after event {event}"
            );
        }
    }
    assert!(
        kinds.iter().all(|&k| k > 0),
        "every kind of event ran: {kinds:?}"
    );
    assert!(live.reassembled > 0);
    let mut fresh = rebuilt(&nodes, &pods);
    assert_eq!(canonical(&live.snapshot), canonical(&fresh));
    // What the user sees: the same cycle on both, for pods of every shape.
    for i in 0..20 {
        let p = pod(&mut r, &format!("pending-{i}"), None);
        let a = live.snapshot.pod_info(&p).expect("pod");
        let b = fresh.pod_info(&p).expect("pod");
        let v = KubeVersion::parse("1.33").expect("version");
        let ta = Scheduler::new(v, None, 0).schedule_one(&live.snapshot, &a);
        let tb = Scheduler::new(v, None, 0).schedule_one(&fresh, &b);
        assert_eq!(ta.selected, tb.selected, "pod {i}");
        assert_eq!(format!("{ta:?}"), format!("{tb:?}"), "pod {i}");
    }
}

fn node_zone(n: &Node) -> usize {
    n.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("topology.kubernetes.io/zone"))
        .and_then(|z| z.strip_prefix("zone-"))
        .and_then(|z| z.parse().ok())
        .unwrap_or(0)
}

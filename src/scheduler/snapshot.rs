//! The cluster as one scheduling cycle sees it: nodes in the scheduler cache's order, each with
//! aggregates kept up to date as pods are added (requested, non-zero requested, pod count,
//! used host ports, images, pods with affinity), so no cycle rescans every pod to learn them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};

pub use super::nodeinfo::NodeInfo;
use super::podinfo::PodInfo;
use super::requests::FieldError;
use super::selector::{Labels, Selector};
use super::term_index::TermIndex;
use super::trace::Name;

mod delta;
pub use delta::LiveSnapshot;

pub type PodId = usize;

/// Pod ids worth testing against a selector.
pub enum Candidates<'a> {
    Some(&'a [PodId]),
    All(usize),
}

impl Candidates<'_> {
    pub fn for_each(&self, mut f: impl FnMut(PodId)) {
        match self {
            Candidates::Some(ids) => ids.iter().for_each(|&i| f(i)),
            Candidates::All(n) => (0..*n).for_each(f),
        }
    }
}

/// A problem with one input object, naming the object and the field.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{object}: {field}: {message}")]
pub struct SnapshotError {
    pub object: String,
    pub field: String,
    pub message: String,
}

impl SnapshotError {
    pub(crate) fn field(object: &str, e: FieldError) -> SnapshotError {
        SnapshotError {
            object: object.to_string(),
            field: e.field,
            message: e.error.to_string(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// In the order the scheduler iterates them (zone round-robin, see `node_tree_order`).
    pub nodes: Vec<NodeInfo>,
    pub node_index: HashMap<String, usize>,
    /// Pods placed on nodes, by `PodId`; `pod_node[id]` is the index of its node. Shared, so
    /// a copy of the snapshot (each view of a live cluster takes one) does not copy 150,000
    /// compiled pods.
    pub pods: Vec<Arc<PodInfo>>,
    pub pod_node: Vec<usize>,
    /// Image name → number of nodes reporting it (ImageLocality's spread factor).
    pub image_num_nodes: HashMap<String, usize>,
    /// Image name → id used in `NodeInfo::image_ids`.
    pub image_ids: HashMap<String, u32>,
    /// Nodes (indices) holding at least one pod with affinity terms / required anti-affinity
    /// (upstream's HavePodsWithAffinityList / HavePodsWithRequiredAntiAffinityList).
    pub nodes_with_affinity: Vec<usize>,
    pub nodes_with_required_anti_affinity: Vec<usize>,
    /// Existing pods' affinity terms by kind, indexed by the labels they require.
    pub required_affinity_terms: TermIndex,
    pub required_anti_affinity_terms: TermIndex,
    pub preferred_affinity_terms: TermIndex,
    pub preferred_anti_affinity_terms: TermIndex,
    /// Every node's name in iteration order, shared by the traces (see `trace::NodeRun`).
    pub node_keys: Arc<[Name]>,
    /// Services (namespace, selector) and controllers ((namespace, kind, name) → selector)
    /// from the input: PodTopologySpread's system defaults spread by their selectors.
    pub services: Vec<(String, Labels)>,
    pub controllers: HashMap<(String, String, String), Selector>,
    /// PodDisruptionBudgets, when the caller has them: preemption spares the pods they protect.
    pub disruption_budgets: Vec<super::preemption::DisruptionBudget>,
    /// The cluster's claims, volumes and classes, when the caller has them: VolumeBinding
    /// judges with them, and is not simulated without.
    pub volumes: Option<Arc<super::plugins::volume_binding::Volumes>>,
    /// label key → value → pods carrying it, for selector lookups that would otherwise test
    /// every pod in the cluster (inter-pod affinity).
    pub label_index: HashMap<String, HashMap<String, Vec<PodId>>>,
    /// Namespace name → small id, and each pod's namespace id (parallel to `pods`), so
    /// namespace checks over many candidates do not touch the pods themselves.
    pub namespace_ids: HashMap<String, u32>,
    pub pod_ns: Vec<u32>,
    namespace_labels: HashMap<String, Arc<Labels>>,
    pod_level_resources: bool,
}

/// `utilnode.GetZoneKey`: region and zone, empty when the node has neither.
fn zone_key(labels: &Labels) -> String {
    let region = labels
        .get("topology.kubernetes.io/region")
        .map(String::as_str)
        .unwrap_or("");
    let zone = labels
        .get("topology.kubernetes.io/zone")
        .map(String::as_str)
        .unwrap_or("");
    if region.is_empty() && zone.is_empty() {
        String::new()
    } else {
        format!("{region}:\x00:{zone}")
    }
}

/// The cache's node tree lists nodes zone by zone in round-robin, zones in the order they were
/// first seen and nodes within a zone in the order added. With one zone it is input order.
fn node_tree_order(nodes: Vec<NodeInfo>) -> Vec<NodeInfo> {
    let mut zones: Vec<(String, Vec<NodeInfo>)> = Vec::new();
    for n in nodes {
        let k = zone_key(&n.labels);
        match zones.iter_mut().find(|(z, _)| *z == k) {
            Some((_, v)) => v.push(n),
            None => zones.push((k, vec![n])),
        }
    }
    let total: usize = zones.iter().map(|(_, v)| v.len()).sum();
    let mut iters: Vec<_> = zones.into_iter().map(|(_, v)| v.into_iter()).collect();
    let mut out = Vec::with_capacity(total);
    while out.len() < total {
        for it in iters.iter_mut() {
            if let Some(n) = it.next() {
                out.push(n);
            }
        }
    }
    out
}

impl Snapshot {
    /// Builds the snapshot from nodes and the pods bound to them. Pods in phase Succeeded or
    /// Failed are not counted (the scheduler's informer drops them); a pod bound to a node not
    /// in `nodes` is ignored, as the cache would keep it aside.
    pub fn build(
        nodes: &[Node],
        running: &[Pod],
        pod_level_resources: bool,
    ) -> Result<Snapshot, SnapshotError> {
        let mut infos = Vec::with_capacity(nodes.len());
        for n in nodes {
            infos.push(NodeInfo::from_node(n)?);
        }
        let mut snap = Snapshot {
            nodes: node_tree_order(infos),
            pod_level_resources,
            ..Snapshot::default()
        };
        for (i, n) in snap.nodes.iter().enumerate() {
            if snap.node_index.insert(n.name.clone(), i).is_some() {
                return Err(SnapshotError {
                    object: format!("Node {}", n.name),
                    field: "metadata.name".into(),
                    message: "two Nodes have this name".into(),
                });
            }
            for img in n.images.keys() {
                *snap.image_num_nodes.entry(img.clone()).or_default() += 1;
            }
        }
        snap.node_keys = snap.nodes.iter().map(|n| n.key.clone()).collect();
        for n in snap.nodes.iter_mut() {
            for (img, size) in &n.images {
                let next = snap.image_ids.len() as u32;
                let id = *snap.image_ids.entry(img.clone()).or_insert(next);
                n.image_ids.push((id, *size));
            }
            n.image_ids.sort_unstable();
        }
        snap.pods.reserve(running.len());
        snap.pod_node.reserve(running.len());
        for p in running {
            let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed")) {
                continue;
            }
            let info = snap.pod_info(p)?;
            let Some(node) = info
                .node_name
                .as_ref()
                .and_then(|n| snap.node_index.get(n))
                .copied()
            else {
                continue;
            };
            snap.add_pod(info, node);
        }
        Ok(snap)
    }

    /// Compiles a pod against this snapshot's namespaces and modelled version.
    pub fn pod_info(&mut self, p: &Pod) -> Result<PodInfo, SnapshotError> {
        let ns = p
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let ns_labels = self.namespace_labels(&ns);
        PodInfo::from_pod(p, ns_labels, self.pod_level_resources).map_err(|e| {
            SnapshotError::field(
                &format!("Pod {ns}/{}", p.metadata.name.as_deref().unwrap_or("")),
                e,
            )
        })
    }

    /// A namespace's labels as a namespaceSelector sees them; without Namespace objects every
    /// namespace carries the automatic `kubernetes.io/metadata.name` label.
    pub fn namespace_labels(&mut self, ns: &str) -> Arc<Labels> {
        self.namespace_labels
            .entry(ns.to_string())
            .or_insert_with(|| {
                let mut l = BTreeMap::new();
                l.insert("kubernetes.io/metadata.name".to_string(), ns.to_string());
                Arc::new(l)
            })
            .clone()
    }

    /// Records extra labels of a Namespace object given in the input.
    pub fn set_namespace_labels(&mut self, ns: &str, labels: &Labels) {
        let mut l = labels.clone();
        l.insert("kubernetes.io/metadata.name".to_string(), ns.to_string());
        self.namespace_labels.insert(ns.to_string(), Arc::new(l));
    }

    /// Places a pod on a node (the "assume" after a decision), updating the aggregates.
    pub fn add_pod(&mut self, mut info: PodInfo, node: usize) -> PodId {
        let id = self.pods.len();
        info.node_name = Some(self.nodes[node].name.clone());
        let n = &self.nodes[node];
        if info.has_affinity() && n.pods_with_affinity.is_empty() {
            self.nodes_with_affinity.push(node);
        }
        if !info.required_anti_affinity.is_empty() && n.pods_with_required_anti_affinity.is_empty()
        {
            self.nodes_with_required_anti_affinity.push(node);
        }
        self.nodes[node].add_pod(id, &info);
        for (i, t) in info.required_affinity.iter().enumerate() {
            self.required_affinity_terms.insert(id, i, t);
        }
        for (i, t) in info.required_anti_affinity.iter().enumerate() {
            self.required_anti_affinity_terms.insert(id, i, t);
        }
        for (i, (_, t)) in info.preferred_affinity.iter().enumerate() {
            self.preferred_affinity_terms.insert(id, i, t);
        }
        for (i, (_, t)) in info.preferred_anti_affinity.iter().enumerate() {
            self.preferred_anti_affinity_terms.insert(id, i, t);
        }
        let next = self.namespace_ids.len() as u32;
        let ns = match self.namespace_ids.get(&info.namespace) {
            Some(&id) => id,
            None => *self
                .namespace_ids
                .entry(info.namespace.clone())
                .or_insert(next),
        };
        self.pod_ns.push(ns);
        for (k, v) in &info.labels {
            let values = match self.label_index.get_mut(k) {
                Some(m) => m,
                None => self.label_index.entry(k.clone()).or_default(),
            };
            match values.get_mut(v) {
                Some(ids) => ids.push(id),
                None => {
                    values.insert(v.clone(), vec![id]);
                }
            }
        }
        self.pods.push(Arc::new(info));
        self.pod_node.push(node);
        id
    }

    /// The pods a selector can match: from the label index when the selector pins a
    /// `key = value`, else every pod. Callers still test each candidate.
    pub fn candidates<'a>(&'a self, sel: &Selector) -> Candidates<'a> {
        if sel.is_nothing() {
            return Candidates::Some(&[]);
        }
        match sel.index_hint() {
            Some((k, v)) => Candidates::Some(
                self.label_index
                    .get(k)
                    .and_then(|m| m.get(v))
                    .map(Vec::as_slice)
                    .unwrap_or(&[]),
            ),
            None => Candidates::All(self.pods.len()),
        }
    }

    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.node_index.get(name).map(|&i| &self.nodes[i])
    }

    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, zone: Option<&str>) -> Node {
        let mut labels = json!({});
        if let Some(z) = zone {
            labels = json!({"topology.kubernetes.io/zone": z});
        }
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        }))
        .unwrap()
    }

    #[test]
    fn zones_interleave() {
        let nodes = vec![
            node("a1", Some("a")),
            node("a2", Some("a")),
            node("b1", Some("b")),
            node("a3", Some("a")),
            node("c1", Some("c")),
        ];
        let s = Snapshot::build(&nodes, &[], true).unwrap();
        let names: Vec<_> = s.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["a1", "b1", "c1", "a2", "a3"]);
    }

    #[test]
    fn missing_allocatable_is_zero_and_said() {
        let bare: Node = serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap();
        let cpu_only: Node = serde_json::from_value(
            json!({"metadata": {"name": "y"}, "status": {"allocatable": {"cpu": "2"}}}),
        )
        .unwrap();
        let s = Snapshot::build(&[bare, cpu_only, node("z", None)], &[], true).unwrap();
        let x = s.node("x").unwrap();
        assert_eq!((x.allocatable.milli_cpu, x.allocatable.memory), (0, 0));
        assert_eq!(x.allowed_pod_number, 0);
        assert_eq!(
            x.allocatable_note().as_deref(),
            Some("x: no allocatable reported: treated as 0")
        );
        let y = s.node("y").unwrap();
        assert_eq!(y.allocatable.milli_cpu, 2000);
        assert_eq!(
            y.allocatable_note().as_deref(),
            Some("y: no allocatable memory or pods reported: treated as 0")
        );
        assert_eq!(s.node("z").unwrap().allocatable_note(), None);
    }
}

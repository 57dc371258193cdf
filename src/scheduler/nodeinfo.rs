//! One node as the scheduler sees it: its allocatable, taints and labels, plus aggregates over
//! the pods bound to it (requested, non-zero requested, ports, pods with affinity), kept up to
//! date as pods are added so no cycle rescans every pod.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Node, Taint};

use super::podinfo::{HostPort, PodInfo};
use super::requests::{Resources, node_allocatable};
use super::selector::Labels;
use super::snapshot::{PodId, Snapshot, SnapshotError};
use super::trace::Name;

#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub name: String,
    /// The same name, cheap to copy into traces.
    pub key: Name,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    pub allocatable: Resources,
    pub allowed_pod_number: i64,
    /// Which of cpu, memory and pods `status.allocatable` left out (all three when the node
    /// reported none): kube-scheduler reads them as 0, and the user should hear it.
    pub unreported: Unreported,
    /// Sum of the actual requests of the pods on the node.
    pub requested: Resources,
    /// Sum of the non-zero cpu/memory requests (defaults for containers without one).
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory: i64,
    /// v1.13's non-zero sums (app containers only).
    pub legacy_non_zero_milli_cpu: i64,
    pub legacy_non_zero_memory: i64,
    pub pods: Vec<PodId>,
    pub pods_with_affinity: Vec<PodId>,
    pub pods_with_required_anti_affinity: Vec<PodId>,
    pub used_ports: Vec<HostPort>,
    /// Image name (as the node reports it) → size in bytes.
    pub images: HashMap<String, i64>,
    /// The same images as (snapshot image id, size), sorted by id: ImageLocality's hot path.
    pub image_ids: Vec<(u32, i64)>,
    /// `scheduler.alpha.kubernetes.io/preferAvoidPods` controllers (legacy NodePreferAvoidPods).
    pub avoid_controllers: Vec<(String, String)>,
}

impl NodeInfo {
    pub(crate) fn from_node(node: &Node) -> Result<NodeInfo, SnapshotError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        let obj = format!("Node {name}");
        // A Node that has not posted status is valid: upstream's NodeInfo reads a missing
        // allocatable (or a missing resource in it) as zero.
        let alloc = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
        let unreported = Unreported::of(alloc);
        let (allocatable, pods) = match alloc {
            Some(a) => node_allocatable(a).map_err(|e| SnapshotError::field(&obj, e))?,
            None => (Resources::default(), 0),
        };
        let spec = node.spec.clone().unwrap_or_default();
        let mut images = HashMap::new();
        for img in node
            .status
            .as_ref()
            .and_then(|s| s.images.as_ref())
            .into_iter()
            .flatten()
        {
            for n in img.names.iter().flatten() {
                images.insert(n.clone(), img.size_bytes.unwrap_or(0));
            }
        }
        let avoid_controllers = node
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("scheduler.alpha.kubernetes.io/preferAvoidPods"))
            .map(|s| parse_avoid_pods(s))
            .unwrap_or_default();
        Ok(NodeInfo {
            labels: node.metadata.labels.clone().unwrap_or_default(),
            taints: spec.taints.unwrap_or_default(),
            unschedulable: spec.unschedulable.unwrap_or(false),
            allocatable,
            allowed_pod_number: pods,
            unreported,
            requested: Resources::default(),
            non_zero_milli_cpu: 0,
            non_zero_memory: 0,
            legacy_non_zero_milli_cpu: 0,
            legacy_non_zero_memory: 0,
            pods: Vec::new(),
            pods_with_affinity: Vec::new(),
            pods_with_required_anti_affinity: Vec::new(),
            used_ports: Vec::new(),
            images,
            image_ids: Vec::new(),
            avoid_controllers,
            key: Name::new(&name),
            name,
        })
    }

    pub(crate) fn add_pod(&mut self, id: PodId, p: &PodInfo) {
        self.requested.add(&p.requests.actual);
        self.non_zero_milli_cpu += p.requests.non_zero_milli_cpu;
        self.non_zero_memory += p.requests.non_zero_memory;
        self.legacy_non_zero_milli_cpu += p.requests.legacy_non_zero_milli_cpu;
        self.legacy_non_zero_memory += p.requests.legacy_non_zero_memory;
        self.pods.push(id);
        if p.has_affinity() {
            self.pods_with_affinity.push(id);
        }
        if !p.required_anti_affinity.is_empty() {
            self.pods_with_required_anti_affinity.push(id);
        }
        self.used_ports.extend(p.host_ports.iter().cloned());
    }
}

/// What a node's `status.allocatable` did not report, among the resources every pod is
/// checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Unreported {
    #[default]
    Nothing,
    /// No `status.allocatable` at all.
    All,
    /// These keys are absent (in cpu, memory, pods order).
    Some(Vec<&'static str>),
}

impl Unreported {
    /// Whether `resource` (cpu, memory or pods) was left out.
    pub fn covers(&self, resource: &str) -> bool {
        match self {
            Unreported::Nothing => false,
            Unreported::All => true,
            Unreported::Some(keys) => keys.contains(&resource),
        }
    }

    fn of(
        alloc: Option<
            &std::collections::BTreeMap<
                String,
                k8s_openapi::apimachinery::pkg::api::resource::Quantity,
            >,
        >,
    ) -> Unreported {
        let Some(a) = alloc else {
            return Unreported::All;
        };
        let missing: Vec<&'static str> = ["cpu", "memory", "pods"]
            .into_iter()
            .filter(|k| !a.contains_key(*k))
            .collect();
        match missing.len() {
            0 => Unreported::Nothing,
            3 if a.is_empty() => Unreported::All,
            _ => Unreported::Some(missing),
        }
    }
}

impl NodeInfo {
    /// "node1: no allocatable reported: treated as 0" when the node left allocatable (or
    /// some of cpu, memory, pods) out; None when it reported all three.
    pub fn allocatable_note(&self) -> Option<String> {
        match &self.unreported {
            Unreported::Nothing => None,
            Unreported::All => Some(format!(
                "{}: no allocatable reported: treated as 0",
                self.name
            )),
            Unreported::Some(keys) => Some(format!(
                "{}: no allocatable {} reported: treated as 0",
                self.name,
                keys.join(" or ")
            )),
        }
    }

    /// This node as it would be with `victims` evicted (preemption's what-if).
    pub fn without_pods(&self, snap: &Snapshot, victims: &[PodId]) -> NodeInfo {
        let mut n = self.clone();
        for &id in victims {
            let p = &snap.pods[id];
            n.requested.sub(&p.requests.actual);
            n.non_zero_milli_cpu -= p.requests.non_zero_milli_cpu;
            n.non_zero_memory -= p.requests.non_zero_memory;
            n.legacy_non_zero_milli_cpu -= p.requests.legacy_non_zero_milli_cpu;
            n.legacy_non_zero_memory -= p.requests.legacy_non_zero_memory;
            n.pods.retain(|x| *x != id);
            n.pods_with_affinity.retain(|x| *x != id);
            n.pods_with_required_anti_affinity.retain(|x| *x != id);
            for hp in &p.host_ports {
                if let Some(i) = n.used_ports.iter().position(|u| u == hp) {
                    n.used_ports.remove(i);
                }
            }
        }
        n
    }
}

fn parse_avoid_pods(s: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(s).unwrap_or_default();
    v.get("preferAvoidPods")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let c = e.get("podSignature")?.get("podController")?;
            Some((
                c.get("kind")?.as_str()?.to_string(),
                c.get("name")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

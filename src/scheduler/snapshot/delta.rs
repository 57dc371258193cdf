//! A snapshot kept current by watch events instead of rebuilt from every object on each change:
//! a pod created, bound, changed or deleted updates only its node's aggregates and the indexes
//! it is in; a node tainted or relabelled within its zone changes that node in place. Only a
//! node added, removed or moved to another zone (the node tree's order changes) or reporting
//! other images (ImageLocality's spread factor changes) reassembles the snapshot, from the
//! pods already compiled, never from the objects again.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};

use super::{NodeInfo, PodId, Snapshot, SnapshotError, zone_key};
use crate::scheduler::podinfo::PodInfo;

impl Snapshot {
    /// Takes pod `id` out of every aggregate and index `add_pod` put it in. The last pod takes
    /// its id so ids stay dense; returns whether one moved (then `pods[id]` is that pod).
    pub fn remove_pod(&mut self, id: PodId) -> bool {
        let last = self.pods.len() - 1;
        let node = self.pod_node[id];
        let info = &self.pods[id];
        let n = &mut self.nodes[node];
        n.requested.sub(&info.requests.actual);
        n.non_zero_milli_cpu -= info.requests.non_zero_milli_cpu;
        n.non_zero_memory -= info.requests.non_zero_memory;
        n.legacy_non_zero_milli_cpu -= info.requests.legacy_non_zero_milli_cpu;
        n.legacy_non_zero_memory -= info.requests.legacy_non_zero_memory;
        n.pods.retain(|&x| x != id);
        n.pods_with_affinity.retain(|&x| x != id);
        n.pods_with_required_anti_affinity.retain(|&x| x != id);
        for hp in &info.host_ports {
            if let Some(i) = n.used_ports.iter().position(|u| u == hp) {
                n.used_ports.remove(i);
            }
        }
        if n.pods_with_affinity.is_empty() {
            self.nodes_with_affinity.retain(|&k| k != node);
        }
        if n.pods_with_required_anti_affinity.is_empty() {
            self.nodes_with_required_anti_affinity
                .retain(|&k| k != node);
        }
        self.index_terms(id, None);
        self.index_labels(id, None);
        let moved = id != last;
        if moved {
            let n = &mut self.nodes[self.pod_node[last]];
            for list in [
                &mut n.pods,
                &mut n.pods_with_affinity,
                &mut n.pods_with_required_anti_affinity,
            ] {
                if let Some(x) = list.iter_mut().find(|x| **x == last) {
                    *x = id;
                }
            }
            self.index_terms(last, Some(id));
            self.index_labels(last, Some(id));
        }
        self.pods.swap_remove(id);
        self.pod_node.swap_remove(id);
        self.pod_ns.swap_remove(id);
        moved
    }

    /// Removes (`to: None`) or renumbers pod `id`'s entries in the four term indexes.
    fn index_terms(&mut self, id: PodId, to: Option<PodId>) {
        let info = &self.pods[id];
        let edits = [
            (
                &mut self.required_affinity_terms,
                info.required_affinity.iter().collect::<Vec<_>>(),
            ),
            (
                &mut self.required_anti_affinity_terms,
                info.required_anti_affinity.iter().collect(),
            ),
            (
                &mut self.preferred_affinity_terms,
                info.preferred_affinity.iter().map(|(_, t)| t).collect(),
            ),
            (
                &mut self.preferred_anti_affinity_terms,
                info.preferred_anti_affinity
                    .iter()
                    .map(|(_, t)| t)
                    .collect(),
            ),
        ];
        for (index, terms) in edits {
            for (i, t) in terms.into_iter().enumerate() {
                match to {
                    Some(to) => index.renumber(id, to, i, t),
                    None => index.remove(id, i, t),
                }
            }
        }
    }

    /// Removes or renumbers pod `id` in the label index, dropping buckets left empty.
    fn index_labels(&mut self, id: PodId, to: Option<PodId>) {
        for (k, v) in &self.pods[id].labels {
            let Some(values) = self.label_index.get_mut(k) else {
                continue;
            };
            if let Some(ids) = values.get_mut(v) {
                match to {
                    Some(to) => {
                        if let Some(x) = ids.iter_mut().find(|x| **x == id) {
                            *x = to;
                        }
                    }
                    None => ids.retain(|&x| x != id),
                }
                if ids.is_empty() {
                    values.remove(v);
                }
            }
            if values.is_empty() {
                self.label_index.remove(k);
            }
        }
    }
}

/// `namespace/name`, as the live view keys pods.
fn pod_key(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or("default"),
        p.metadata.name.as_deref().unwrap_or("")
    )
}

fn info_key(p: &PodInfo) -> String {
    format!("{}/{}", p.namespace, p.name)
}

/// A live cluster's snapshot, changed by one watch event at a time.
#[derive(Debug, Clone)]
pub struct LiveSnapshot {
    pub snapshot: Snapshot,
    /// Node objects by name: the input when the node order has to be laid out again.
    nodes: BTreeMap<String, Node>,
    /// Each placed pod's id in `snapshot.pods`.
    placed: HashMap<String, PodId>,
    /// Pods bound to a node the snapshot lacks: a build leaves them out, and takes them in
    /// when that node arrives.
    orphans: BTreeMap<String, PodInfo>,
    /// Times the snapshot was reassembled (node added, removed, moved or re-imaged).
    pub reassembled: u64,
}

impl LiveSnapshot {
    /// The snapshot of `nodes` with the bound, unfinished ones of `pods` on them. The pods
    /// are taken one at a time: a caller decoding them as they come never holds them all.
    pub fn new<P: std::borrow::Borrow<Pod>>(
        nodes: impl IntoIterator<Item = Node>,
        pods: impl IntoIterator<Item = P>,
        pod_level_resources: bool,
    ) -> Result<LiveSnapshot, SnapshotError> {
        let nodes: BTreeMap<String, Node> = nodes
            .into_iter()
            .map(|n| (n.metadata.name.clone().unwrap_or_default(), n))
            .collect();
        let list: Vec<Node> = nodes.values().cloned().collect();
        let mut live = LiveSnapshot {
            snapshot: Snapshot::build(&list, &[], pod_level_resources)?,
            nodes,
            placed: HashMap::new(),
            orphans: BTreeMap::new(),
            reassembled: 0,
        };
        for p in pods {
            live.apply_pod(p.borrow(), false)?;
        }
        Ok(live)
    }

    /// No node, no pod.
    pub fn empty(pod_level_resources: bool) -> LiveSnapshot {
        LiveSnapshot {
            snapshot: Snapshot {
                pod_level_resources,
                ..Snapshot::default()
            },
            nodes: BTreeMap::new(),
            placed: HashMap::new(),
            orphans: BTreeMap::new(),
            reassembled: 0,
        }
    }

    /// The node objects, by name.
    pub fn nodes(&self) -> &BTreeMap<String, Node> {
        &self.nodes
    }

    /// A copy of the snapshot without pod `key` (the pod a view places: it must not weigh on
    /// the node it is bound to).
    pub fn snapshot_without(&self, key: &str) -> Snapshot {
        let mut s = self.snapshot.clone();
        if let Some(&id) = self.placed.get(key) {
            s.remove_pod(id);
        }
        s
    }

    /// A pod was added, modified (`deleted` false) or deleted. On a pod that cannot be
    /// compiled the error says why and the pod stays out.
    pub fn apply_pod(&mut self, pod: &Pod, deleted: bool) -> Result<(), SnapshotError> {
        let key = pod_key(pod);
        self.take(&key);
        let finished = matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        let bound = pod.spec.as_ref().is_some_and(|s| s.node_name.is_some());
        if deleted || finished || !bound {
            return Ok(());
        }
        let info = self.snapshot.pod_info(pod)?;
        self.place(key, info);
        Ok(())
    }

    /// A node was added, modified or deleted.
    pub fn apply_node(&mut self, node: &Node, deleted: bool) -> Result<(), SnapshotError> {
        let name = node.metadata.name.clone().unwrap_or_default();
        if deleted {
            if self.nodes.remove(&name).is_some() {
                self.reassemble()?;
            }
            return Ok(());
        }
        let fresh = NodeInfo::from_node(node)?;
        let known = self.nodes.insert(name.clone(), node.clone()).is_some();
        match self.snapshot.node_index.get(&name).copied() {
            Some(k)
                if known
                    && zone_key(&self.snapshot.nodes[k].labels) == zone_key(&fresh.labels)
                    && self.snapshot.nodes[k].images == fresh.images =>
            {
                let n = &mut self.snapshot.nodes[k];
                n.labels = fresh.labels;
                n.taints = fresh.taints;
                n.unschedulable = fresh.unschedulable;
                n.allocatable = fresh.allocatable;
                n.allowed_pod_number = fresh.allowed_pod_number;
                n.unreported = fresh.unreported;
                n.avoid_controllers = fresh.avoid_controllers;
                Ok(())
            }
            _ => self.reassemble(),
        }
    }

    /// Pod `key` was deleted (only its key is needed).
    pub fn forget_pod(&mut self, key: &str) {
        self.take(key);
    }

    /// Takes pod `key` out, wherever it is.
    fn take(&mut self, key: &str) {
        if let Some(id) = self.placed.remove(key)
            && self.snapshot.remove_pod(id)
        {
            self.placed.insert(info_key(&self.snapshot.pods[id]), id);
        }
        self.orphans.remove(key);
    }

    fn place(&mut self, key: String, info: PodInfo) {
        let node = info
            .node_name
            .as_ref()
            .and_then(|n| self.snapshot.node_index.get(n))
            .copied();
        match node {
            Some(node) => {
                let id = self.snapshot.add_pod(info, node);
                self.placed.insert(key, id);
            }
            None => {
                self.orphans.insert(key, info);
            }
        }
    }

    /// Lays the nodes out again and puts every compiled pod back (orphans onto their node if
    /// it is there now).
    fn reassemble(&mut self) -> Result<(), SnapshotError> {
        let list: Vec<Node> = self.nodes.values().cloned().collect();
        let mut fresh = Snapshot::build(&list, &[], self.snapshot.pod_level_resources)?;
        let old = &mut self.snapshot;
        fresh.namespace_labels = std::mem::take(&mut old.namespace_labels);
        fresh.services = std::mem::take(&mut old.services);
        fresh.controllers = std::mem::take(&mut old.controllers);
        let old = std::mem::replace(&mut self.snapshot, fresh);
        let orphans = std::mem::take(&mut self.orphans);
        self.placed.clear();
        for info in old
            .pods
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .chain(orphans.into_values())
        {
            self.place(info_key(&info), info);
        }
        self.reassembled += 1;
        Ok(())
    }
}

#[cfg(test)]
#[path = "delta_tests.rs"]
mod tests;

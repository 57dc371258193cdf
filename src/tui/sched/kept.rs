//! View 5's live cluster as the watch keeps it: the scheduler's snapshot changed by each event
//! (`scheduler::snapshot::LiveSnapshot`), never rebuilt from every object, beside the pods as
//! listed (trimmed to what the view reads) and the pods list in display order. The initial
//! list goes through the same path as every later event, so both show the same thing.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::{Node, Pod};

use super::live::{Listing, PodRow, key_of};
use super::model::{ClusterData, Model};
use crate::scheduler::release::Modelling;
use crate::scheduler::snapshot::{LiveSnapshot, Snapshot};
use crate::scheduler::{NodeInfo, SnapshotError};

/// The cluster kept current, and what it could not take.
#[derive(Debug, Clone)]
pub struct Kept {
    pub live: LiveSnapshot,
    pods: BTreeMap<String, Pod>,
    /// Keyed (bound, namespace/name): Pending pods first, each group by key.
    rows: BTreeMap<(bool, String), PodRow>,
    /// Objects the snapshot could not take (a bad quantity, say), by kind and key: while one
    /// is there the view says so instead of showing a cluster without it.
    errors: BTreeMap<String, String>,
}

/// What the view is built from at one moment: cheap to take under the cache's lock, built
/// into a model elsewhere.
pub struct Frame {
    pub snapshot: Snapshot,
    pub data: ClusterData,
    pub rows: Vec<PodRow>,
    pub error: Option<String>,
}

impl Frame {
    /// The model (off the UI thread: a cycle over every node) and the pods list.
    pub fn build(self, hidden: Vec<String>) -> (Result<Model, String>, Listing) {
        let model = match self.error {
            Some(e) => Err(e),
            None => Model::from_snapshot(self.data, self.snapshot),
        };
        (
            model,
            Listing {
                pods: self.rows,
                hidden,
            },
        )
    }
}

fn node_key(n: &Node) -> String {
    format!("Node {}", n.metadata.name.as_deref().unwrap_or(""))
}

impl Kept {
    /// Compiles the listed objects. An object the scheduler cannot read is left out and named.
    pub fn new(nodes: Vec<Node>, pods: Vec<Pod>, pod_level_resources: bool) -> Kept {
        let mut errors = BTreeMap::new();
        let nodes: Vec<Node> = nodes
            .into_iter()
            .filter(|n| match NodeInfo::from_node(n) {
                Ok(_) => true,
                Err(e) => {
                    errors.insert(node_key(n), e.to_string());
                    false
                }
            })
            .collect();
        let live = LiveSnapshot::new(nodes, &[], pod_level_resources)
            // Every node compiled above and names are unique by construction.
            .unwrap_or_else(|_| LiveSnapshot::empty(pod_level_resources));
        let mut kept = Kept {
            live,
            pods: BTreeMap::new(),
            rows: BTreeMap::new(),
            errors,
        };
        for p in pods {
            kept.apply_pod(p, false);
        }
        kept
    }

    pub fn nodes(&self) -> usize {
        self.live.nodes().len()
    }

    pub fn pods(&self) -> usize {
        self.pods.len()
    }

    fn record(&mut self, key: String, r: Result<(), SnapshotError>) {
        match r {
            Ok(()) => self.errors.remove(&key),
            Err(e) => self.errors.insert(key, e.to_string()),
        };
    }

    /// A pod added, modified or deleted.
    pub fn apply_pod(&mut self, pod: Pod, deleted: bool) {
        let key = key_of(&pod);
        if let Some(old) = self.pods.get(&key).and_then(PodRow::of) {
            self.rows.remove(&(old.node.is_some(), key.clone()));
        }
        let r = self.live.apply_pod(&pod, deleted);
        self.record(format!("Pod {key}"), r);
        if deleted {
            self.pods.remove(&key);
            return;
        }
        if let Some(row) = PodRow::of(&pod) {
            self.rows.insert((row.node.is_some(), key.clone()), row);
        }
        self.pods.insert(key, pod);
    }

    /// A node added, modified or deleted.
    pub fn apply_node(&mut self, node: Node, deleted: bool) {
        let r = self.live.apply_node(&node, deleted);
        self.record(node_key(&node), if deleted { Ok(()) } else { r });
    }

    /// A fresh list of pods: what changed since (by resourceVersion) is applied, what is gone
    /// is deleted.
    pub fn relist_pods(&mut self, items: Vec<Pod>) {
        let mut seen = HashSet::new();
        for p in items {
            let key = key_of(&p);
            seen.insert(key.clone());
            let same = self.pods.get(&key).is_some_and(|o| {
                o.metadata.resource_version.is_some()
                    && o.metadata.resource_version == p.metadata.resource_version
            });
            if !same {
                self.apply_pod(p, false);
            }
        }
        let gone: Vec<Pod> = self
            .pods
            .iter()
            .filter(|(k, _)| !seen.contains(*k))
            .map(|(_, p)| p.clone())
            .collect();
        for p in gone {
            self.apply_pod(p, true);
        }
    }

    /// A fresh list of nodes, as `relist_pods`.
    pub fn relist_nodes(&mut self, items: Vec<Node>) {
        let mut seen = HashSet::new();
        for n in items {
            let name = n.metadata.name.clone().unwrap_or_default();
            seen.insert(name.clone());
            let same = self.live.nodes().get(&name).is_some_and(|o| {
                o.metadata.resource_version.is_some()
                    && o.metadata.resource_version == n.metadata.resource_version
            });
            if !same {
                self.apply_node(n, false);
            }
        }
        let gone: Vec<Node> = self
            .live
            .nodes()
            .iter()
            .filter(|(k, _)| !seen.contains(*k))
            .map(|(_, n)| n.clone())
            .collect();
        for n in gone {
            self.apply_node(n, true);
        }
    }

    /// The view's input now: the pod in `focus` (else `fallback`) to place, taken out of the
    /// cluster as `why::split_out` does (a bound pod must not weigh on its own node), and the
    /// snapshot without it.
    pub fn frame(
        &self,
        focus: Option<&str>,
        fallback: &Pod,
        source: &str,
        release: &Modelling,
    ) -> Frame {
        let (key, mut pod) = match focus.and_then(|f| self.pods.get(f).map(|p| (f, p))) {
            Some((f, p)) => (f.to_string(), p.clone()),
            None => (key_of(fallback), fallback.clone()),
        };
        // The pod as it was when the scheduler saw it: not yet bound, no status.
        if let Some(s) = pod.spec.as_mut() {
            s.node_name = None;
        }
        pod.status = None;
        Frame {
            snapshot: self.live.snapshot_without(&key),
            data: ClusterData {
                source: source.to_string(),
                nodes: Vec::new(),
                running: Vec::new(),
                pod,
                release: release.clone(),
            },
            rows: self.rows.values().cloned().collect(),
            error: self.errors.values().next().cloned(),
        }
    }
}

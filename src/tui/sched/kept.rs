//! View 5's live cluster as the watch keeps it: the scheduler's snapshot changed by each event
//! (`scheduler::snapshot::LiveSnapshot`), never rebuilt from every object, beside the pods list
//! in display order. A bound pod is kept compiled (in the snapshot) and as its row, not whole:
//! only Pending pods and the pod in focus are, since only they may be placed. The initial list
//! goes through the same path as every later event, so both show the same thing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::Metadata;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::live::{Listing, PodRow, key_of};
use super::model::{ClusterData, Model};
use crate::scheduler::plugins::volume_binding::Volumes;
use crate::scheduler::release::Modelling;
use crate::scheduler::snapshot::{LiveSnapshot, Snapshot};
use crate::scheduler::{NodeInfo, SnapshotError};

/// The cluster kept current, and what it could not take.
#[derive(Debug, Clone)]
pub struct Kept {
    pub live: LiveSnapshot,
    /// Every pod listed, by key: its resourceVersion (what a relist compares) and whether its
    /// row is among the bound ones (`None`: finished, no row).
    seen: HashMap<String, (Option<String>, Option<bool>)>,
    /// Pods kept whole: the Pending ones and those in `keep`.
    whole: BTreeMap<String, Pod>,
    /// Keys kept whole even when bound: the pod in focus and the fallback pod.
    keep: Vec<String>,
    /// Keyed (bound, namespace/name): Pending pods first, each group by key.
    rows: BTreeMap<(bool, String), Arc<PodRow>>,
    /// Objects the snapshot could not take (a bad quantity, say), by kind and key: while one
    /// is there the view says so instead of showing a cluster without it.
    errors: BTreeMap<String, String>,
    /// The claims, volumes and classes, when they were listed: each change rebuilds the
    /// snapshot's `volumes`, which VolumeBinding judges with.
    storage: Option<Storage>,
}

/// What VolumeBinding reads, by key (`namespace/name` for claims, the name otherwise).
#[derive(Debug, Clone)]
pub struct Storage {
    claims: BTreeMap<String, PersistentVolumeClaim>,
    volumes: BTreeMap<String, PersistentVolume>,
    classes: BTreeMap<String, StorageClass>,
}

/// One kind of storage object as `Kept` holds it: where, and under which key.
pub trait StorageObject: Metadata<Ty = ObjectMeta> + Sized {
    fn map(s: &mut Storage) -> &mut BTreeMap<String, Self>;
    fn key(&self) -> String {
        let m = self.metadata();
        match &m.namespace {
            Some(ns) => format!("{ns}/{}", m.name.as_deref().unwrap_or_default()),
            None => m.name.clone().unwrap_or_default(),
        }
    }
}

impl StorageObject for PersistentVolumeClaim {
    fn map(s: &mut Storage) -> &mut BTreeMap<String, Self> {
        &mut s.claims
    }
}

impl StorageObject for PersistentVolume {
    fn map(s: &mut Storage) -> &mut BTreeMap<String, Self> {
        &mut s.volumes
    }
}

impl StorageObject for StorageClass {
    fn map(s: &mut Storage) -> &mut BTreeMap<String, Self> {
        &mut s.classes
    }
}

/// What the view is built from at one moment: cheap to take under the cache's lock, built
/// into a model elsewhere.
pub struct Frame {
    pub snapshot: Snapshot,
    pub data: ClusterData,
    pub rows: Vec<Arc<PodRow>>,
    /// Pods listed with no row: finished ones.
    pub finished: usize,
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
                finished: self.finished,
                hidden,
            },
        )
    }
}

fn node_key(n: &Node) -> String {
    format!("Node {}", n.metadata.name.as_deref().unwrap_or(""))
}

impl Kept {
    /// Compiles the listed objects, each pod as it comes. An object the scheduler cannot read
    /// is left out and named. Pods `keep` names stay whole even when bound.
    pub fn new(
        nodes: Vec<Node>,
        pods: impl IntoIterator<Item = Pod>,
        pod_level_resources: bool,
        keep: Vec<String>,
    ) -> Kept {
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
        let live = LiveSnapshot::new(nodes, std::iter::empty::<Pod>(), pod_level_resources)
            // Every node compiled above and names are unique by construction.
            .unwrap_or_else(|_| LiveSnapshot::empty(pod_level_resources));
        let mut kept = Kept {
            live,
            seen: HashMap::new(),
            whole: BTreeMap::new(),
            keep,
            rows: BTreeMap::new(),
            errors,
            storage: None,
        };
        for p in pods {
            kept.apply_pod(p, false);
        }
        kept
    }

    /// The listed claims, volumes and classes: VolumeBinding is judged from now on.
    pub fn set_storage(
        &mut self,
        claims: Vec<PersistentVolumeClaim>,
        volumes: Vec<PersistentVolume>,
        classes: Vec<StorageClass>,
    ) {
        self.storage = Some(Storage {
            claims: claims.into_iter().map(|c| (c.key(), c)).collect(),
            volumes: volumes.into_iter().map(|v| (v.key(), v)).collect(),
            classes: classes.into_iter().map(|c| (c.key(), c)).collect(),
        });
        self.publish_storage();
    }

    /// A claim, volume or class added, modified or deleted (kept only once they were listed).
    pub fn apply_storage<T: StorageObject>(&mut self, o: T, deleted: bool) {
        let Some(s) = self.storage.as_mut() else {
            return;
        };
        let key = o.key();
        if deleted {
            T::map(s).remove(&key);
        } else {
            T::map(s).insert(key, o);
        }
        self.publish_storage();
    }

    /// A fresh list of one storage kind replaces what was kept of it.
    pub fn relist_storage<T: StorageObject>(&mut self, items: Vec<T>) {
        let Some(s) = self.storage.as_mut() else {
            return;
        };
        *T::map(s) = items.into_iter().map(|o| (o.key(), o)).collect();
        self.publish_storage();
    }

    fn publish_storage(&mut self) {
        self.live.snapshot.volumes = self.storage.as_ref().map(|s| {
            Arc::new(Volumes::new(
                s.claims.values().cloned().collect(),
                s.volumes.values().cloned().collect(),
                s.classes.values().cloned().collect(),
            ))
        });
    }

    pub fn nodes(&self) -> usize {
        self.live.nodes().len()
    }

    pub fn pods(&self) -> usize {
        self.seen.len()
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
        if deleted {
            self.forget(&key);
            return;
        }
        if let Some((_, Some(bound))) = self.seen.get(&key) {
            self.rows.remove(&(*bound, key.clone()));
        }
        let r = self.live.apply_pod(&pod, false);
        self.record(format!("Pod {key}"), r);
        let row = PodRow::of(&pod);
        let bound_row = row.as_ref().map(|r| r.node.is_some());
        if let Some(row) = row {
            self.rows
                .insert((row.node.is_some(), key.clone()), Arc::new(row));
        }
        self.seen.insert(
            key.clone(),
            (pod.metadata.resource_version.clone(), bound_row),
        );
        let pending = pod.spec.as_ref().is_none_or(|s| s.node_name.is_none());
        if pending || self.keep.contains(&key) {
            self.whole.insert(key, pod);
        } else {
            self.whole.remove(&key);
        }
    }

    /// Pod `key` is the one to place now: it and `fallback` are the bound pods kept whole
    /// from here on (the one placed before is let go). Whether it is held whole already.
    pub fn refocus(&mut self, key: &str, fallback: &str) -> bool {
        let before = std::mem::replace(&mut self.keep, vec![key.to_string(), fallback.to_string()]);
        for k in before.iter().filter(|k| !self.keep.contains(k)) {
            let bound = self
                .whole
                .get(k)
                .and_then(|p| p.spec.as_ref())
                .is_some_and(|s| s.node_name.is_some());
            if bound {
                self.whole.remove(k);
            }
        }
        self.whole.contains_key(key)
    }

    /// A pod fetched to be placed, kept whole unless the watch has given it since (a version as
    /// new or newer) or another pod was asked for meanwhile.
    pub fn hold(&mut self, pod: Pod) {
        let key = key_of(&pod);
        if self.keep.contains(&key) && !self.whole.contains_key(&key) {
            self.whole.insert(key, pod);
        }
    }

    /// Pod `key` is gone.
    fn forget(&mut self, key: &str) {
        if let Some((_, Some(bound))) = self.seen.remove(key) {
            self.rows.remove(&(bound, key.to_string()));
        }
        self.live.forget_pod(key);
        self.whole.remove(key);
        self.errors.remove(&format!("Pod {key}"));
    }

    /// A node added, modified or deleted.
    pub fn apply_node(&mut self, node: Node, deleted: bool) {
        let r = self.live.apply_node(&node, deleted);
        self.record(node_key(&node), if deleted { Ok(()) } else { r });
    }

    /// A fresh list of pods: what changed since (by resourceVersion) is applied, what is gone
    /// is deleted.
    pub fn relist_pods(&mut self, items: Vec<Pod>) {
        let mut listed = HashSet::new();
        for p in items {
            let key = key_of(&p);
            let same = self
                .seen
                .get(&key)
                .is_some_and(|(rv, _)| rv.is_some() && *rv == p.metadata.resource_version);
            listed.insert(key);
            if !same {
                self.apply_pod(p, false);
            }
        }
        let gone: Vec<String> = self
            .seen
            .keys()
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect();
        for k in gone {
            self.forget(&k);
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
        let (key, mut pod) = match focus.and_then(|f| self.whole.get(f).map(|p| (f, p))) {
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
            finished: self.seen.len() - self.rows.len(),
            error: self.errors.values().next().cloned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name, "resourceVersion": "1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}))
        .expect("node")
    }

    fn pod(name: &str, node: Option<&str>, rv: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i",
                "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": if node.is_some() { "Running" } else { "Pending" }}
        }))
        .expect("pod")
    }

    fn keys(k: &Kept) -> Vec<String> {
        k.rows.values().map(|r| r.key.clone()).collect()
    }

    #[test]
    fn bound_pods_are_kept_compiled_and_a_relist_applies_only_what_changed() {
        let mut k = Kept::new(
            vec![node("n1"), node("n2")],
            [
                pod("a", Some("n1"), "5"),
                pod("b", None, "6"),
                pod("focus", Some("n2"), "7"),
            ],
            true,
            vec!["default/focus".into()],
        );
        assert_eq!(keys(&k), ["default/b", "default/a", "default/focus"]);
        // Only the Pending pod and the one in focus are kept whole.
        let whole: Vec<&String> = k.whole.keys().collect();
        assert_eq!(whole, ["default/b", "default/focus"]);
        assert_eq!(
            k.live.snapshot.node("n1").map(|n| n.requested.milli_cpu),
            Some(1000)
        );
        // The focused pod is placed, and taken out of the node it is bound to.
        let f = k.frame(
            Some("default/focus"),
            &pod("x", None, "1"),
            "test",
            &Modelling::default(),
        );
        assert_eq!(f.data.pod.metadata.name.as_deref(), Some("focus"));
        assert_eq!(
            f.snapshot.node("n2").map(|n| n.requested.milli_cpu),
            Some(0)
        );
        assert_eq!(
            k.live.snapshot.node("n2").map(|n| n.requested.milli_cpu),
            Some(1000)
        );
        // b is bound meanwhile, a is gone, c is new; focus is unchanged.
        k.relist_pods(vec![
            pod("b", Some("n1"), "8"),
            pod("c", None, "9"),
            pod("focus", Some("n2"), "7"),
        ]);
        assert_eq!(keys(&k), ["default/c", "default/b", "default/focus"]);
        assert_eq!(k.pods(), 3);
        let whole: Vec<&String> = k.whole.keys().collect();
        assert_eq!(whole, ["default/c", "default/focus"]);
        assert_eq!(
            k.live.snapshot.node("n1").map(|n| n.requested.milli_cpu),
            Some(1000)
        );
        // A pod the snapshot cannot read is said, not silently left out; fixing it clears it.
        let mut bad = pod("c", Some("n2"), "10");
        if let Some(s) = bad.spec.as_mut() {
            s.containers[0].resources =
                serde_json::from_value(json!({"requests": {"cpu": "lots"}})).ok();
        }
        k.apply_pod(bad, false);
        let f = k.frame(None, &pod("x", None, "1"), "test", &Modelling::default());
        assert!(
            f.error
                .as_deref()
                .is_some_and(|e| e.starts_with("Pod default/c: ")),
            "{:?}",
            f.error
        );
        k.apply_pod(pod("c", Some("n2"), "11"), true);
        let f = k.frame(None, &pod("x", None, "1"), "test", &Modelling::default());
        assert_eq!(f.error, None);
        assert_eq!(keys(&k), ["default/b", "default/focus"]);
    }
}

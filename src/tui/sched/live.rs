//! View 5 on a live cluster: the cluster's pods as a list to choose from — Pending pods (no
//! `spec.nodeName`) first, then bound ones — and what the user's RBAC hid from the listing.
//! Choosing a pod re-lists the cluster with that pod in focus; for a bound pod the view then
//! sets the node the cluster chose beside the node the simulation picks (`scheduler::why`).

use k8s_openapi::api::core::v1::Pod;

use std::sync::{Arc, Mutex};

use super::model::{ClusterData, Model};
use super::watch::Feed;
use crate::scheduler::why::BoundPod;

/// One pod of the live cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRow {
    /// `namespace/name`, the form `focus` takes.
    pub key: String,
    /// `spec.nodeName`: where the cluster bound it; `None` while Pending.
    pub node: Option<String>,
    /// `status.phase` as the server reported it, if it did.
    pub phase: Option<String>,
    /// What `why::compare` needs beyond the node: `spec.schedulerName`, owner kinds, mirror.
    pub scheduler_name: String,
    pub owner_kinds: Vec<String>,
    pub mirror: bool,
    /// While Pending: why, as the scheduler wrote it in the PodScheduled condition (its
    /// FitError summary, e.g. `0/4 nodes are available: …`).
    pub reason: Option<String>,
}

/// The pods to choose from, and notes of what could not be listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Pending pods first, then bound pods, each by namespace/name. Shared with the kept
    /// cluster, so each new frame of a 150,000-pod cluster does not copy every row.
    pub pods: Vec<Arc<PodRow>>,
    /// Pods that ran to the end (Succeeded or Failed): counted, not listed, since they hold
    /// no capacity and will not be placed again.
    pub finished: usize,
    /// One plain line per list the server refused (RBAC), saying what the view then lacks.
    pub hidden: Vec<String>,
}

/// A live cluster as view 5 receives it: the simulation's input and the pods list.
#[derive(Debug, Clone)]
pub struct LiveCluster {
    pub data: ClusterData,
    pub listing: Listing,
    /// The watch keeping it current; dropping the last clone stops it.
    pub feed: Option<Feed>,
    /// The model and the pods list, built where the cluster was fetched (off the UI thread);
    /// the UI takes them. `None`: the UI builds the model from `data` and copies `listing`.
    pub model: Option<ModelSlot>,
}

/// A built model and pods list travelling in an action (actions are shared, not moved).
pub type ModelSlot = Arc<Mutex<Option<(Result<Model, String>, Listing)>>>;

impl LiveCluster {
    /// The model and pods list built with it, taken out (once).
    pub fn take_built(&self) -> Option<(Result<Model, String>, Listing)> {
        self.model
            .as_ref()
            .and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take())
    }
}

pub fn key_of(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or("default"),
        p.metadata.name.as_deref().unwrap_or("")
    )
}

impl PodRow {
    pub fn namespace(&self) -> &str {
        self.key.split_once('/').map_or("", |(ns, _)| ns)
    }

    /// The row for `p`; `None` for a finished pod, which holds no capacity and will not be
    /// scheduled again.
    pub fn of(p: &Pod) -> Option<PodRow> {
        if matches!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        ) {
            return None;
        }
        Some(PodRow {
            key: key_of(p),
            node: p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .filter(|n| !n.is_empty()),
            phase: p.status.as_ref().and_then(|s| s.phase.clone()),
            scheduler_name: p
                .spec
                .as_ref()
                .and_then(|s| s.scheduler_name.clone())
                .unwrap_or_default(),
            owner_kinds: p
                .metadata
                .owner_references
                .iter()
                .flatten()
                .map(|o| o.kind.clone())
                .collect(),
            mirror: p
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")),
            reason: p
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"))
                .filter(|c| c.status == "False")
                .and_then(|c| c.message.clone())
                .filter(|m| !m.is_empty()),
        })
    }
}

impl Listing {
    pub fn new(pods: &[Pod], hidden: Vec<String>) -> Listing {
        let mut rows: Vec<PodRow> = pods.iter().filter_map(PodRow::of).collect();
        rows.sort_by(|a, b| (a.node.is_some(), &a.key).cmp(&(b.node.is_some(), &b.key)));
        Listing {
            finished: pods.len() - rows.len(),
            pods: rows.into_iter().map(Arc::new).collect(),
            hidden,
        }
    }

    pub fn pending(&self) -> usize {
        self.pods.iter().filter(|p| p.node.is_none()).count()
    }

    /// Indices of the pods the list shows: those of namespace `ns`, or all.
    pub fn shown(&self, ns: Option<&str>) -> Vec<usize> {
        match ns {
            None => (0..self.pods.len()).collect(),
            Some(ns) => self
                .pods
                .iter()
                .enumerate()
                .filter(|(_, p)| p.namespace() == ns)
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// Pod `key` as `why::compare` needs it, when the cluster bound it.
    pub fn bound(&self, key: &str) -> Option<BoundPod> {
        let p = self.pods.iter().find(|p| p.key == key)?;
        Some(BoundPod {
            node: p.node.clone()?,
            scheduler_name: p.scheduler_name.clone(),
            owner_kinds: p.owner_kinds.clone(),
            mirror: p.mirror,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, node: Option<&str>, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": phase}
        }))
        .expect("pod")
    }

    #[test]
    fn pending_first_then_bound_and_finished_left_out() {
        let l = Listing::new(
            &[
                pod("b", Some("node-1"), "Running"),
                pod("z", None, "Pending"),
                pod("a", Some("node-2"), "Running"),
                pod("done", Some("node-2"), "Succeeded"),
                pod("c", None, "Pending"),
            ],
            vec![],
        );
        let keys: Vec<&str> = l.pods.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["default/c", "default/z", "default/a", "default/b"]);
        assert_eq!(l.pending(), 2);
        assert_eq!(l.finished, 1);
        assert_eq!(l.bound("default/b").map(|b| b.node), Some("node-1".into()));
        assert!(l.bound("default/c").is_none());
    }
}

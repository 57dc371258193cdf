//! kube-scheduler's cache (upstream `pkg/scheduler/backend/cache`): the nodes and the bound pods
//! as one live snapshot, changed by each pod and node event from the store's history rather
//! than rebuilt from every object on every cycle. Rebuilding decoded all 10,000 pods of a big
//! Deployment a few times a second; the snapshot's deltas are proven equal to a rebuild
//! (`scheduler/snapshot/delta_tests.rs`).

use k8s_openapi::api::core::v1::{Node, Pod};

use crate::apiserver::controllers::workload::Cursor;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::{EventType, Item, StoreEvent};
use crate::scheduler::snapshot::LiveSnapshot;

const PODS: &str = "/registry/pods/";
const NODES: &str = "/registry/minions/";

pub(crate) struct SchedulerCache {
    live: Option<LiveSnapshot>,
    pods: Cursor,
    nodes: Cursor,
    pod_level_resources: bool,
}

impl SchedulerCache {
    pub(crate) fn new(pod_level_resources: bool) -> Self {
        SchedulerCache {
            live: None,
            pods: Cursor::new(PODS),
            nodes: Cursor::new(NODES),
            pod_level_resources,
        }
    }

    /// The snapshot as of the store's current revision, or why there is none (a node that
    /// cannot be read, or two nodes of one name).
    pub(crate) fn catch_up(&mut self, api: &Api) -> Result<&mut LiveSnapshot, String> {
        let pods = self.pods.changes(api);
        let nodes = self.nodes.changes(api);
        let live = match (self.live.take(), pods, nodes) {
            (Some(mut live), Some(pods), Some(nodes)) => {
                // Nodes first: a pod bound to a node that just arrived then finds it.
                for ev in &nodes {
                    apply_node(&mut live, ev)?;
                }
                for ev in &pods {
                    apply_pod(&mut live, ev);
                }
                live
            }
            // The first time, or after falling out of the history: everything, listed now.
            // Events between the cursors' positions and this list come again next time, which
            // changes nothing (a delta sets a pod or node to its state).
            _ => self.rebuild(api)?,
        };
        Ok(self.live.insert(live))
    }

    fn rebuild(&self, api: &Api) -> Result<LiveSnapshot, String> {
        let nodes: Vec<Node> = decode(&api.store.list(NODES).0);
        // Each pod decoded as the snapshot takes it: 150,000 typed pods at once were 750 MB.
        let (pods, _) = api.store.list_items(PODS);
        let pods = pods.iter().filter_map(|(_, i)| i.decode::<Pod>());
        LiveSnapshot::new(nodes, pods, self.pod_level_resources)
            .map_err(|e| format!("snapshot: {e}"))
    }
}

/// Typed objects straight from the store's encodings, one at a time.
pub(crate) fn decode_items<T: serde::de::DeserializeOwned>(items: &[(String, Item)]) -> Vec<T> {
    items.iter().filter_map(|(_, i)| i.decode()).collect()
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    items: &[std::sync::Arc<serde_json::Value>],
) -> Vec<T> {
    items
        .iter()
        .filter_map(|v| T::deserialize(&**v).ok())
        .collect()
}

fn apply_node(live: &mut LiveSnapshot, ev: &StoreEvent) -> Result<(), String> {
    let Ok(node) = serde_json::from_slice::<Node>(&ev.object) else {
        return Ok(());
    };
    live.apply_node(&node, ev.kind == EventType::Deleted)
        .map_err(|e| format!("snapshot: {e}"))
}

fn apply_pod(live: &mut LiveSnapshot, ev: &StoreEvent) {
    match serde_json::from_slice::<Pod>(&ev.object) {
        // A pod that cannot be compiled stays out of the snapshot (its own scheduling says why).
        Ok(pod) => {
            let _ = live.apply_pod(&pod, ev.kind == EventType::Deleted);
        }
        Err(_) => {
            if let Some((ns, name)) = crate::apiserver::controllers::workload::ns_name(&ev.key) {
                live.forget_pod(&format!("{ns}/{name}"));
            }
        }
    }
}

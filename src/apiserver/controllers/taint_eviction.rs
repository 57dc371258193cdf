//! kube-controller-manager's taint eviction controller (upstream
//! `pkg/controller/tainteviction`, the NoExecuteTaintManager of the node lifecycle controller
//! before 1.29): a pod on a node with a NoExecute taint it does not tolerate is deleted at
//! once; one it tolerates for `tolerationSeconds` is deleted that long after the taint was
//! added (the DefaultTolerationSeconds admission plugin gives every pod 300 s for the
//! not-ready and unreachable taints); one it tolerates without a limit stays. Before the
//! delete, the pod gets the `DisruptionTarget` condition and an event says why.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::registry::resources;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;
use crate::apiserver::util::At;
use crate::scheduler::plugins::taint_toleration::tolerates;

const COMPONENT: &str = "taint-eviction-controller";
pub(crate) const DISRUPTION_TARGET: &str = "DisruptionTarget";
const REASON: &str = "DeletionByTaintManager";
const MESSAGE: &str = "Taint manager: deleting due to NoExecute taint";

/// When the pod has to go: `None` while its tolerations hold without limit.
fn eviction_time(taints: &[Taint], pod: &Pod) -> Option<OffsetDateTime> {
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    let mut limit: Option<i64> = None;
    let mut since = OffsetDateTime::UNIX_EPOCH;
    for taint in taints {
        let used: Vec<_> = tolerations.iter().filter(|t| tolerates(t, taint)).collect();
        if used.is_empty() {
            // Not tolerated at all: now.
            return Some(OffsetDateTime::UNIX_EPOCH);
        }
        // `getMinTolerationTime`: the shortest limit among the tolerations used; none → forever.
        for secs in used.iter().filter_map(|t| t.toleration_seconds) {
            limit = Some(limit.map_or(secs.max(0), |l| l.min(secs.max(0))));
        }
        if let Some(added) = taint
            .time_added
            .as_ref()
            .and_then(|t| OffsetDateTime::from_unix_timestamp(t.0.as_second()).ok())
        {
            since = since.max(added);
        }
    }
    let secs = limit?;
    if since == OffsetDateTime::UNIX_EPOCH {
        since = OffsetDateTime::now_utc();
    }
    Some(since + time::Duration::seconds(secs))
}

/// One pass over the pods of NoExecute-tainted nodes.
pub(crate) fn pass(api: &Api) {
    let (nodes, _) = api.store.list("/registry/minions/");
    let tainted: HashMap<String, Vec<Taint>> = nodes
        .iter()
        .filter_map(|v| serde_json::from_value::<Node>((**v).clone()).ok())
        .filter_map(|n| {
            let taints: Vec<Taint> = n
                .spec
                .and_then(|s| s.taints)
                .unwrap_or_default()
                .into_iter()
                .filter(|t| t.effect == "NoExecute")
                .collect();
            (!taints.is_empty()).then(|| (n.metadata.name.unwrap_or_default(), taints))
        })
        .collect();
    if tainted.is_empty() {
        return;
    }
    let now = OffsetDateTime::now_utc();
    for (_, item) in api.store.list_items("/registry/pods/").0 {
        // The view says where the pod is; only a pod on a tainted node is read whole (its
        // tolerations are not in the view).
        let v = item.view();
        let node = v
            .at("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(taints) = tainted.get(node) else {
            continue;
        };
        if v.at("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let Some(pod) = item.decode::<Pod>() else {
            continue;
        };
        if eviction_time(taints, &pod).is_some_and(|at| at <= now) {
            evict(api, &v);
        }
    }
}

/// Gives the pod the `DisruptionTarget` condition, then deletes it gracefully.
fn evict(api: &Api, pod: &Value) {
    let ns = pod
        .at("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = pod
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(def) = resources::lookup("", "v1", "pods") else {
        return;
    };
    events::record(
        api,
        pod,
        Reporter::Controller {
            component: COMPONENT,
        },
        "Normal",
        "TaintManagerEviction",
        "",
        &format!("Marking for deletion Pod {ns}/{name}"),
        "",
    );
    let uid = pod.at("/metadata/uid").cloned();
    let _ = api
        .store
        .update(&def.key_for(ns, name), None, Write::Commit, |cur| {
            if cur.at("/metadata/uid").cloned() != uid {
                return Err(crate::apiserver::storage::store::StoreError::Rejected(
                    "pod was replaced".into(),
                ));
            }
            let mut next = cur.clone();
            set_disruption_target(&mut next, REASON, MESSAGE);
            crate::apiserver::endpoints::managed_fields::record_pod_status_write(
                cur,
                &mut next,
                client::MANAGER,
            );
            Ok(next)
        });
    let _ = client::delete(api, def, ns, name);
}

/// `UpdatePodCondition` for DisruptionTarget=True: the transition time moves only when the
/// status does.
pub(crate) fn set_disruption_target(pod: &mut Value, reason: &str, message: &str) {
    let now = util::now();
    let mut conds: Vec<Value> = pod
        .at("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let want = json!({"type": DISRUPTION_TARGET, "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": reason, "message": message});
    match conds.iter_mut().find(|c| c["type"] == DISRUPTION_TARGET) {
        Some(c) if c["status"] == "True" => {
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        Some(c) => *c = want,
        None => conds.push(want),
    }
    pod["status"]["conditions"] = Value::Array(conds);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, added: &str) -> Taint {
        serde_json::from_value(json!({"key": key, "effect": "NoExecute", "timeAdded": added}))
            .unwrap_or_default()
    }

    fn pod(tolerations: Value) -> Pod {
        serde_json::from_value(json!({"spec": {"containers": [], "tolerations": tolerations}}))
            .unwrap_or_default()
    }

    #[test]
    fn toleration_seconds_count_from_the_taint() {
        let t = [taint(
            "node.kubernetes.io/unreachable",
            "2026-01-01T00:00:00Z",
        )];
        let p = pod(
            json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]),
        );
        let at = eviction_time(&t, &p).map(util::rfc3339);
        assert_eq!(at.as_deref(), Some("2026-01-01T00:00:05Z"));
    }

    #[test]
    fn untolerated_now_unlimited_never() {
        let t = [taint(
            "node.kubernetes.io/not-ready",
            "2026-01-01T00:00:00Z",
        )];
        assert_eq!(
            eviction_time(&t, &pod(json!([]))),
            Some(OffsetDateTime::UNIX_EPOCH)
        );
        let forever = pod(json!([{"operator": "Exists"}]));
        assert_eq!(eviction_time(&t, &forever), None);
    }
}

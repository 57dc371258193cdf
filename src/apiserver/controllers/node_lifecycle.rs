//! kube-controller-manager's node lifecycle controller (upstream
//! `pkg/controller/nodelifecycle`): it watches each node's heartbeat — the kubelet's Lease in
//! kube-node-lease and its Ready condition — and when none has been seen for the grace period
//! (`--node-monitor-grace-period`) marks the node's conditions Unknown (`NodeStatusUnknown`,
//! "Kubelet stopped posting node status."). From the conditions it keeps the node's taints:
//! NoSchedule ones for the scheduler (TaintNodesByCondition) and the not-ready / unreachable
//! NoExecute ones that `taint_eviction.rs` evicts pods for. A kubelet that posts Ready=True
//! again gets its taints removed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::controllers::kubelet_node::NODE_STATUS_UNKNOWN;
use crate::apiserver::controllers::taint_eviction;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;
use crate::apiserver::util::At;

/// `--node-monitor-period`: how often node health is checked.
const MONITOR_PERIOD: Duration = Duration::from_secs(5);

pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";
pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
const STOPPED_POSTING: &str = "Kubelet stopped posting node status.";

/// `nodeConditionToTaintKeyStatusMap`: a condition in a status → a NoSchedule taint.
const CONDITION_TAINTS: [(&str, &str, &str); 6] = [
    ("Ready", "False", NOT_READY),
    ("Ready", "Unknown", UNREACHABLE),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// The conditions the controller marks Unknown when the kubelet goes silent.
const MONITORED: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// How often the loop runs: upstream's period, or faster for a shortened grace period.
fn period(grace: Duration) -> Duration {
    MONITOR_PERIOD
        .min(grace / 5)
        .clamp(Duration::from_millis(100), Duration::from_secs(1))
}

/// The last heartbeat seen of a node and when this controller saw it change (upstream's
/// `probeTimestamp`: the controller's own clock, never the kubelet's).
struct Seen {
    renew: String,
    heartbeat: String,
    at: Instant,
}

pub(crate) async fn run(api: Arc<Api>, grace: Duration, mut stop: watch::Receiver<bool>) {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let mut tick = tokio::time::interval(period(grace));
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
        }
        monitor(&api, grace, &mut seen);
        taint_eviction::pass(&api);
    }
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

fn condition<'a>(node: &'a Value, ty: &str) -> Option<&'a Value> {
    node.at("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty))
}

fn monitor(api: &Api, grace: Duration, seen: &mut HashMap<String, Seen>) {
    let (nodes, _) = api.store.list("/registry/minions/");
    let mut not_ready_nodes = HashSet::new();
    let names: HashSet<&str> = nodes.iter().map(|n| str_at(n, "/metadata/name")).collect();
    seen.retain(|name, _| names.contains(name.as_str()));
    for n in nodes.iter() {
        let name = str_at(n, "/metadata/name").to_string();
        let renew = api
            .store
            .get(&format!("/registry/leases/kube-node-lease/{name}"))
            .map(|l| str_at(&l, "/spec/renewTime").to_string())
            .unwrap_or_default();
        let heartbeat = condition(n, "Ready")
            .map(|c| str_at(c, "/lastHeartbeatTime").to_string())
            .unwrap_or_default();
        let s = seen.entry(name.clone()).or_insert_with(|| Seen {
            renew: renew.clone(),
            heartbeat: heartbeat.clone(),
            at: Instant::now(),
        });
        if s.renew != renew || s.heartbeat != heartbeat {
            *s = Seen {
                renew,
                heartbeat,
                at: Instant::now(),
            };
        }
        let silent = s.at.elapsed() > grace;
        let settle = |cur: &Value| {
            let mut next = cur.clone();
            let now = util::now();
            if silent {
                mark_unknown(&mut next, &now);
            }
            reconcile_taints(&mut next, &now);
            next
        };
        // A node that never posted a Ready condition is not yet NotReady: upstream waits for the
        // grace period (then "Kubelet never posted node status.", Unknown) before its pods are.
        let ready = |v: &Value| condition(v, "Ready").is_some_and(|c| c["status"] == "True");
        let not_ready = |v: &Value| condition(v, "Ready").is_some_and(|c| c["status"] != "True");
        if not_ready(n) {
            not_ready_nodes.insert(name.clone());
        }
        // Read first: most passes change nothing and need no write lock.
        if settle(n) == **n {
            continue;
        }
        let key = format!("/registry/minions/{name}");
        if let Ok(after) = api
            .store
            .update(&key, None, Write::Commit, |cur| Ok(settle(cur)))
            && ready(n)
            && !ready(&after)
        {
            // `RecordNodeStatusChange`.
            events::record(
                api,
                &after,
                Reporter::Controller {
                    component: "node-controller",
                },
                "Normal",
                "NodeNotReady",
                "",
                &format!("Node {name} status is now: NodeNotReady"),
                "",
            );
        }
    }
    mark_pods_not_ready(api, &not_ready_nodes);
}

/// `MarkPodsNotReady`: the pods of nodes that are not Ready are not Ready either (Services
/// stop sending them traffic), though they stay until evicted. One pass over the pods for all
/// such nodes: a pass per node was nodes × pods, minutes of CPU on a 5,000-node scenario.
fn mark_pods_not_ready(api: &Api, nodes: &HashSet<String>) {
    if nodes.is_empty() {
        return;
    }
    for (_, item) in api.store.list_items("/registry/pods/").0 {
        let p = item.view();
        if !nodes.contains(str_at(&p, "/spec/nodeName"))
            || !condition(&p, "Ready").is_some_and(|c| c["status"] == "True")
        {
            continue;
        }
        let key = format!(
            "/registry/pods/{}/{}",
            str_at(&p, "/metadata/namespace"),
            str_at(&p, "/metadata/name")
        );
        let uid = str_at(&p, "/metadata/uid").to_string();
        let _ = api.store.update(&key, None, Write::Commit, |cur| {
            if str_at(cur, "/metadata/uid") != uid {
                return Err(crate::apiserver::storage::store::StoreError::Rejected(
                    "pod was replaced".into(),
                ));
            }
            let mut next = cur.clone();
            if let Some(cs) = next
                .pointer_mut("/status/conditions")
                .and_then(Value::as_array_mut)
            {
                for c in cs.iter_mut().filter(|c| c["type"] == "Ready") {
                    c["status"] = json!("False");
                    c["lastTransitionTime"] = json!(util::now());
                }
            }
            crate::apiserver::endpoints::managed_fields::record_pod_status_write(
                cur,
                &mut next,
                client::MANAGER,
            );
            Ok(next)
        });
    }
}

/// `tryUpdateNodeHealth` for a node past its grace period: every monitored condition not
/// already Unknown becomes Unknown; its heartbeat time stays the kubelet's last one.
fn mark_unknown(node: &mut Value, now: &str) {
    let Some(cs) = node
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        node["status"]["conditions"] = json!([{"type": "Ready", "status": "Unknown",
            "lastHeartbeatTime": null, "lastTransitionTime": now,
            "reason": NODE_STATUS_UNKNOWN, "message": STOPPED_POSTING}]);
        return;
    };
    for c in cs.iter_mut() {
        let ty = c["type"].as_str().unwrap_or_default();
        if MONITORED.contains(&ty) && c["status"] != "Unknown" {
            c["status"] = json!("Unknown");
            c["reason"] = json!(NODE_STATUS_UNKNOWN);
            c["message"] = json!(STOPPED_POSTING);
            c["lastTransitionTime"] = json!(now);
        }
    }
}

/// The taints this controller owns, as (key, effect), from the node's conditions and
/// `spec.unschedulable`.
fn wanted_taints(node: &Value) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for (ty, status, key) in CONDITION_TAINTS {
        if condition(node, ty).is_some_and(|c| c["status"] == status) {
            out.push((key, "NoSchedule"));
        }
    }
    if node
        .at("/spec/unschedulable")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        out.push((UNSCHEDULABLE, "NoSchedule"));
    }
    match condition(node, "Ready").map(|c| c["status"].as_str().unwrap_or_default()) {
        Some("False") => out.push((NOT_READY, "NoExecute")),
        Some("Unknown") => out.push((UNREACHABLE, "NoExecute")),
        _ => {}
    }
    out
}

fn is_owned(t: &Value) -> bool {
    let key = str_at(t, "/key");
    let effect = str_at(t, "/effect");
    match effect {
        "NoSchedule" => CONDITION_TAINTS.iter().any(|(_, _, k)| *k == key) || key == UNSCHEDULABLE,
        "NoExecute" => key == NOT_READY || key == UNREACHABLE,
        _ => false,
    }
}

/// Adds the taints the conditions call for (with `timeAdded`) and removes the owned ones they
/// no longer do; other taints are left as they are, in their order.
fn reconcile_taints(node: &mut Value, now: &str) {
    let wanted = wanted_taints(node);
    let current: Vec<Value> = node
        .at("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut next: Vec<Value> = current
        .iter()
        .filter(|t| {
            !is_owned(t)
                || wanted
                    .iter()
                    .any(|(k, e)| str_at(t, "/key") == *k && str_at(t, "/effect") == *e)
        })
        .cloned()
        .collect();
    for (k, e) in &wanted {
        if !next
            .iter()
            .any(|t| str_at(t, "/key") == *k && str_at(t, "/effect") == *e)
        {
            next.push(json!({"key": k, "effect": e, "timeAdded": now}));
        }
    }
    if next == current {
        return;
    }
    if next.is_empty() {
        if let Some(spec) = node.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("taints");
        }
    } else {
        node["spec"]["taints"] = Value::Array(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::controllers::kubelet_node;

    fn node() -> Value {
        json!({"metadata": {"name": "node-2"}, "spec": {"taints": [{"key": "team", "value": "a", "effect": "NoSchedule"}]},
               "status": {"conditions": kubelet_node::conditions("t0")}})
    }

    #[test]
    fn a_silent_node_is_unknown_and_unreachable() {
        let mut n = node();
        mark_unknown(&mut n, "t1");
        let ready = condition(&n, "Ready").cloned().unwrap_or_default();
        assert_eq!(ready["status"], "Unknown");
        assert_eq!(ready["reason"], "NodeStatusUnknown");
        assert_eq!(ready["message"], "Kubelet stopped posting node status.");
        assert_eq!(ready["lastHeartbeatTime"], "t0");
        reconcile_taints(&mut n, "t1");
        let keys: Vec<String> = n["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| format!("{}:{}", str_at(t, "/key"), str_at(t, "/effect")))
            .collect();
        assert_eq!(
            keys,
            [
                "team:NoSchedule",
                "node.kubernetes.io/unreachable:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute"
            ]
        );
    }

    #[test]
    fn ready_again_removes_only_the_owned_taints() {
        let mut n = node();
        mark_unknown(&mut n, "t1");
        reconcile_taints(&mut n, "t1");
        n["status"]["conditions"] = kubelet_node::conditions("t2");
        reconcile_taints(&mut n, "t2");
        assert_eq!(
            n["spec"]["taints"],
            json!([{"key": "team", "value": "a", "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn not_ready_is_the_not_ready_taint() {
        let mut n = node();
        n["status"]["conditions"][3]["status"] = json!("False");
        assert!(wanted_taints(&n).contains(&(NOT_READY, "NoExecute")));
        assert!(wanted_taints(&n).contains(&(NOT_READY, "NoSchedule")));
    }
}

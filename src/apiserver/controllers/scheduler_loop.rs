//! The scheduler inside the embedded cluster: watch pending pods whose schedulerName is
//! `default-scheduler`, run a scheduling engine on the store's live snapshot, bind through the
//! same code the `binding` subresource uses, and record `Scheduled` / `FailedScheduling`
//! events with upstream's messages. The full engine trace is kept for the journey and TUI.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::controllers::placement::{Controllers, Engine, KubeScheduler};
use crate::apiserver::controllers::preemption;
use crate::apiserver::endpoints::pods;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::Write;
use crate::apiserver::storage::tracked_keys::TrackedKeys;
use crate::apiserver::util;

fn pending(v: &Value) -> bool {
    v.pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
        && v.pointer("/spec/schedulerName")
            .and_then(Value::as_str)
            .unwrap_or("default-scheduler")
            == "default-scheduler"
        && v.pointer("/metadata/deletionTimestamp").is_none()
        && v.pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Run until `stop` flips. Wakes on store changes, retries unschedulable pods when the
/// cluster changes (at most every few seconds per pod, like the backoff queue).
pub async fn run(api: Arc<Api>, mut stop: watch::Receiver<bool>) {
    run_with(api, Arc::new(KubeScheduler::new()), &mut stop).await
}

pub async fn run_with(api: Arc<Api>, engine: Arc<dyn Engine>, stop: &mut watch::Receiver<bool>) {
    let mut changes = api.store.changes();
    let mut queue = TrackedKeys::new("/registry/pods/", pending);
    let mut failed: HashMap<String, (Instant, String)> = HashMap::new();
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        changes.borrow_and_update();
        queue.catch_up(&*api.store);
        cycle(&api, engine.as_ref(), &mut failed, &mut queue);
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
            // A burst of changes is one wake-up: the signal holds only the latest revision.
            r = changes.changed() => if r.is_err() { return },
        }
    }
}

fn decode<T: serde::de::DeserializeOwned>(items: &[Arc<Value>]) -> Vec<T> {
    items
        .iter()
        .filter_map(|v| serde_json::from_value((**v).clone()).ok())
        .collect()
}

/// The ReplicaSets' and StatefulSets' selectors, as kube-scheduler's informers see them.
fn controllers(api: &Api) -> Controllers {
    let mut out = Controllers::new();
    for (kind, prefix) in [
        ("ReplicaSet", "/registry/replicasets/"),
        ("StatefulSet", "/registry/statefulsets/"),
    ] {
        for o in api.store.list(prefix).0 {
            let s = |p: &str| {
                o.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            if let Some(Ok(sel)) = o
                .pointer("/spec/selector")
                .map(|v| serde_json::from_value(v.clone()))
            {
                out.push((
                    (
                        s("/metadata/namespace"),
                        kind.to_string(),
                        s("/metadata/name"),
                    ),
                    sel,
                ));
            }
        }
    }
    out
}

fn cycle(
    api: &Api,
    engine: &dyn Engine,
    failed: &mut HashMap<String, (Instant, String)>,
    pending_pods: &mut TrackedKeys,
) {
    if pending_pods.keys.is_empty() {
        return;
    }
    let (pod_values, _) = api.store.list("/registry/pods/");
    let mut queue: Vec<&Arc<Value>> = pod_values.iter().filter(|v| pending(v)).collect();
    if queue.is_empty() {
        return;
    }
    // Queue order: priority, then creation time.
    queue.sort_by(|a, b| {
        let pa = a
            .pointer("/spec/priority")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let pb = b
            .pointer("/spec/priority")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let ta = a
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tb = b
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // Within a second, the order pods entered the queue (upstream's PrioritySort compares
        // the queue timestamp): their resourceVersions, not their names.
        let rv = |v: &Value| {
            v.pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|r| r.parse::<u64>().ok())
                .unwrap_or(u64::MAX)
        };
        pb.cmp(&pa).then(ta.cmp(tb)).then(rv(a).cmp(&rv(b)))
    });
    let (node_values, _) = api.store.list("/registry/minions/");
    let nodes: Vec<Node> = decode(&node_values);
    let mut snapshot: Vec<Pod> = decode(&pod_values);
    let controllers = controllers(api);
    let budgets = preemption::budgets(api);
    // Checked once a cycle: most cycles have no nominated pod and skip the per-pod copy.
    let any_nominated = snapshot.iter().any(|p| {
        p.spec
            .as_ref()
            .is_some_and(|s| s.node_name.as_deref().unwrap_or_default().is_empty())
            && p.status
                .as_ref()
                .and_then(|s| s.nominated_node_name.as_deref())
                .is_some_and(|n| !n.is_empty())
    });
    for pv in queue {
        let ns = pv
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = pv
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let key = format!("{ns}/{name}");
        // A pod nominated by its preemption retries soon (upstream's initial 1 s backoff):
        // it binds as soon as its victims are gone.
        let nominated = pv
            .pointer("/status/nominatedNodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let backoff = Duration::from_secs(if nominated { 1 } else { 5 });
        if let Some((at, _)) = failed.get(&key)
            && at.elapsed() < backoff
        {
            continue;
        }
        let Ok(pod) = serde_json::from_value::<Pod>((**pv).clone()) else {
            continue;
        };
        let started = util::now_micro();
        let reserved = any_nominated
            .then(|| preemption::with_nominated(&snapshot, &pod))
            .flatten();
        let placement = engine.schedule(
            &nodes,
            reserved.as_deref().unwrap_or(&snapshot),
            &controllers,
            &budgets,
            &pod,
        );
        let detail = json!({
            "profile": "default-scheduler",
            "pod": key,
            "engine": placement.engine,
            "nodes_total": nodes.len(),
            "filter": placement.filter,
            "score": placement.score,
            "selected": placement.selected,
            "message": placement.message,
            "trace": placement.trace,
            "spread": placement.spread,
            "at": started,
        });
        let uid = pv.pointer("/metadata/uid").and_then(Value::as_str);
        // By uid: this can run before the create handler has finished with the pod's trace.
        api.traces.with_pod_of(&key, uid.unwrap_or_default(), |t| {
            t.scheduling = Some(detail)
        });
        match placement.selected {
            Some(node) => {
                match pods::bind(api, &ns, &name, &node, uid, None, Write::Commit) {
                    Ok(bound) => {
                        failed.remove(&key);
                        let msg = format!("Successfully assigned {ns}/{name} to {node}");
                        events::record(
                            &*api.store,
                            &bound,
                            Reporter::Scheduler,
                            "Normal",
                            "Scheduled",
                            "Binding",
                            &msg,
                            "",
                        );
                        let rv = bound.pointer("/metadata/resourceVersion").cloned();
                        api.traces.with_pod_of(&key, uid.unwrap_or_default(), |t| {
                            t.binding = Some(json!({"node": node, "resourceVersion": rv, "at": util::now_micro(), "event": msg}))
                        });
                        // The next pod sees this one on its node.
                        if let Ok(p) = serde_json::from_value::<Pod>((*bound).clone()) {
                            snapshot.retain(|x| x.metadata.uid != p.metadata.uid);
                            snapshot.push(p);
                        }
                    }
                    Err(e) => {
                        api.traces.with_pod_of(&key, uid.unwrap_or_default(), |t| {
                            t.binding = Some(json!({"error": e.message}))
                        });
                    }
                }
            }
            None => {
                if let Some(plan) = &placement.preemption {
                    let done = preemption::carry_out(api, pv, plan);
                    api.traces.with_pod_of(&key, uid.unwrap_or_default(), |t| {
                        if let Some(notes) = t
                            .scheduling
                            .as_mut()
                            .and_then(|s| s.pointer_mut("/trace/notes"))
                            .and_then(Value::as_array_mut)
                        {
                            notes.push(json!(done));
                        }
                    });
                }
                let msg = placement.message.unwrap_or_default();
                let repeat = failed.get(&key).is_some_and(|(_, m)| *m == msg);
                failed.insert(key.clone(), (Instant::now(), msg.clone()));
                if !repeat {
                    events::record(
                        &*api.store,
                        pv,
                        Reporter::Scheduler,
                        "Warning",
                        "FailedScheduling",
                        "Scheduling",
                        &msg,
                        "",
                    );
                    let now = util::now();
                    let _ = api.store.update(&format!("/registry/pods/{key}"), None, Write::Commit, |cur| {
                        let mut next = cur.clone();
                        let conds: Vec<Value> = next["status"]["conditions"].as_array().cloned().unwrap_or_default();
                        let mut conds: Vec<Value> = conds.into_iter().filter(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled")).collect();
                        conds.push(json!({"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": now, "reason": "Unschedulable", "message": msg}));
                        next["status"]["conditions"] = Value::Array(conds);
                        crate::apiserver::endpoints::managed_fields::record_pod_status_write(cur, &mut next, "kube-scheduler");
                        Ok(next)
                    });
                }
            }
        }
    }
}

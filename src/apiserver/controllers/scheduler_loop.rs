//! The scheduler inside the embedded cluster: watch pending pods whose schedulerName names one
//! of its profiles (`default-scheduler` unless `serve --scheduler-config` says more), run a scheduling engine on the store's live snapshot, bind through the
//! same code the `binding` subresource uses, and record `Scheduled` / `FailedScheduling`
//! events with upstream's messages. The full engine trace is kept for the journey and TUI.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::controllers::placement::{
    self, Controllers, Engine, KubeScheduler, Placement,
};
use crate::apiserver::controllers::preemption;
use crate::apiserver::controllers::scheduler_cache::{SchedulerCache, decode, decode_items};
use crate::apiserver::controllers::volume_prebind;
use crate::apiserver::endpoints::pods;
use crate::apiserver::registry::apps::workload::label_selector;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::Write;
use crate::apiserver::storage::tracked_keys::TrackedKeys;
use crate::apiserver::util;
use crate::apiserver::util::At;

/// Unbound, not being deleted, not gated, and naming one of `profiles` (kube-scheduler leaves
/// pods naming another scheduler alone).
fn pending(v: &Value, profiles: &[String]) -> bool {
    v.at("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
        && profiles.iter().any(|p| p == preemption::scheduler_name(v))
        && v.at("/metadata/deletionTimestamp").is_none()
        && v.at("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
}

/// Run until `stop` flips. Wakes on store changes, retries unschedulable pods when the
/// cluster changes (at most every few seconds per pod, like the backoff queue).
pub async fn run(
    api: Arc<Api>,
    mut stop: watch::Receiver<bool>,
    profiles: Option<Vec<crate::scheduler::Profile>>,
) {
    run_with(
        api,
        Arc::new(KubeScheduler::with_profiles(profiles)),
        &mut stop,
    )
    .await
}

pub async fn run_with(api: Arc<Api>, engine: Arc<dyn Engine>, stop: &mut watch::Receiver<bool>) {
    let mut changes = api.store.changes();
    let profiles = engine.scheduler_names();
    let mut queue = TrackedKeys::new("/registry/pods/", move |v| pending(v, &profiles));
    let mut failed = Failed::new();
    let mut cache = SchedulerCache::new(engine.pod_level_resources());
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        let pass = tokio::time::Instant::now();
        changes.borrow_and_update();
        queue.catch_up(&*api.store);
        cycle(&api, engine.as_ref(), &mut cache, &mut failed, &mut queue);
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
            // A burst of changes is one wake-up: the signal holds only the latest revision.
            r = changes.changed() => if r.is_err() { return },
        }
        // Each cycle reads every pod: a burst of writes is folded into one cycle a MIN_PASS.
        tokio::time::sleep_until(pass + crate::apiserver::controllers::workload::MIN_PASS).await;
    }
}

/// The last failed attempt to place a pod (by `namespace/name`): when, what the scheduler said,
/// and which pod it was, so a pod made again under the same name starts afresh.
struct Attempt {
    at: Instant,
    message: String,
    uid: String,
}

type Failed = HashMap<String, Attempt>;

/// What the scheduler records of one pod (`/debug/kexplore/pods/<ns>/<name>`, read by the
/// journey and view 4): the engine's whole trace at the top level — filter, score, selected,
/// message, nodes_total — serialized once, straight to text.
#[derive(serde::Serialize)]
struct Record<'a> {
    engine: &'static str,
    at: &'a str,
    spread: &'a Value,
    // Said by the trace itself when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pod: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(flatten)]
    trace: Option<&'a crate::scheduler::trace::PodTrace>,
}

/// The ReplicationControllers', ReplicaSets' and StatefulSets' selectors, as kube-scheduler's
/// informers see them.
fn controllers(api: &Api) -> Controllers {
    let mut out = Controllers::new();
    for (kind, prefix) in [
        ("ReplicationController", "/registry/controllers/"),
        ("ReplicaSet", "/registry/replicasets/"),
        ("StatefulSet", "/registry/statefulsets/"),
    ] {
        for o in api.store.list(prefix).0 {
            let s = |p: &str| {
                o.at(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            if let Some(Ok(sel)) =
                label_selector(&o).map(|v| serde_json::from_value(v.into_owned()))
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
    cache: &mut SchedulerCache,
    failed: &mut Failed,
    pending_pods: &mut TrackedKeys,
) {
    // A pod no longer pending (bound, deleted) leaves the queue: its name may come back as
    // another pod, which upstream's queue meets as new.
    failed.retain(|k, _| pending_pods.keys.contains(&format!("/registry/pods/{k}")));
    if pending_pods.keys.is_empty() {
        return;
    }
    // Views for the queue (a pod that stays unschedulable is looked at every cycle); the one
    // being placed is read whole.
    let pod_values: Vec<Arc<Value>> = pending_pods
        .keys
        .iter()
        .filter_map(|k| api.store.get_view(k))
        .collect();
    let mut queue: Vec<&Arc<Value>> = pod_values
        .iter()
        .filter(|v| pending_pods.wants(v))
        .collect();
    if queue.is_empty() {
        return;
    }
    // Queue order: priority, then creation time.
    queue.sort_by(|a, b| {
        let pa = a.at("/spec/priority").and_then(Value::as_i64).unwrap_or(0);
        let pb = b.at("/spec/priority").and_then(Value::as_i64).unwrap_or(0);
        let ta = a
            .at("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let tb = b
            .at("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // Within a second, the order pods entered the queue (upstream's PrioritySort compares
        // the queue timestamp): their resourceVersions, not their names.
        let rv = |v: &Value| {
            v.at("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|r| r.parse::<u64>().ok())
                .unwrap_or(u64::MAX)
        };
        pb.cmp(&pa).then(ta.cmp(tb)).then(rv(a).cmp(&rv(b)))
    });
    let controllers = controllers(api);
    let budgets = preemption::budgets(api);
    // The cache brought up to date once a cycle; each bound pod is then counted on its node
    // (kube-scheduler's `assume`) before the next pod is placed.
    let volumes = volume_prebind::volumes(api);
    let mut live = cache.catch_up(api);
    if let Ok(live) = &mut live {
        placement::set_owners(&mut live.snapshot, &controllers, &budgets);
        live.snapshot.volumes = Some(volumes.clone());
    }
    // Checked once a cycle: most cycles have no nominated pod and skip the per-pod copy.
    let any_nominated = queue.iter().any(|p| {
        p.at("/status/nominatedNodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
    });
    // Every pod as it is now, for a pod that needs a snapshot of its own (nominations).
    let all_pods = || -> Vec<Pod> { decode_items(&api.store.list_items("/registry/pods/").0) };
    let all_nodes = || -> Vec<Node> { decode(&api.store.list("/registry/minions/").0) };
    for pv in queue {
        let ns = pv
            .at("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = pv
            .at("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let key = format!("{ns}/{name}");
        // A pod nominated by its preemption retries soon (upstream's initial 1 s backoff):
        // it binds as soon as its victims are gone.
        let nominated = pv
            .at("/status/nominatedNodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let backoff = Duration::from_secs(if nominated { 1 } else { 5 });
        let uid = pv.at("/metadata/uid").and_then(Value::as_str);
        // What was tried before for this name, if it was this same pod.
        let before = failed.get(&key).filter(|f| Some(f.uid.as_str()) == uid);
        if before.is_some_and(|f| f.at.elapsed() < backoff) {
            continue;
        }
        let before_msg = before.map(|f| f.message.clone());
        let Some(whole) = api.store.get(&format!("/registry/pods/{key}")) else {
            continue;
        };
        let Ok(pod) = Pod::deserialize(whole.as_ref()) else {
            continue;
        };
        let started = util::now_micro();
        // Other pods' nominations hold room on their nodes: this pod gets a snapshot of its
        // own with them placed there (rare: only while a preemption is under way).
        let reserved = any_nominated
            .then(|| preemption::with_nominated(&all_pods(), &pod))
            .flatten()
            .map(|with| engine.snapshot(&all_nodes(), &with, &controllers, &budgets))
            .map(|own| {
                own.map(|mut own| {
                    own.volumes = Some(volumes.clone());
                    own
                })
            });
        let placement = match (reserved, &mut live) {
            (Some(Ok(mut own)), _) => engine.schedule(&mut own, &controllers, &pod),
            (Some(Err(e)), _) => Placement::failed(e),
            (None, Ok(live)) => engine.schedule(&mut live.snapshot, &controllers, &pod),
            (None, Err(e)) => Placement::failed(e.clone()),
        };
        let detail = Record {
            engine: placement.engine,
            at: &started,
            spread: &placement.spread,
            profile: placement
                .trace
                .is_none()
                .then_some(preemption::scheduler_name(pv)),
            pod: placement.trace.is_none().then_some(key.as_str()),
            message: placement
                .trace
                .is_none()
                .then_some(placement.message.as_deref())
                .flatten(),
            trace: placement.trace.as_ref(),
        };
        // By uid: this can run before the create handler has finished with the pod's trace.
        api.traces
            .set_scheduling(&key, uid.unwrap_or_default(), &detail);
        // PreBind: claims that wait for their first consumer are bound on the chosen node
        // first; the pod is bound on a later pass, once they are.
        let labels = |node: &str| {
            live.as_ref()
                .ok()
                .and_then(|l| l.snapshot.node(node))
                .map(|n| n.labels.clone())
                .unwrap_or_default()
        };
        let waiting = placement
            .selected
            .as_deref()
            .and_then(|node| volume_prebind::pre_bind(api, &volumes, &pod, (node, &labels(node))));
        if let Some(note) = waiting {
            api.traces
                .note_scheduling(&key, uid.unwrap_or_default(), &note);
            // Placed again after about a second, as a nominated pod is.
            let soon = Instant::now().checked_sub(Duration::from_secs(4));
            failed.insert(
                key.clone(),
                Attempt {
                    at: soon.unwrap_or_else(Instant::now),
                    message: String::new(),
                    uid: uid.unwrap_or_default().to_string(),
                },
            );
            continue;
        }
        match placement.selected {
            Some(node) => {
                match pods::bind(api, &ns, &name, &node, uid, None, Write::Commit) {
                    Ok(bound) => {
                        failed.remove(&key);
                        let msg = format!("Successfully assigned {ns}/{name} to {node}");
                        events::record(
                            api,
                            &bound,
                            Reporter::Scheduler {
                                profile: preemption::scheduler_name(pv),
                            },
                            "Normal",
                            "Scheduled",
                            "Binding",
                            &msg,
                            "",
                        );
                        let rv = bound.at("/metadata/resourceVersion").cloned();
                        api.traces.with_pod_of(&key, uid.unwrap_or_default(), |t| {
                            t.binding = Some(json!({"node": node, "resourceVersion": rv, "at": util::now_micro(), "event": msg}))
                        });
                        // The next pod sees this one on its node.
                        if let Ok(live) = &mut live
                            && let Ok(p) = Pod::deserialize(&*bound)
                        {
                            let _ = live.apply_pod(&p, false);
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
                    api.traces
                        .note_scheduling(&key, uid.unwrap_or_default(), &done);
                }
                let msg = placement.message.unwrap_or_default();
                let repeat = before_msg.as_deref() == Some(msg.as_str());
                failed.insert(
                    key.clone(),
                    Attempt {
                        at: Instant::now(),
                        message: msg.clone(),
                        uid: uid.unwrap_or_default().to_string(),
                    },
                );
                if !repeat {
                    events::record(
                        api,
                        pv,
                        Reporter::Scheduler {
                            profile: preemption::scheduler_name(pv),
                        },
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

//! The ReplicaSet controller (upstream `pkg/controller/replicaset`): keeps `spec.replicas` active
//! pods owned by each ReplicaSet — adopting orphans its selector picks, releasing pods it no
//! longer picks, creating from the template, deleting the surplus in upstream's rank order —
//! and reports the counts in status. Upstream runs the same controller over
//! ReplicationControllers as the ReplicationManager (`pkg/controller/replication`); so does
//! this one.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{
    self, Controller, claim, ns_name, pod_active, pod_available, pod_from_template, pod_ready, s,
};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

/// Upstream's `BurstReplicas`: at most this many creations or deletions per sync.
const BURST: usize = 500;

/// The kind one loop keeps, and the component its events name.
struct Kept {
    group: &'static str,
    plural: &'static str,
    /// The kind's store prefix, then the pods'.
    prefixes: &'static [&'static str],
    component: &'static str,
}

const REPLICA_SETS: Kept = Kept {
    group: "apps",
    plural: "replicasets",
    prefixes: &["/registry/replicasets/", "/registry/pods/"],
    component: "replicaset-controller",
};

const REPLICATION_CONTROLLERS: Kept = Kept {
    group: "",
    plural: "replicationcontrollers",
    prefixes: &["/registry/controllers/", "/registry/pods/"],
    component: "replication-controller",
};

pub(crate) struct ReplicaSetController {
    kept: &'static Kept,
    def: &'static ResourceDef,
}

impl ReplicaSetController {
    fn new(kept: &'static Kept) -> Self {
        let def = workload::def(kept.group, kept.plural);
        Self { kept, def }
    }
    pub(crate) fn replica_sets() -> Self {
        Self::new(&REPLICA_SETS)
    }
    /// Upstream's ReplicationManager.
    pub(crate) fn replication_manager() -> Self {
        Self::new(&REPLICATION_CONTROLLERS)
    }
}

impl Controller for ReplicaSetController {
    fn prefixes(&self) -> &'static [&'static str] {
        self.kept.prefixes
    }

    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if ev.key.starts_with(self.kept.prefixes[0]) {
            out.extend(ns_name(&ev.key));
            return;
        }
        // A pod: its controller, or — an orphan — every object of the kind in its namespace
        // that may adopt it.
        let mut any_owner = false;
        for (ns, kind, name) in workload::controllers_of(ev) {
            if kind == self.def.kind {
                any_owner = true;
                out.insert((ns, name));
            }
        }
        if !any_owner && let Some((ns, _)) = ns_name(&ev.key) {
            for rs in client::list(api, self.def, &ns) {
                out.insert((ns.clone(), s(&rs, "/metadata/name").to_string()));
            }
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, self.def, "")
            .iter()
            .map(|rs| {
                (
                    s(rs, "/metadata/namespace").to_string(),
                    s(rs, "/metadata/name").to_string(),
                )
            })
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, self.def, self.kept.component, ns, name)
    }
}

/// Upstream `ActivePodsWithRanks` order: the pods deleted first come first — unscheduled before
/// scheduled, Pending before Unknown before Running, not ready before ready, more pods of this
/// set on the same node first, ready for less time first, more restarts first, newer first.
fn deletion_order(pods: &mut [std::sync::Arc<Value>]) {
    let mut per_node: HashMap<String, usize> = HashMap::new();
    for p in pods.iter() {
        *per_node
            .entry(s(p, "/spec/nodeName").to_string())
            .or_default() += 1;
    }
    let phase_rank = |p: &Value| match s(p, "/status/phase") {
        "Pending" => 0,
        "Unknown" => 1,
        "Running" => 2,
        _ => 3,
    };
    let ready_since = |p: &Value| -> String {
        p.at("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| s(c, "/type") == "Ready"))
            .map(|c| s(c, "/lastTransitionTime").to_string())
            .unwrap_or_default()
    };
    let restarts = |p: &Value| -> i64 {
        p.at("/status/containerStatuses")
            .and_then(Value::as_array)
            .map(|cs| cs.iter().map(|c| int_at(c, "/restartCount")).sum())
            .unwrap_or(0)
    };
    pods.sort_by(|a, b| {
        let assigned = |p: &Value| !s(p, "/spec/nodeName").is_empty();
        assigned(a)
            .cmp(&assigned(b))
            .then(phase_rank(a).cmp(&phase_rank(b)))
            .then(pod_ready(a).cmp(&pod_ready(b)))
            .then_with(|| {
                let n = |p: &Value| per_node.get(s(p, "/spec/nodeName")).copied().unwrap_or(0);
                n(b).cmp(&n(a))
            })
            .then_with(|| ready_since(b).cmp(&ready_since(a)))
            .then_with(|| restarts(b).cmp(&restarts(a)))
            .then_with(|| {
                s(b, "/metadata/creationTimestamp").cmp(s(a, "/metadata/creationTimestamp"))
            })
    });
}

/// False when a pod could not be created or deleted.
fn sync(api: &Api, rs_def: &ResourceDef, component: &str, ns: &str, name: &str) -> bool {
    let pod_def = workload::def("", "pods");
    let Some(rs) = api.store.get(&rs_def.key_for(ns, name)) else {
        return true; // deleted: its pods are the garbage collector's
    };
    let pods = client::list(api, pod_def, ns);
    let owned = claim(api, &rs, pod_def, pods);
    let mut active: Vec<_> = owned.iter().filter(|p| pod_active(p)).cloned().collect();
    let want = usize::try_from(int_at(&rs, "/spec/replicas")).unwrap_or(0);
    // The first error of this sync, with upstream's reason for it (`calculateStatus`: fewer pods
    // than wanted is a failed create, more a failed delete).
    let mut failure: Option<(&str, String)> = None;
    let reason = match active.len().cmp(&want) {
        std::cmp::Ordering::Less => "FailedCreate",
        std::cmp::Ordering::Greater => "FailedDelete",
        std::cmp::Ordering::Equal => "",
    };
    if !workload::terminating(&rs) {
        if active.len() < want {
            let template = rs.at("/spec/template").cloned().unwrap_or(json!({}));
            for _ in 0..(want - active.len()).min(BURST) {
                let pod = pod_from_template(&rs, &template, None);
                match client::create(api, pod_def, pod) {
                    Ok(p) => {
                        let msg = format!("Created pod: {}", s(&p, "/metadata/name"));
                        workload::event(api, component, &rs, "Normal", "SuccessfulCreate", &msg);
                        active.push(p);
                    }
                    Err(e) => {
                        let msg = format!("Error creating: {}", e.message);
                        workload::event(api, component, &rs, "Warning", "FailedCreate", &msg);
                        failure = Some((reason, e.message));
                        break; // upstream stops the batch at the first error
                    }
                }
            }
        } else if active.len() > want {
            deletion_order(&mut active);
            let surplus: Vec<_> = active.drain(..active.len() - want).take(BURST).collect();
            for p in surplus {
                let pod_name = s(&p, "/metadata/name");
                match client::delete(api, pod_def, ns, pod_name) {
                    Ok(()) => {
                        let msg = format!("Deleted pod: {pod_name}");
                        workload::event(api, component, &rs, "Normal", "SuccessfulDelete", &msg);
                    }
                    Err(e) => {
                        let msg = format!("Error deleting: {}", e.message);
                        workload::event(api, component, &rs, "Warning", "FailedDelete", &msg);
                        failure.get_or_insert((reason, e.message));
                    }
                }
            }
        }
    }
    // Status from the pods as they are now (a deleted pod is terminating, no longer active).
    let pods = client::list(api, pod_def, ns);
    let uid = s(&rs, "/metadata/uid");
    let mine: Vec<_> = pods
        .iter()
        .filter(|p| workload::controller_uid(p) == Some(uid) && pod_active(p))
        .collect();
    let template_labels = rs.at("/spec/template/metadata/labels");
    let min_ready = int_at(&rs, "/spec/minReadySeconds");
    let status = json!({
        "replicas": mine.len(),
        "fullyLabeledReplicas": mine.iter().filter(|p| {
            let tl = template_labels.and_then(Value::as_object);
            let labels = p.at("/metadata/labels");
            tl.is_none_or(|tl| tl.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)))
        }).count(),
        "readyReplicas": mine.iter().filter(|p| pod_ready(p)).count(),
        "availableReplicas": mine.iter().filter(|p| pod_available(p, min_ready)).count(),
        "observedGeneration": rs.at("/metadata/generation").cloned().unwrap_or(json!(1)),
    });
    let status = without_zeros(status);
    let now = crate::apiserver::util::now();
    let _ = client::update(api, rs_def, ns, name, |o| {
        let conditions = replica_failure(o.at("/status/conditions"), failure.as_ref(), &now);
        o["status"] = status.clone();
        if !conditions.is_empty() {
            o["status"]["conditions"] = Value::Array(conditions);
        }
    });
    failure.is_none()
}

/// The `ReplicaFailure` condition as upstream's `calculateStatus` keeps it: added, True, when a
/// sync fails to create or delete a pod and it is not there yet (an existing one keeps its
/// first message and transition time), removed by the first sync without an error. The
/// Deployment controller copies it into the Deployment's conditions.
fn replica_failure(
    kept: Option<&Value>,
    failure: Option<&(&str, String)>,
    now: &str,
) -> Vec<Value> {
    let mut conditions = kept.and_then(Value::as_array).cloned().unwrap_or_default();
    let present = conditions.iter().any(|c| c["type"] == REPLICA_FAILURE);
    match failure {
        Some((reason, message)) if !present => conditions.push(json!({
            "type": REPLICA_FAILURE, "status": "True", "lastTransitionTime": now,
            "reason": reason, "message": message,
        })),
        None if present => conditions.retain(|c| c["type"] != REPLICA_FAILURE),
        _ => {}
    }
    conditions
}

/// The condition type on ReplicaSets, ReplicationControllers and Deployments alike.
pub(crate) const REPLICA_FAILURE: &str = "ReplicaFailure";

/// Status counts are `omitempty` upstream, except `replicas`.
fn without_zeros(mut status: Value) -> Value {
    if let Some(m) = status.as_object_mut() {
        m.retain(|k, v| k == "replicas" || v.as_i64() != Some(0));
    }
    status
}

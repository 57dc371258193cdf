//! The Deployment controller (upstream `pkg/controller/deployment`): one ReplicaSet per pod
//! template, named `<deployment>-<pod-template-hash>`; rolling updates within maxSurge and
//! maxUnavailable, or Recreate; revisions for `kubectl rollout history/undo`; old ReplicaSets
//! beyond revisionHistoryLimit removed; the Available and Progressing conditions.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::replicaset::REPLICA_FAILURE;
use crate::apiserver::controllers::workload::{self, Controller, claim, s, terminating};
use crate::apiserver::registry::apps::workload::{int_at, scaled};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;
use crate::apiserver::util::At;

const COMPONENT: &str = "deployment-controller";
pub(crate) const HASH_LABEL: &str = "pod-template-hash";
const REVISION: &str = "deployment.kubernetes.io/revision";
const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

pub(crate) struct Deployments;

impl Controller for Deployments {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/deployments/", "/registry/replicasets/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        workload::owner_dirty(ev, "/registry/deployments/", "Deployment", out);
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, workload::def("apps", "deployments"))
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, ns, name);
        true
    }
}

/// `controller.ComputeHash`'s shape: FNV-32a over the template (and the collision count),
/// the decimal digits mapped by `SafeEncodeString`. Go hashes a spew dump of its struct, so
/// the value differs from a real cluster's; the format and its stability are the same.
pub(crate) fn pod_template_hash(template: &Value, collision_count: Option<i64>) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= u32::from(*b);
            h = h.wrapping_mul(0x0100_0193);
        }
    };
    feed(template.to_string().as_bytes());
    if let Some(c) = collision_count {
        feed(&c.to_le_bytes());
    }
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    h.to_string()
        .bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

/// A ReplicaSet's template with the hash label taken out (upstream `EqualIgnoreHash`).
fn without_hash(template: Option<&Value>) -> Value {
    let mut t = template.cloned().unwrap_or(Value::Null);
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(HASH_LABEL);
        if labels.is_empty()
            && let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut)
        {
            m.remove("labels");
        }
    }
    t
}

fn revision_of(rs: &Value) -> i64 {
    s(
        rs,
        &format!("/metadata/annotations/{}", REVISION.replace('/', "~1")),
    )
    .parse()
    .unwrap_or(0)
}

fn replicas(rs: &Value) -> i64 {
    int_at(rs, "/spec/replicas")
}

/// `ResolveFenceposts`: surge rounded up, unavailable down; both 0 → unavailable 1.
fn fenceposts(d: &Value) -> (i64, i64) {
    let want = replicas(d);
    let surge = scaled(d.at("/spec/strategy/rollingUpdate/maxSurge"), want, true);
    let unavailable = scaled(
        d.at("/spec/strategy/rollingUpdate/maxUnavailable"),
        want,
        false,
    );
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

fn recreate(d: &Value) -> bool {
    s(d, "/spec/strategy/type") == "Recreate"
}

/// Scale a ReplicaSet, stamping the desired/max annotations, with upstream's event.
fn scale(api: &Api, d: &Value, rs: &Value, to: i64) -> Option<Arc<Value>> {
    let from = replicas(rs);
    let name = s(rs, "/metadata/name").to_string();
    let ns = s(rs, "/metadata/namespace").to_string();
    let max = replicas(d) + if recreate(d) { 0 } else { fenceposts(d).0 };
    let res = client::update(api, workload::def("apps", "replicasets"), &ns, &name, |o| {
        o["spec"]["replicas"] = json!(to);
        if !o.at("/metadata/annotations").is_some_and(Value::is_object) {
            o["metadata"]["annotations"] = json!({});
        }
        o["metadata"]["annotations"][DESIRED] = json!(replicas(d).to_string());
        o["metadata"]["annotations"][MAX_REPLICAS] = json!(max.to_string());
    });
    match res {
        Ok(v) => {
            if from != to {
                let dir = if to > from { "up" } else { "down" };
                let msg = format!("Scaled {dir} replica set {name} from {from} to {to}");
                workload::event(api, COMPONENT, d, "Normal", "ScalingReplicaSet", &msg);
            }
            Some(v)
        }
        Err(e) => {
            workload::event(api, COMPONENT, d, "Warning", "FailedUpdate", &e.message);
            None
        }
    }
}

/// The annotations a new ReplicaSet copies from its Deployment (all but the controller's own
/// and kubectl's last-applied).
fn copied_annotations(d: &Value) -> Map<String, Value> {
    d.at("/metadata/annotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    k.as_str() != LAST_APPLIED && !k.starts_with("deployment.kubernetes.io/")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// What one sync found or did that the status must say.
#[derive(Default)]
struct Outcome {
    created: Option<String>,
    revision: Option<i64>,
    collision: bool,
}

/// The new ReplicaSet: the one whose template is the Deployment's, its revision brought up to
/// the newest (a rollback reuses an old one), or created with `initial` replicas.
fn new_replica_set(
    api: &Api,
    d: &Value,
    rss: &[Arc<Value>],
    initial: i64,
    out: &mut Outcome,
) -> Option<Arc<Value>> {
    let template = d.at("/spec/template").cloned().unwrap_or(json!({}));
    let existing = rss
        .iter()
        .find(|rs| without_hash(rs.at("/spec/template")) == template);
    let max_old = rss
        .iter()
        .filter(|rs| existing.is_none_or(|e| !Arc::ptr_eq(e, rs)))
        .map(|rs| revision_of(rs))
        .max()
        .unwrap_or(0);
    let revision = max_old + 1;
    let rs_def = workload::def("apps", "replicasets");
    let ns = s(d, "/metadata/namespace");
    if let Some(rs) = existing {
        let old = revision_of(rs);
        out.revision = Some(old.max(revision));
        if old >= revision {
            return Some(rs.clone());
        }
        let name = s(rs, "/metadata/name").to_string();
        return client::update(api, rs_def, ns, &name, |o| {
            if !o.at("/metadata/annotations").is_some_and(Value::is_object) {
                o["metadata"]["annotations"] = json!({});
            }
            let ann = &mut o["metadata"]["annotations"];
            if old > 0 {
                let history = ann
                    .get(REVISION_HISTORY)
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let history = if history.is_empty() {
                    old.to_string()
                } else {
                    format!("{history},{old}")
                };
                ann[REVISION_HISTORY] = json!(history);
            }
            ann[REVISION] = json!(revision.to_string());
        })
        .ok();
    }
    let collision = d.at("/status/collisionCount").and_then(Value::as_i64);
    let hash = pod_template_hash(&template, collision);
    let d_name = s(d, "/metadata/name");
    let rs_name = format!("{d_name}-{hash}");
    let mut rs_template = template.clone();
    rs_template["metadata"]["labels"][HASH_LABEL] = json!(hash);
    let mut selector = d.at("/spec/selector").cloned().unwrap_or(json!({}));
    selector["matchLabels"][HASH_LABEL] = json!(hash);
    let mut annotations = copied_annotations(d);
    annotations.insert(REVISION.into(), json!(revision.to_string()));
    annotations.insert(DESIRED.into(), json!(replicas(d).to_string()));
    let max = replicas(d) + if recreate(d) { 0 } else { fenceposts(d).0 };
    annotations.insert(MAX_REPLICAS.into(), json!(max.to_string()));
    let mut owner = d.clone();
    owner["kind"] = json!("Deployment");
    owner["apiVersion"] = json!("apps/v1");
    let mut rs = json!({
        "metadata": {
            "name": rs_name,
            "namespace": ns,
            "labels": rs_template["metadata"]["labels"].clone(),
            "annotations": annotations,
            "ownerReferences": [workload::controller_ref(&owner)],
        },
        "spec": {
            "replicas": initial,
            "selector": selector,
            "template": rs_template,
        },
    });
    if let Some(m) = d
        .at("/spec/minReadySeconds")
        .filter(|m| m.as_i64() != Some(0))
    {
        rs["spec"]["minReadySeconds"] = m.clone();
    }
    match client::create(api, rs_def, rs) {
        Ok(created) => {
            if initial > 0 {
                let msg = format!("Scaled up replica set {rs_name} from 0 to {initial}");
                workload::event(api, COMPONENT, d, "Normal", "ScalingReplicaSet", &msg);
            }
            out.created = Some(rs_name);
            out.revision = Some(revision);
            Some(created)
        }
        Err(e) if e.reason == "AlreadyExists" => {
            // Someone else's ReplicaSet holds the name: a hash collision. Count it, so the
            // next hash differs (upstream bumps status.collisionCount).
            out.collision = true;
            None
        }
        Err(e) => {
            let msg = format!(
                "Failed to create new replica set {rs_name:?}: {}",
                e.message
            );
            workload::event(api, COMPONENT, d, "Warning", "FailedCreate", &msg);
            None
        }
    }
}

fn active_pods_of(api: &Api, ns: &str, rss: &[Arc<Value>]) -> usize {
    let uids: BTreeSet<&str> = rss.iter().map(|rs| s(rs, "/metadata/uid")).collect();
    client::list(api, workload::def("", "pods"), ns)
        .iter()
        .filter(|p| {
            workload::controller_uid(p).is_some_and(|u| uids.contains(u))
                && !matches!(s(p, "/status/phase"), "Succeeded" | "Failed")
        })
        .count()
}

fn sync(api: &Api, ns: &str, name: &str) {
    let d_def = workload::def("apps", "deployments");
    let rs_def = workload::def("apps", "replicasets");
    let Some(d) = api.store.get(&d_def.key_for(ns, name)) else {
        return;
    };
    let mut d = (*d).clone();
    d["kind"] = json!("Deployment");
    d["apiVersion"] = json!("apps/v1");
    let mut out = Outcome::default();
    if terminating(&d) {
        // syncStatusOnly: nothing is scaled, but the status follows, observedGeneration too
        // (a delete bumps the generation when it marks the object).
        status(api, &d, ns, name, &out);
        return;
    }
    let rss = claim(api, &d, rs_def, client::list(api, rs_def, ns));
    let template = d.at("/spec/template").cloned().unwrap_or(json!({}));
    let is_new = |rs: &Value| without_hash(rs.at("/spec/template")) == template;
    let want = replicas(&d);
    if d.at("/spec/paused") != Some(&json!(true)) {
        if recreate(&d) {
            for rs in rss.iter().filter(|rs| !is_new(rs) && replicas(rs) > 0) {
                scale(api, &d, rs, 0);
            }
            let olds: Vec<_> = rss.iter().filter(|rs| !is_new(rs)).cloned().collect();
            if active_pods_of(api, ns, &olds) == 0
                && let Some(new) = new_replica_set(api, &d, &rss, want, &mut out)
                && replicas(&new) != want
            {
                scale(api, &d, &new, want);
            }
        } else {
            rolling(api, &d, &rss, &mut out);
        }
        cleanup(api, &d, ns);
    }
    status(api, &d, ns, name, &out);
}

/// `rolloutRolling`: the new ReplicaSet up within maxSurge, the old ones down within
/// maxUnavailable, the unhealthy old ones first.
fn rolling(api: &Api, d: &Value, rss: &[Arc<Value>], out: &mut Outcome) {
    let want = replicas(d);
    let (surge, max_unavailable) = fenceposts(d);
    let total: i64 = rss.iter().map(|rs| replicas(rs)).sum();
    let template = d.at("/spec/template").cloned().unwrap_or(json!({}));
    let existing = rss
        .iter()
        .any(|rs| without_hash(rs.at("/spec/template")) == template);
    // NewRSNewReplicas for a ReplicaSet that does not exist yet.
    let initial = if existing {
        0
    } else {
        (want + surge - total).clamp(0, want)
    };
    let Some(new) = new_replica_set(api, d, rss, initial, out) else {
        return;
    };
    let new_uid = s(&new, "/metadata/uid").to_string();
    // reconcileNewReplicaSet.
    let cur = replicas(&new);
    let total: i64 = rss
        .iter()
        .filter(|rs| s(rs, "/metadata/uid") != new_uid)
        .map(|rs| replicas(rs))
        .sum::<i64>()
        + cur;
    let target = if cur > want {
        want
    } else if total >= want + surge {
        cur
    } else {
        cur + (want + surge - total).min(want - cur)
    };
    let new = if target != cur {
        scale(api, d, &new, target).unwrap_or(new)
    } else {
        new
    };
    // reconcileOldReplicaSets, on the ReplicaSets as they are now.
    let ns = s(d, "/metadata/namespace");
    let mut olds: Vec<Arc<Value>> = rss
        .iter()
        .filter(|rs| s(rs, "/metadata/uid") != new_uid)
        .filter_map(|rs| {
            api.store
                .get(&workload::def("apps", "replicasets").key_for(ns, s(rs, "/metadata/name")))
        })
        .collect();
    olds.sort_by(|a, b| {
        s(a, "/metadata/creationTimestamp").cmp(s(b, "/metadata/creationTimestamp"))
    });
    let old_pods: i64 = olds.iter().map(|rs| replicas(rs)).sum();
    if old_pods == 0 {
        return;
    }
    let all_pods = old_pods + replicas(&new);
    let min_available = want - max_unavailable;
    let new_unavailable = replicas(&new) - int_at(&new, "/status/availableReplicas");
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return;
    }
    // cleanupUnhealthyReplicas: old pods that are not available go first.
    let mut cleaned = 0;
    for rs in olds.iter_mut() {
        if cleaned >= max_scaled_down {
            break;
        }
        let unhealthy = replicas(rs) - int_at(rs, "/status/availableReplicas");
        if replicas(rs) == 0 || unhealthy <= 0 {
            continue;
        }
        let down = unhealthy.min(max_scaled_down - cleaned);
        if let Some(v) = scale(api, d, rs, replicas(rs) - down) {
            *rs = v;
            cleaned += down;
        }
    }
    // scaleDownOldReplicaSetsForRollingUpdate: then available old pods, above minAvailable.
    let available: i64 = olds
        .iter()
        .chain(std::iter::once(&new))
        .map(|rs| int_at(rs, "/status/availableReplicas"))
        .sum();
    if available <= min_available {
        return;
    }
    let mut budget = available - min_available;
    for rs in &olds {
        if budget <= 0 {
            break;
        }
        if replicas(rs) == 0 {
            continue;
        }
        let down = replicas(rs).min(budget);
        if scale(api, d, rs, replicas(rs) - down).is_some() {
            budget -= down;
        }
    }
}

/// Old ReplicaSets with no replicas beyond revisionHistoryLimit go, oldest revision first.
fn cleanup(api: &Api, d: &Value, ns: &str) {
    let rs_def = workload::def("apps", "replicasets");
    let Some(limit) = d.at("/spec/revisionHistoryLimit").and_then(Value::as_i64) else {
        return;
    };
    let uid = s(d, "/metadata/uid");
    let template = d.at("/spec/template").cloned().unwrap_or(json!({}));
    let mut idle: Vec<Arc<Value>> = client::list(api, rs_def, ns)
        .into_iter()
        .filter(|rs| workload::controller_uid(rs) == Some(uid))
        .filter(|rs| without_hash(rs.at("/spec/template")) != template)
        .filter(|rs| {
            replicas(rs) == 0
                && int_at(rs, "/status/replicas") == 0
                && int_at(rs, "/status/observedGeneration") >= int_at(rs, "/metadata/generation")
                && !terminating(rs)
        })
        .collect();
    let excess = idle.len() as i64 - limit.max(0);
    if excess <= 0 {
        return;
    }
    idle.sort_by_key(|rs| revision_of(rs));
    for rs in idle.iter().take(usize::try_from(excess).unwrap_or(0)) {
        let _ = client::delete(api, rs_def, ns, s(rs, "/metadata/name"));
    }
}

fn condition(ty: &str, status: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": ty, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
           "reason": reason, "message": message})
}

/// `SetDeploymentCondition`: same status and reason → unchanged; same status → the
/// transition time is kept.
fn set_condition(conds: &mut Vec<Value>, mut c: Value) {
    if let Some(cur) = conds.iter().find(|x| x["type"] == c["type"]) {
        if cur["status"] == c["status"] && cur["reason"] == c["reason"] {
            return;
        }
        if cur["status"] == c["status"] {
            c["lastTransitionTime"] = cur["lastTransitionTime"].clone();
        }
    }
    conds.retain(|x| x["type"] != c["type"]);
    conds.push(c);
}

/// `syncRolloutStatus`: counts from the ReplicaSets, Available and Progressing conditions.
fn status(api: &Api, d: &Value, ns: &str, name: &str, out: &Outcome) {
    let d_def = workload::def("apps", "deployments");
    let rs_def = workload::def("apps", "replicasets");
    let uid = s(d, "/metadata/uid");
    let template = d.at("/spec/template").cloned().unwrap_or(json!({}));
    let rss: Vec<_> = client::list(api, rs_def, ns)
        .into_iter()
        .filter(|rs| workload::controller_uid(rs) == Some(uid))
        .collect();
    let new = rss
        .iter()
        .find(|rs| without_hash(rs.at("/spec/template")) == template);
    let sum = |p: &str| rss.iter().map(|rs| int_at(rs, p)).sum::<i64>();
    let want = replicas(d);
    let available = sum("/status/availableReplicas");
    let total_spec = sum("/spec/replicas");
    let updated = new.map_or(0, |rs| int_at(rs, "/status/replicas"));
    let counts = json!({
        "observedGeneration": d.at("/metadata/generation").cloned().unwrap_or(json!(1)),
        "replicas": sum("/status/replicas"),
        "updatedReplicas": updated,
        "readyReplicas": sum("/status/readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": (total_spec - available).max(0),
    });
    let now = util::now();
    let max_unavailable = if recreate(d) {
        0
    } else {
        fenceposts(d).1.min(want)
    };
    let mut conds: Vec<Value> = d
        .at("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if available >= want - max_unavailable {
        set_condition(
            &mut conds,
            condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                &now,
            ),
        );
    } else {
        set_condition(
            &mut conds,
            condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                &now,
            ),
        );
    }
    let new_name = new.map(|rs| s(rs, "/metadata/name").to_string());
    let which = |fallback: String, f: &dyn Fn(&str) -> String| match &new_name {
        Some(n) => f(&format!("ReplicaSet {n:?}")),
        None => f(&fallback),
    };
    let d_label = format!("Deployment {name:?}");
    // checkPausedConditions: a pause and a resume are Progressing Unknown.
    let paused = d.at("/spec/paused") == Some(&json!(true));
    let prog_reason = conds
        .iter()
        .find(|c| c["type"] == "Progressing")
        .map(|c| c["reason"].clone());
    if paused && prog_reason != Some(json!("DeploymentPaused")) {
        set_condition(
            &mut conds,
            condition(
                "Progressing",
                "Unknown",
                "DeploymentPaused",
                "Deployment is paused",
                &now,
            ),
        );
    } else if !paused && prog_reason == Some(json!("DeploymentPaused")) {
        set_condition(
            &mut conds,
            condition(
                "Progressing",
                "Unknown",
                "DeploymentResumed",
                "Deployment is resumed",
                &now,
            ),
        );
    }
    if paused {
        // A paused Deployment's status is its counts and availability only (syncStatusOnly).
    } else if let Some(created) = &out.created {
        set_condition(
            &mut conds,
            condition(
                "Progressing",
                "True",
                "NewReplicaSetCreated",
                &format!("Created new replica set {created:?}"),
                &now,
            ),
        );
    } else if new_name.is_some() && !conds.iter().any(|c| c["type"] == "Progressing") {
        let n = new_name.clone().unwrap_or_default();
        set_condition(
            &mut conds,
            condition(
                "Progressing",
                "True",
                "FoundNewReplicaSet",
                &format!("Found new replica set {n:?}"),
                &now,
            ),
        );
    }
    let cur_prog = conds.iter().find(|c| c["type"] == "Progressing").cloned();
    let old = d.get("status").cloned().unwrap_or(json!({}));
    let complete_before = counts["replicas"] == counts["updatedReplicas"]
        && cur_prog
            .as_ref()
            .is_some_and(|c| c["reason"] == "NewReplicaSetAvailable");
    if !paused && d.at("/spec/progressDeadlineSeconds").is_some() && !complete_before {
        let generation = int_at(d, "/metadata/generation").max(1);
        let complete = updated == want
            && counts["replicas"] == json!(want)
            && available == want
            && generation <= int_at(&counts, "/observedGeneration");
        let progressing = updated > int_at(&old, "/updatedReplicas")
            || (int_at(&counts, "/replicas") - updated)
                < (int_at(&old, "/replicas") - int_at(&old, "/updatedReplicas"))
            || int_at(&counts, "/readyReplicas") > int_at(&old, "/readyReplicas")
            || available > int_at(&old, "/availableReplicas");
        let deadline = int_at(d, "/spec/progressDeadlineSeconds");
        let timed_out = cur_prog.as_ref().is_some_and(|c| {
            c["reason"] == "ProgressDeadlineExceeded"
                || util::parse_time(s(c, "/lastUpdateTime")).is_some_and(|t| {
                    t + time::Duration::seconds(deadline) < time::OffsetDateTime::now_utc()
                })
        });
        if complete {
            let msg = which(d_label.clone(), &|w| {
                format!("{w} has successfully progressed.")
            });
            set_condition(
                &mut conds,
                condition("Progressing", "True", "NewReplicaSetAvailable", &msg, &now),
            );
        } else if progressing {
            let msg = which(d_label.clone(), &|w| format!("{w} is progressing."));
            let mut c = condition("Progressing", "True", "ReplicaSetUpdated", &msg, &now);
            if let Some(cur) = &cur_prog
                && cur["status"] == "True"
            {
                c["lastTransitionTime"] = cur["lastTransitionTime"].clone();
            }
            conds.retain(|x| x["type"] != "Progressing");
            set_condition(&mut conds, c);
        } else if timed_out {
            let msg = which(d_label.clone(), &|w| {
                format!("{w} has timed out progressing.")
            });
            set_condition(
                &mut conds,
                condition(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    &msg,
                    &now,
                ),
            );
        }
    }
    if !paused {
        // getReplicaFailures: the new ReplicaSet's failure, else any old one's.
        let failure_of = |rs: &Arc<Value>| {
            rs.at("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|c| c["type"] == REPLICA_FAILURE).cloned())
        };
        match new
            .and_then(failure_of)
            .or_else(|| rss.iter().find_map(failure_of))
        {
            Some(c) => {
                let at = s(&c, "/lastTransitionTime");
                // ReplicaSetToDeploymentCondition: both times are the set's transition time.
                let d_cond = condition(
                    REPLICA_FAILURE,
                    s(&c, "/status"),
                    s(&c, "/reason"),
                    s(&c, "/message"),
                    at,
                );
                set_condition(&mut conds, d_cond);
            }
            None => conds.retain(|c| c["type"] != REPLICA_FAILURE),
        }
    }
    let mut st = counts;
    for k in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ] {
        if st[k] == json!(0)
            && let Some(m) = st.as_object_mut()
        {
            m.remove(k);
        }
    }
    let collision = d.at("/status/collisionCount").and_then(Value::as_i64);
    let collision = if out.collision {
        Some(collision.unwrap_or(0) + 1)
    } else {
        collision
    };
    if let Some(c) = collision {
        st["collisionCount"] = json!(c);
    }
    st["conditions"] = json!(conds);
    let revision = out.revision;
    let _ = client::update(api, d_def, ns, name, |o| {
        o["status"] = st.clone();
        if let Some(r) = revision {
            if !o.at("/metadata/annotations").is_some_and(Value::is_object) {
                o["metadata"]["annotations"] = json!({});
            }
            o["metadata"]["annotations"][REVISION] = json!(r.to_string());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_have_upstreams_alphabet_and_follow_the_collision_count() {
        let t = json!({"metadata": {"labels": {"app": "web"}}});
        let a = pod_template_hash(&t, None);
        assert!(
            a.len() <= 10 && a.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{a}"
        );
        assert_eq!(a, pod_template_hash(&t, None));
        assert_ne!(a, pod_template_hash(&t, Some(1)));
    }

    #[test]
    fn the_hash_label_is_ignored_when_templates_are_compared() {
        let t = json!({"metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}}});
        assert_eq!(
            without_hash(Some(&t)),
            json!({"metadata": {"labels": {"app": "web"}}})
        );
    }
}

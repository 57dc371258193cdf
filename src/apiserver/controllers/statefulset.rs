//! The StatefulSet controller (upstream `pkg/controller/statefulset`): pods `<set>-0`, `-1`, …
//! with stable names; OrderedReady creates them in order, each once the one before is Running
//! and Ready, and removes them in reverse; Parallel does not wait. A template change replaces
//! pods from the highest ordinal down, one at a time. ControllerRevisions and status.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::history::{self, HASH_LABEL};
use crate::apiserver::controllers::workload::{
    self, Controller, claim_members, pod_available, pod_from_template, pod_ready, s, terminating,
};
use crate::apiserver::controllers::{client, statefulset_claims};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

const COMPONENT: &str = "statefulset-controller";
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

pub(crate) struct StatefulSets;

impl Controller for StatefulSets {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/statefulsets/", "/registry/pods/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        workload::owner_dirty(ev, "/registry/statefulsets/", "StatefulSet", out);
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, workload::def("apps", "statefulsets"))
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, ns, name);
        true
    }
}

/// The ordinal of `<set>-<n>`, if the pod's name has that shape (upstream's
/// `statefulPodRegex`, `(.*)-([0-9]+)$`: digits only).
fn ordinal(set: &str, pod: &Value) -> Option<i64> {
    let n = s(pod, "/metadata/name")
        .strip_prefix(set)?
        .strip_prefix('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn running_and_ready(p: &Value) -> bool {
    s(p, "/status/phase") == "Running" && pod_ready(p)
}

fn hash_of(p: &Value) -> &str {
    s(p, &format!("/metadata/labels/{HASH_LABEL}"))
}

fn sync(api: &Api, ns: &str, name: &str) {
    let sts_def = workload::def("apps", "statefulsets");
    let pod_def = workload::def("", "pods");
    let Some(set) = api.store.get(&sts_def.key_for(ns, name)) else {
        return;
    };
    let mut set = (*set).clone();
    set["kind"] = json!("StatefulSet");
    set["apiVersion"] = json!("apps/v1");
    let Some((hash, revision_name)) = history::current(api, &mut set) else {
        return;
    };
    let want = int_at(&set, "/spec/replicas");
    let parallel = s(&set, "/spec/podManagementPolicy") == "Parallel";
    let template = set.at("/spec/template").cloned().unwrap_or(json!({}));
    let pods = claim_members(api, &set, pod_def, client::list(api, pod_def, ns), |p| {
        ordinal(name, p).is_some()
    });
    let mut by_ordinal: HashMap<i64, Arc<Value>> = HashMap::new();
    for p in &pods {
        if let Some(i) = ordinal(name, p) {
            by_ordinal.insert(i, p.clone());
        }
    }
    if !terminating(&set) {
        reconcile(api, &set, &template, &hash, &by_ordinal, want, parallel);
    }
    // Status from the pods as they are now.
    let uid = s(&set, "/metadata/uid");
    let now: Vec<Arc<Value>> = client::list(api, pod_def, ns)
        .into_iter()
        .filter(|p| workload::controller_uid(p) == Some(uid) && !terminating(p))
        .collect();
    let min_ready = int_at(&set, "/spec/minReadySeconds");
    let updated = now.iter().filter(|p| hash_of(p) == hash).count();
    let current_revision = if updated == now.len() {
        revision_name.clone()
    } else {
        set.at("/status/currentRevision")
            .and_then(Value::as_str)
            .unwrap_or(&revision_name)
            .to_string()
    };
    let current_replicas = if current_revision == revision_name {
        updated
    } else {
        now.len() - updated
    };
    let status = json!({
        "observedGeneration": set.at("/metadata/generation").cloned().unwrap_or(json!(1)),
        "replicas": now.len(),
        "readyReplicas": now.iter().filter(|p| pod_ready(p)).count(),
        "currentReplicas": current_replicas,
        "updatedReplicas": updated,
        "availableReplicas": now.iter().filter(|p| pod_available(p, min_ready)).count(),
        "currentRevision": current_revision,
        "updateRevision": revision_name,
        "collisionCount": set.at("/status/collisionCount").cloned().unwrap_or(json!(0)),
    });
    let mut status = status;
    if let Some(m) = status.as_object_mut() {
        m.retain(|k, v| {
            !matches!(
                k.as_str(),
                "readyReplicas" | "currentReplicas" | "updatedReplicas"
            ) || v != &json!(0)
        });
    }
    let _ = client::update(api, sts_def, ns, name, |o| {
        let conditions = o.at("/status/conditions").cloned();
        o["status"] = status.clone();
        if let Some(c) = conditions.clone() {
            o["status"]["conditions"] = c;
        }
    });
    let live: Vec<&str> = now.iter().map(|p| hash_of(p)).collect();
    history::cleanup(api, &set, &live);
}

/// One pass of upstream's `updateStatefulSet`: create missing ordinals below `want`, delete
/// those at or above it, then replace old-revision pods — OrderedReady stopping at the first
/// pod that is not Running and Ready.
fn reconcile(
    api: &Api,
    set: &Value,
    template: &Value,
    hash: &str,
    pods: &HashMap<i64, Arc<Value>>,
    want: i64,
    parallel: bool,
) {
    let pod_def = workload::def("", "pods");
    let ns = s(set, "/metadata/namespace");
    let name = s(set, "/metadata/name");
    for i in 0..want {
        match pods.get(&i) {
            Some(p) if terminating(p) => {
                if !parallel {
                    return; // wait until it is gone, then recreate it
                }
            }
            Some(p) if s(p, "/status/phase") == "Failed" => {
                let _ = client::delete(api, pod_def, ns, s(p, "/metadata/name"));
                if !parallel {
                    return;
                }
            }
            Some(p) => {
                if !parallel && !running_and_ready(p) {
                    return;
                }
            }
            None => {
                let pod_name = format!("{name}-{i}");
                let mut pod = pod_from_template(set, template, Some(&pod_name));
                pod["metadata"]["labels"][HASH_LABEL] = json!(hash);
                pod["metadata"]["labels"][POD_NAME_LABEL] = json!(pod_name);
                pod["metadata"]["labels"][POD_INDEX_LABEL] = json!(i.to_string());
                pod["spec"]["hostname"] = json!(pod_name);
                if let Some(svc) = set.at("/spec/serviceName").and_then(Value::as_str)
                    && !svc.is_empty()
                {
                    pod["spec"]["subdomain"] = json!(svc);
                }
                let claims = statefulset_claims::claims_for(set, &pod_name);
                if statefulset_claims::create_missing(api, set, &pod_name, &claims).is_err() {
                    if !parallel {
                        return;
                    }
                    continue;
                }
                statefulset_claims::update_storage(&mut pod, &claims);
                match client::create(api, pod_def, pod) {
                    Ok(_) => {
                        let msg = format!("create Pod {pod_name} in StatefulSet {name} successful");
                        workload::event(api, COMPONENT, set, "Normal", "SuccessfulCreate", &msg);
                    }
                    Err(e) => {
                        let msg = format!(
                            "create Pod {pod_name} in StatefulSet {name} failed error: {}",
                            e.message
                        );
                        workload::event(api, COMPONENT, set, "Warning", "FailedCreate", &msg);
                    }
                }
                if !parallel {
                    return;
                }
            }
        }
    }
    // Scale down: the highest ordinal first; OrderedReady one at a time.
    let mut surplus: Vec<(&i64, &Arc<Value>)> = pods.iter().filter(|(i, _)| **i >= want).collect();
    surplus.sort_by(|a, b| b.0.cmp(a.0));
    if !parallel && surplus.iter().any(|(_, p)| terminating(p)) {
        return;
    }
    for (_, p) in &surplus {
        if terminating(p) {
            continue;
        }
        let pod_name = s(p, "/metadata/name");
        if client::delete(api, pod_def, ns, pod_name).is_ok() {
            let msg = format!("delete Pod {pod_name} in StatefulSet {name} successful");
            workload::event(api, COMPONENT, set, "Normal", "SuccessfulDelete", &msg);
        }
        if !parallel {
            return;
        }
    }
    // RollingUpdate: the highest old-revision ordinal at or above the partition, once every
    // pod is Running and Ready.
    if s(set, "/spec/updateStrategy/type") != "RollingUpdate" {
        return;
    }
    let partition = int_at(set, "/spec/updateStrategy/rollingUpdate/partition");
    if (0..want).any(|i| {
        pods.get(&i)
            .is_none_or(|p| !running_and_ready(p) || terminating(p))
    }) {
        return;
    }
    if let Some(p) = (partition..want)
        .rev()
        .filter_map(|i| pods.get(&i))
        .find(|p| hash_of(p) != hash)
    {
        let pod_name = s(p, "/metadata/name");
        if client::delete(api, pod_def, ns, pod_name).is_ok() {
            let msg = format!("delete Pod {pod_name} in StatefulSet {name} successful");
            workload::event(api, COMPONENT, set, "Normal", "SuccessfulDelete", &msg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_come_from_the_name() {
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "web-12"}})),
            Some(12)
        );
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "web-x"}})),
            None
        );
        assert_eq!(
            ordinal("web", &json!({"metadata": {"name": "webb-1"}})),
            None
        );
    }
}

//! The disruption controller (upstream `pkg/controller/disruption`): each PodDisruptionBudget's
//! status — the pods it expects (from its pods' controllers' scale, or the pods themselves for an
//! integer minAvailable), how many must stay healthy, how many are, how many disruptions that
//! allows, the DisruptionAllowed condition, and `disruptedPods` (evictions the eviction API
//! announced, counted as gone until the pod is or two minutes pass).

use std::collections::{BTreeSet, HashSet};

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{
    self, Controller, controller_of, controller_uid, ns_name, pod_ready, s, terminating,
};
use crate::apiserver::registry::apps::workload::{int_at, scaled, selector_matches};
use crate::apiserver::registry::policy::poddisruptionbudget::{
    disruption_allowed_condition, disruption_condition,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;
use crate::apiserver::util::At;

/// Upstream's `DeletionTimeout`: an announced eviction whose pod is still there after this is
/// forgotten.
const DELETION_TIMEOUT: time::Duration = time::Duration::minutes(2);

pub(crate) struct Disruption;

impl Controller for Disruption {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/poddisruptionbudgets/", "/registry/pods/"]
    }

    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if ev.key.starts_with("/registry/poddisruptionbudgets/") {
            out.extend(ns_name(&ev.key));
            return;
        }
        if let Some((ns, _)) = ns_name(&ev.key) {
            for pdb in client::list(api, workload::def("policy", "poddisruptionbudgets"), &ns) {
                out.insert((ns.clone(), s(&pdb, "/metadata/name").to_string()));
            }
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, workload::def("policy", "poddisruptionbudgets"), "")
            .iter()
            .map(|p| {
                (
                    s(p, "/metadata/namespace").to_string(),
                    s(p, "/metadata/name").to_string(),
                )
            })
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, ns, name);
        true
    }
}

/// The scale of the controllers behind `pods` (upstream `getExpectedScale`): a
/// ReplicationController's replicas, a ReplicaSet's Deployment's, else the ReplicaSet's, a
/// StatefulSet's; pods without a controller are not counted. Any other controller has no
/// scale: the error upstream reports.
fn expected_scale(api: &Api, ns: &str, pods: &[&Value]) -> Result<i64, String> {
    let mut seen = HashSet::new();
    let mut total = 0;
    for p in pods {
        let Some((kind, owner)) = controller_of(p) else {
            continue;
        };
        let uid = controller_uid(p).unwrap_or_default().to_string();
        let get = |group: &str, plural: &str, n: &str| {
            api.store.get(&workload::def(group, plural).key_for(ns, n))
        };
        let scale_of = match kind {
            "ReplicaSet" => get("apps", "replicasets", owner).map(|rs| {
                match controller_of(&rs) {
                    Some(("Deployment", d)) => get("apps", "deployments", d).map(|d| {
                        (
                            s(&d, "/metadata/uid").to_string(),
                            int_at(&d, "/spec/replicas"),
                        )
                    }),
                    _ => None,
                }
                .unwrap_or((uid.clone(), int_at(&rs, "/spec/replicas")))
            }),
            "ReplicationController" => get("", "replicationcontrollers", owner)
                .map(|rc| (uid.clone(), int_at(&rc, "/spec/replicas"))),
            "StatefulSet" => get("apps", "statefulsets", owner)
                .map(|st| (uid.clone(), int_at(&st, "/spec/replicas"))),
            _ => None,
        };
        match scale_of {
            Some((key, n)) => {
                if seen.insert(key) {
                    total += n;
                }
            }
            None => {
                return Err(format!(
                    "found no controllers for pod {:?}",
                    s(p, "/metadata/name")
                ));
            }
        }
    }
    Ok(total)
}

fn sync(api: &Api, ns: &str, name: &str) {
    let pdb_def = workload::def("policy", "poddisruptionbudgets");
    let Some(pdb) = api.store.get(&pdb_def.key_for(ns, name)) else {
        return;
    };
    let all = client::list(api, workload::def("", "pods"), ns);
    let sel = pdb.at("/spec/selector");
    let pods: Vec<&Value> = all
        .iter()
        .map(|p| &**p)
        .filter(|p| selector_matches(sel, p.at("/metadata/labels")))
        .collect();
    let generation = pdb.at("/metadata/generation").cloned().unwrap_or(json!(1));
    let min = pdb.at("/spec/minAvailable").filter(|v| !v.is_null());
    let max = pdb.at("/spec/maxUnavailable").filter(|v| !v.is_null());
    let counts: Result<(i64, i64), String> = match (min, max) {
        (Some(Value::Number(n)), _) => Ok((pods.len() as i64, n.as_i64().unwrap_or(0))),
        (Some(m), _) => expected_scale(api, ns, &pods).map(|e| (e, scaled(Some(m), e, true))),
        (None, Some(m)) => {
            expected_scale(api, ns, &pods).map(|e| (e, (e - scaled(Some(m), e, true)).max(0)))
        }
        (None, None) => Ok((pods.len() as i64, 0)),
    };
    // Announced evictions whose pod is still there and not yet being deleted, within the timeout.
    let now = OffsetDateTime::now_utc();
    let mut disrupted = serde_json::Map::new();
    if let Some(m) = pdb.at("/status/disruptedPods").and_then(Value::as_object) {
        for (pod, at) in m {
            let live = pods
                .iter()
                .any(|p| s(p, "/metadata/name") == pod && !terminating(p));
            let recent = at
                .as_str()
                .and_then(util::parse_time)
                .is_some_and(|t| t + DELETION_TIMEOUT > now);
            if live && recent {
                disrupted.insert(pod.clone(), at.clone());
            }
        }
    }
    let healthy = pods
        .iter()
        .filter(|p| {
            pod_ready(p) && !terminating(p) && !disrupted.contains_key(s(p, "/metadata/name"))
        })
        .count() as i64;
    let old_conditions = pdb.at("/status/conditions");
    let status = match counts {
        Ok((expected, desired)) => {
            let allowed = if expected <= 0 {
                0
            } else {
                (healthy - desired).max(0)
            };
            let mut st = json!({
                "observedGeneration": generation,
                "disruptionsAllowed": allowed,
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": expected,
                "conditions": disruption_allowed_condition(old_conditions, allowed > 0, &generation),
            });
            if !disrupted.is_empty() {
                st["disruptedPods"] = Value::Object(disrupted);
            }
            st
        }
        // `failSafe`: no disruption allowed, and why.
        Err(e) => json!({
            "observedGeneration": generation,
            "disruptionsAllowed": 0,
            "currentHealthy": healthy,
            "desiredHealthy": int_at(&pdb, "/status/desiredHealthy"),
            "expectedPods": int_at(&pdb, "/status/expectedPods"),
            "conditions": disruption_condition(old_conditions, "False", "SyncFailed", &e, &generation),
        }),
    };
    if pdb.get("status") != Some(&status) {
        // Only over the PDB this status was computed from: an eviction that wrote in between
        // changed it, and that change wakes this controller again.
        let rv = s(&pdb, "/metadata/resourceVersion").to_string();
        let _ = client::update(api, pdb_def, ns, name, |o| {
            if s(o, "/metadata/resourceVersion") == rv {
                o["status"] = status.clone();
            }
        });
    }
}

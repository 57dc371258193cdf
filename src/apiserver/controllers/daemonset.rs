//! The DaemonSet controller (upstream `pkg/controller/daemon`): one pod per node the template
//! may run on (nodeSelector, required node affinity, taints against the template's and the
//! DaemonSet default tolerations), placed by the scheduler through a required node affinity
//! on `metadata.name`; a template change replaces pods within maxUnavailable; status counts.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::history::{self, HASH_LABEL};
use crate::apiserver::controllers::workload::{
    self, Controller, claim, ns_name, pod_available, pod_from_template, pod_ready, s, terminating,
};
use crate::apiserver::registry::apps::workload::{int_at, scaled};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

const COMPONENT: &str = "daemonset-controller";

pub(crate) struct DaemonSets;

impl Controller for DaemonSets {
    fn prefixes(&self) -> &'static [&'static str] {
        &[
            "/registry/daemonsets/",
            "/registry/pods/",
            "/registry/minions/",
        ]
    }

    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if ev.key.starts_with("/registry/daemonsets/") {
            out.extend(ns_name(&ev.key));
        } else if ev.key.starts_with("/registry/minions/") {
            out.extend(self.all(api)); // a node came, went or changed: every DaemonSet looks
        } else {
            for (ns, kind, name) in workload::controllers_of(ev) {
                if kind == "DaemonSet" {
                    out.insert((ns, name));
                }
            }
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, workload::def("apps", "daemonsets"))
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, ns, name);
        true
    }
}

/// `AddOrUpdateDaemonPodTolerations`: every daemon pod tolerates these (no tolerationSeconds).
fn default_tolerations(host_network: bool) -> Vec<Value> {
    let mut out = vec![
        json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}),
        json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}),
        json!({"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"}),
        json!({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}),
    ];
    if host_network {
        out.push(json!({"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}));
    }
    out
}

/// The template with the default tolerations added (those it lacks, by key and effect).
fn pod_spec_tolerations(template: &Value) -> Vec<Value> {
    let mut tolerations: Vec<Value> = template
        .at("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let host = template.at("/spec/hostNetwork") == Some(&json!(true));
    for t in default_tolerations(host) {
        if !tolerations
            .iter()
            .any(|x| x["key"] == t["key"] && x["effect"] == t["effect"])
        {
            tolerations.push(t);
        }
    }
    tolerations
}

fn tolerates(tol: &Value, taint: &Value) -> bool {
    let effect = s(tol, "/effect");
    if !effect.is_empty() && effect != s(taint, "/effect") {
        return false;
    }
    let key = s(tol, "/key");
    match s(tol, "/operator") {
        "Exists" => key.is_empty() || key == s(taint, "/key"),
        _ => key == s(taint, "/key") && s(tol, "/value") == s(taint, "/value"),
    }
}

fn term_matches(term: &Value, node: &Value) -> bool {
    let label = |k: &str| {
        node.at("/metadata/labels")
            .and_then(|l| l.get(k))
            .and_then(Value::as_str)
    };
    let req_ok = |r: &Value, value: Option<&str>| {
        let values: Vec<&str> = r["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let num = |v: &str| v.parse::<i64>().ok();
        match s(r, "/operator") {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" => value
                .and_then(num)
                .zip(values.first().and_then(|v| num(v)))
                .is_some_and(|(a, b)| a > b),
            "Lt" => value
                .and_then(num)
                .zip(values.first().and_then(|v| num(v)))
                .is_some_and(|(a, b)| a < b),
            _ => false,
        }
    };
    let exprs = term["matchExpressions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fields = term["matchFields"].as_array().cloned().unwrap_or_default();
    (!exprs.is_empty() || !fields.is_empty())
        && exprs.iter().all(|r| req_ok(r, label(s(r, "/key"))))
        && fields
            .iter()
            .all(|r| s(r, "/key") == "metadata.name" && req_ok(r, Some(s(node, "/metadata/name"))))
}

/// `NodeShouldRunDaemonPod`: nodeSelector, required node affinity, and every NoSchedule or
/// NoExecute taint tolerated.
fn should_run(template: &Value, tolerations: &[Value], node: &Value) -> bool {
    let labels = node.at("/metadata/labels");
    let selector_ok = template
        .at("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|m| {
            m.iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        });
    let affinity_ok = template
        .at("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Value::as_array)
        .is_none_or(|terms| terms.iter().any(|t| term_matches(t, node)));
    let taints_ok = node
        .at("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| matches!(s(t, "/effect"), "NoSchedule" | "NoExecute"))
        .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)));
    selector_ok && affinity_ok && taints_ok
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes one term
/// pinning the pod to `node` by `metadata.name`.
fn pin(pod: &mut Value, node: &str) {
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    });
}

/// The node a daemon pod is on or pinned to.
fn node_of(p: &Value) -> String {
    let bound = s(p, "/spec/nodeName");
    if !bound.is_empty() {
        return bound.to_string();
    }
    p.at("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields/0/values/0")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn sync(api: &Api, ns: &str, name: &str) {
    let ds_def = workload::def("apps", "daemonsets");
    let pod_def = workload::def("", "pods");
    let Some(ds) = api.store.get(&ds_def.key_for(ns, name)) else {
        return;
    };
    let mut ds = (*ds).clone();
    ds["kind"] = json!("DaemonSet");
    ds["apiVersion"] = json!("apps/v1");
    let Some((hash, _)) = history::current(api, &mut ds) else {
        return;
    };
    let template = ds.at("/spec/template").cloned().unwrap_or(json!({}));
    let tolerations = pod_spec_tolerations(&template);
    let nodes = client::list(api, workload::def("", "nodes"), "");
    let pods = claim(api, &ds, pod_def, client::list(api, pod_def, ns));
    let mut by_node: HashMap<String, Vec<Arc<Value>>> = HashMap::new();
    for p in pods.iter().filter(|p| !terminating(p)) {
        by_node.entry(node_of(p)).or_default().push(p.clone());
    }
    let eligible: Vec<&Arc<Value>> = nodes
        .iter()
        .filter(|n| should_run(&template, &tolerations, n))
        .collect();
    let eligible_names: BTreeSet<&str> = eligible.iter().map(|n| s(n, "/metadata/name")).collect();
    let min_ready = int_at(&ds, "/spec/minReadySeconds");
    let mut create = Vec::new();
    let mut delete: Vec<Arc<Value>> = Vec::new();
    if !terminating(&ds) {
        for n in &eligible {
            let node = s(n, "/metadata/name");
            match by_node.get(node) {
                None => create.push(node.to_string()),
                Some(ps) => {
                    // Failed pods go (a new one follows); extra pods beyond one go too.
                    let (failed, ok): (Vec<_>, Vec<_>) =
                        ps.iter().partition(|p| s(p, "/status/phase") == "Failed");
                    delete.extend(failed.into_iter().cloned());
                    delete.extend(ok.into_iter().skip(1).cloned());
                }
            }
        }
        for (node, ps) in &by_node {
            if !eligible_names.contains(node.as_str()) {
                delete.extend(ps.iter().cloned());
            }
        }
        // Rolling update: old-template pods go while fewer than maxUnavailable are unavailable.
        if s(&ds, "/spec/updateStrategy/type") == "RollingUpdate" {
            let max_unavailable = scaled(
                ds.at("/spec/updateStrategy/rollingUpdate/maxUnavailable"),
                eligible.len() as i64,
                true,
            )
            .max(1);
            let unavailable = eligible
                .iter()
                .filter(|n| {
                    by_node
                        .get(s(n, "/metadata/name"))
                        .is_none_or(|ps| !ps.iter().any(|p| pod_available(p, min_ready)))
                })
                .count() as i64;
            let mut budget = max_unavailable - unavailable;
            for n in &eligible {
                if budget <= 0 {
                    break;
                }
                if let Some(ps) = by_node.get(s(n, "/metadata/name"))
                    && let Some(old) = ps.iter().find(|p| {
                        s(p, &format!("/metadata/labels/{HASH_LABEL}")) != hash
                            && pod_available(p, min_ready)
                    })
                {
                    delete.push(old.clone());
                    budget -= 1;
                }
            }
        }
    }
    for node in create {
        let mut pod = pod_from_template(&ds, &template, None);
        pod["metadata"]["labels"][HASH_LABEL] = json!(hash);
        pod["metadata"]["labels"]["pod-template-generation"] =
            json!(int_at(&ds, "/metadata/generation").max(1).to_string());
        pod["spec"]["tolerations"] = json!(tolerations);
        pin(&mut pod, &node);
        match client::create(api, pod_def, pod) {
            Ok(p) => {
                let msg = format!("Created pod: {}", s(&p, "/metadata/name"));
                workload::event(api, COMPONENT, &ds, "Normal", "SuccessfulCreate", &msg);
            }
            Err(e) => {
                let msg = format!("Error creating: {}", e.message);
                workload::event(api, COMPONENT, &ds, "Warning", "FailedCreate", &msg);
            }
        }
    }
    for p in delete {
        let pod_name = s(&p, "/metadata/name");
        if client::delete(api, pod_def, ns, pod_name).is_ok() {
            let msg = format!("Deleted pod: {pod_name}");
            workload::event(api, COMPONENT, &ds, "Normal", "SuccessfulDelete", &msg);
        }
    }
    // Status from the pods as they are now.
    let uid = s(&ds, "/metadata/uid");
    let mut now: HashMap<String, Vec<Arc<Value>>> = HashMap::new();
    for p in client::list(api, pod_def, ns) {
        if workload::controller_uid(&p) == Some(uid) && !terminating(&p) {
            now.entry(node_of(&p)).or_default().push(p);
        }
    }
    let on = |pred: &dyn Fn(&Value) -> bool| {
        eligible_names
            .iter()
            .filter(|n| now.get(**n).is_some_and(|ps| ps.iter().any(|p| pred(p))))
            .count()
    };
    let scheduled = |p: &Value| !s(p, "/spec/nodeName").is_empty();
    let desired = eligible_names.len();
    let available = on(&|p| pod_available(p, min_ready));
    let live: Vec<&str> = now
        .values()
        .flatten()
        .map(|p| s(p, &format!("/metadata/labels/{HASH_LABEL}")))
        .collect();
    let status = json!({
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": on(&scheduled),
        "numberMisscheduled": now.keys().filter(|n| !eligible_names.contains(n.as_str()) && !n.is_empty()).count(),
        "numberReady": on(&pod_ready),
        "updatedNumberScheduled": on(&|p| scheduled(p) && s(p, &format!("/metadata/labels/{HASH_LABEL}")) == hash),
        "numberAvailable": available,
        "numberUnavailable": desired - available.min(desired),
        "observedGeneration": ds.at("/metadata/generation").cloned().unwrap_or(json!(1)),
    });
    let mut status = status;
    if let Some(c) = ds.at("/status/collisionCount") {
        status["collisionCount"] = c.clone();
    }
    if let Some(m) = status.as_object_mut() {
        m.retain(|k, v| {
            !matches!(
                k.as_str(),
                "numberAvailable" | "numberUnavailable" | "updatedNumberScheduled"
            ) || v != &json!(0)
        });
    }
    let _ = client::update(api, ds_def, ns, name, |o| {
        let conditions = o.at("/status/conditions").cloned();
        o["status"] = status.clone();
        if let Some(c) = conditions.clone() {
            o["status"]["conditions"] = c;
        }
    });
    history::cleanup(api, &ds, &live);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_node_selectors_and_default_tolerations_decide_eligibility() {
        let template = json!({"spec": {"nodeSelector": {"disk": "ssd"}}});
        let tol = pod_spec_tolerations(&template);
        let ssd = json!({"metadata": {"name": "a", "labels": {"disk": "ssd"}}});
        let hdd = json!({"metadata": {"name": "b", "labels": {"disk": "hdd"}}});
        assert!(should_run(&template, &tol, &ssd));
        assert!(!should_run(&template, &tol, &hdd));
        let mut tainted = ssd.clone();
        tainted["spec"]["taints"] =
            json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]);
        assert!(!should_run(&template, &tol, &tainted));
        let mut cordoned = ssd.clone();
        cordoned["spec"]["taints"] =
            json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]);
        assert!(
            should_run(&template, &tol, &cordoned),
            "the default tolerations cover cordons"
        );
    }

    #[test]
    fn pods_are_pinned_by_metadata_name() {
        let mut pod = json!({"spec": {}});
        pin(&mut pod, "node-2");
        assert_eq!(node_of(&pod), "node-2");
    }
}

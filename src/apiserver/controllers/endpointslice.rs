//! kube-controller-manager's EndpointSlice controller (upstream `pkg/controller/endpointslice`,
//! `staging/src/k8s.io/endpointslice/reconciler.go`): for every Service with a selector, the
//! pods it selects — each with an IP, Ready ones ready, terminating ones marked so — in
//! EndpointSlices of at most 100 endpoints, labelled with the Service's name and this
//! controller's, owned by the Service. Woken by changes to Services and pods.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{
    Controller, def, ns_name, pod_ready, s, terminating,
};
use crate::apiserver::registry::apps::workload::selector_matches;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

/// `discovery.LabelServiceName`.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// `discovery.LabelManagedBy` and the controller's name for itself.
pub(crate) const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
pub(crate) const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// `maxEndpointsPerSlice`'s default (`--max-endpoints-per-slice`).
const MAX_ENDPOINTS_PER_SLICE: usize = 100;

pub(crate) const SERVICES: &str = "/registry/services/specs/";
pub(crate) const PODS: &str = "/registry/pods/";

/// The pods a Service's selector picks that can serve: not finished, with an IP.
pub(crate) fn selected_pods(api: &Api, svc: &Value) -> Vec<Arc<Value>> {
    let Some(selector) = svc
        .at("/spec/selector")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    else {
        return Vec::new();
    };
    let selector = json!({"matchLabels": selector});
    let ns = s(svc, "/metadata/namespace");
    client::list(api, def("", "pods"), ns)
        .into_iter()
        .filter(|p| selector_matches(Some(&selector), p.at("/metadata/labels")))
        .filter(|p| !matches!(s(p, "/status/phase"), "Succeeded" | "Failed"))
        .filter(|p| !s(p, "/status/podIP").is_empty())
        .collect()
}

/// A Service port's target on one pod: a number as it is, a name looked up among the pod's
/// container ports (`podutil.FindPort`); `None` when the pod has no such port.
pub(crate) fn target_port(pod: &Value, port: &Value) -> Option<i64> {
    match port.get("targetPort") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(name)) => pod
            .at("/spec/containers")
            .and_then(Value::as_array)?
            .iter()
            .flat_map(|c| {
                c.get("ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .find(|p| s(p, "/name") == name && protocol(p) == protocol(port))
            .and_then(|p| p.get("containerPort").and_then(Value::as_i64)),
        _ => port.get("port").and_then(Value::as_i64),
    }
}

/// A port's protocol, TCP when unset (the default both kinds get).
fn protocol(p: &Value) -> &str {
    match s(p, "/protocol") {
        "" => "TCP",
        other => other,
    }
}

/// The Service's ports as one pod serves them (`getEndpointPorts`).
fn endpoint_ports(svc: &Value, pod: &Value) -> Vec<Value> {
    svc.at("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let port = target_port(pod, p)?;
            Some(json!({"name": s(p, "/name"), "port": port, "protocol": s(p, "/protocol")}))
        })
        .collect()
}

fn endpoint(api: &Api, svc: &Value, pod: &Value) -> Value {
    let ready = pod_ready(pod);
    let gone = terminating(pod);
    let publish = svc.at("/spec/publishNotReadyAddresses") == Some(&json!(true));
    let node = s(pod, "/spec/nodeName");
    let mut e = json!({
        "addresses": [s(pod, "/status/podIP")],
        "conditions": {"ready": publish || (ready && !gone), "serving": ready, "terminating": gone},
        "targetRef": {"kind": "Pod", "namespace": s(pod, "/metadata/namespace"), "name": s(pod, "/metadata/name"), "uid": s(pod, "/metadata/uid")},
    });
    if !node.is_empty() {
        e["nodeName"] = json!(node);
        if let Some(zone) = api
            .store
            .get(&def("", "nodes").key_for("", node))
            .and_then(|n| {
                n.at("/metadata/labels/topology.kubernetes.io~1zone")
                    .cloned()
            })
        {
            e["zone"] = zone;
        }
    }
    e
}

/// The slices this controller keeps for `svc`, by name.
fn owned_slices(api: &Api, ns: &str, name: &str) -> Vec<Arc<Value>> {
    let mut out: Vec<Arc<Value>> = client::list(api, slice_def(), ns)
        .into_iter()
        .filter(|e| {
            let labels = e.at("/metadata/labels");
            labels.and_then(|l| l.get(SERVICE_NAME_LABEL)) == Some(&json!(name))
                && labels.and_then(|l| l.get(MANAGED_BY_LABEL)) == Some(&json!(CONTROLLER_NAME))
        })
        .collect();
    out.sort_by(|a, b| s(a, "/metadata/name").cmp(s(b, "/metadata/name")));
    out
}

fn slice_def() -> &'static crate::apiserver::registry::resources::ResourceDef {
    match crate::apiserver::registry::resources::lookup("discovery.k8s.io", "v1", "endpointslices")
    {
        Some(d) => d,
        None => unreachable!("endpointslices is in RESOURCES"),
    }
}

/// The Service's own labels plus the two that say whose slice this is.
fn slice_labels(svc: &Value) -> Value {
    let mut labels = svc
        .at("/metadata/labels")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    labels[SERVICE_NAME_LABEL] = json!(s(svc, "/metadata/name"));
    labels[MANAGED_BY_LABEL] = json!(CONTROLLER_NAME);
    labels
}

pub(crate) struct EndpointSlices;

impl Controller for EndpointSlices {
    fn prefixes(&self) -> &'static [&'static str] {
        &[SERVICES, PODS]
    }
    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        dirty_services(api, ev, out);
    }
    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        all_services(api)
    }
    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let slices = owned_slices(api, ns, name);
        let Some(svc) = api.store.get(&def("", "services").key_for(ns, name)) else {
            // The Service is gone: so are its slices (the garbage collector's work upstream).
            return slices
                .iter()
                .all(|e| client::delete(api, slice_def(), ns, s(e, "/metadata/name")).is_ok());
        };
        if svc
            .at("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
        {
            return true;
        }
        // One slice per distinct port set, as upstream groups endpoints by their ports.
        let mut groups: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        for pod in selected_pods(api, &svc) {
            let ports = endpoint_ports(&svc, &pod);
            let e = endpoint(api, &svc, &pod);
            match groups.iter_mut().find(|(p, _)| *p == ports) {
                Some((_, es)) => es.push(e),
                None => groups.push((ports, vec![e])),
            }
        }
        let mut desired: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        for (ports, es) in groups {
            for chunk in es.chunks(MAX_ENDPOINTS_PER_SLICE) {
                desired.push((ports.clone(), chunk.to_vec()));
            }
        }
        if desired.is_empty() {
            // A Service with no endpoints still has one (empty) slice, with its ports.
            let ports: Vec<Value> = svc
                .at("/spec/ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|p| matches!(p.get("targetPort"), Some(Value::Number(_))))
                .map(|p| json!({"name": s(p, "/name"), "port": p["targetPort"], "protocol": s(p, "/protocol")}))
                .collect();
            desired.push((ports, Vec::new()));
        }
        let labels = slice_labels(&svc);
        let owner = json!({"apiVersion": "v1", "kind": "Service", "name": name, "uid": s(&svc, "/metadata/uid"), "controller": true, "blockOwnerDeletion": true});
        let mut ok = true;
        for (i, (ports, endpoints)) in desired.iter().enumerate() {
            match slices.get(i) {
                Some(cur) => {
                    let unchanged = cur.get("ports") == Some(&json!(ports))
                        && cur.get("endpoints") == Some(&json!(endpoints))
                        && cur.at("/metadata/labels") == Some(&labels);
                    if !unchanged {
                        ok &= client::update(api, slice_def(), ns, s(cur, "/metadata/name"), |o| {
                            o["ports"] = json!(ports);
                            o["endpoints"] = json!(endpoints);
                            o["metadata"]["labels"] = labels.clone();
                        })
                        .is_ok();
                    }
                }
                None => {
                    let slice = json!({
                        "metadata": {"generateName": format!("{name}-"), "namespace": ns, "labels": labels, "ownerReferences": [owner]},
                        "addressType": "IPv4",
                        "ports": ports,
                        "endpoints": endpoints,
                    });
                    ok &= client::create(api, slice_def(), slice).is_ok();
                }
            }
        }
        for extra in slices.iter().skip(desired.len()) {
            ok &= client::delete(api, slice_def(), ns, s(extra, "/metadata/name")).is_ok();
        }
        ok
    }
}

/// The Services a change concerns: the Service itself, or every Service of a changed pod's
/// namespace (its labels may have moved it in or out of a selector).
pub(crate) fn dirty_services(api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
    let Some((ns, name)) = ns_name(&ev.key) else {
        return;
    };
    if ev.key.starts_with(SERVICES) {
        out.insert((ns, name));
        return;
    }
    for svc in client::list(api, def("", "services"), &ns) {
        out.insert((ns.clone(), s(&svc, "/metadata/name").to_string()));
    }
}

pub(crate) fn all_services(api: &Api) -> BTreeSet<(String, String)> {
    client::list(api, def("", "services"), "")
        .iter()
        .map(|v| {
            (
                s(v, "/metadata/namespace").to_string(),
                s(v, "/metadata/name").to_string(),
            )
        })
        .collect()
}

//! kube-controller-manager's Endpoints controller (upstream `pkg/controller/endpoint`): one
//! Endpoints object per Service with a selector, named as the Service, its pods' IPs as ready
//! `addresses` or `notReadyAddresses`, grouped into subsets by port (`RepackSubsets`). Also the
//! `kubernetes` Service of `default` and its Endpoints, which kube-apiserver keeps itself.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::endpointslice::{
    PODS, SERVICES, all_services, dirty_services, selected_pods, target_port,
};
use crate::apiserver::controllers::workload::{Controller, def, pod_ready, s, terminating};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::At;

/// `v1.IsHeadlessService`: the label upstream puts on a headless Service's Endpoints.
const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";

fn address(pod: &Value) -> Value {
    let mut a = json!({
        "ip": s(pod, "/status/podIP"),
        "targetRef": {"kind": "Pod", "namespace": s(pod, "/metadata/namespace"), "name": s(pod, "/metadata/name"), "uid": s(pod, "/metadata/uid")},
    });
    let node = s(pod, "/spec/nodeName");
    if !node.is_empty() {
        a["nodeName"] = json!(node);
    }
    a
}

/// The subsets of one Service: its pods by the ports they serve it on.
fn subsets(api: &Api, svc: &Value) -> Vec<Value> {
    let publish = svc.at("/spec/publishNotReadyAddresses") == Some(&json!(true));
    let mut out: Vec<(Vec<Value>, Vec<Value>, Vec<Value>)> = Vec::new();
    for pod in selected_pods(api, svc) {
        if terminating(&pod) && !publish {
            continue;
        }
        let ports: Vec<Value> = svc
            .at("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let port = target_port(&pod, p)?;
                let mut e = json!({"port": port, "protocol": s(p, "/protocol")});
                if !s(p, "/name").is_empty() {
                    e["name"] = json!(s(p, "/name"));
                }
                Some(e)
            })
            .collect();
        let idx = match out.iter().position(|(p, _, _)| *p == ports) {
            Some(i) => i,
            None => {
                out.push((ports, Vec::new(), Vec::new()));
                out.len() - 1
            }
        };
        if publish || pod_ready(&pod) {
            out[idx].1.push(address(&pod));
        } else {
            out[idx].2.push(address(&pod));
        }
    }
    out.into_iter()
        .map(|(ports, mut ready, mut not_ready)| {
            ready.sort_by(less_endpoint_address);
            not_ready.sort_by(less_endpoint_address);
            let mut subset = json!({"ports": ports});
            if !ready.is_empty() {
                subset["addresses"] = json!(ready);
            }
            if !not_ready.is_empty() {
                subset["notReadyAddresses"] = json!(not_ready);
            }
            subset
        })
        .collect()
}

/// Upstream's `SortSubsets` order of a subset's addresses (`LessEndpointAddress`): by the IP's
/// bytes, then the target pod's uid. `kubectl get endpoints` and `describe` print them so.
fn less_endpoint_address(a: &Value, b: &Value) -> std::cmp::Ordering {
    s(a, "/ip")
        .as_bytes()
        .cmp(s(b, "/ip").as_bytes())
        .then_with(|| s(a, "/targetRef/uid").cmp(s(b, "/targetRef/uid")))
}

pub(crate) struct EndpointsController;

impl Controller for EndpointsController {
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
        let ep_def = def("", "endpoints");
        let Some(svc) = api.store.get(&def("", "services").key_for(ns, name)) else {
            return client::delete(api, ep_def, ns, name).is_ok();
        };
        if svc
            .at("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
        {
            return true;
        }
        let subsets = subsets(api, &svc);
        let mut labels = svc
            .at("/metadata/labels")
            .cloned()
            .filter(Value::is_object)
            .unwrap_or(json!({}));
        if s(&svc, "/spec/clusterIP") == "None" {
            labels[HEADLESS_LABEL] = json!("");
        }
        match api.store.get(&ep_def.key_for(ns, name)) {
            Some(cur) => {
                let same = cur.get("subsets").cloned().unwrap_or(json!([])) == json!(subsets)
                    && cur.at("/metadata/labels").cloned().unwrap_or(json!({})) == labels;
                same || client::update(api, ep_def, ns, name, |o| {
                    o["subsets"] = json!(subsets);
                    o["metadata"]["labels"] = labels.clone();
                })
                .is_ok()
            }
            None => client::create(
                api,
                ep_def,
                json!({"metadata": {"name": name, "namespace": ns, "labels": labels}, "subsets": subsets}),
            )
            .is_ok(),
        }
    }
}

/// kube-apiserver's own `kubernetes` Service in `default` at the first address of the service
/// range, and its Endpoints and EndpointSlice naming this server (upstream
/// `pkg/controlplane/controller/kubernetesservice` and the endpoint reconciler).
pub(crate) fn kubernetes_service(api: &Api, addr: SocketAddr) {
    let port = addr.port();
    let ip = match addr.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_string(),
        ip => ip.to_string(),
    };
    let first = api.services.ranges.cluster_ip.first().to_string();
    let svc = json!({
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": first, "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}], "sessionAffinity": "None"},
    });
    let _ = client::create_as(api, def("", "services"), svc, client::APISERVER);
    let ep = json!({
        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
    });
    let _ = client::create_as(api, def("", "endpoints"), ep, client::APISERVER);
    if let Some(slice_def) =
        crate::apiserver::registry::resources::lookup("discovery.k8s.io", "v1", "endpointslices")
    {
        let slice = json!({
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        });
        let _ = client::create_as(api, slice_def, slice, client::APISERVER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_sort_by_ip_bytes_then_uid_as_upstream() {
        let a = |ip: &str, uid: &str| json!({"ip": ip, "targetRef": {"uid": uid}});
        let mut v = [
            a("10.244.2.3", "x"),
            a("10.244.10.3", "y"),
            a("10.244.1.3", "b"),
            a("10.244.1.3", "a"),
        ];
        v.sort_by(less_endpoint_address);
        let order: Vec<(String, String)> = v
            .iter()
            .map(|e| (s(e, "/ip").to_string(), s(e, "/targetRef/uid").to_string()))
            .collect();
        // Bytes, not numbers: "10.244.10.3" sorts before "10.244.2.3", as Go's bytes.Compare.
        assert_eq!(
            order,
            [
                ("10.244.1.3".into(), "a".into()),
                ("10.244.1.3".into(), "b".into()),
                ("10.244.10.3".into(), "y".into()),
                ("10.244.2.3".into(), "x".into()),
            ]
        );
    }
}

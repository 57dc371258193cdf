//! A StatefulSet's volumeClaimTemplates (upstream `stateful_set_utils.go`
//! `getPersistentVolumeClaims` and `updateStorage`, `stateful_pod_control.go`
//! `createPersistentVolumeClaims`): each pod gets its own claims, `<template>-<set>-<ordinal>`,
//! created before the pod and kept when it goes (the default Retain policy), so a pod
//! recreated under the same ordinal finds its data again.

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, s};
use crate::apiserver::request::context::Api;

const COMPONENT: &str = "statefulset-controller";

/// (volume name, claim) for each template of the set, for the pod `pod_name`.
pub(crate) fn claims_for(set: &Value, pod_name: &str) -> Vec<(String, Value)> {
    let selector = set
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    set.pointer("/spec/volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let volume = s(t, "/metadata/name").to_string();
            let mut claim = json!({
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": t.get("metadata").cloned().unwrap_or(json!({})),
                "spec": t.get("spec").cloned().unwrap_or(json!({})),
            });
            claim["metadata"]["name"] = json!(format!("{volume}-{pod_name}"));
            claim["metadata"]["namespace"] = json!(s(set, "/metadata/namespace"));
            if !claim["metadata"]["labels"].is_object() {
                claim["metadata"]["labels"] = json!({});
            }
            for (k, v) in &selector {
                claim["metadata"]["labels"][k] = v.clone();
            }
            (volume, claim)
        })
        .collect()
}

/// Create the pod's claims that do not exist yet; Err with the event's message on the first
/// that cannot be created.
pub(crate) fn create_missing(
    api: &Api,
    set: &Value,
    pod_name: &str,
    claims: &[(String, Value)],
) -> Result<(), String> {
    let def = workload::def("", "persistentvolumeclaims");
    let ns = s(set, "/metadata/namespace");
    let set_name = s(set, "/metadata/name");
    for (_, claim) in claims {
        let name = s(claim, "/metadata/name");
        if api.store.get(&def.key_for(ns, name)).is_some() {
            continue;
        }
        match client::create(api, def, claim.clone()) {
            Ok(_) => {
                let msg =
                    format!("create Claim {name} Pod {pod_name} in StatefulSet {set_name} success");
                workload::event(api, COMPONENT, set, "Normal", "SuccessfulCreate", &msg);
            }
            Err(e) if e.code == 409 => {}
            Err(e) => {
                let msg = format!(
                    "create Claim {name} for Pod {pod_name} in StatefulSet {set_name} failed error: {}",
                    e.message
                );
                workload::event(api, COMPONENT, set, "Warning", "FailedCreate", &msg);
                return Err(msg);
            }
        }
    }
    Ok(())
}

/// `updateStorage`: a volume per claim, named as its template, then the template's other
/// volumes.
pub(crate) fn update_storage(pod: &mut Value, claims: &[(String, Value)]) {
    if claims.is_empty() {
        return;
    }
    let mut volumes: Vec<Value> = claims
        .iter()
        .map(|(volume, claim)| {
            json!({"name": volume, "persistentVolumeClaim": {"claimName": s(claim, "/metadata/name")}})
        })
        .collect();
    let others = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    volumes.extend(
        others
            .into_iter()
            .filter(|v| !claims.iter().any(|(name, _)| s(v, "/name") == name)),
    );
    pod["spec"]["volumes"] = json!(volumes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pod_gets_its_own_claims_labelled_with_the_selector() {
        let set = json!({"metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "nginx"}}, "volumeClaimTemplates": [
                {"metadata": {"name": "www", "labels": {"tier": "data"}},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
        let claims = claims_for(&set, "web-2");
        assert_eq!(claims.len(), 1);
        let (volume, claim) = &claims[0];
        assert_eq!(volume, "www");
        assert_eq!(claim["metadata"]["name"], "www-web-2");
        assert_eq!(claim["metadata"]["namespace"], "shop");
        assert_eq!(
            claim["metadata"]["labels"],
            json!({"tier": "data", "app": "nginx"})
        );
        let mut pod = json!({"spec": {"volumes": [{"name": "www", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "c"}}]}});
        update_storage(&mut pod, &claims);
        assert_eq!(
            pod["spec"]["volumes"],
            json!([{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-2"}},
                   {"name": "conf", "configMap": {"name": "c"}}])
        );
    }
}

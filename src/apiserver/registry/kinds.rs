//! Per-kind strategies (upstream `pkg/registry/*/strategy.go`): what happens to a new object of
//! each kind between decoding and storage — defaults, admission, validation, initial status —
//! and which parts of an update each endpoint may change.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::apiserver::admission::plugins;
use crate::apiserver::registry::defaults;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategy;
use crate::apiserver::registry::validation;
use crate::apiserver::registry::validation_update;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{RequestTrace, StageStatus};

/// Kind-specific create preparation. Pods go through defaults, mutating admission and
/// validation here; other kinds get their defaults and name validation.
pub fn prepare_create(
    api: &Api,
    def: &ResourceDef,
    obj: &mut Value,
    trace: &mut RequestTrace,
) -> Result<(), ApiError> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(k) = strategy::of(def.group, def.kind) {
        k.prepare_create(api, obj, trace)?;
        if k.bumps_generation() {
            obj["metadata"]["generation"] = json!(1);
        }
        return Ok(());
    }
    match (def.group, def.kind) {
        ("", "Pod") => return prepare_pod(api, obj, trace),
        ("", "Namespace") => {
            obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        ("", "Node") => {
            if obj.pointer("/status/allocatable").is_none()
                && let Some(c) = obj.pointer("/status/capacity").cloned()
            {
                obj["status"]["allocatable"] = c;
            }
        }
        ("scheduling.k8s.io", _) if obj.get("preemptionPolicy").is_none() => {
            obj["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
        _ => {}
    }
    let causes = validation::validate_meta(def.kind, obj);
    trace.stage(
        "validation",
        if causes.is_empty() {
            StageStatus::Ok
        } else {
            StageStatus::Failed
        },
        json!({"causes": causes.iter().map(|c| c.rendered()).collect::<Vec<_>>()}),
    );
    if !causes.is_empty() {
        return Err(ApiError::invalid(def.group, def.kind, &name, causes));
    }
    Ok(())
}

fn prepare_pod(api: &Api, obj: &mut Value, trace: &mut RequestTrace) -> Result<(), ApiError> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut pod: Pod = serde_json::from_value(obj.clone()).map_err(|e| {
        ApiError::bad_request(format!(
            "Pod in version \"v1\" cannot be handled as a Pod: {e}"
        ))
    })?;
    // Mutating admission (after decode-time defaults), then validation.
    let (records, res) = plugins::mutate_pod(&mut pod, &ns, &*api.store);
    let status = if res.is_ok() {
        StageStatus::Ok
    } else {
        StageStatus::Failed
    };
    trace.stage(
        "admission",
        status,
        json!({"phase": "mutating", "plugins": records}),
    );
    res?;
    let causes = validation::validate_pod(&pod);
    trace.stage(
        "validation",
        if causes.is_empty() { StageStatus::Ok } else { StageStatus::Failed },
        json!({"causes": causes.iter().map(|c| json!({"field": c.field, "reason": c.reason, "message": c.message})).collect::<Vec<_>>()}),
    );
    if !causes.is_empty() {
        return Err(ApiError::invalid("", "Pod", &name, causes));
    }
    // PrepareForCreate: status is the server's, generation starts at 1 (1.33).
    let qos = defaults::qos_class(&pod);
    if let Some(spec) = pod.spec.as_mut() {
        spec.service_account = spec.service_account_name.clone();
    }
    let mut v = serde_json::to_value(&pod).map_err(ApiError::internal)?;
    v["status"] = json!({"phase": "Pending", "qosClass": qos});
    v["metadata"]["generation"] = json!(1);
    *obj = v;
    Ok(())
}

/// The object an update stores: which parts come from the request and which from storage.
/// Main resource: everything but `status`; `status` subresource: only `status`.
pub fn merge_update(def: &ResourceDef, sub: &str, current: &Value, incoming: &Value) -> Value {
    let mut next = incoming.clone();
    validation_update::before_update(&mut next, current);
    for k in ["creationTimestamp", "generation", "managedFields"] {
        match current.pointer(&format!("/metadata/{k}")) {
            Some(v) => next["metadata"][k] = v.clone(),
            None => {
                if let Some(m) = next.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove(k);
                }
            }
        }
    }
    let has_status = def.subresources.contains(&"status");
    if sub == "status" {
        let mut base = current.clone();
        base["status"] = incoming.get("status").cloned().unwrap_or(json!({}));
        return base;
    }
    if has_status {
        match current.get("status") {
            Some(s) => next["status"] = s.clone(),
            None => {
                if let Some(m) = next.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }
    let bumps = def.kind == "Pod"
        || strategy::of(def.group, def.kind).is_some_and(|k| k.bumps_generation());
    if bumps && current.get("spec") != next.get("spec") {
        let generation = current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        next["metadata"]["generation"] = json!(generation + 1);
    }
    omit_empty_meta_maps(&mut next);
    next
}

/// Labels and annotations are `omitempty` maps upstream: an empty one is not stored, so it is
/// not answered either (a patch's `annotations: {}`, as `kubectl apply` and `diff` send, leaves
/// no trace).
pub fn omit_empty_meta_maps(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in ["labels", "annotations"] {
            if m.get(k)
                .is_some_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty))
            {
                m.remove(k);
            }
        }
    }
}

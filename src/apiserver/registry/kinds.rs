//! The create and update steps every kind shares (upstream `rest.BeforeCreate` and
//! `rest.BeforeUpdate`), each calling into the kind's own strategy (`registry/strategy.rs`):
//! what happens to a new object between decoding and storage, and which parts of an update
//! each endpoint may change.

use serde_json::{Value, json};

use crate::apiserver::admission::pod_security;
use crate::apiserver::admission::resource_quota;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::registry::strategy;
use crate::apiserver::registry::validation_update;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

/// The kind's PrepareForCreate, defaults, admission and validation; generation 1 for kinds
/// whose spec changes are counted. The strategy's and the validating plugins' warnings go to
/// `warnings`.
pub fn prepare_create(
    api: &Api,
    def: &ResourceDef,
    obj: &mut Value,
    trace: &mut RequestTrace,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let kind = strategies::of(def.group, def.kind);
    match kind {
        Some(k) => {
            k.prepare_create(api, obj, trace)?;
            // Upstream's BeforeCreate warns once the object validated, before admission's
            // validating plugins (PodSecurity's warnings follow these).
            warnings.extend(k.warnings_on_create(obj));
        }
        None => strategy::validate_into_trace(def.group, def.kind, obj, trace, Vec::new())?,
    }
    pod_security(api, def, obj, trace, warnings)?;
    quota(api, def, obj, trace)?;
    if kind.is_some_and(|k| k.bumps_generation()) {
        obj["metadata"]["generation"] = json!(1);
    }
    Ok(())
}

/// PodSecurity, after the object validated: a namespace's labels, a pod or a workload's pod
/// template against its namespace's policy.
fn pod_security(
    api: &Api,
    def: &ResourceDef,
    obj: &Value,
    trace: &mut RequestTrace,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    if def.group.is_empty() && def.plural == "namespaces" {
        let res = pod_security::validate_namespace(obj, None);
        if let Err(e) = &res {
            strategy::record_validating(trace, "PodSecurity", Some(&e.message));
        }
        return res;
    }
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(policy) = pod_security::policy_for(&*api.store, def, "", ns) else {
        return Ok(());
    };
    let (rec, res) = pod_security::admit(def, &policy, obj, warnings);
    if let Some(rec) = &rec {
        pod_security::record(trace, rec);
    }
    res
}

/// ResourceQuota, the last validating admission plugin, after the object validated.
fn quota(
    api: &Api,
    def: &ResourceDef,
    obj: &Value,
    trace: &mut RequestTrace,
) -> Result<(), ApiError> {
    let res = resource_quota::admit(api, def, obj);
    if let Err(e) = &res {
        strategy::record_validating(trace, "ResourceQuota", Some(&e.message));
    }
    res
}

/// The object an update stores: which parts come from the request and which from storage.
/// Main resource: everything but `status`; `status` subresource: only `status`.
pub fn merge_update(def: &ResourceDef, sub: &str, current: &Value, incoming: &Value) -> Value {
    let mut next = incoming.clone();
    if sub.is_empty()
        && let Some(k) = strategies::of(def.group, def.kind)
    {
        k.defaults(&mut next);
        k.prepare_update(&mut next, current);
    }
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
    if let Some(next) = strategies::of(def.group, def.kind)
        .filter(|_| !matches!(sub, "" | "status"))
        .and_then(|k| k.merge_subresource(sub, current, incoming))
    {
        return next;
    }
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
    let bumps = strategies::of(def.group, def.kind).is_some_and(|k| k.bumps_generation());
    if bumps && current.get("spec") != next.get("spec") {
        util::next_generation(&mut next, current);
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

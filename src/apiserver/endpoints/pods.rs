//! Pod-specific storage: the `binding` subresource (what the scheduler posts), graceful
//! deletion (deletionTimestamp first, removal by the kubelet), and a namespace's move to
//! Terminating.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::codec::decode;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::registry::resources;
use crate::apiserver::request::context::{Api, Ctx, Reply};
use crate::apiserver::request::status::{self, ApiError};
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;

/// Bind a pod to a node: the atomic update upstream's `BindingREST` makes. Returns the new pod.
pub fn bind(
    api: &Api,
    ns: &str,
    name: &str,
    node: &str,
    uid: Option<&str>,
    annotations: Option<&Value>,
    write: Write,
) -> Result<Arc<Value>, ApiError> {
    let key = format!("/registry/pods/{ns}/{name}");
    let now = util::now();
    let res = api.store.update(&key, None, write, |cur| {
        if let Some(u) = uid.filter(|u| !u.is_empty())
            && cur.pointer("/metadata/uid").and_then(Value::as_str) != Some(u) {
                return Err(StoreError::Rejected(format!(
                    "Precondition failed: UID in precondition: {u}, UID in object meta: {}",
                    cur.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
                )));
            }
        if cur.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(StoreError::Rejected(format!("pod {name} is being deleted, cannot be assigned to a host")));
        }
        if let Some(n) = cur.pointer("/spec/nodeName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            return Err(StoreError::Rejected(format!("pod {name} is already assigned to node {n:?}")));
        }
        if cur.pointer("/spec/schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty()) {
            return Err(StoreError::Rejected(format!("pod {name} has non-empty .spec.schedulingGates")));
        }
        let mut next = cur.clone();
        next["spec"]["nodeName"] = json!(node);
        if let Some(Value::Object(a)) = annotations {
            for (k, v) in a {
                next["metadata"]["annotations"][k] = v.clone();
            }
        }
        let conds = next["status"]["conditions"].as_array().cloned().unwrap_or_default();
        let mut conds: Vec<Value> = conds.into_iter().filter(|c| c.get("type").and_then(Value::as_str) != Some("PodScheduled")).collect();
        conds.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now}));
        next["status"]["conditions"] = Value::Array(conds);
        Ok(next)
    });
    res.map_err(|e| match e {
        StoreError::NotFound => ApiError::not_found("", "pods", name),
        StoreError::Rejected(m) => ApiError::conflict("", "pods/binding", name, &m),
        other => ApiError::storage(&other),
    })
}

/// `POST .../pods/<name>/binding` (or the legacy `.../bindings`).
pub fn binding(ctx: &mut Ctx<'_>, url_name: Option<String>) -> Result<Reply, ApiError> {
    let Some(def) = resources::lookup("", "v1", "bindings") else {
        return Err(ApiError::no_route());
    };
    let parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    if parsed
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k != "Binding")
    {
        return Err(ApiError::bad_request(format!(
            "not a Binding object: {parsed}"
        )));
    }
    let (b, _) = decode::decode_object(def, parsed, "Ignore")?;
    let name = b
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(u) = &url_name
        && *u != name
    {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let target = b
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let tkind = b
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if target.is_empty() {
        return Err(ApiError {
            code: 500,
            reason: "",
            message: "target.name: Required value".into(),
            details: None,
            list_continue: None,
        });
    }
    if !tkind.is_empty() && tkind != "Node" {
        return Err(ApiError {
            code: 500,
            reason: "",
            message: format!(
                "target.kind: Unsupported value: {tkind:?}: supported values: \"Node\""
            ),
            details: None,
            list_continue: None,
        });
    }
    let ns = ctx.info.namespace.clone();
    let uid = b
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .map(String::from);
    let pod = bind(
        ctx.api,
        &ns,
        &name,
        &target,
        uid.as_deref(),
        b.pointer("/metadata/annotations"),
        ctx.write,
    )?;
    dry_run::storage_stage(
        ctx.trace,
        ctx.write,
        json!({"operation": "bind", "key": format!("/registry/pods/{ns}/{name}"), "node": target, "resourceVersion": pod.pointer("/metadata/resourceVersion")}),
    );
    ctx.trace.object = Some(format!("{ns}/{name}"));
    Ok(Reply::Object {
        code: 201,
        value: status::success(201, None),
    })
}

/// Graceful pod deletion (specs/apiserver.md §7): grace 0 (or an unscheduled/finished pod)
/// removes at once; otherwise the pod gets a deletionTimestamp and the kubelet removes it.
pub fn delete(
    api: &Api,
    key: &str,
    cur: &Value,
    grace: Option<i64>,
    write: Write,
) -> Result<Arc<Value>, StoreError> {
    let phase = cur
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let unscheduled = cur
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty();
    let mut g = grace.unwrap_or_else(|| {
        cur.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(30)
    });
    if unscheduled || phase == "Succeeded" || phase == "Failed" {
        g = 0;
    }
    if g < 0 {
        g = 1;
    }
    let existing = cur
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    if g == 0 || existing == Some(0) {
        return api.store.delete(key, write, |_| Ok(()));
    }
    if existing.is_some_and(|e| e <= g) {
        return api.store.get(key).ok_or(StoreError::NotFound);
    }
    let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(g);
    api.store.update(key, None, write, |c| {
        let mut next = c.clone();
        next["metadata"]["deletionTimestamp"] = json!(util::rfc3339(at));
        next["metadata"]["deletionGracePeriodSeconds"] = json!(g);
        let generation = c
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if generation > 0 {
            next["metadata"]["generation"] = json!(generation + 1);
        }
        Ok(next)
    })
}

/// Namespace deletion (upstream `pkg/registry/core/namespace/storage`): a namespace whose
/// `spec.finalizers` still hold `kubernetes` becomes Terminating (deletionTimestamp, phase); the
/// namespace controller (`controllers/namespace.rs`) empties it and removes it. One without
/// finalizers goes at once.
pub fn delete_namespace(api: &Api, name: &str, write: Write) -> Result<Arc<Value>, StoreError> {
    let key = format!("/registry/namespaces/{name}");
    let cur = api.store.get(&key).ok_or(StoreError::NotFound)?;
    let finalized = cur
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_none_or(|f| f.is_empty());
    if finalized {
        return api.store.delete(&key, write, |_| Ok(()));
    }
    api.store.update(&key, None, write, |c| {
        let mut next = c.clone();
        if c.pointer("/metadata/deletionTimestamp")
            .is_none_or(Value::is_null)
        {
            next["metadata"]["deletionTimestamp"] = json!(util::now());
            next["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        }
        next["status"]["phase"] = json!("Terminating");
        Ok(next)
    })
}

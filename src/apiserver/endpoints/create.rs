//! Create: decode under fieldValidation, NamespaceLifecycle, defaults and admission, validation,
//! managed fields, then the storage write with a new uid and resourceVersion.

use serde_json::{Value, json};

use crate::apiserver::admission::plugins;
use crate::apiserver::codec::decode;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::managed_fields::{self, FieldSet, Scope};
use crate::apiserver::endpoints::reply::{object_reply, store_err};
use crate::apiserver::registry::events;
use crate::apiserver::registry::kinds;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;

/// Parse and decode the body under the request's fieldValidation directive.
pub(super) fn decode_body(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Value, ApiError> {
    let parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    let typed = decode_as_asked(ctx, def, parsed)?;
    Ok(if def.group == "events.k8s.io" {
        events::from_events_v1(&typed)
    } else {
        typed
    })
}

/// Decode an object under the request's fieldValidation directive (default Warn; protobuf
/// bodies skip it, as upstream), keeping the warnings for the response.
pub(super) fn decode_as_asked(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    v: Value,
) -> Result<Value, ApiError> {
    let fv = if decode::is_protobuf(&ctx.content_type) {
        "Ignore".to_string()
    } else {
        ctx.info
            .query("fieldValidation")
            .unwrap_or("Warn")
            .to_string()
    };
    let (typed, warnings) = decode::decode_object(def, v, &fv)?;
    ctx.warnings.extend(warnings);
    Ok(typed)
}

pub fn create(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    create_as(ctx, def, None)
}

/// Create, recording the body as an Update by the request's manager, or, for a server-side
/// apply of a missing object (`applied`: the applied configuration's fields), as its Apply.
pub(super) fn create_as(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    applied: Option<FieldSet>,
) -> Result<Reply, ApiError> {
    let mut obj = decode_body(ctx, def)?;
    // `/api/v1/namespaces/<name>` (an apply that creates) names a namespace in its path that is
    // the object itself, not where it lives: a cluster-scoped object has no namespace to check.
    let url_ns = if def.namespaced {
        ctx.info.namespace.clone()
    } else {
        String::new()
    };
    if def.namespaced {
        let body_ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !body_ns.is_empty() && body_ns != url_ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        obj["metadata"]["namespace"] = json!(url_ns);
    } else if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("namespace");
    }
    if obj.get("metadata").is_none_or(|m| !m.is_object()) {
        obj["metadata"] = json!({});
    }
    if obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(ApiError::bad_request(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let gen_name = obj
        .pointer("/metadata/generateName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
        && !gen_name.is_empty()
    {
        let suffix = util::random_suffix();
        obj["metadata"]["name"] = json!(format!("{gen_name}{suffix}"));
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let manager = managed_fields::manager_name(ctx.info.query("fieldManager"), &ctx.user_agent);
    // NamespaceLifecycle first: a missing namespace is a 404 before any other plugin looks.
    let (rec, res) = plugins::namespace_lifecycle(
        &*ctx.api.store,
        "create",
        &url_ns,
        def.group,
        def.plural,
        &name,
    );
    ctx.trace.stage(
        Stage::Admission,
        if res.is_ok() {
            Status::Ok
        } else {
            Status::Failed
        },
        json!({"phase": "validating", "plugins": [rec]}),
    );
    res?;
    kinds::omit_empty_meta_maps(&mut obj);
    let (operation, fields) = match applied {
        Some(set) => ("Apply", set),
        None => (
            "Update",
            managed_fields::update_field_set(def, Scope::of(def, ""), &defaulted(def, &obj)),
        ),
    };
    // The uid first, as upstream's FillObjectMetaSystemFields: a Job's selector is made of it.
    obj["metadata"]["uid"] = json!(util::uuid());
    kinds::prepare_create(ctx.api, def, &mut obj, ctx.trace)?;
    let now = util::now();
    obj["metadata"]["creationTimestamp"] = json!(now);
    obj["metadata"]["managedFields"] = json!([{
        "manager": manager, "operation": operation, "apiVersion": def.api_version(), "time": now,
        "fieldsType": "FieldsV1", "fieldsV1": managed_fields::encode(&fields),
    }]);
    let key = def.key_for(&url_ns, &name);
    let stored = ctx.api.store.create(&key, obj, ctx.write).map_err(|e| {
        ctx.trace.stage(
            Stage::Storage,
            Status::Failed,
            json!({"operation": "create", "key": key, "error": e.to_string()}),
        );
        store_err(def, &name, e)
    })?;
    let mut detail = json!({"operation": "create", "key": key, "resourceVersion": stored.pointer("/metadata/resourceVersion"), "uid": stored.pointer("/metadata/uid")});
    // On etcd: the real key, the revision the transaction produced, and the etcdctl line.
    if let (Write::Commit, Some(Value::Object(at))) = (ctx.write, ctx.api.store.locate(&key)) {
        detail["etcdRevision"] = detail["resourceVersion"].clone();
        for (k, v) in at {
            detail[k] = v;
        }
    }
    dry_run::storage_stage(ctx.trace, ctx.write, detail);
    if ctx.write == Write::DryRun {
        // Nothing was stored: no namespace controller, no pod trace to start.
        return object_reply(ctx, def, 201, (*stored).clone());
    }
    ctx.trace.object = Some(if url_ns.is_empty() || !def.namespaced {
        name.clone()
    } else {
        format!("{url_ns}/{name}")
    });
    after_create(ctx, def, &stored);
    object_reply(ctx, def, 201, (*stored).clone())
}

/// The object as upstream's decoder hands it to the field manager: with the scheme's defaults
/// (a pod's imagePullPolicy, dnsPolicy, ...) but before admission, so a create's Update entry
/// owns the defaults as kube-apiserver's does.
fn defaulted(def: &ResourceDef, obj: &Value) -> Value {
    if (def.group, def.kind) != ("", "Pod") {
        return obj.clone();
    }
    match serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(obj.clone()) {
        Ok(mut pod) => {
            crate::apiserver::registry::defaults::default_pod(&mut pod);
            serde_json::to_value(&pod).unwrap_or_else(|_| obj.clone())
        }
        Err(_) => obj.clone(), // prepare_create reports what is wrong with it
    }
}

fn after_create(ctx: &Ctx<'_>, def: &ResourceDef, stored: &Value) {
    if let Some(k) = strategies::of(def.group, def.kind) {
        k.after_create(ctx.api, stored);
    }
    if (def.group, def.kind) == ("", "Pod") {
        let key = format!(
            "{}/{}",
            stored
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            stored
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        ctx.api.traces.reset_pod(&key);
        let uid = stored
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(String::from);
        let audit = ctx.trace.audit_id.clone();
        ctx.api.traces.with_pod(&key, |p| {
            p.uid = uid;
            p.create_audit_id = Some(audit);
        });
    }
}

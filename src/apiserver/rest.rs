//! Generic REST handlers over the store: get, list (selectors, chunking), create, update,
//! patch, delete — the storage stage of the pipeline, with upstream's status codes.

use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use super::admission;
use super::api::{Ctx, Reply};
use super::body::Format;
use super::decode;
use super::events;
use super::kinds;
use super::patch;
use super::pods;
use super::resources::ResourceDef;
use super::selectors::{FieldSelector, LabelSelector};
use super::status::{self, ApiError};
use super::store::{StoreError, object_rv};
use super::table;
use super::trace::StageStatus;
use super::util;

/// Output conversion: events are stored as core/v1 and served in the asked group.
pub fn output(def: &ResourceDef, v: &Value) -> Value {
    if def.group == "events.k8s.io" {
        events::to_events_v1(v)
    } else {
        v.clone()
    }
}

/// An object reply, as a Table when the client asked for one.
pub fn object_reply(
    ctx: &Ctx<'_>,
    def: &'static ResourceDef,
    code: u16,
    v: Value,
) -> Result<Reply, ApiError> {
    if let Format::Table { v1beta1 } = ctx.format {
        let rv = v
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let include = ctx.info.query("includeObject").unwrap_or("Metadata");
        let t = table::table(def.kind, &[&v], &rv, include, v1beta1, true);
        return Ok(Reply::Object {
            code,
            value: t,
            table_kind: Some(def.kind),
        });
    }
    Ok(Reply::Object {
        code,
        value: output(def, &v),
        table_kind: Some(def.kind),
    })
}

fn store_err(def: &ResourceDef, name: &str, e: StoreError) -> ApiError {
    match e {
        StoreError::Exists => ApiError::already_exists(def.group, def.plural, name),
        StoreError::NotFound => ApiError::not_found(def.group, def.plural, name),
        StoreError::Conflict => ApiError::stale(def.group, def.plural, name),
        StoreError::TooOld(a, b) => {
            ApiError::expired(format!("too old resource version: {a} ({b})"))
        }
        StoreError::Rejected(m) => ApiError::conflict(def.group, def.plural, name, &m),
    }
}

pub fn get(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    let v = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))?;
    ctx.trace.stage(
        "storage",
        StageStatus::Ok,
        json!({"operation": "get", "key": key}),
    );
    object_reply(ctx, def, 200, (*v).clone())
}

/// Selectors from the query (400 on bad syntax or unsupported fields).
pub fn selectors(
    ctx: &Ctx<'_>,
    def: &ResourceDef,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let ls = LabelSelector::parse(ctx.info.query("labelSelector").unwrap_or_default())?;
    let fs = FieldSelector::parse(
        def.kind,
        ctx.info.query("fieldSelector").unwrap_or_default(),
    )?;
    Ok((ls, fs))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

/// The list cache key: path plus the query in a stable order.
fn list_cache_key(ctx: &Ctx<'_>) -> String {
    let mut q: Vec<(&String, &String)> = ctx.info.query.iter().collect();
    q.sort();
    let q: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{}?{}", ctx.info.path, q.join("&"))
}

pub fn list(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = selectors(ctx, def)?;
    if ctx.format == Format::Json && def.group != "events.k8s.io" {
        // Nothing was written since this exact list was encoded: the same bytes are the answer.
        let rv = ctx.api.store.current_rv();
        if let Some(bytes) = ctx.api.list_cache.get(&list_cache_key(ctx), rv) {
            ctx.trace.stage(
                "storage",
                StageStatus::Ok,
                json!({"operation": "list", "cached": true, "resourceVersion": rv.to_string()}),
            );
            return Ok(Reply::Raw {
                code: 200,
                content_type: "application/json",
                body: bytes,
            });
        }
    }
    let prefix = def.prefix_for(&ctx.info.namespace);
    let limit: usize = ctx
        .info
        .query("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let start = match ctx.info.query("continue").filter(|c| !c.is_empty()) {
        Some(c) => {
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c.trim_end_matches('='))
                .or_else(|_| base64::engine::general_purpose::STANDARD.decode(c))
                .map_err(|_| {
                    ApiError::bad_request("continue key is not valid: illegal base64 data")
                })?;
            let t: ContinueToken = serde_json::from_slice(&raw)
                .map_err(|e| ApiError::bad_request(format!("continue key is not valid: {e}")))?;
            if !t.start.starts_with(&prefix) {
                return Err(ApiError::bad_request(
                    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
                ));
            }
            t.start
        }
        None => String::new(),
    };
    // Scan in key order, filtering, until `limit` matches; the token names the next key.
    let mut items: Vec<Arc<Value>> = Vec::new();
    let mut next_key: Option<String> = None;
    let mut cursor = start;
    let mut rv;
    'scan: loop {
        let (batch, more, at) = ctx.api.store.list_keys_from(&prefix, &cursor, 512);
        rv = at;
        for (k, v) in &batch {
            if items.len() == limit {
                next_key = Some(k.clone());
                break 'scan;
            }
            if ls.matches(v) && fs.matches(def.kind, v) {
                items.push(v.clone());
            }
        }
        match batch.last() {
            Some((k, _)) if more => cursor = format!("{k}\u{0}"),
            _ => break,
        }
    }
    ctx.trace.stage("storage", StageStatus::Ok, json!({"operation": "list", "prefix": prefix, "count": items.len(), "resourceVersion": rv.to_string()}));
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(k) = next_key {
        let tok = ContinueToken {
            v: "meta.k8s.io/v1".into(),
            rv,
            start: k,
        };
        let raw = serde_json::to_vec(&tok).unwrap_or_default();
        meta["continue"] = json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw));
    }
    if let Format::Table { v1beta1 } = ctx.format {
        let include = ctx.info.query("includeObject").unwrap_or("Metadata");
        let refs: Vec<&Value> = items.iter().map(|v| v.as_ref()).collect();
        let mut t = table::table(def.kind, &refs, &rv.to_string(), include, v1beta1, true);
        t["metadata"] = meta;
        return Ok(Reply::Object {
            code: 200,
            value: t,
            table_kind: Some(def.kind),
        });
    }
    if ctx.format == Format::Json && def.group != "events.k8s.io" {
        // Encode straight from the stored objects: no copy of each item (lists are the hot path).
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ListBody<'a> {
            kind: String,
            api_version: String,
            metadata: Value,
            items: Vec<&'a Value>,
        }
        let body = ListBody {
            kind: def.list_kind(),
            api_version: def.api_version(),
            metadata: meta,
            items: items.iter().map(|v| v.as_ref()).collect(),
        };
        let mut bytes = serde_json::to_vec(&body).map_err(ApiError::internal)?;
        bytes.push(b'\n');
        let bytes = hyper::body::Bytes::from(bytes);
        ctx.api
            .list_cache
            .put(list_cache_key(ctx), rv, bytes.clone());
        return Ok(Reply::Raw {
            code: 200,
            content_type: "application/json",
            body: bytes,
        });
    }
    let items: Vec<Value> = items.iter().map(|v| output(def, v)).collect();
    let value = json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": meta, "items": items});
    Ok(Reply::Object {
        code: 200,
        value,
        table_kind: None,
    })
}

/// Parse and decode the body under the request's fieldValidation directive.
fn decode_body(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Value, ApiError> {
    let parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    let fv = ctx
        .info
        .query("fieldValidation")
        .unwrap_or("Warn")
        .to_string();
    let (typed, warnings) = decode::decode_object(def, parsed, &fv)?;
    ctx.warnings.extend(warnings);
    Ok(if def.group == "events.k8s.io" {
        events::from_events_v1(&typed)
    } else {
        typed
    })
}

pub fn create(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let mut obj = decode_body(ctx, def)?;
    let url_ns = ctx.info.namespace.clone();
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
        let suffix: String = util::uuid()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(5)
            .collect();
        obj["metadata"]["name"] = json!(format!("{gen_name}{suffix}"));
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let manager = ctx
        .info
        .query("fieldManager")
        .map(String::from)
        .unwrap_or_else(|| {
            ctx.user_agent
                .split('/')
                .next()
                .unwrap_or_default()
                .chars()
                .take(128)
                .collect()
        });
    // NamespaceLifecycle first: a missing namespace is a 404 before any other plugin looks.
    let (rec, res) = admission::namespace_lifecycle(
        &ctx.api.store,
        "create",
        &url_ns,
        def.group,
        def.plural,
        &name,
    );
    ctx.trace.stage(
        "admission",
        if res.is_ok() {
            StageStatus::Ok
        } else {
            StageStatus::Failed
        },
        json!({"phase": "validating", "plugins": [rec]}),
    );
    res?;
    let fields = kinds::fields_v1(&obj);
    kinds::prepare_create(ctx.api, def, &mut obj, ctx.trace)?;
    let now = util::now();
    obj["metadata"]["uid"] = json!(util::uuid());
    obj["metadata"]["creationTimestamp"] = json!(now);
    obj["metadata"]["managedFields"] = json!([{
        "manager": manager, "operation": "Update", "apiVersion": def.api_version(), "time": now,
        "fieldsType": "FieldsV1", "fieldsV1": fields,
    }]);
    let key = def.key_for(&url_ns, &name);
    let stored = ctx.api.store.create(&key, obj).map_err(|e| {
        ctx.trace.stage(
            "storage",
            StageStatus::Failed,
            json!({"operation": "create", "key": key, "error": e.to_string()}),
        );
        store_err(def, &name, e)
    })?;
    ctx.trace.stage(
        "storage",
        StageStatus::Ok,
        json!({"operation": "create", "key": key, "resourceVersion": stored.pointer("/metadata/resourceVersion"), "uid": stored.pointer("/metadata/uid")}),
    );
    ctx.trace.object = Some(if url_ns.is_empty() || !def.namespaced {
        name.clone()
    } else {
        format!("{url_ns}/{name}")
    });
    after_create(ctx, def, &stored);
    object_reply(ctx, def, 201, (*stored).clone())
}

fn after_create(ctx: &Ctx<'_>, def: &ResourceDef, stored: &Value) {
    match (def.group, def.kind) {
        ("", "Namespace") => {
            // The ServiceAccount controller's job: every namespace gets `default`.
            let ns = stored
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            super::bootstrap::ensure_default_sa(&ctx.api.store, ns);
        }
        ("", "Pod") => {
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
        _ => {}
    }
}

/// Store an update (PUT, PATCH or the status subresource) with optimistic concurrency.
pub fn apply_update(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    sub: &str,
    incoming: Value,
) -> Result<Reply, ApiError> {
    let name = ctx.info.name.clone();
    let body_name = incoming
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let expected = match incoming
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {s:?}")))?,
        ),
        None => None,
    };
    let key = def.key_for(&ctx.info.namespace, &name);
    let mut causes = Vec::new();
    let result = ctx.api.store.update(&key, expected, |cur| {
        let mut next = kinds::merge_update(def, sub, cur, &incoming);
        if def.namespaced {
            next["metadata"]["namespace"] = json!(ctx.info.namespace);
        }
        next["metadata"]["name"] = json!(name);
        if def.kind == "Pod"
            && sub.is_empty()
            && let Ok(p) = serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(next.clone())
        {
            causes = super::validation::validate_pod(&p);
            if !causes.is_empty() {
                return Err(StoreError::Rejected("invalid".into()));
            }
        }
        Ok(next)
    });
    if !causes.is_empty() {
        ctx.trace.stage(
            "validation",
            StageStatus::Failed,
            json!({"causes": causes.iter().map(|c| c.rendered()).collect::<Vec<_>>()}),
        );
        return Err(ApiError::invalid(def.group, def.kind, &name, causes));
    }
    let stored = result.map_err(|e| {
        ctx.trace.stage(
            "storage",
            StageStatus::Failed,
            json!({"operation": "update", "key": key, "error": e.to_string()}),
        );
        store_err(def, &name, e)
    })?;
    ctx.trace.stage("storage", StageStatus::Ok, json!({"operation": "update", "key": key, "resourceVersion": stored.pointer("/metadata/resourceVersion")}));
    object_reply(ctx, def, 200, (*stored).clone())
}

pub fn update(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    let incoming = decode_body(ctx, def)?;
    apply_update(ctx, def, sub, incoming)
}

pub fn patch(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    let cur = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))?;
    let patched = patch::apply(&ctx.content_type, &output(def, &cur), &ctx.body)?;
    let mut patched = if def.group == "events.k8s.io" {
        events::from_events_v1(&patched)
    } else {
        patched
    };
    // A patch is unconditional unless it carries a resourceVersion itself.
    let patch_rv = patch::patch_resource_version(&ctx.content_type, &ctx.body);
    let rv = match patch_rv {
        Some(rv) => rv,
        None => object_rv(&cur).map(|r| r.to_string()).unwrap_or_default(),
    };
    // A patch may have turned the object or its metadata into something else entirely.
    let Some(obj) = patched.as_object_mut() else {
        return Err(decode::cannot_handle(
            def,
            "the patched object is not an object",
        ));
    };
    match obj.entry("metadata").or_insert_with(|| json!({})) {
        Value::Object(m) => {
            m.insert("resourceVersion".into(), json!(rv));
        }
        _ => {
            return Err(decode::cannot_handle(
                def,
                "the patched object has no usable metadata",
            ));
        }
    }
    let fv = ctx
        .info
        .query("fieldValidation")
        .unwrap_or("Warn")
        .to_string();
    let (typed, warnings) = decode::decode_object(def, patched, &fv)?;
    ctx.warnings.extend(warnings);
    apply_update(ctx, def, sub, typed)
}

/// DeleteOptions from the body and query.
pub struct DeleteOptions {
    pub grace: Option<i64>,
    pub uid: Option<String>,
    pub rv: Option<String>,
}

fn delete_options(ctx: &Ctx<'_>) -> Result<DeleteOptions, ApiError> {
    let body: Value = if ctx.body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(&ctx.body).map_err(|e| {
            ApiError::bad_request(format!(
                "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: {e}"
            ))
        })?
    };
    let grace = body
        .get("gracePeriodSeconds")
        .and_then(Value::as_i64)
        .or_else(|| {
            ctx.info
                .query("gracePeriodSeconds")
                .and_then(|g| g.parse().ok())
        });
    Ok(DeleteOptions {
        grace,
        uid: body
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(String::from),
        rv: body
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from),
    })
}

pub fn delete(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let opts = delete_options(ctx)?;
    let name = ctx.info.name.clone();
    if def.kind == "Namespace" && ["default", "kube-system", "kube-public"].contains(&name.as_str())
    {
        return Err(ApiError::admission_forbidden(
            "",
            "namespaces",
            &name,
            "this namespace may not be deleted",
        ));
    }
    let key = def.key_for(&ctx.info.namespace, &name);
    let cur = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &name))?;
    let uid = cur
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let rv = cur
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(u) = &opts.uid
        && *u != uid
    {
        return Err(ApiError::conflict(
            "",
            def.kind,
            &name,
            &format!(
                "the UID in the precondition ({u}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    if let Some(r) = &opts.rv
        && *r != rv
    {
        return Err(ApiError::conflict(
            "",
            def.kind,
            &name,
            &format!(
                "the ResourceVersion in the precondition ({r}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            ),
        ));
    }
    if def.kind == "Pod" {
        let v =
            pods::delete(ctx.api, &key, &cur, opts.grace).map_err(|e| store_err(def, &name, e))?;
        ctx.trace.stage("storage", StageStatus::Ok, json!({"operation": "delete", "key": key, "resourceVersion": v.pointer("/metadata/resourceVersion")}));
        return object_reply(ctx, def, 200, (*v).clone());
    }
    if def.kind == "Namespace" {
        let v = pods::delete_namespace(ctx.api, &name).map_err(|e| store_err(def, &name, e))?;
        ctx.trace.stage(
            "storage",
            StageStatus::Ok,
            json!({"operation": "delete", "key": key}),
        );
        return object_reply(ctx, def, 200, (*v).clone());
    }
    ctx.api
        .store
        .delete(&key, |_| Ok(()))
        .map_err(|e| store_err(def, &name, e))?;
    ctx.trace.stage(
        "storage",
        StageStatus::Ok,
        json!({"operation": "delete", "key": key}),
    );
    let mut d = json!({"name": name, "kind": def.plural, "uid": uid});
    if !def.group.is_empty() {
        d["group"] = json!(def.group);
    }
    Ok(Reply::Object {
        code: 200,
        value: status::success(200, Some(d)),
        table_kind: None,
    })
}

pub fn delete_collection(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = selectors(ctx, def)?;
    let opts = delete_options(ctx)?;
    let (items, _) = ctx.api.store.list(&def.prefix_for(&ctx.info.namespace));
    let mut deleted = Vec::new();
    for v in items
        .iter()
        .filter(|v| ls.matches(v) && fs.matches(def.kind, v))
    {
        let ns = v
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let key = def.key_for(ns, name);
        let res = if def.kind == "Pod" {
            pods::delete(ctx.api, &key, v, opts.grace)
        } else {
            ctx.api.store.delete(&key, |_| Ok(()))
        };
        if let Ok(d) = res {
            deleted.push(output(def, &d));
        }
    }
    let rv = ctx.api.store.current_rv().to_string();
    let value = json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": {"resourceVersion": rv}, "items": deleted});
    Ok(Reply::Object {
        code: 200,
        value,
        table_kind: None,
    })
}

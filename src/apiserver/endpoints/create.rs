//! Create: decode under fieldValidation, NamespaceLifecycle, defaults and admission, validation,
//! managed fields, then the storage write with a new uid and resourceVersion.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::admission::plugins;
use crate::apiserver::codec::decode;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::managed_fields::{self, FieldSet};
use crate::apiserver::endpoints::reply::{object_reply, store_err, written_reply};
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::kinds;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;
use crate::apiserver::util::At;

/// Parse and decode the body under the request's fieldValidation directive.
pub(super) fn decode_body(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Value, ApiError> {
    let parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    let typed = decode_as_asked(ctx, def, parsed)?;
    Ok(conversion::to_stored(def, typed))
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

/// A POST: the storage write is awaited, so on etcd the worker thread serves other requests
/// during the transaction.
pub async fn create(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let mut p = prepare(ctx, def, None)?;
    let mut key = String::new();
    let store = &*ctx.api.store;
    let name = draw_name(
        store,
        def,
        (&p.url_ns, &p.generate_name),
        &mut p.obj,
        &mut key,
    );
    let written = store.create_later(&key, p.obj, ctx.write).await;
    let written = created_as(def, name, &p.generate_name, written);
    finish(ctx, def, &p.url_ns, &key, written)
}

/// Create, recording the body as an Update by the request's manager, or, for a server-side
/// apply of a missing object (`applied`: the applied configuration's fields), as its Apply.
pub(super) fn create_as(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    applied: Option<FieldSet>,
) -> Result<Reply, ApiError> {
    let p = prepare(ctx, def, applied)?;
    let mut key = String::new();
    let written = store_create(
        &*ctx.api.store,
        def,
        (&p.url_ns, &p.generate_name),
        p.obj,
        ctx.write,
        &mut key,
    );
    finish(ctx, def, &p.url_ns, &key, written)
}

/// A create's object as the storage write takes it.
struct Prepared {
    obj: Value,
    /// Where it is created: the request's namespace ("" for a cluster-scoped kind).
    url_ns: String,
    /// The prefix its name was generated from ("" when the client named it).
    generate_name: String,
}

/// Decode, NamespaceLifecycle, defaults and admission, validation, managed fields.
fn prepare(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    applied: Option<FieldSet>,
) -> Result<Prepared, ApiError> {
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
            .at("/metadata/namespace")
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
        .at("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(ApiError::bad_request(
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let gen_name = obj
        .at("/metadata/generateName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let generated = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
        && !gen_name.is_empty();
    if generated {
        let suffix = util::random_suffix();
        obj["metadata"]["name"] = json!(format!("{gen_name}{suffix}"));
    }
    let name = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let manager = managed_fields::request_manager(ctx);
    // NamespaceLifecycle first: a missing namespace is a 404 before any other plugin looks.
    // A pod's runs in its admission (plugins::mutate_pod), after the decode and its defaults,
    // where its record takes its place among the other plugins.
    if def.kind != "Pod" {
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
            plugins::Admission {
                phase: "mutating",
                plugins: std::slice::from_ref(&rec),
            },
        );
        res?;
    }
    kinds::omit_empty_meta_maps(&mut obj);
    let (operation, fields) = match applied {
        Some(set) => ("Apply", set),
        None => (
            "Update",
            managed_fields::created_field_set(def, &defaulted(def, &obj)),
        ),
    };
    // The uid first, as upstream's FillObjectMetaSystemFields: a Job's selector is made of it.
    obj["metadata"]["uid"] = json!(util::uuid());
    kinds::prepare_create(ctx.api, def, &mut obj, ctx.trace, &mut ctx.warnings)?;
    let now = util::now();
    obj["metadata"]["creationTimestamp"] = json!(now);
    managed_fields::stamp_created(&mut obj, def, &manager, operation, &fields, &now);
    Ok(Prepared {
        obj,
        url_ns,
        generate_name: if generated { gen_name } else { String::new() },
    })
}

/// On etcd, adds to a storage stage's `detail` the real key and the etcdctl line that reads it;
/// false on the in-memory store, which has neither.
fn locate(store: &dyn Storage, key: &str, detail: &mut Value) -> bool {
    let Some(Value::Object(at)) = store.locate(key) else {
        return false;
    };
    for (k, v) in at {
        detail[k] = v;
    }
    true
}

/// The storage stage, the pod's trace, and the 201.
fn finish(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    url_ns: &str,
    key: &str,
    written: Result<(String, Arc<Value>), ApiError>,
) -> Result<Reply, ApiError> {
    let (name, stored) = match written {
        Ok(created) => created,
        Err(e) => {
            let mut detail = json!({"operation": "create", "key": key, "error": e.message});
            // For a 409, the etcdctl line reads the object that took the name.
            locate(ctx.api.store.as_ref(), key, &mut detail);
            ctx.trace.stage(Stage::Storage, Status::Failed, detail);
            return Err(e);
        }
    };
    let mut detail = json!({"operation": "create", "key": key, "resourceVersion": stored.at("/metadata/resourceVersion"), "uid": stored.at("/metadata/uid")});
    // On etcd: the revision the transaction produced is the resourceVersion.
    if ctx.write == Write::Commit && locate(ctx.api.store.as_ref(), key, &mut detail) {
        detail["etcdRevision"] = detail["resourceVersion"].clone();
    }
    dry_run::storage_stage(ctx.trace, ctx.write, detail);
    if ctx.write == Write::DryRun {
        // Nothing was stored: no namespace controller, no pod trace to start.
        return object_reply(ctx, def, 201, Arc::unwrap_or_clone(stored));
    }
    ctx.trace.object = Some(if url_ns.is_empty() || !def.namespaced {
        name.clone()
    } else {
        format!("{url_ns}/{name}")
    });
    after_create(ctx, def, &stored);
    written_reply(ctx, def, 201, key, Arc::unwrap_or_clone(stored))
}

/// How many names a create whose name the server generates may try: upstream's
/// RetryGenerateName (GA since 1.32) draws a new suffix while the name is taken, 8 times in all.
/// 27^5 suffixes meet a taken one every few thousand pods of a large ReplicaSet, which then
/// reported FailedCreate where a 1.33 server retries.
const NAME_GENERATION_ATTEMPTS: usize = 8;

/// Store `obj` under its name in `ns`; when the server generated that name from
/// `generate_name` (non-empty), a taken name is drawn again as upstream does, and only when
/// every attempt was taken is the answer the 409 with `retryAfterSeconds`. The names are
/// checked before the write, so the object is not copied for a retry: the store's create
/// stays the check that counts (a name taken in between is that 409 too). Ok: the name and
/// the stored object; `key` is left at the key last tried.
pub(crate) fn store_create(
    store: &dyn Storage,
    def: &ResourceDef,
    (ns, generate_name): (&str, &str),
    mut obj: Value,
    write: Write,
    key: &mut String,
) -> Result<(String, Arc<Value>), ApiError> {
    let name = draw_name(store, def, (ns, generate_name), &mut obj, key);
    let written = store.create(key, obj, write);
    created_as(def, name, generate_name, written)
}

/// The name `obj` is stored under, drawn again from `generate_name` (when non-empty) while the
/// one drawn is taken; `key` is set to its key.
fn draw_name(
    store: &dyn Storage,
    def: &ResourceDef,
    (ns, generate_name): (&str, &str),
    obj: &mut Value,
    key: &mut String,
) -> String {
    let mut name = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    *key = def.key_for(ns, &name);
    let mut attempt = 1;
    while !generate_name.is_empty()
        && attempt < NAME_GENERATION_ATTEMPTS
        && store.get(key).is_some()
    {
        name = format!("{generate_name}{}", util::random_suffix());
        obj["metadata"]["name"] = json!(name);
        *key = def.key_for(ns, &name);
        attempt += 1;
    }
    name
}

/// The store's answer to a create of `name` as the client hears it.
fn created_as(
    def: &ResourceDef,
    name: String,
    generate_name: &str,
    written: Result<Arc<Value>, StoreError>,
) -> Result<(String, Arc<Value>), ApiError> {
    match written {
        Ok(stored) => Ok((name, stored)),
        Err(StoreError::Exists) if !generate_name.is_empty() => Err(
            ApiError::generate_name_conflict(def.group, def.plural, &name),
        ),
        Err(e) => Err(store_err(def, &name, e)),
    }
}

/// The object as upstream's decoder hands it to the field manager: with the scheme's defaults
/// (a pod's imagePullPolicy, dnsPolicy, ...) but before admission, so a create's Update entry
/// owns the defaults as kube-apiserver's does (a namespace's `kubernetes.io/metadata.name`
/// label is SetDefaults_Namespace's, so its creator owns it).
pub(crate) fn defaulted(def: &ResourceDef, obj: &Value) -> Value {
    if (def.group, def.kind) == ("", "Namespace") {
        let mut ns = obj.clone();
        crate::apiserver::registry::core::namespace::name_label(&mut ns);
        return ns;
    }
    if (def.group, def.kind) != ("", "Pod") {
        return obj.clone();
    }
    match <k8s_openapi::api::core::v1::Pod as serde::Deserialize>::deserialize(obj) {
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
                .at("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            stored
                .at("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        ctx.api.traces.reset_pod(&key);
        let uid = stored
            .at("/metadata/uid")
            .and_then(Value::as_str)
            .map(String::from);
        let audit = ctx.trace.audit_id.clone();
        ctx.api.traces.with_pod(&key, |p| {
            p.uid = uid;
            p.create_audit_id = Some(audit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources::lookup;
    use crate::apiserver::storage::store::Store;

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn a_taken_generated_name_is_drawn_again() {
        let store = Store::default();
        let def = lookup("", "v1", "pods").expect("pods");
        store
            .create(
                "/registry/pods/default/web-bbbbb",
                pod("web-bbbbb"),
                Write::Commit,
            )
            .expect("first");
        // The first draw is the taken name: the retry draws another.
        let mut key = String::new();
        let (name, stored) = store_create(
            &store,
            def,
            ("default", "web-"),
            pod("web-bbbbb"),
            Write::Commit,
            &mut key,
        )
        .expect("retried");
        assert_ne!(name, "web-bbbbb");
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert_eq!(key, format!("/registry/pods/default/{name}"));
        assert_eq!(stored["metadata"]["name"], json!(name));
    }

    #[test]
    fn a_taken_name_the_client_chose_is_409_at_once() {
        let store = Store::default();
        let def = lookup("", "v1", "pods").expect("pods");
        store
            .create("/registry/pods/default/web", pod("web"), Write::Commit)
            .expect("first");
        let mut key = String::new();
        let e = store_create(
            &store,
            def,
            ("default", ""),
            pod("web"),
            Write::Commit,
            &mut key,
        )
        .expect_err("taken");
        assert_eq!(key, "/registry/pods/default/web");
        assert_eq!((e.code, e.reason), (409, "AlreadyExists"));
        assert_eq!(e.message, "pods \"web\" already exists");
    }

    #[test]
    fn exhausted_generation_says_so_and_when_to_retry() {
        let e = ApiError::generate_name_conflict("", "pods", "web-x2x9q");
        assert_eq!(
            e.message,
            "pods \"web-x2x9q\" already exists, the server was not able to generate a unique name for the object"
        );
        assert_eq!(e.details.expect("details")["retryAfterSeconds"], json!(1));
    }
}

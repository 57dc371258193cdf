//! Delete: DeleteOptions (grace period, preconditions, propagationPolicy), graceful pod
//! deletion, a namespace's move to Terminating, the garbage collector's finalizers, and
//! deletecollection.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::endpoints::delete_options::{Propagation, delete_options, propagation};
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::list_options::selectors;
use crate::apiserver::endpoints::pods;
use crate::apiserver::endpoints::reply::{object_reply, output, store_err};
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Api, Ctx, Reply};
use crate::apiserver::request::status::{self, ApiError};
use crate::apiserver::storage::deletion;
use crate::apiserver::storage::store::{StoreError, Write};

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
    let write = ctx.write;
    let policy = propagation(&opts, def.group, def.kind)?;
    if def.kind == "Pod" {
        let v = pods::delete(ctx.api, &key, &cur, opts.grace, write)
            .map_err(|e| store_err(def, &name, e))?;
        dry_run::storage_stage(
            ctx.trace,
            write,
            json!({"operation": "delete", "key": key, "resourceVersion": v.pointer("/metadata/resourceVersion")}),
        );
        return object_reply(ctx, def, 200, (*v).clone());
    }
    if def.kind == "Namespace" {
        let v =
            pods::delete_namespace(ctx.api, &name, write).map_err(|e| store_err(def, &name, e))?;
        dry_run::storage_stage(ctx.trace, write, json!({"operation": "delete", "key": key}));
        return object_reply(ctx, def, 200, (*v).clone());
    }
    if let Some((v, finalizers)) = mark_for_collector(ctx.api, &key, &cur, policy, write)
        .map_err(|e| store_err(def, &name, e))?
    {
        dry_run::storage_stage(
            ctx.trace,
            write,
            json!({"operation": "delete", "key": key, "propagationPolicy": format!("{policy:?}"), "finalizers": finalizers}),
        );
        return object_reply(ctx, def, 200, (*v).clone());
    }
    ctx.api
        .store
        .delete(&key, write, |_| Ok(()))
        .map_err(|e| store_err(def, &name, e))?;
    dry_run::storage_stage(
        ctx.trace,
        write,
        json!({"operation": "delete", "key": key, "propagationPolicy": format!("{policy:?}")}),
    );
    let mut d = json!({"name": name, "kind": def.plural, "uid": uid});
    if !def.group.is_empty() {
        d["group"] = json!(def.group);
    }
    Ok(Reply::Object {
        code: 200,
        value: status::success(200, Some(d)),
    })
}

/// An object marked deleted, with the finalizers that hold it.
type Marked = (Arc<Value>, Vec<String>);

/// deletionFinalizersForGarbageCollection: the garbage collector's finalizers follow the
/// policy; an object left with any finalizer is only marked deleted (the garbage collector or
/// the finalizer's owner completes it) and answered, one without is left to the caller to
/// remove now (the collector deletes its dependents afterwards).
fn mark_for_collector(
    api: &Api,
    key: &str,
    cur: &Value,
    policy: Propagation,
    write: Write,
) -> Result<Option<Marked>, StoreError> {
    let mut finalizers: Vec<String> = cur
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    finalizers.retain(|f| f != "orphan" && f != "foregroundDeletion");
    match policy {
        Propagation::Orphan => finalizers.push("orphan".into()),
        Propagation::Foreground => finalizers.push("foregroundDeletion".into()),
        Propagation::Background => {}
    }
    if finalizers.is_empty() {
        return Ok(None);
    }
    let v = api.store.update(key, None, write, |c| {
        let mut next = c.clone();
        deletion::mark_now(&mut next);
        next["metadata"]["finalizers"] = json!(finalizers);
        Ok(next)
    })?;
    Ok(Some((v, finalizers)))
}

pub fn delete_collection(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = selectors(ctx, def)?;
    let opts = delete_options(ctx)?;
    let policy = propagation(&opts, def.group, def.kind)?;
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
            pods::delete(ctx.api, &key, v, opts.grace, ctx.write)
        } else {
            match mark_for_collector(ctx.api, &key, v, policy, ctx.write) {
                Ok(Some((marked, _))) => Ok(marked),
                Ok(None) => ctx.api.store.delete(&key, ctx.write, |_| Ok(())),
                Err(e) => Err(e),
            }
        };
        if let Ok(d) = res {
            deleted.push(output(def, &d));
        }
    }
    dry_run::storage_stage(
        ctx.trace,
        ctx.write,
        json!({"operation": "deletecollection", "prefix": def.prefix_for(&ctx.info.namespace), "deleted": deleted.len()}),
    );
    let rv = ctx.api.store.current_rv().to_string();
    let value = json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": {"resourceVersion": rv}, "items": deleted});
    Ok(Reply::Object { code: 200, value })
}

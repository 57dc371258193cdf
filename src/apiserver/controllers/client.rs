//! How the control loops write (upstream: kube-controller-manager's client-go clients): every
//! object a controller creates goes through its kind's create path — defaults, admission,
//! validation — as a request would, and pods are deleted gracefully, so a controller can never
//! store what a client could not. Reads go straight to storage, as informers read their cache.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::endpoints::managed_fields;
use crate::apiserver::endpoints::{create, pods};
use crate::apiserver::registry::kinds;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// The field manager the control loops write as: kube-controller-manager's User-Agent prefix,
/// the name upstream's managedFields give its writes.
pub(crate) const MANAGER: &str = "kube-controller-manager";

/// The field manager of what kube-apiserver keeps itself (the `kubernetes` Service and its
/// endpoints).
pub(crate) const APISERVER: &str = "kube-apiserver";

/// Create `obj` as kube-controller-manager would ([`create_as`]).
pub(crate) fn create(api: &Api, def: &ResourceDef, obj: Value) -> Result<Arc<Value>, ApiError> {
    create_as(api, def, obj, MANAGER)
}

/// Create `obj` as `manager` would: kind and apiVersion set, a `generateName` completed, the
/// kind's strategy run, then stored with a uid and the manager's Update entry, which owns what
/// it sent (defaulted, before admission), as a client's create records.
pub(crate) fn create_as(
    api: &Api,
    def: &ResourceDef,
    mut obj: Value,
    manager: &str,
) -> Result<Arc<Value>, ApiError> {
    obj["kind"] = json!(def.kind);
    obj["apiVersion"] = json!(def.api_version());
    if obj.get("metadata").is_none_or(|m| !m.is_object()) {
        obj["metadata"] = json!({});
    }
    let mut generate_name = String::new();
    if str_at(&obj, "/metadata/name").is_empty() {
        generate_name = str_at(&obj, "/metadata/generateName").to_string();
        if generate_name.is_empty() {
            return Err(ApiError::bad_request("name or generateName is required"));
        }
        obj["metadata"]["name"] = json!(format!("{generate_name}{}", util::random_suffix()));
    }
    let ns = str_at(&obj, "/metadata/namespace").to_string();
    let mut trace = RequestTrace::new(util::uuid(), util::now(), "POST", "");
    in_process_stages(&mut trace);
    kinds::omit_empty_meta_maps(&mut obj);
    let fields = managed_fields::created_field_set(def, &create::defaulted(def, &obj));
    obj["metadata"]["uid"] = json!(util::uuid());
    // A controller's create has no client to read warnings.
    kinds::prepare_create(api, def, &mut obj, &mut trace, &mut Vec::new())?;
    let now = util::now();
    obj["metadata"]["creationTimestamp"] = json!(now);
    managed_fields::stamp_created(&mut obj, def, manager, "Update", &fields, &now);
    let mut key = String::new();
    let (name, stored) = create::store_create(
        &*api.store,
        def,
        (&ns, &generate_name),
        obj,
        Write::Commit,
        &mut key,
    )?;
    trace.stage(
        Stage::Storage,
        Status::Ok,
        json!({"operation": "create", "key": key, "resourceVersion": stored.pointer("/metadata/resourceVersion"), "uid": stored.pointer("/metadata/uid")}),
    );
    record_trace(api, def, trace, &ns, &name, &stored);
    Ok(stored)
}

/// What `journey` reads of a controller's write: the controllers run inside the server, so
/// their creates never cross the authentication and authorization filters a request meets.
fn in_process_stages(trace: &mut RequestTrace) {
    let note = json!({"note": IN_PROCESS});
    trace.stage(Stage::Authentication, Status::Skipped, note.clone());
    trace.stage(Stage::Authorization, Status::Skipped, note);
}

/// Said in the trace of every controller write (read by `journey`).
pub(crate) const IN_PROCESS: &str = "written in-process by kexplore's kube-controller-manager loops: no HTTP request, so no credentials to check";

/// Keeps the create's trace as a request's (`/debug/kexplore/requests/<id>`); a pod's becomes
/// its journey's `create`, as a client's create does (`endpoints::create`).
fn record_trace(
    api: &Api,
    def: &ResourceDef,
    mut trace: RequestTrace,
    ns: &str,
    name: &str,
    stored: &Value,
) {
    trace.verb = "create".into();
    trace.resource = def.plural.to_string();
    trace.code = 201;
    let key = if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    };
    trace.object = Some(key.clone());
    let is_pod = (def.group, def.kind) == ("", "Pod");
    if is_pod {
        api.traces.reset_pod(&key);
    }
    api.traces.push(trace);
    if is_pod {
        let uid = str_at(stored, "/metadata/uid").to_string();
        api.traces.with_pod(&key, |p| p.uid = Some(uid));
    }
}

/// Guaranteed update of a whole object (spec, metadata or status): `f` edits a copy of the
/// current object; an unchanged object writes nothing. What changed is recorded as
/// kube-controller-manager's (`managed_fields::record_own_write`), unless `f` recorded the
/// write itself (the autoscaler's, through the scale subresource).
pub(crate) fn update(
    api: &Api,
    def: &ResourceDef,
    ns: &str,
    name: &str,
    mut f: impl FnMut(&mut Value),
) -> Result<Arc<Value>, ApiError> {
    api.store
        .update(&def.key_for(ns, name), None, Write::Commit, |cur| {
            let mut next = cur.clone();
            f(&mut next);
            let recorded =
                next.pointer("/metadata/managedFields") != cur.pointer("/metadata/managedFields");
            if next != *cur && !recorded {
                managed_fields::record_own_write(def, cur, &mut next, MANAGER);
            }
            Ok(next)
        })
        .map_err(|e| store_error(def, name, e))
}

/// Delete as a client with default options would: pods gracefully (the kubelet stops them),
/// everything else at once, except that what a finalizer holds is only marked deleted
/// (`storage::deletion`). A missing object is not an error (someone else deleted it).
pub(crate) fn delete(api: &Api, def: &ResourceDef, ns: &str, name: &str) -> Result<(), ApiError> {
    let key = def.key_for(ns, name);
    let Some(cur) = api.store.get(&key) else {
        return Ok(());
    };
    let res = if (def.group, def.kind) == ("", "Pod") {
        pods::delete(api, &key, &cur, None, Write::Commit)
    } else {
        api.store.delete(&key, Write::Commit, |_| Ok(()))
    };
    match res {
        Ok(_) | Err(StoreError::NotFound) => Ok(()),
        Err(e) => Err(store_error(def, name, e)),
    }
}

/// The objects of a kind in one namespace (`""`: all namespaces), in key order, as a control
/// loop's informer holds them (`Storage::list_views`: pods trimmed to what the control loops
/// read). A change goes through `update`, which starts from the whole object.
pub(crate) fn list(api: &Api, def: &ResourceDef, ns: &str) -> Vec<Arc<Value>> {
    api.store.list_views(&def.prefix_for(ns)).0
}

fn store_error(def: &ResourceDef, name: &str, e: StoreError) -> ApiError {
    crate::apiserver::endpoints::reply::store_err(def, name, e)
}

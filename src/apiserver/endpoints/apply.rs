//! Server-side apply (`PATCH` with `application/apply-patch+yaml`), as kube-apiserver's field
//! manager does it (specs/workloads-etcd-truth.md §4.4): a missing object is created (201,
//! upstream's `forceAllowCreate`); otherwise the applied configuration is merged into the live
//! object by the list keys of `list_types`, a field another manager owns with a different value
//! is a 409 naming manager and path unless `force=true` takes it over, and the fields the
//! manager applied last time but not now are removed when no one else owns them.
//!
//! Not modelled: ownership kept per API version, `$patch` directives in the applied
//! configuration, and list order (an item new to a keyed list is appended, where upstream
//! places it after the applied items before it).

use serde_json::{Map, Value};

use crate::apiserver::codec::decode;
use crate::apiserver::codec::yaml_parse;
use crate::apiserver::endpoints::create::{create_as, decode_as_asked};
use crate::apiserver::endpoints::managed_fields::{
    self as mf, Entry, FieldSet, Path, Scope, Stamp, has_descendant, item_matches,
};
use crate::apiserver::endpoints::reply::output;
use crate::apiserver::endpoints::update::{apply_update, retry_stale};
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::list_types::{self, ListType};
use crate::apiserver::registry::openapi;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::storage::store::object_rv;
use crate::apiserver::util;

const APPLY: &str = "application/apply-patch+yaml";

pub(crate) fn is_apply(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(APPLY))
}

pub(crate) fn apply(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    sub: &str,
) -> Result<Reply, ApiError> {
    let manager = field_manager(ctx);
    if manager.is_empty() {
        // kubectl always sends one; controllers must (upstream's ValidatePatchOptions).
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![Cause::required(
                "fieldManager",
                "is required for apply patch",
            )],
        ));
    }
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    if ctx.api.store.get(&key).is_none() {
        if !sub.is_empty() {
            return Err(ApiError::not_found(def.group, def.plural, &ctx.info.name));
        }
        // The applied configuration is the new object; its fields are the manager's.
        let scope = Scope::of(def, sub);
        let applied = applied_part(applied_config(def, &ctx.body)?, scope);
        same_object(ctx, def, &applied)?;
        let set = mf::field_set(def, scope, &applied);
        ctx.body = serde_json::to_vec(&applied)
            .map_err(ApiError::internal)?
            .into();
        ctx.content_type = "application/json".into();
        return create_as(ctx, def, Some(set));
    }
    retry_stale(ctx, def, sub, apply_to_live)
}

/// The `fieldManager` query parameter; apply requires one.
fn field_manager(ctx: &Ctx<'_>) -> String {
    ctx.info
        .query("fieldManager")
        .unwrap_or_default()
        .to_string()
}

/// Apply to the object as it is now (a retry reads it again).
fn apply_to_live(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    sub: &str,
) -> Result<Reply, ApiError> {
    let manager = field_manager(ctx);
    let force = ctx.info.query("force") == Some("true");
    let scope = Scope::of(def, sub);
    let applied = applied_part(applied_config(def, &ctx.body)?, scope);
    same_object(ctx, def, &applied)?;
    let set = mf::field_set(def, scope, &applied);
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    let cur = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))?;
    let live = output(def, &cur);
    let merged = merge_applied(def, &live, &applied, scope, &set, &manager, sub, force)?;
    let mut merged = conversion::to_stored(def, merged);
    // Against the object this was computed from: a write in between is caught by the store and
    // the apply recomputed (`retry_stale`), never a lost update.
    if let Some(m) = merged.get_mut("metadata").and_then(Value::as_object_mut) {
        let rv = object_rv(&cur).map(|r| r.to_string()).unwrap_or_default();
        m.insert("resourceVersion".into(), Value::String(rv));
    }
    let typed = decode_as_asked(ctx, def, merged)?;
    apply_update(ctx, def, sub, typed, Stamp::Applied)
}

/// The applied configuration, refused as kube-apiserver's field manager refuses it.
fn applied_config(def: &ResourceDef, body: &[u8]) -> Result<Value, ApiError> {
    let applied = yaml_parse::parse(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !applied.is_object() {
        return decode::parse_body(def, "application/yaml", body);
    }
    let version = applied
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if version != def.api_version() {
        return Err(ApiError::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {version}, expected: {}",
            def.api_version()
        )));
    }
    if applied
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    Ok(applied)
}

/// The applied configuration names the object of the URL (the 400s of upstream's handlers).
fn same_object(ctx: &Ctx<'_>, def: &ResourceDef, applied: &Value) -> Result<(), ApiError> {
    let meta = |k: &str| {
        applied
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (name, url_name) = (meta("name"), &ctx.info.name);
    if !name.is_empty() && name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    let ns = meta("namespace");
    if def.namespaced && !ns.is_empty() && ns != ctx.info.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// What an apply to `scope` may set: the main resource ignores `status`, the status subresource
/// everything but `status` (upstream's reset fields), and no one sets server-owned metadata.
fn applied_part(mut applied: Value, scope: Option<Scope>) -> Value {
    let Some(m) = applied.as_object_mut() else {
        return applied;
    };
    match scope {
        Some(Scope::Main) => {
            m.remove("status");
        }
        Some(Scope::Status) => {
            m.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"));
            if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.retain(|k, _| k == "name" || k == "namespace");
            }
        }
        None => {}
    }
    if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
        ] {
            meta.remove(k);
        }
    }
    applied
}

/// The live object with the applied configuration merged in, its managed fields updated, and
/// what the manager stopped applying removed; or the conflicts as a 409.
#[allow(clippy::too_many_arguments)]
fn merge_applied(
    def: &ResourceDef,
    live: &Value,
    applied: &Value,
    scope: Option<Scope>,
    set: &FieldSet,
    manager: &str,
    sub: &str,
    force: bool,
) -> Result<Value, ApiError> {
    let mut merged = live.clone();
    let schemas = openapi::kind_schemas(def);
    let root = openapi::root_schema(def);
    merge_into(&mut merged, applied, schemas, Some(&root));
    let changed = mf::compare(def, scope, live, &merged).changed();
    let mut entries = mf::entries(live);
    let is_mine = |e: &Entry| e.manager == manager && e.is_apply() && e.subresource == sub;
    let conflicts: Vec<(usize, Path)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !is_mine(e))
        .flat_map(|(i, e)| e.set.intersection(&changed).map(move |p| (i, p.clone())))
        .collect();
    if !conflicts.is_empty()
        && !force
        && !upgrades_client_side_apply(def, scope, live, manager, &conflicts)
    {
        let printed: Vec<(String, String)> = conflicts
            .iter()
            .map(|(i, p)| (entries[*i].printed(), mf::render(p)))
            .collect();
        return Err(ApiError::apply_conflict(&printed));
    }
    for (i, p) in &conflicts {
        entries[*i].set.remove(p);
    }
    if manager == KUBECTL && has_last_applied(live) {
        set_last_applied(&mut merged, applied);
    }
    let before = entries.clone();
    let mine = mf::entry_mut(&mut entries, manager, "Apply", &def.api_version(), sub);
    let previous = std::mem::replace(&mut mine.set, set.clone());
    // Fields this manager applied before and not now go, unless someone still owns them.
    for p in previous.difference(set) {
        let owned = entries
            .iter()
            .any(|e| e.set.contains(p) || has_descendant(&e.set, p));
        if !owned {
            mf::remove(&mut merged, p);
        }
    }
    let object_changed = strip_managed(&merged) != strip_managed(live);
    if !object_changed && entries_equal(&before, &entries) {
        return Ok(merged); // applying the same configuration again changes nothing
    }
    if object_changed || previous != *set {
        let now = util::now();
        if let Some(e) = entries.iter_mut().find(|e| is_mine(e)) {
            e.time = Some(now);
        }
    }
    mf::store(&mut merged, entries);
    Ok(merged)
}

/// kubectl's server-side manager: the one upstream lets take over what kubectl's client-side
/// apply last applied (`lastappliedmanager.go`, `lastappliedupdater.go`).
const KUBECTL: &str = "kubectl";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn last_applied(live: &Value) -> Option<Value> {
    let text = live
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    serde_json::from_str(text).ok()
}

fn has_last_applied(live: &Value) -> bool {
    last_applied(live).is_some()
}

/// Whether the conflicts are only fields kubectl's client-side apply last applied, and the
/// applier is kubectl's server-side apply: moving from one to the other is then no conflict.
fn upgrades_client_side_apply(
    def: &ResourceDef,
    scope: Option<Scope>,
    live: &Value,
    manager: &str,
    conflicts: &[(usize, Path)],
) -> bool {
    if manager != KUBECTL {
        return false;
    }
    let Some(last) = last_applied(live) else {
        return false;
    };
    let allowed = mf::field_set(def, scope, &last);
    conflicts.iter().all(|(_, p)| allowed.contains(p))
}

/// Keep the client-side annotation in step with what kubectl now applies server-side, so a
/// later client-side apply computes its patch from the truth.
fn set_last_applied(merged: &mut Value, applied: &Value) {
    let mut config = applied.clone();
    if let Some(a) = config
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
    }
    let text = format!("{config}\n");
    if let Some(a) = merged
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        a.insert(LAST_APPLIED.into(), Value::String(text));
    }
}

fn strip_managed(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    v
}

/// Whether two entry lists hold the same sets, ignoring where a new, empty entry was added.
fn entries_equal(a: &[Entry], b: &[Entry]) -> bool {
    let keep =
        |l: &[Entry]| -> Vec<Entry> { l.iter().filter(|e| !e.set.is_empty()).cloned().collect() };
    keep(a) == keep(b)
}

/// Merge `src` into `dst` the way apply does: objects field by field, keyed lists item by
/// item, sets as a union, anything else (scalars, atomic lists) replaced.
fn merge_into(dst: &mut Value, src: &Value, schemas: &Map<String, Value>, ty: Option<&str>) {
    let (Value::Object(d), Value::Object(s)) = (&mut *dst, src) else {
        *dst = src.clone();
        return;
    };
    for (k, sv) in s {
        if sv.is_null() {
            continue;
        }
        let child_ty = ty.and_then(|t| list_types::property_type(schemas, t, k));
        let list = ty
            .and_then(|t| list_types::lookup(t, k))
            .map(|l| l.list_type);
        match (d.get_mut(k), sv, list) {
            (Some(dv @ Value::Object(_)), Value::Object(_), _) => {
                merge_into(dv, sv, schemas, child_ty.as_deref())
            }
            (Some(Value::Array(da)), Value::Array(sa), Some(ListType::Map(keys))) => {
                for item in sa {
                    let key = mf::item_key(item, keys);
                    match da.iter_mut().find(|i| item_matches(i, &key)) {
                        Some(existing) => merge_into(existing, item, schemas, child_ty.as_deref()),
                        None => da.push(item.clone()),
                    }
                }
            }
            (Some(Value::Array(da)), Value::Array(sa), Some(ListType::Set)) => {
                for item in sa {
                    if !da.contains(item) {
                        da.push(item.clone());
                    }
                }
            }
            _ => {
                d.insert(k.clone(), sv.clone());
            }
        }
    }
}

//! The update path: PUT, non-apply PATCH and the status subresource, stored with optimistic
//! concurrency (a patch that names no resourceVersion is re-applied when the object moved).

use serde_json::{Value, json};

use crate::apiserver::admission::{persistent_volume_claim_resize, pod_security};
use crate::apiserver::codec::decode;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::managed_fields::Stamp;
use crate::apiserver::endpoints::patch;
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::defaults;
use crate::apiserver::registry::kinds;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::registry::strategy;
use crate::apiserver::registry::validation_meta;
use crate::apiserver::registry::validation_update;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::storage::store::{StoreError, object_rv};
use k8s_openapi::api::core::v1::Pod;

use crate::apiserver::endpoints::create::{decode_as_asked, decode_body};
use crate::apiserver::endpoints::reply::{object_reply, output, store_err};

/// Store an update (PUT, PATCH or the status subresource) with optimistic concurrency;
/// `stamp` says how its managed fields are recorded.
pub(crate) fn apply_update(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    sub: &str,
    incoming: Value,
    stamp: Stamp,
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
    let body_ns = incoming
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if def.namespaced && !body_ns.is_empty() && body_ns != ctx.info.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
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
    let incoming = if def.kind == "Pod" {
        defaulted_pod(incoming)
    } else {
        incoming
    };
    let key = def.key_for(&ctx.info.namespace, &name);
    let kind = strategies::of(def.group, def.kind).filter(|_| sub.is_empty());
    let mut incoming = incoming;
    if let Some(k) = kind {
        k.allocate_update(ctx.api, &key, &mut incoming)?;
    }
    // A subresource's validating admission (a CSR's approval), against the stored object.
    if !sub.is_empty()
        && let (Some(k), Some(user), Some(cur)) = (
            strategies::of(def.group, def.kind),
            ctx.trace.requester.clone(),
            ctx.api.store.get(&key),
        )
    {
        k.admit_subresource(ctx.api, &user, sub, &incoming, &cur)?;
    }
    // PodSecurity reads the namespace's policy before the write: the update runs under the
    // store's lock.
    let psa = pod_security::policy_for(&*ctx.api.store, def, sub, &ctx.info.namespace);
    let is_namespace = def.group.is_empty() && def.plural == "namespaces" && sub.is_empty();
    let is_claim = def.group.is_empty() && def.plural == "persistentvolumeclaims" && sub.is_empty();
    // PersistentVolumeClaimResize reads the claim's class before the write, for the same reason.
    let expandable = is_claim
        .then(|| persistent_volume_claim_resize::expandable_class(&*ctx.api.store, &key))
        .flatten();
    let mut resize_refused = None;
    let (mut refused, mut before, mut warnings, mut verdict) = (None, None, Vec::new(), None);
    let mut causes = Vec::new();
    let result = ctx.api.store.update(&key, expected, ctx.write, |cur| {
        let mut next = kinds::merge_update(def, sub, cur, &incoming);
        match next.get_mut("metadata").and_then(Value::as_object_mut) {
            Some(m) if def.namespaced => {
                m.insert("namespace".into(), json!(ctx.info.namespace));
            }
            Some(m) => {
                m.remove("namespace");
            }
            None => {}
        }
        next["metadata"]["name"] = json!(name);
        stamp.record(def, sub, cur, &incoming, &mut next);
        // An unconditional update applies to the stored revision; upstream sets it before
        // validating.
        if next["metadata"]["resourceVersion"]
            .as_str()
            .is_none_or(str::is_empty)
            && let Some(rv) = cur.pointer("/metadata/resourceVersion")
        {
            next["metadata"]["resourceVersion"] = rv.clone();
        }
        causes = update_causes(def, sub, &next, cur);
        if !causes.is_empty() {
            return Err(StoreError::Rejected("invalid".into()));
        }
        resize_refused = is_claim
            .then(|| persistent_volume_claim_resize::refusal(expandable.as_deref(), &next, cur))
            .flatten();
        if resize_refused.is_some() {
            return Err(StoreError::Rejected(
                persistent_volume_claim_resize::NAME.into(),
            ));
        }
        // PodSecurity (validating admission): a pod update that changes what runs, a
        // workload's template, a namespace's labels.
        warnings.clear();
        if let Some(k) = kind {
            warnings.extend(k.warnings_on_update(&next, cur));
        }
        verdict = None;
        let res = match &psa {
            Some(policy)
                if def.kind != "Pod" || pod_security::significant_pod_update(&next, cur) =>
            {
                let (rec, res) = pod_security::admit(def, policy, &next, &mut warnings);
                verdict = rec;
                res
            }
            _ if is_namespace => {
                before = Some(cur.clone());
                pod_security::validate_namespace(&next, Some(cur))
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            refused = Some(e);
            return Err(StoreError::Rejected("PodSecurity".into()));
        }
        Ok(next)
    });
    if !causes.is_empty() {
        ctx.trace.stage(
            Stage::Validation,
            Status::Failed,
            json!({"causes": causes.iter().map(|c| c.rendered()).collect::<Vec<_>>()}),
        );
        return Err(ApiError::invalid(def.group, def.kind, &name, causes));
    }
    if let Some(text) = resize_refused {
        strategy::record_validating(ctx.trace, persistent_volume_claim_resize::NAME, Some(text));
        return Err(ApiError::admission_forbidden(
            def.group, def.plural, &name, text,
        ));
    }
    if let Some(rec) = &verdict {
        pod_security::record(ctx.trace, rec);
    }
    if let Some(e) = refused {
        return Err(e);
    }
    ctx.warnings.extend(warnings);
    if let (Some(k), Ok(_)) = (kind, &result) {
        k.after_update(ctx.api, &key);
    }
    let stored = result.map_err(|e| {
        ctx.trace.stage(
            Stage::Storage,
            Status::Failed,
            json!({"operation": "update", "key": key, "error": e.to_string()}),
        );
        store_err(def, &name, e)
    })?;
    dry_run::storage_stage(
        ctx.trace,
        ctx.write,
        json!({"operation": "update", "key": key, "resourceVersion": stored.pointer("/metadata/resourceVersion")}),
    );
    if let Some(cur) = before {
        let w = pod_security::namespace_update_warnings(&*ctx.api.store, &stored, &cur);
        ctx.warnings.extend(w);
    }
    object_reply(ctx, def, 200, (*stored).clone())
}

/// A pod body gets the decode-time defaults on update as on create, so that what a client
/// leaves out is not mistaken for a change.
fn defaulted_pod(v: Value) -> Value {
    match serde_json::from_value::<Pod>(v.clone()) {
        Ok(mut pod) => {
            defaults::default_pod(&mut pod);
            serde_json::to_value(&pod).unwrap_or(v)
        }
        Err(_) => v,
    }
}

/// What upstream's `BeforeUpdate` refuses: `validateCommonFields` (the metadata rules), then
/// the kind's `ValidateUpdate`, which for every kind served here starts with the same
/// metadata rules, so those causes come twice (the message names each once), as upstream.
fn update_causes(def: &ResourceDef, sub: &str, next: &Value, cur: &Value) -> Vec<Cause> {
    let meta = validation_update::validate_object_meta_update(next, cur);
    let mut causes = meta.clone();
    causes.extend(meta);
    // Core's finalizer-name check, in the kind's ValidateUpdate only: reported once.
    validation_meta::kube_finalizer_names(next.get("metadata"), &mut causes);
    if let Some(k) = strategies::of(def.group, def.kind) {
        causes.extend(k.validate_update(sub, next, cur));
    }
    causes
}

pub fn update(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    let incoming = decode_body(ctx, def)?;
    let stamp = Stamp::update(ctx);
    apply_update(ctx, def, sub, incoming, stamp)
}

pub fn patch(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    if ctx.info.query("force").is_some() {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![Cause::forbidden(
                "force",
                "may not be specified for non-apply patch",
            )],
        ));
    }
    if patch::patch_resource_version(&ctx.content_type, &ctx.body).is_some() {
        return patch_once(ctx, def, sub); // its own precondition: a moved object is its 409
    }
    retry_stale(ctx, def, sub, patch_once)
}

/// How often a patch is recomputed against a fresh read when the object moved meanwhile
/// (upstream retries until the request's deadline; a bound keeps a livelock finite).
const PATCH_ATTEMPTS: usize = 32;

/// Run `attempt` again when the object changed between its read and its write, as upstream's
/// `GuaranteedUpdate` re-applies a patch to the newer object: a patch that names no
/// resourceVersion is never refused because a controller wrote first.
pub(crate) fn retry_stale(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    sub: &str,
    attempt: fn(&mut Ctx<'_>, &'static ResourceDef, &str) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let warnings = ctx.warnings.len();
    let mut left = PATCH_ATTEMPTS;
    loop {
        match attempt(ctx, def, sub) {
            Err(e) if e.is_stale() && left > 1 => {
                left -= 1;
                ctx.warnings.truncate(warnings);
            }
            result => return result,
        }
    }
}

fn patch_once(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    let cur = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))?;
    let patched = patch::apply(def, &ctx.content_type, &output(def, &cur), &ctx.body)?;
    let mut patched = conversion::to_stored(def, patched);
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
    let typed = decode_as_asked(ctx, def, patched)?;
    let stamp = Stamp::update(ctx);
    apply_update(ctx, def, sub, typed, stamp)
}

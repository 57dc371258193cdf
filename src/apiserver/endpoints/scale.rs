//! The `scale` subresource of deployments, replicasets, statefulsets and replicationcontrollers
//! (upstream `pkg/registry/<group>/<kind>/storage` ScaleREST): an autoscaling/v1 Scale read from
//! the object's replicas and selector; PUT or PATCH of it writes `spec.replicas` back.

use serde_json::{Value, json};

use crate::apiserver::endpoints::reply::store_err;
use crate::apiserver::endpoints::{managed_fields, patch};
use crate::apiserver::registry::apps::workload::{format_selector, label_selector};
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::storage::store::StoreError;
use crate::apiserver::util;

const GROUP: &str = "autoscaling";

/// The Scale of a workload object.
pub(crate) fn scale_of(o: &Value) -> Value {
    let mut meta = json!({});
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = o.pointer(&format!("/metadata/{k}")) {
            meta[k] = v.clone();
        }
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": {"replicas": o.pointer("/spec/replicas").cloned().unwrap_or(json!(0))},
        "status": {
            "replicas": o.pointer("/status/replicas").cloned().unwrap_or(json!(0)),
            "selector": format_selector(label_selector(o).as_deref()).replace("<none>", ""),
        },
    })
}

fn current(ctx: &Ctx<'_>, def: &ResourceDef) -> Result<Value, ApiError> {
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    ctx.api
        .store
        .get(&key)
        .map(|o| (*o).clone())
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))
}

pub(crate) fn get(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    Ok(Reply::Object {
        code: 200,
        value: scale_of(&current(ctx, def)?),
    })
}

/// PUT (a whole Scale) or PATCH (against the current Scale).
pub(crate) fn update(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    is_patch: bool,
) -> Result<Reply, ApiError> {
    let name = ctx.info.name.clone();
    let cur = current(ctx, def)?;
    let wanted = if is_patch {
        patch::apply(def, &ctx.content_type, &scale_of(&cur), &ctx.body)?
    } else {
        serde_json::from_slice::<Value>(&ctx.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding Scale: {e}")))?
    };
    let replicas = wanted
        .pointer("/spec/replicas")
        .cloned()
        .unwrap_or(json!(0));
    let Some(n) = replicas.as_i64() else {
        return Err(ApiError::invalid(
            GROUP,
            "Scale",
            &name,
            vec![Cause::invalid(
                "spec.replicas",
                &replicas,
                "must be an integer",
            )],
        ));
    };
    if n < 0 {
        return Err(ApiError::invalid(
            GROUP,
            "Scale",
            &name,
            vec![Cause::invalid(
                "spec.replicas",
                &json!(n),
                "must be greater than or equal to 0",
            )],
        ));
    }
    // A resourceVersion in the Scale is a precondition on the object.
    let expected = match wanted
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(rv) => Some(
            rv.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        ),
        None => None,
    };
    let key = def.key_for(&ctx.info.namespace, &name);
    let manager = managed_fields::request_manager(ctx);
    let now = util::now();
    // Upstream writes a Scale through the workload's own update strategy: a new replica count
    // moves the generation, so the workload's template is warned of again.
    let strategy = strategies::of(def.group, def.kind);
    let mut warnings = Vec::new();
    let stored = ctx
        .api
        .store
        .update(&key, expected, ctx.write, |o| {
            let mut next = with_replicas(o, n);
            managed_fields::record_scale(def, o, &mut next, &manager, &now);
            warnings = strategy
                .map(|k| k.warnings_on_update(&next, o))
                .unwrap_or_default();
            Ok(next)
        })
        .map_err(|e| match e {
            StoreError::Conflict => ApiError::stale(def.group, def.plural, &name),
            e => store_err(def, &name, e),
        })?;
    ctx.warnings.extend(warnings);
    Ok(Reply::Object {
        code: 200,
        value: scale_of(&stored),
    })
}

/// The object with `spec.replicas` at `n`: what a write of its Scale stores, a spec change
/// (the generation moves) only when the count does.
pub(crate) fn with_replicas(o: &Value, n: i64) -> Value {
    let mut next = o.clone();
    if next.pointer("/spec/replicas") != Some(&json!(n)) {
        next["spec"]["replicas"] = json!(n);
        util::next_generation(&mut next, o);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_carries_the_replicas_and_the_selector_as_a_string() {
        let d = json!({"metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
            "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 5}});
        let s = scale_of(&d);
        assert_eq!(s["spec"]["replicas"], 6);
        assert_eq!(s["status"], json!({"replicas": 5, "selector": "app=web"}));
        assert_eq!(s["metadata"]["resourceVersion"], "7");
    }
}

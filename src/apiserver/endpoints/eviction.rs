//! `POST …/pods/<name>/eviction` (upstream `pkg/registry/core/pod/storage/eviction.go`): a
//! graceful delete that a PodDisruptionBudget may refuse. Terminal, pending and terminating
//! pods go at once; otherwise the one PDB whose selector picks the pod must allow a disruption
//! — it is decremented and the pod named in `disruptedPods` (the disruption controller's cue)
//! — or the answer is 429 with upstream's message and DisruptionBudget cause. A dry run (the
//! query's, or the body's DeleteOptions') checks everything and writes nothing.

use serde_json::{Value, json};

use crate::apiserver::endpoints::delete_options::from_delete_options;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::pods;
use crate::apiserver::endpoints::reply::store_err;
use crate::apiserver::registry::apps::workload::selector_matches;
use crate::apiserver::registry::resources;
use crate::apiserver::request::context::{Api, Ctx, Reply};
use crate::apiserver::request::status::{self, ApiError};
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;

const BLOCKED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";
/// How often a PDB changed under us is read again before giving up (upstream `retry.RetryOnConflict`'s steps).
const CONFLICT_RETRIES: usize = 5;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// `errors.NewTooManyRequests` with the DisruptionBudget cause.
fn too_many(retry_after: u32, cause: String) -> ApiError {
    let mut details = json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]});
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
    }
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: BLOCKED.into(),
        details: Some(details),
        list_continue: None,
    }
}

pub(crate) fn evict(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let ns = ctx.info.namespace.clone();
    let name = ctx.info.name.clone();
    let body: Value = serde_json::from_slice(&ctx.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding Eviction: {e}")))?;
    if let Some(k) = body.get("kind").and_then(Value::as_str)
        && k != "Eviction"
    {
        return Err(ApiError::bad_request(format!(
            "not an Eviction object: {k}"
        )));
    }
    if s(&body, "/metadata/name") != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = body.get("deleteOptions").cloned().unwrap_or(json!({}));
    let write = match dry_run::judge("DeleteOptions", &from_delete_options(&options)?)? {
        Write::DryRun => Write::DryRun,
        Write::Commit => ctx.write,
    };
    let grace = options.get("gracePeriodSeconds").and_then(Value::as_i64);
    let key = format!("/registry/pods/{ns}/{name}");
    let Some(pod) = ctx.api.store.get(&key) else {
        return Err(ApiError::not_found("", "pods", &name));
    };
    if let Some(uid) = options
        .pointer("/preconditions/uid")
        .and_then(Value::as_str)
        && uid != s(&pod, "/metadata/uid")
    {
        return Err(ApiError::conflict(
            "",
            "pods",
            &name,
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                s(&pod, "/metadata/uid")
            ),
        ));
    }
    ctx.trace.object = Some(format!("{ns}/{name}"));
    // `canIgnorePDB`: the disruption already happened, or the pod never ran.
    let terminal = matches!(s(&pod, "/status/phase"), "Succeeded" | "Failed" | "Pending")
        || pod.pointer("/metadata/deletionTimestamp").is_some();
    if !terminal {
        check_budget(ctx.api, &pod, write)?;
    }
    let deleted = delete(ctx.api, &key, grace, write)?;
    dry_run::storage_stage(
        ctx.trace,
        write,
        json!({"operation": "evict", "key": key, "resourceVersion": deleted.pointer("/metadata/resourceVersion")}),
    );
    Ok(Reply::Object {
        code: 201,
        value: status::success(201, None),
    })
}

/// The PDB check and decrement (`checkAndDecrement`), retried when the PDB changes meanwhile.
fn check_budget(api: &Api, pod: &Value, write: Write) -> Result<(), ApiError> {
    let Some(def) = resources::lookup("policy", "v1", "poddisruptionbudgets") else {
        return Ok(());
    };
    let ns = s(pod, "/metadata/namespace");
    let labels = pod.pointer("/metadata/labels");
    let (all, _) = api.store.list(&def.prefix_for(ns));
    // A nil or empty selector matches nothing here (upstream's comment: not everything).
    let pdbs: Vec<_> = all
        .into_iter()
        .filter(|p| {
            let sel = p.pointer("/spec/selector").filter(|s| {
                s.as_object().is_some_and(|m| {
                    m.values().any(|v| {
                        v.as_object().is_some_and(|x| !x.is_empty())
                            || v.as_array().is_some_and(|x| !x.is_empty())
                    })
                })
            });
            sel.is_some() && selector_matches(sel, labels)
        })
        .collect();
    let pdb = match pdbs.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        _ => {
            return Err(ApiError::internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
    };
    let pdb_name = s(&pdb, "/metadata/name").to_string();
    let ready = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| s(c, "/type") == "Ready" && s(c, "/status") == "True")
        });
    let int = |p: &Value, f: &str| p.pointer(f).and_then(Value::as_i64).unwrap_or(0);
    if !ready {
        // An unready pod costs the budget nothing when it is already met (IfHealthyBudget,
        // the default), or at all (AlwaysAllow).
        let always = s(&pdb, "/spec/unhealthyPodEvictionPolicy") == "AlwaysAllow";
        let met = int(&pdb, "/status/currentHealthy") >= int(&pdb, "/status/desiredHealthy")
            && int(&pdb, "/status/desiredHealthy") > 0;
        if always || met {
            return Ok(());
        }
    }
    let key = def.key_for(ns, &pdb_name);
    let pod_name = s(pod, "/metadata/name").to_string();
    for _ in 0..CONFLICT_RETRIES {
        let Some(cur) = api.store.get(&key) else {
            return Ok(());
        };
        if int(&cur, "/status/observedGeneration") < int(&cur, "/metadata/generation") {
            return Err(too_many(
                10,
                format!("The disruption budget {pdb_name} is still being processed by the server."),
            ));
        }
        let allowed = int(&cur, "/status/disruptionsAllowed");
        if allowed < 0 {
            return Err(ApiError::forbidden(
                "policy",
                "poddisruptionbudget",
                &pdb_name,
                "pdb disruptions allowed is negative",
                "",
            ));
        }
        if allowed == 0 {
            return Err(too_many(
                0,
                format!(
                    "The disruption budget {pdb_name} needs {} healthy pods and has {} currently",
                    int(&cur, "/status/desiredHealthy"),
                    int(&cur, "/status/currentHealthy")
                ),
            ));
        }
        let rv = s(&cur, "/metadata/resourceVersion").parse::<u64>().ok();
        let res = api.store.update(&key, rv, write, |o| {
            let mut next = o.clone();
            next["status"]["disruptionsAllowed"] = json!(allowed - 1);
            if allowed - 1 == 0 {
                let generation = o.pointer("/status/observedGeneration").cloned().unwrap_or(json!(1));
                next["status"]["conditions"] = crate::apiserver::registry::policy::poddisruptionbudget::disruption_allowed_condition(
                    o.pointer("/status/conditions"),
                    false,
                    &generation,
                );
            }
            if !next["status"].get("disruptedPods").is_some_and(Value::is_object) {
                next["status"]["disruptedPods"] = json!({});
            }
            next["status"]["disruptedPods"][&pod_name] = json!(util::now());
            Ok(next)
        });
        match res {
            Ok(_) => return Ok(()),
            Err(StoreError::Conflict) => continue,
            Err(e) => return Err(store_err(def, &pdb_name, e)),
        }
    }
    Err(ApiError::conflict(
        "policy",
        "poddisruptionbudgets",
        &pdb_name,
        "the object has been modified; please apply your changes to the latest version and try again",
    ))
}

/// The pod gets the DisruptionTarget condition (reason EvictionByEvictionAPI), then the
/// graceful delete with the body's grace period.
fn delete(
    api: &Api,
    key: &str,
    grace: Option<i64>,
    write: Write,
) -> Result<std::sync::Arc<Value>, ApiError> {
    let err = |e| match e {
        StoreError::NotFound => {
            ApiError::not_found("", "pods", key.rsplit('/').next().unwrap_or_default())
        }
        e => ApiError::internal(e),
    };
    let mut cur = api
        .store
        .get(key)
        .ok_or(StoreError::NotFound)
        .map_err(err)?;
    let live = !matches!(s(&cur, "/status/phase"), "Succeeded" | "Failed")
        && cur.pointer("/metadata/deletionTimestamp").is_none();
    if live && write == Write::Commit {
        let now = util::now();
        if let Ok(p) = api.store.update(key, None, write, |o| {
            let mut next = o.clone();
            let mut conds = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            conds.retain(|c| s(c, "/type") != "DisruptionTarget");
            conds.push(
                json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
                              "lastTransitionTime": now, "reason": "EvictionByEvictionAPI",
                              "message": "Eviction API: evicting"}),
            );
            next["status"]["conditions"] = json!(conds);
            Ok(next)
        }) {
            cur = p;
        }
    }
    pods::delete(api, key, &cur, grace, write).map_err(err)
}

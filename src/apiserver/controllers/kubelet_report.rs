//! How a simulated kubelet reports what it does: the pod's status written as its status
//! manager writes it, Events as its recorder sends them, and the steps the journey shows.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;
use crate::apiserver::util::At;

pub(crate) fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

/// The pod's containers of one list (`containers`, `initContainers`).
pub(crate) fn containers(pod: &Value, list: &str) -> Vec<Value> {
    pod.get("spec")
        .and_then(|spec| spec.get(list))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The pod's storage key.
pub(crate) fn pod_key(pod: &Value) -> String {
    format!(
        "/registry/pods/{}/{}",
        s(pod, "/metadata/namespace"),
        s(pod, "/metadata/name")
    )
}

/// The pod as stored, while it is still the one being started or run: None once it is gone,
/// replaced, or being deleted (the kubelet then stops it instead).
pub(crate) fn still_starting(api: &Api, pod: &Value) -> Option<Arc<Value>> {
    api.store.get(&pod_key(pod)).filter(|cur| {
        s(cur, "/metadata/uid") == s(pod, "/metadata/uid")
            && cur.at("/metadata/deletionTimestamp").is_none()
    })
}

/// Ready or ContainersReady while the named containers are not ready.
pub(crate) fn not_ready(t: &str, unready: &str, now: &str) -> Value {
    json!({"type": t, "status": "False", "lastProbeTime": null, "lastTransitionTime": now,
        "reason": "ContainersNotReady", "message": format!("containers with unready status: [{unready}]")})
}

pub(crate) fn cond(t: &str, status: &str, now: &str) -> Value {
    json!({"type": t, "status": status, "lastProbeTime": null, "lastTransitionTime": now})
}

/// Write pod status as the kubelet's status manager does (status only, pod must still exist).
pub(crate) fn set_status(
    api: &Api,
    pod: &Value,
    mut f: impl FnMut(&mut Value),
) -> Option<Arc<Value>> {
    let uid = s(pod, "/metadata/uid").to_string();
    api.store
        .update(&pod_key(pod), None, Write::Commit, |cur| {
            if s(cur, "/metadata/uid") != uid {
                return Err(crate::apiserver::storage::store::StoreError::Rejected(
                    "pod was replaced".into(),
                ));
            }
            let mut next = cur.clone();
            f(&mut next["status"]);
            crate::apiserver::endpoints::managed_fields::record_pod_status_write(
                cur, &mut next, "kubelet",
            );
            Ok(next)
        })
        .ok()
}

/// An Event this node's kubelet reports about a container of `pod` (`field`:
/// `spec.containers{name}`); `(type, reason)`.
pub(crate) fn event(
    api: &Api,
    pod: &Value,
    node: &str,
    field: &str,
    (ty, reason): (&str, &str),
    message: &str,
) {
    events::record(
        api,
        pod,
        Reporter::Kubelet { node },
        ty,
        reason,
        "",
        message,
        field,
    );
}

pub(crate) fn step(api: &Api, pod: &Value, name: &str, detail: Value) {
    let key = format!(
        "{}/{}",
        s(pod, "/metadata/namespace"),
        s(pod, "/metadata/name")
    );
    api.traces.with_pod(&key, |t| {
        t.kubelet.push(
            json!({"step": name, "at": util::now_micro(), "detail": detail, "simulated": true}),
        )
    });
}

//! The event recorder of the scheduler loop and the kubelets: one core/v1 Event per occurrence,
//! under `/registry/events/<ns>/<name>` (served in both groups by `registry::events`).

use serde_json::{Value, json};

use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;

/// Who reports an event: the scheduler (events.k8s.io style), a kubelet or a controller of
/// kube-controller-manager (core/v1 style, `source.component` e.g. `deployment-controller`).
pub enum Reporter<'a> {
    /// kube-scheduler, under the name of the profile that placed the pod (upstream gives each
    /// profile its own recorder).
    Scheduler {
        profile: &'a str,
    },
    Kubelet {
        node: &'a str,
    },
    Controller {
        component: &'a str,
    },
}

/// Record an event about an object (its kind and apiVersion from the object; a pod when the
/// object does not say). `field_path` is e.g. `spec.containers{app}` for kubelet events.
#[allow(clippy::too_many_arguments)]
pub fn record(
    store: &dyn Storage,
    pod: &Value,
    reporter: Reporter<'_>,
    kind: &str,
    reason: &str,
    action: &str,
    message: &str,
    field_path: &str,
) {
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let nanos = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
    let ev_name = format!("{name}.{nanos:x}");
    let mut involved = json!({
        "kind": pod.get("kind").and_then(Value::as_str).unwrap_or("Pod"),
        "namespace": ns,
        "name": name,
        "uid": pod.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
        "apiVersion": pod.get("apiVersion").and_then(Value::as_str).unwrap_or("v1"),
        "resourceVersion": pod.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
    });
    if !field_path.is_empty() {
        involved["fieldPath"] = json!(field_path);
    }
    let now = util::now();
    let mut ev = json!({
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": ev_name, "namespace": ns, "uid": util::uuid(), "creationTimestamp": now},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind,
    });
    match reporter {
        Reporter::Scheduler { profile } => {
            // events.k8s.io/v1 writers leave the deprecated core fields empty.
            ev["source"] = json!({});
            ev["firstTimestamp"] = Value::Null;
            ev["lastTimestamp"] = Value::Null;
            ev["eventTime"] = json!(util::now_micro());
            ev["action"] = json!(action);
            ev["reportingComponent"] = json!(profile);
            ev["reportingInstance"] = json!(format!("{profile}-kexplore"));
        }
        Reporter::Kubelet { node } => {
            ev["source"] = json!({"component": "kubelet", "host": node});
            ev["firstTimestamp"] = json!(now);
            ev["lastTimestamp"] = json!(now);
            ev["count"] = json!(1);
            ev["eventTime"] = Value::Null;
            ev["reportingComponent"] = json!("kubelet");
            ev["reportingInstance"] = json!(node);
        }
        Reporter::Controller { component } => {
            ev["source"] = json!({"component": component});
            ev["firstTimestamp"] = json!(now);
            ev["lastTimestamp"] = json!(now);
            ev["count"] = json!(1);
            ev["eventTime"] = Value::Null;
            ev["reportingComponent"] = json!(component);
            ev["reportingInstance"] = json!("");
        }
    }
    let _ = store.create(
        &format!("/registry/events/{ns}/{ev_name}"),
        ev,
        Write::Commit,
    );
}

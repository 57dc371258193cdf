//! The event recorder of the scheduler loop, the kubelets and the controllers: Events under
//! `/registry/events/<ns>/<name>` (served in both groups by `registry::events`). The kubelets'
//! and controllers' go through client-go's correlator (`event_correlator`) as upstream's do:
//! repeats counted, similar ones combined, floods dropped.

use std::time::Instant;

use serde_json::{Value, json};

use crate::apiserver::request::context::Api;
use crate::apiserver::storage::event_correlator::{Occurrence, Outcome};
use crate::apiserver::storage::store::{StoreError, Write};
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
    api: &Api,
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
    let (component, host, instance) = match reporter {
        Reporter::Scheduler { profile } => {
            // events.k8s.io/v1 writers leave the deprecated core fields empty.
            ev["source"] = json!({});
            ev["firstTimestamp"] = Value::Null;
            ev["lastTimestamp"] = Value::Null;
            ev["eventTime"] = json!(util::now_micro());
            ev["action"] = json!(action);
            ev["reportingComponent"] = json!(profile);
            ev["reportingInstance"] = json!(format!("{profile}-kexplore"));
            let _ = api.store.create(
                &format!("/registry/events/{ns}/{ev_name}"),
                ev,
                Write::Commit,
            );
            return;
        }
        Reporter::Kubelet { node } => {
            ev["source"] = json!({"component": "kubelet", "host": node});
            ("kubelet", node, node)
        }
        Reporter::Controller { component } => {
            ev["source"] = json!({"component": component});
            (component, "", "")
        }
    };
    let involved = &ev["involvedObject"];
    let occurrence = Occurrence {
        component,
        host,
        kind: involved["kind"].as_str().unwrap_or_default(),
        namespace: ns,
        name,
        uid: involved["uid"].as_str().unwrap_or_default(),
        api_version: involved["apiVersion"].as_str().unwrap_or_default(),
        field_path,
        type_: kind,
        reason,
        reporting_controller: component,
        reporting_instance: instance,
        message,
    };
    let outcome = api
        .events
        .correlate(&occurrence, Instant::now(), &now, ev_name);
    ev["firstTimestamp"] = json!(now);
    ev["lastTimestamp"] = json!(now);
    ev["count"] = json!(1);
    ev["eventTime"] = Value::Null;
    ev["reportingComponent"] = json!(component);
    ev["reportingInstance"] = json!(instance);
    // A new Event, or one written again when the one to update is gone (deleted, or its
    // namespace emptied), as the recorder does. Upstream's aggregate copy carries no
    // reporting fields.
    let write_new = |mut ev: Value, name: &str, message: &str, combined: bool| {
        ev["metadata"]["name"] = json!(name);
        ev["message"] = json!(message);
        if combined {
            ev["reportingComponent"] = json!("");
            ev["reportingInstance"] = json!("");
        }
        let _ = api
            .store
            .create(&format!("/registry/events/{ns}/{name}"), ev, Write::Commit);
    };
    match outcome {
        Outcome::Skip => {}
        Outcome::Create {
            name,
            message,
            combined,
        } => write_new(ev, &name, &message, combined),
        Outcome::Update {
            name,
            count,
            message,
            first_timestamp,
            combined,
        } => {
            let key = format!("/registry/events/{ns}/{name}");
            let updated = api.store.update(&key, None, Write::Commit, |cur| {
                let mut next = cur.clone();
                next["count"] = json!(count);
                next["message"] = json!(message);
                next["lastTimestamp"] = json!(now);
                Ok(next)
            });
            if matches!(updated, Err(StoreError::NotFound)) {
                ev["count"] = json!(count);
                ev["firstTimestamp"] = json!(first_timestamp);
                write_new(ev, &name, &message, combined);
            }
        }
    }
}

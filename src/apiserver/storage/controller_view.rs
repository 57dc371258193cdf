//! What the control loops read of an object, as kube-controller-manager's informer caches hold
//! it: without `managedFields` (its informers strip them, client-go's
//! `TransformStripManagedFields`), and for pods, of which there are tens of thousands, only the
//! fields a control loop here reads. A Deployment's pod parsed whole is ~38 KB of `Value` for
//! 3.4 KB of JSON (every non-empty map a 640-byte B-tree node; 36 of its 69 maps are managed
//! fields, 9 its service-account volume): 10,000 of them, listed by the ReplicaSet controller on
//! every pass, were 380 MB; their views are 7.8 KB each. Handlers, admission and writes always
//! see the whole object; only the read paths named `*_view` in `Storage` answer with this.

use std::sync::Arc;

use serde_json::{Map, Value};

/// What the store keeps parsed for a key, besides its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kept {
    /// Nothing: Events are written by every control loop and read in bulk by none (a
    /// 10,000-pod Deployment leaves ~60,000).
    Nothing,
    /// The whole object: what reads of it and updates to it start from.
    Whole,
    /// The control loops' view only; a whole read parses the encoding.
    View,
}

pub(crate) fn kept(key: &str) -> Kept {
    if key.starts_with("/registry/events/") {
        Kept::Nothing
    } else if key.starts_with("/registry/pods/") {
        Kept::View
    } else {
        Kept::Whole
    }
}

/// The view of the object stored at `key`, made from the whole object: for a pod, a copy of
/// the parts kept (a fraction of the tree, so a write can keep it without parsing its
/// encoding again); for other kinds, the object itself.
pub(crate) fn view(key: &str, whole: &Arc<Value>) -> Arc<Value> {
    match kept(key) {
        Kept::View => Arc::new(pod_view(whole)),
        Kept::Nothing | Kept::Whole => whole.clone(),
    }
}

/// In a pod's `spec`, besides its scalars (nodeName, hostname, subdomain, priority, …): what
/// the DaemonSet controller reads to know which node a pod is for before it is bound, and the
/// gates that keep the scheduler loop from a pod.
const POD_SPEC_KEPT: &[&str] = &["affinity", "nodeSelector", "schedulingGates"];
/// Of each container: its name and image, and the ports a Service's named targetPort is looked
/// up in.
const CONTAINER_KEPT: &[&str] = &["name", "image", "ports"];
/// Of each container status: the restart count that ranks pods for deletion (upstream
/// `ActivePodsWithRanks`) and readiness.
const CONTAINER_STATUS_KEPT: &[&str] = &["name", "ready", "started", "restartCount"];
/// Of ephemeral containers and their statuses, the names: a kubelet starts those without a
/// status.
const EPHEMERAL_KEPT: &[&str] = &["name"];
/// Of the conditions: Ready, from which readiness and availability (minReadySeconds) follow.
const CONDITIONS_KEPT: &[&str] = &["Ready"];

/// A pod as the control loops read it: its metadata without managed fields, the scalars and
/// the parts named above of its spec and status.
pub(crate) fn pod_view(whole: &Value) -> Value {
    let Value::Object(pod) = whole else {
        return whole.clone();
    };
    let part = |(k, v): (&String, &Value)| {
        let kept = match (k.as_str(), v) {
            ("metadata", Value::Object(meta)) => Value::Object(entries(meta, |k, v| {
                (k != "managedFields").then(|| v.clone())
            })),
            ("spec", Value::Object(spec)) => Value::Object(entries(spec, |k, v| match k {
                "containers" | "initContainers" => each(v, CONTAINER_KEPT),
                "ephemeralContainers" => each(v, EPHEMERAL_KEPT),
                _ if is_scalar(v) || POD_SPEC_KEPT.contains(&k) => Some(v.clone()),
                _ => None,
            })),
            ("status", Value::Object(status)) => Value::Object(entries(status, |k, v| match k {
                "containerStatuses" | "initContainerStatuses" => each(v, CONTAINER_STATUS_KEPT),
                "ephemeralContainerStatuses" => each(v, EPHEMERAL_KEPT),
                "conditions" => Some(Value::Array(
                    v.as_array()?.iter().filter(|c| ready(c)).cloned().collect(),
                )),
                _ => is_scalar(v).then(|| v.clone()),
            })),
            _ => v.clone(),
        };
        (k.clone(), kept)
    };
    Value::Object(pod.iter().map(part).collect())
}

fn ready(condition: &Value) -> bool {
    condition
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| CONDITIONS_KEPT.contains(&t))
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

/// The entries of `map` that `keep` answers a value for, with that value.
fn entries(
    map: &Map<String, Value>,
    keep: impl Fn(&str, &Value) -> Option<Value>,
) -> Map<String, Value> {
    map.iter()
        .filter_map(|(k, v)| Some((k.clone(), keep(k, v)?)))
        .collect()
}

/// A list with each element keeping only the `keys` it has (each container's name, image and
/// ports, say); None for a value that is not a list.
fn each(list: &Value, keys: &[&str]) -> Option<Value> {
    let only = |v: &Value| match v {
        Value::Object(m) => Value::Object(entries(m, |k, v| keys.contains(&k).then(|| v.clone()))),
        other => other.clone(),
    };
    Some(Value::Array(list.as_array()?.iter().map(only).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::controllers::endpointslice::target_port;
    use crate::apiserver::controllers::workload::{
        controller_of, controller_uid, pod_active, pod_available, pod_ready, terminating,
    };
    use crate::apiserver::util::At;
    use serde_json::json;

    /// A pod of a Deployment as the server stores it once Running (fields as kubectl 1.33 and
    /// the simulated kubelet write them).
    fn running_pod() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web-7d4b9c-x2x9q", "generateName": "web-7d4b9c-", "namespace": "default",
                "uid": "u-1", "resourceVersion": "42", "creationTimestamp": "2026-11-28T10:00:00Z",
                "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web-7d4b9c", "uid": "rs-1", "controller": true,
                    "blockOwnerDeletion": true}],
                "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}]
            },
            "spec": {
                "nodeName": "node-2", "hostname": "h", "subdomain": "s", "priority": 0,
                "schedulerName": "default-scheduler", "restartPolicy": "Always",
                "nodeSelector": {"disk": "ssd"}, "schedulingGates": [{"name": "quota"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name",
                        "operator": "In", "values": ["node-2"]}]}]}}},
                "containers": [{"name": "nginx", "image": "nginx:1.27",
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m"}},
                    "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run"}]}],
                "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token"}}]}}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300}]
            },
            "status": {
                "phase": "Running", "podIP": "10.244.2.7", "hostIP": "10.0.0.2",
                "startTime": "2026-11-28T10:00:01Z", "qosClass": "Burstable",
                "podIPs": [{"ip": "10.244.2.7"}],
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Ready", "status": "True",
                     "lastTransitionTime": "2026-11-28T10:00:02Z"}],
                "containerStatuses": [{"name": "nginx", "ready": true, "started": true,
                    "restartCount": 3, "image": "nginx:1.27",
                    "state": {"running": {"startedAt": "2026-11-28T10:00:02Z"}}}]
            }
        })
    }

    #[test]
    fn a_pods_view_answers_every_control_loop_question_as_the_whole_pod_does() {
        let whole = running_pod();
        let view = view(
            "/registry/pods/default/web-7d4b9c-x2x9q",
            &Arc::new(whole.clone()),
        );
        let port = json!({"port": 80, "targetPort": "http"});
        for p in [&whole, &*view] {
            assert!(pod_active(p) && pod_ready(p) && pod_available(p, 5) && !terminating(p));
            assert_eq!(controller_uid(p), Some("rs-1"));
            assert_eq!(controller_of(p), Some(("ReplicaSet", "web-7d4b9c")));
            assert_eq!(target_port(p, &port), Some(8080));
        }
        for path in [
            "/metadata",
            "/spec/nodeName",
            "/spec/hostname",
            "/spec/subdomain",
            "/spec/affinity",
            "/spec/nodeSelector",
            "/spec/schedulingGates",
            "/spec/containers/0/image",
            "/status/phase",
            "/status/podIP",
            "/status/startTime",
            "/status/containerStatuses/0/restartCount",
        ] {
            let want = if path == "/metadata" {
                let mut m = whole["metadata"].clone();
                m.as_object_mut().unwrap().remove("managedFields");
                Some(m)
            } else {
                whole.at(path).cloned()
            };
            assert_eq!(view.at(path).cloned(), want, "{path}");
        }
        for gone in [
            "/metadata/managedFields",
            "/spec/volumes",
            "/spec/tolerations",
            "/spec/containers/0/resources",
            "/spec/containers/0/volumeMounts",
            "/status/podIPs",
            "/status/containerStatuses/0/state",
        ] {
            assert_eq!(view.at(gone), None, "{gone}");
        }
        let conditions = view.at("/status/conditions").and_then(Value::as_array);
        assert_eq!(conditions.map(Vec::len), Some(1), "Ready only");
    }

    #[test]
    fn other_kinds_are_kept_whole_and_events_not_at_all() {
        let rs = json!({"metadata": {"name": "web", "managedFields": [{}]}, "spec": {}});
        let same = view("/registry/replicasets/default/web", &Arc::new(rs.clone()));
        assert_eq!(*same, rs);
        assert_eq!(kept("/registry/replicasets/default/web"), Kept::Whole);
        assert_eq!(kept("/registry/events/default/web.1"), Kept::Nothing);
        assert_eq!(kept("/registry/pods/default/web"), Kept::View);
    }
}

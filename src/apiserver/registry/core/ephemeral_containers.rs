//! A pod's ephemeral containers, as `kubectl debug` adds them (upstream
//! `podEphemeralContainersStrategy` in `pkg/registry/core/pod/strategy.go`,
//! `ValidatePodEphemeralContainersUpdate` and `validateEphemeralContainers` in
//! `pkg/apis/core/validation`): only the `pods/ephemeralcontainers` subresource adds them, never
//! a create or an update of the pod, and once added none may change or go. The simulated
//! kubelet then starts each one (`controllers/kubelet_ephemeral.rs`); no process runs.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::{Container, EphemeralContainer, PodSpec};
use serde_json::{Value, json};

use crate::apiserver::registry::defaults::default_pull_policy;
use crate::apiserver::registry::validation::validate_container;
use crate::apiserver::registry::validation_update::diff;
use crate::apiserver::registry::validation_volumes;
use crate::apiserver::request::status::Cause;
use crate::apiserver::util;

/// The subresource's name in the URL, discovery and managedFields.
pub(crate) const SUBRESOURCE: &str = "ephemeralcontainers";

/// The fields an ephemeral container may not set (upstream's allow-list turned around, in its
/// field order): nothing that would make the pod rely on it.
const NOT_ALLOWED: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

const NOT_FOR_EPHEMERAL: &str = "cannot be set for an Ephemeral Container";

/// ValidatePodCreate's rule: a pod is created without them.
pub(crate) fn refused_on_create(spec: Option<&PodSpec>) -> Option<Cause> {
    spec.and_then(|s| s.ephemeral_containers.as_ref())
        .filter(|l| !l.is_empty())
        .map(|_| Cause::forbidden("spec.ephemeralContainers", "cannot be set on create"))
}

/// The pod an ephemeral-containers write stores (`dropNonEphemeralContainerUpdates`):
/// everything as stored but `spec.ephemeralContainers`, taken from the body with the
/// container defaults applied; the generation moves when they changed, as for any spec change.
pub(crate) fn merge(current: &Value, incoming: &Value) -> Value {
    let mut next = current.clone();
    let mut list = incoming
        .pointer("/spec/ephemeralContainers")
        .cloned()
        .unwrap_or(Value::Null);
    for c in list.as_array_mut().into_iter().flatten() {
        default_container(c);
    }
    let old = current
        .pointer("/spec/ephemeralContainers")
        .cloned()
        .unwrap_or(Value::Null);
    let empty = |v: &Value| v.as_array().is_none_or(Vec::is_empty);
    if empty(&list) {
        if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("ephemeralContainers");
        }
    } else {
        next["spec"]["ephemeralContainers"] = list.clone();
    }
    if !(empty(&list) && empty(&old)) && list != old {
        util::next_generation(&mut next, current);
    }
    next
}

/// SetDefaults_EphemeralContainer: the defaults of any container.
fn default_container(c: &mut Value) {
    let Some(m) = c.as_object_mut() else {
        return;
    };
    if !m.contains_key("imagePullPolicy") {
        let image = m.get("image").and_then(Value::as_str).unwrap_or_default();
        let policy = default_pull_policy(image);
        m.insert("imagePullPolicy".into(), json!(policy));
    }
    m.entry("terminationMessagePath")
        .or_insert_with(|| json!("/dev/termination-log"));
    m.entry("terminationMessagePolicy")
        .or_insert_with(|| json!("File"));
}

/// `validateEphemeralContainers`: each one as a container, its name unique among all the
/// pod's containers, its target one of the pod's other containers, none of the fields an
/// ephemeral container may not set, no subPath mounts.
pub(crate) fn validate(spec: &PodSpec) -> Vec<Cause> {
    let mut out = Vec::new();
    let others: HashSet<String> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .map(|c| c.name.clone())
        .collect();
    let mut names = others.clone();
    // The volumes a container may mount: the valid ones (their causes are the pod's own).
    let volumes = validation_volumes::validate_volumes(
        spec.volumes.as_deref().unwrap_or_default(),
        &mut Vec::new(),
    );
    for (i, ec) in spec.ephemeral_containers.iter().flatten().enumerate() {
        let path = format!("spec.ephemeralContainers[{i}]");
        let as_value = serde_json::to_value(ec).unwrap_or_default();
        if let Ok(c) = serde_json::from_value::<Container>(as_value.clone()) {
            validate_container(&c, &path, &mut names, &volumes, &mut out);
        }
        if let Some(target) = ec.target_container_name.as_deref()
            && !target.is_empty()
            && !others.contains(target)
        {
            out.push(Cause::not_found(
                &format!("{path}.targetContainerName"),
                &json!(target),
            ));
        }
        for field in NOT_ALLOWED {
            if is_set(as_value.get(field)) {
                out.push(Cause::forbidden(
                    &format!("{path}.{field}"),
                    NOT_FOR_EPHEMERAL,
                ));
            }
        }
        for (m, mount) in ec.volume_mounts.iter().flatten().enumerate() {
            if mount.sub_path.as_deref().is_some_and(|p| !p.is_empty()) {
                out.push(Cause::forbidden(
                    &format!("{path}.volumeMounts[{m}].subPath"),
                    NOT_FOR_EPHEMERAL,
                ));
            }
        }
    }
    out
}

/// Go's zero value test: an empty list or struct is not set.
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => o.values().any(|v| is_set(Some(v))),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// What may change through the subresource: containers added, none removed or changed
/// (matched by name: a patch need not keep their order).
pub(crate) fn validate_update(next: &Value, current: &Value) -> Vec<Cause> {
    let list = |v: &Value| -> Vec<EphemeralContainer> {
        v.pointer("/spec/ephemeralContainers")
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or_default()
    };
    let (new, old) = (list(next), list(current));
    let mut out = Vec::new();
    for was in &old {
        match new.iter().find(|c| c.name == was.name) {
            None => out.push(Cause::forbidden(
                "spec.ephemeralContainers",
                &format!(
                    "existing ephemeral containers {:?} may not be removed\n",
                    was.name
                ),
            )),
            Some(now) if now != was => {
                let mut lines = Vec::new();
                diff(
                    "",
                    &serde_json::to_value(was).unwrap_or_default(),
                    &serde_json::to_value(now).unwrap_or_default(),
                    &mut lines,
                );
                out.push(Cause::forbidden(
                    "spec.ephemeralContainers",
                    &format!(
                        "existing ephemeral containers {:?} may not be changed\n{}",
                        was.name,
                        lines.join("\n")
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ephemeral: Value) -> PodSpec {
        serde_json::from_value(json!({
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [{"name": "app", "image": "nginx"}],
            "ephemeralContainers": ephemeral,
        }))
        .expect("spec")
    }

    fn messages(causes: &[Cause]) -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn what_an_ephemeral_container_may_not_be() {
        let s = spec(json!([
            {"name": "dbg", "image": "busybox", "targetContainerName": "app"},
            {"name": "app", "image": "busybox"},
            {"name": "d2", "image": "busybox", "targetContainerName": "nope",
             "ports": [{"containerPort": 80}], "resources": {},
             "readinessProbe": {"exec": {"command": ["true"]}},
             "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x"}]},
            {"name": "d3"},
        ]));
        assert_eq!(
            messages(&validate(&s)),
            [
                "spec.ephemeralContainers[1].name: Duplicate value: \"app\"",
                "spec.ephemeralContainers[2].volumeMounts[0].name: Not found: \"v\"",
                "spec.ephemeralContainers[2].targetContainerName: Not found: \"nope\"",
                "spec.ephemeralContainers[2].ports: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[2].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[2].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
                "spec.ephemeralContainers[3].image: Required value",
            ]
        );
        assert!(validate(&spec(json!([{"name": "dbg", "image": "busybox"}]))).is_empty());
    }

    #[test]
    fn a_write_adds_them_with_defaults_and_never_takes_one_back() {
        let pod = json!({"metadata": {"name": "p", "generation": 1},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running"}});
        let body = json!({"metadata": {"name": "p"},
            "spec": {"containers": [], "ephemeralContainers": [{"name": "dbg", "image": "busybox:1.36"}]},
            "status": {"phase": "Failed"}});
        let next = merge(&pod, &body);
        assert_eq!(next["status"]["phase"], "Running", "only the list is taken");
        assert_eq!(next["spec"]["containers"], pod["spec"]["containers"]);
        assert_eq!(next["metadata"]["generation"], 2);
        assert_eq!(
            next["spec"]["ephemeralContainers"][0],
            json!({"name": "dbg", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
        );
        assert!(validate_update(&next, &pod).is_empty());
        // The same list again changes nothing, not even the generation.
        assert_eq!(merge(&next, &next)["metadata"]["generation"], 2);

        let gone = merge(&next, &json!({"spec": {"ephemeralContainers": []}}));
        assert_eq!(
            messages(&validate_update(&gone, &next)),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be removed\n"
            ]
        );
        let mut changed = next.clone();
        changed["spec"]["ephemeralContainers"][0]["image"] = json!("alpine");
        assert_eq!(
            messages(&validate_update(&changed, &next)),
            [
                "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be changed\n- .image: \"busybox:1.36\"\n+ .image: \"alpine\""
            ]
        );
    }

    #[test]
    fn a_pod_is_created_without_them() {
        assert!(refused_on_create(Some(&spec(json!([])))).is_none());
        let c = refused_on_create(Some(&spec(json!([{"name": "dbg", "image": "busybox"}]))));
        assert_eq!(
            c.map(|c| format!("{}: {}", c.field, c.message)).as_deref(),
            Some("spec.ephemeralContainers: Forbidden: cannot be set on create")
        );
    }
}

//! Admission for pods: the mutating plugins a default kube-apiserver runs on a pod CREATE
//! (ServiceAccount → Priority → DefaultTolerationSeconds, after API defaulting) and the
//! validating NamespaceLifecycle check. Each plugin reports which fields it changed.

use k8s_openapi::api::core::v1::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, KeyToPath,
    ObjectFieldSelector, Pod, ProjectedVolumeSource, ServiceAccountTokenProjection, Toleration,
    Volume, VolumeMount, VolumeProjection,
};
use serde::Serialize;
use serde_json::Value;

use crate::apiserver::admission::limit_ranger;
use crate::apiserver::registry::defaults;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::storage::interface::Storage;

/// What one admission plugin did, for the trace.
#[derive(Debug, Clone, Serialize)]
pub struct PluginRecord {
    pub plugin: &'static str,
    pub phase: &'static str,
    /// `changed`, `unchanged`, `allowed` or `rejected`.
    pub result: &'static str,
    /// JSON paths this plugin set or changed (`/spec/serviceAccountName`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// The same paths with the value before and after this plugin, so a reader sees what it
    /// did without replaying the pipeline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// An admission stage as the trace records it: its phase and what each plugin did.
#[derive(Debug, Serialize)]
pub struct Admission<'a> {
    pub phase: &'static str,
    pub plugins: &'a [PluginRecord],
}

/// One field a plugin set or changed: its value before (`None`: unset) and after (`None`:
/// removed), each written compactly and cut at `VALUE_CHARS` so a trace stays small whatever
/// the pod holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// Longest value text a record keeps, in characters (an ellipsis marks the cut).
pub const VALUE_CHARS: usize = 160;

/// A value as one short line: strings bare, objects and lists in flow style
/// (`{key: node.kubernetes.io/not-ready, operator: Exists}`), cut at `VALUE_CHARS`.
pub fn value_text(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        // Stop descending once the text is long enough to be cut anyway.
        if out.chars().count() > VALUE_CHARS {
            return;
        }
        match v {
            Value::String(s) => out.push_str(s),
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(x, out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                out.push('{');
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    write(x, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    if out.chars().count() > VALUE_CHARS {
        out = out.chars().take(VALUE_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The before/after values at each changed path. A list that did not exist before is given
/// element by element (`/spec/tolerations/0`, `/1`), as appended elements are.
pub fn field_changes(before: &Value, after: &Value, paths: &[String]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for p in paths {
        let old = before.pointer(p);
        match (old, after.pointer(p)) {
            (None, Some(Value::Array(items))) if !items.is_empty() => {
                out.extend(items.iter().enumerate().map(|(i, v)| FieldChange {
                    path: format!("{p}/{i}"),
                    old: None,
                    new: Some(value_text(v)),
                }))
            }
            (old, new) => out.push(FieldChange {
                path: p.clone(),
                old: old.map(value_text),
                new: new.map(value_text),
            }),
        }
    }
    out
}

/// The paths (JSON pointer) where `b` differs from `a` — what a plugin added or changed — and,
/// as `field_changes` tells them, each one's values before and after, in one walk: the values
/// are at hand where a difference is found, instead of looked up again by pointer per path.
fn diff_changes(a: &Value, b: &Value) -> (Vec<String>, Vec<FieldChange>) {
    let (mut paths, mut changes) = (Vec::new(), Vec::new());
    diff_into(a, b, &mut String::new(), &mut paths, &mut changes);
    (paths, changes)
}

/// The walk of `diff_changes`, on one path buffer grown and cut back around each step down:
/// a string is made only for a path that differs, not for every key of a pod.
fn diff_into(
    a: &Value,
    b: &Value,
    path: &mut String,
    out: &mut Vec<String>,
    changes: &mut Vec<FieldChange>,
) {
    let len = path.len();
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, vb) in y {
                // JSON pointer escaping, so a label key like `app.kubernetes.io/name` stays one
                // segment.
                path.push('/');
                for c in k.chars() {
                    match c {
                        '~' => path.push_str("~0"),
                        '/' => path.push_str("~1"),
                        c => path.push(c),
                    }
                }
                match x.get(k) {
                    Some(va) => diff_into(va, vb, path, out, changes),
                    None => added(path, vb, out, changes),
                }
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                push_index(path, i);
                diff_into(va, vb, path, out, changes);
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if y.len() > x.len() && y.starts_with(x) => {
            for (i, vb) in y.iter().enumerate().skip(x.len()) {
                push_index(path, i);
                added(path, vb, out, changes);
                path.truncate(len);
            }
        }
        _ if a != b => {
            out.push(path.clone());
            changes.push(FieldChange {
                path: path.clone(),
                old: Some(value_text(a)),
                new: Some(value_text(b)),
            });
        }
        _ => {}
    }
}

/// A path that did not exist before: a new non-empty list is told element by element, as
/// `field_changes` tells it.
fn added(path: &str, v: &Value, out: &mut Vec<String>, changes: &mut Vec<FieldChange>) {
    out.push(path.to_string());
    match v {
        Value::Array(items) if !items.is_empty() => {
            changes.extend(items.iter().enumerate().map(|(i, item)| FieldChange {
                path: format!("{path}/{i}"),
                old: None,
                new: Some(value_text(item)),
            }))
        }
        v => changes.push(FieldChange {
            path: path.to_string(),
            old: None,
            new: Some(value_text(v)),
        }),
    }
}

fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "/{i}");
}

/// Run one mutating plugin and record what it changed. `seen` is the pod as the record before
/// left it, kept as a tree: each plugin's result is serialized once and is the next one's
/// "before" (it used to be serialized twice, before and after each plugin).
fn step(
    records: &mut Vec<PluginRecord>,
    plugin: &'static str,
    (pod, seen): (&mut Pod, &mut Value),
    f: impl FnOnce(&mut Pod) -> Result<(), String>,
) -> Result<(), String> {
    let res = f(pod);
    let after = serde_json::to_value(&*pod).unwrap_or(Value::Null);
    let (changed, changes) = diff_changes(seen, &after);
    *seen = after;
    let (result, message) = match &res {
        Err(m) => ("rejected", Some(m.clone())),
        Ok(()) if changed.is_empty() => ("unchanged", None),
        Ok(()) => ("changed", None),
    };
    records.push(PluginRecord {
        plugin,
        phase: "mutating",
        result,
        changed,
        changes,
        message,
    });
    res
}

/// 5 characters from the alphabet upstream uses for generated names.
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut buf = [0u8; 5];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut buf);
    buf.iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

const SA_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

fn service_account(pod: &mut Pod, ns: &str, store: &dyn Storage) -> Result<(), String> {
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let sa_name = spec
        .service_account_name
        .get_or_insert_with(|| "default".into())
        .clone();
    let Some(sa) = store.get(&format!("/registry/serviceaccounts/{ns}/{sa_name}")) else {
        return Err(format!(
            "error looking up service account {ns}/{sa_name}: serviceaccount \"{sa_name}\" not found"
        ));
    };
    let sa_automount = sa
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool);
    let automount = spec
        .automount_service_account_token
        .or(sa_automount)
        .unwrap_or(true);
    if spec.image_pull_secrets.as_ref().is_none_or(Vec::is_empty)
        && let Some(secrets) = sa
            .get("imagePullSecrets")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    {
        spec.image_pull_secrets = Some(secrets);
    }
    if !automount {
        return Ok(());
    }
    let volumes = spec.volumes.get_or_insert_with(Vec::new);
    let vol_name = match volumes
        .iter()
        .find(|v| v.name.starts_with("kube-api-access-"))
    {
        Some(v) => v.name.clone(),
        None => {
            let name = format!("kube-api-access-{}", random_suffix());
            volumes.push(Volume {
                name: name.clone(),
                projected: Some(ProjectedVolumeSource {
                    default_mode: Some(420),
                    sources: Some(vec![
                        VolumeProjection {
                            service_account_token: Some(ServiceAccountTokenProjection {
                                expiration_seconds: Some(3607),
                                path: "token".into(),
                                ..Default::default()
                            }),
                            ..Default::default()
                        },
                        VolumeProjection {
                            config_map: Some(ConfigMapProjection {
                                name: "kube-root-ca.crt".into(),
                                items: Some(vec![KeyToPath {
                                    key: "ca.crt".into(),
                                    path: "ca.crt".into(),
                                    mode: None,
                                }]),
                                optional: None,
                            }),
                            ..Default::default()
                        },
                        VolumeProjection {
                            downward_api: Some(DownwardAPIProjection {
                                items: Some(vec![DownwardAPIVolumeFile {
                                    path: "namespace".into(),
                                    field_ref: Some(ObjectFieldSelector {
                                        api_version: Some("v1".into()),
                                        field_path: "metadata.namespace".into(),
                                    }),
                                    ..Default::default()
                                }]),
                            }),
                            ..Default::default()
                        },
                    ]),
                }),
                ..Default::default()
            });
            name
        }
    };
    let mount = VolumeMount {
        name: vol_name,
        read_only: Some(true),
        mount_path: SA_MOUNT.into(),
        ..Default::default()
    };
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        let mounts = c.volume_mounts.get_or_insert_with(Vec::new);
        if !mounts.iter().any(|m| m.mount_path == SA_MOUNT) {
            mounts.push(mount.clone());
        }
    }
    Ok(())
}

fn priority(pod: &mut Pod, store: &dyn Storage) -> Result<(), String> {
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let (classes, _) = store.list("/registry/priorityclasses/");
    let (name, value, policy) = match spec
        .priority_class_name
        .as_deref()
        .filter(|n| !n.is_empty())
    {
        Some(n) => {
            let Some(pc) = classes
                .iter()
                .find(|c| c.pointer("/metadata/name").and_then(Value::as_str) == Some(n))
            else {
                return Err(format!("no PriorityClass with name {n} was found"));
            };
            (
                Some(n.to_string()),
                pc.get("value").and_then(Value::as_i64).unwrap_or(0) as i32,
                pc.get("preemptionPolicy")
                    .and_then(Value::as_str)
                    .map(String::from),
            )
        }
        None => {
            let default = classes
                .iter()
                .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
                .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0));
            match default {
                Some(pc) => (
                    pc.pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .map(String::from),
                    pc.get("value").and_then(Value::as_i64).unwrap_or(0) as i32,
                    pc.get("preemptionPolicy")
                        .and_then(Value::as_str)
                        .map(String::from),
                ),
                None => (None, 0, None),
            }
        }
    };
    let policy = policy.unwrap_or_else(|| "PreemptLowerPriority".into());
    if let Some(p) = spec.priority
        && p != value
    {
        return Err(format!(
            "the integer value of priority ({p}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
        ));
    }
    if let Some(p) = &spec.preemption_policy
        && *p != policy
    {
        return Err(format!(
            "the string value of PreemptionPolicy ({p}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
        ));
    }
    if name.is_some() {
        spec.priority_class_name = name;
    }
    spec.priority = Some(value);
    spec.preemption_policy = Some(policy);
    Ok(())
}

fn default_toleration_seconds(pod: &mut Pod) -> Result<(), String> {
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let covered = tolerations.iter().any(|t| {
            let k = t.key.as_deref().unwrap_or_default();
            let e = t.effect.as_deref().unwrap_or_default();
            (k.is_empty() && t.operator.as_deref() == Some("Exists") || k == key)
                && (e.is_empty() || e == "NoExecute")
        });
        if !covered {
            tolerations.push(Toleration {
                key: Some(key.into()),
                operator: Some("Exists".into()),
                effect: Some("NoExecute".into()),
                toleration_seconds: Some(300),
                value: None,
            });
        }
    }
    Ok(())
}

type Plugin<'a> = (&'static str, &'a dyn Fn(&mut Pod) -> Result<(), String>);

/// Decode-time defaults plus the mutating plugins, in kube-apiserver's order, on a decoded
/// pod. Returns the records and the pod as they left it, serialized, or, when a plugin
/// rejected the pod, its 403.
pub fn mutate_pod(
    pod: &mut Pod,
    ns: &str,
    store: &dyn Storage,
) -> (Vec<PluginRecord>, Result<Value, ApiError>) {
    let mut records = Vec::new();
    let name = pod
        .metadata
        .name
        .clone()
        .or_else(|| pod.metadata.generate_name.clone())
        .unwrap_or_default();
    let mut seen = serde_json::to_value(&*pod).unwrap_or(Value::Null);
    let _ = step(&mut records, "APIDefaults", (pod, &mut seen), |p| {
        defaults::default_pod(p);
        Ok(())
    });
    let plugins: [Plugin<'_>; 4] = [
        ("LimitRanger", &|p| limit_ranger::limit_ranger(p, ns, store)),
        ("ServiceAccount", &|p| service_account(p, ns, store)),
        ("Priority", &|p| priority(p, store)),
        ("DefaultTolerationSeconds", &default_toleration_seconds),
    ];
    for (plugin, f) in plugins {
        if let Err(msg) = step(&mut records, plugin, (pod, &mut seen), f) {
            return (
                records,
                Err(ApiError::admission_forbidden("", "pods", &name, &msg)),
            );
        }
    }
    (records, Ok(seen))
}

/// NamespaceLifecycle (validating): the namespace must exist and not be terminating.
pub fn namespace_lifecycle(
    store: &dyn Storage,
    operation: &str,
    namespace: &str,
    group: &str,
    resource: &str,
    name: &str,
) -> (PluginRecord, Result<(), ApiError>) {
    let rec = |result, message: Option<String>| PluginRecord {
        plugin: "NamespaceLifecycle",
        phase: "validating",
        result,
        changed: vec![],
        changes: vec![],
        message,
    };
    if namespace.is_empty() || operation == "delete" {
        return (rec("allowed", None), Ok(()));
    }
    let Some(ns) = store.get(&format!("/registry/namespaces/{namespace}")) else {
        let e = ApiError::not_found("", "namespaces", namespace);
        return (rec("rejected", Some(e.message.clone())), Err(e));
    };
    if operation == "create"
        && ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
    {
        let text = format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        );
        let mut e = ApiError::admission_forbidden(group, resource, name, &text);
        if let Some(Value::Object(d)) = e.details.as_mut() {
            d.insert(
                "causes".into(),
                serde_json::json!([{"reason": "NamespaceTerminating", "message": format!("namespace {namespace} is being terminated"), "field": "metadata.namespace"}]),
            );
        }
        return (rec("rejected", Some(e.message.clone())), Err(e));
    }
    (rec("allowed", None), Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_change_keeps_its_values_before_and_after() {
        let mut pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "app"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "dnsPolicy": "Default"}
        }))
        .expect("pod");
        let mut records = Vec::new();
        let mut seen = serde_json::to_value(&pod).expect("tree");
        step(&mut records, "Test", (&mut pod, &mut seen), |p| {
            let spec = p.spec.as_mut().expect("spec");
            spec.dns_policy = Some("ClusterFirst".into());
            default_toleration_seconds(p)
        })
        .expect("no rejection");
        let changes = &records[0].changes;
        assert_eq!(
            changes[0],
            FieldChange {
                path: "/spec/dnsPolicy".into(),
                old: Some("Default".into()),
                new: Some("ClusterFirst".into()),
            }
        );
        assert_eq!(records[0].changed[1], "/spec/tolerations");
        assert_eq!(
            changes[1],
            FieldChange {
                path: "/spec/tolerations/0".into(),
                old: None,
                new: Some(
                    "{effect: NoExecute, key: node.kubernetes.io/not-ready, operator: Exists, tolerationSeconds: 300}"
                        .into()
                ),
            },
            "a new list, element by element"
        );
        assert_eq!(changes[2].path, "/spec/tolerations/1");
        // The next plugin starts from the pod as this one left it; one that changes nothing
        // records nothing.
        assert_eq!(seen, serde_json::to_value(&pod).expect("tree"));
        step(&mut records, "Same", (&mut pod, &mut seen), |_| Ok(())).expect("no rejection");
        assert_eq!(records[1].result, "unchanged");
        assert!(records[1].changed.is_empty());
    }

    #[test]
    fn one_walk_finds_what_paths_and_lookups_find() {
        let a = json!({"spec": {"dnsPolicy": "Default", "tolerations": [{"key": "a"}],
            "labels": {"x/y": "1"}}});
        let b = json!({"spec": {"dnsPolicy": "ClusterFirst", "priority": 0,
            "tolerations": [{"key": "a"}, {"key": "b"}], "volumes": [{"name": "v"}, {"name": "w"}],
            "labels": {"x/y": "2"}}});
        let (paths, changes) = diff_changes(&a, &b);
        assert_eq!(
            paths,
            [
                "/spec/dnsPolicy",
                "/spec/labels/x~1y",
                "/spec/priority",
                "/spec/tolerations/1",
                "/spec/volumes"
            ]
        );
        assert_eq!(changes, field_changes(&a, &b, &paths));
        assert_eq!(changes.len(), 6, "{changes:?}");
    }

    #[test]
    fn diff_paths_are_escaped_and_name_new_elements() {
        let a = json!({"metadata": {"labels": {"a/b": "1"}}, "list": [1]});
        let b = json!({"metadata": {"labels": {"a/b": "2", "c~d": "3"}}, "list": [1, 2]});
        let (out, _) = diff_changes(&a, &b);
        assert_eq!(
            out,
            ["/list/1", "/metadata/labels/a~1b", "/metadata/labels/c~0d"]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = Value::String("x".repeat(10_000));
        let t = value_text(&json!({"a": [long.clone(), long]}));
        assert_eq!(t.chars().count(), VALUE_CHARS);
        assert!(t.ends_with('…'));
        assert_eq!(value_text(&json!({"n": 3, "b": true})), "{b: true, n: 3}");
    }
}

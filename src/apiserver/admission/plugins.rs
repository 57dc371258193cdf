//! Admission for pods: the mutating plugins a default kube-apiserver runs on a pod CREATE
//! (LimitRanger → ServiceAccount → Priority → DefaultTolerationSeconds → RuntimeClass, after API
//! defaulting) and the validating NamespaceLifecycle check. Each plugin reports which fields it changed.

use k8s_openapi::api::core::v1::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, KeyToPath,
    ObjectFieldSelector, Pod, ProjectedVolumeSource, ServiceAccountTokenProjection, Toleration,
    Volume, VolumeMount, VolumeProjection,
};
use serde::Serialize;
use serde_json::Value;

use crate::apiserver::admission::changes::{self, FieldChange};
use crate::apiserver::admission::limit_ranger;
use crate::apiserver::admission::runtime_class;
use crate::apiserver::admission::typed_diff;
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

impl PluginRecord {
    /// A mutating plugin's record before it acts: nothing changed yet.
    pub(crate) fn mutating(plugin: &'static str) -> Self {
        PluginRecord {
            plugin,
            phase: "mutating",
            result: "unchanged",
            changed: Vec::new(),
            changes: Vec::new(),
            message: None,
        }
    }

    /// The plugin set `path`, from `old` (None: absent) to `new`.
    pub(crate) fn set(&mut self, path: &str, old: Option<String>, new: String) {
        self.result = "changed";
        self.changed.push(path.into());
        self.changes.push(FieldChange {
            path: path.into(),
            old,
            new: Some(new),
        });
    }
}

/// An admission stage as the trace records it: its phase and what each plugin did.
#[derive(Debug, Serialize)]
pub struct Admission<'a> {
    pub phase: &'static str,
    pub plugins: &'a [PluginRecord],
}

/// Run one mutating plugin and record what it changed. `seen` is the pod as the plugin
/// before left it, kept as a tree: the pod is walked against it, and the parts that changed
/// are written into it, so it is the next plugin's "before".
fn step(
    records: &mut Vec<PluginRecord>,
    plugin: &'static str,
    (pod, seen): (&mut Pod, &mut Value),
    f: impl FnOnce(&mut Pod) -> Result<(), String>,
) -> Result<(), String> {
    let res = f(pod);
    let patches = typed_diff::diff_typed(seen, &*pod);
    let (changed, changes) = changes::describe(seen, &patches);
    changes::apply(seen, patches);
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
    let Some(sa) = service_account_named(store, ns, &sa_name) else {
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

/// The pod's ServiceAccount. `default` is made by its controller just after the namespace,
/// so, as upstream, it is looked up ten times 100–200 ms apart before the pod is refused: a
/// pod created right after its namespace is not refused for a race it cannot see.
fn service_account_named(
    store: &dyn Storage,
    ns: &str,
    name: &str,
) -> Option<std::sync::Arc<Value>> {
    let key = format!("/registry/serviceaccounts/{ns}/{name}");
    if let Some(sa) = store.get(&key) {
        return Some(sa);
    }
    if name != "default" {
        return None;
    }
    let mut pause = [0u8; 1];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut pause);
    let pause = std::time::Duration::from_millis(100 + u64::from(pause[0]) * 100 / 256);
    (1..10).find_map(|_| {
        std::thread::sleep(pause);
        store.get(&key)
    })
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

pub(crate) fn default_toleration_seconds(pod: &mut Pod) -> Result<(), String> {
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

/// The record of the defaults a pod gets at decode time, shown before the admission plugins.
const DEFAULTING: &str = "defaulting (decode)";

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
    // Not a plugin: kube-apiserver sets defaults while it decodes the body, before admission
    // starts. Recorded here so the diff of each plugin below starts from the defaulted pod.
    let _ = step(&mut records, DEFAULTING, (pod, &mut seen), |p| {
        defaults::default_pod(p);
        Ok(())
    });
    if let Some(r) = records.last_mut() {
        r.phase = "decode";
    }
    // NamespaceLifecycle is the first mutating plugin (it changes nothing): a pod for a
    // namespace that is missing or terminating goes no further.
    let (rec, res) = namespace_lifecycle(store, "create", ns, "", "pods", &name);
    records.push(rec);
    if let Err(e) = res {
        return (records, Err(e));
    }
    let plugins: [Plugin<'_>; 5] = [
        ("LimitRanger", &|p| limit_ranger::limit_ranger(p, ns, store)),
        ("ServiceAccount", &|p| service_account(p, ns, store)),
        ("Priority", &|p| priority(p, store)),
        ("DefaultTolerationSeconds", &default_toleration_seconds),
        ("RuntimeClass", &|p| runtime_class::runtime_class(p, store)),
    ];
    for (plugin, f) in plugins {
        // A pod naming no RuntimeClass and no overhead is left as it is: not walked for changes.
        let spec = pod.spec.as_ref();
        if plugin == "RuntimeClass"
            && spec.is_none_or(|s| s.runtime_class_name.is_none() && s.overhead.is_none())
        {
            records.push(PluginRecord::mutating(plugin));
            continue;
        }
        if let Err(msg) = step(&mut records, plugin, (pod, &mut seen), f) {
            return (
                records,
                Err(ApiError::admission_forbidden("", "pods", &name, &msg)),
            );
        }
    }
    (records, Ok(seen))
}

/// NamespaceLifecycle: the namespace must exist and not be terminating. Upstream's plugin
/// implements `Admit`, so it runs in the mutating phase, first, though it never changes the
/// object.
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
        phase: "mutating",
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
    use crate::apiserver::storage::store::{Store, Write};
    use serde_json::json;

    #[test]
    fn a_pod_right_after_its_namespace_waits_for_the_default_service_account() {
        let store = std::sync::Arc::new(Store::default());
        let controller = {
            let store = store.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                let sa = json!({"metadata": {"name": "default", "namespace": "fresh"}});
                store
                    .create("/registry/serviceaccounts/fresh/default", sa, Write::Commit)
                    .expect("create");
            })
        };
        let mut pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "app"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}
        }))
        .expect("pod");
        assert_eq!(service_account(&mut pod, "fresh", &*store), Ok(()));
        controller.join().expect("controller");
        let mut other: Pod = serde_json::from_value(json!({
            "metadata": {"name": "app"},
            "spec": {"serviceAccountName": "builder", "containers": [{"name": "c", "image": "nginx"}]}
        }))
        .expect("pod");
        let started = std::time::Instant::now();
        assert!(service_account(&mut other, "fresh", &*store).is_err());
        assert!(
            started.elapsed() < std::time::Duration::from_millis(100),
            "looked up once"
        );
    }

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
}

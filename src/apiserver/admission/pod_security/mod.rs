//! PodSecurity (upstream `plugin/pkg/admission/security/podsecurity` and
//! `pod-security-admission/admission`), a validating admission plugin: a namespace's
//! `pod-security.kubernetes.io/*` labels say which Pod Security Standard its pods are held to.
//! Pods that break the enforced level are refused (403); the warn level's violations come back
//! as warnings, for pods and for the pod templates of workload kinds, which are never refused
//! (their controllers' pods are). Namespaces with unreadable labels are refused (422), and a
//! namespace given a stricter enforce level is told which of its pods would break it.

pub(crate) mod checks;
pub(crate) mod policy;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::apiserver::admission::plugins::{Admission, PluginRecord};
use crate::apiserver::admission::pod_security::checks::{Verdict, evaluate};
use crate::apiserver::admission::pod_security::policy::{Level, Policy, policy_of};
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::util::At;

const PLUGIN: &str = "PodSecurity";

/// Upstream's limits on the check of a namespace's existing pods.
const NAMESPACE_MAX_PODS: usize = 3000;
const NAMESPACE_CHECK_TIME: Duration = Duration::from_secs(1);

/// Where a workload kind keeps its pod template.
fn template_of(def: &ResourceDef) -> Option<&'static str> {
    match (def.group, def.plural) {
        ("", "replicationcontrollers")
        | ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets")
        | ("batch", "jobs") => Some("/spec/template"),
        ("batch", "cronjobs") => Some("/spec/jobTemplate/spec/template"),
        ("", "podtemplates") => Some("/template"),
        _ => None,
    }
}

/// The pod subresources upstream leaves to other checks.
fn pod_subresource_ignored(sub: &str) -> bool {
    matches!(
        sub,
        "exec" | "attach" | "binding" | "eviction" | "log" | "portforward" | "proxy" | "status"
    )
}

/// What a create or update of `def` asks of this plugin, if anything: the namespace's policy
/// is read before the storage write (its update runs under the store's lock).
pub(crate) fn policy_for(
    store: &dyn Storage,
    def: &ResourceDef,
    sub: &str,
    ns: &str,
) -> Option<Policy> {
    let pods = def.group.is_empty() && def.plural == "pods" && !pod_subresource_ignored(sub);
    let templates = sub.is_empty() && template_of(def).is_some();
    if !(pods || templates) || ns.is_empty() {
        return None;
    }
    let nsobj = store.get(&format!("/registry/namespaces/{ns}"))?;
    let (policy, errors) = namespace_policy(&nsobj);
    (!errors.is_empty() || !policy.is_privileged()).then_some(policy)
}

/// The pod's metadata and spec, or None when they do not read as a pod's.
fn pod_parts(meta: Option<&Value>, spec: Option<&Value>) -> Option<(ObjectMeta, PodSpec)> {
    let meta = match meta {
        Some(m) => serde_json::from_value(m.clone()).ok()?,
        None => ObjectMeta::default(),
    };
    Some((meta, serde_json::from_value(spec?.clone()).ok()?))
}

/// A new pod, or a workload's template, against the namespace's policy: Err with upstream's
/// 403 when a pod breaks the enforced level; the warn level's violation as a warning. The
/// verdict for the request's trace comes back to be recorded once the write is decided (an
/// update's check may run again when the store retries it).
pub(crate) fn admit(
    def: &ResourceDef,
    policy: &Policy,
    obj: &Value,
    warnings: &mut Vec<String>,
) -> (Option<PluginRecord>, Result<(), ApiError>) {
    let (meta, spec, enforce) = match template_of(def) {
        Some(at) => (
            obj.at(&format!("{at}/metadata")),
            obj.at(&format!("{at}/spec")),
            false,
        ),
        None => (obj.get("metadata"), obj.get("spec"), true),
    };
    let Some((meta, spec)) = pod_parts(meta, spec) else {
        return (None, Ok(()));
    };
    let name = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let record = |result, message: String| PluginRecord {
        plugin: PLUGIN,
        phase: "validating",
        result,
        changed: vec![],
        changes: vec![],
        message: Some(message),
    };
    let mut enforced = Verdict::default();
    if enforce {
        enforced = evaluate(policy.enforce, &meta, &spec);
        if !enforced.allowed() {
            let text = format!(
                "violates PodSecurity \"{}\": {}",
                policy.enforce,
                enforced.detail()
            );
            let e = ApiError::admission_forbidden("", "pods", name, &text);
            return (Some(record("rejected", e.message.clone())), Err(e));
        }
    }
    // The warn level's verdict is the enforced one when both name the same rules.
    let warned = if enforce && policy.warn == policy.enforce {
        enforced
    } else {
        evaluate(policy.warn, &meta, &spec)
    };
    let mut message = if enforce {
        format!("enforce \"{}\": allowed", policy.enforce)
    } else {
        "a pod template: warn and audit only".to_string()
    };
    if !warned.allowed() {
        let w = format!(
            "would violate PodSecurity \"{}\": {}",
            policy.warn,
            warned.detail()
        );
        message = format!("{message}; warning: {w}");
        warnings.push(w);
    }
    (Some(record("allowed", message)), Ok(()))
}

/// The plugin's verdict as an admission stage of the request's trace.
pub(crate) fn record(trace: &mut RequestTrace, rec: &PluginRecord) {
    let status = if rec.result == "rejected" {
        Status::Failed
    } else {
        Status::Ok
    };
    trace.stage(
        Stage::Admission,
        status,
        Admission {
            phase: "validating",
            plugins: std::slice::from_ref(rec),
        },
    );
}

/// A pod update is checked only when it could change what runs: upstream's
/// isSignificantPodUpdate (containers added or removed, an image changed, an ephemeral
/// container added or changed).
pub(crate) fn significant_pod_update(next: &Value, cur: &Value) -> bool {
    let list = |o: &Value, k: &str| -> Vec<(Value, Value)> {
        o.at(&format!("/spec/{k}"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|c| {
                        (
                            c.get("name").cloned().unwrap_or(Value::Null),
                            c.get("image").cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for k in ["containers", "initContainers"] {
        let (n, c) = (list(next, k), list(cur, k));
        if n.len() != c.len() || n.iter().zip(&c).any(|(a, b)| a.1 != b.1) {
            return true;
        }
    }
    let old = list(cur, "ephemeralContainers");
    list(next, "ephemeralContainers")
        .iter()
        .any(|(name, image)| !old.iter().any(|(n, i)| n == name && i == image))
}

/// A namespace object's policy and the errors of its labels.
fn namespace_policy(ns: &Value) -> (Policy, Vec<Cause>) {
    policy_of(ns.at("/metadata/labels").and_then(Value::as_object))
}

/// The label errors of a namespace being created, or updated from `old`: upstream refuses new
/// errors, and lets an update keep the same ones.
pub(crate) fn validate_namespace(obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let (_, errors) = namespace_policy(obj);
    if errors.is_empty() || old.is_some_and(|o| namespace_policy(o).1 == errors) {
        return Ok(());
    }
    let name = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(ApiError::invalid("", "Namespace", name, errors))
}

/// When an update makes a namespace's enforce level stricter, which of its pods would now be
/// refused, as upstream warns: the pods grouped by the reasons they break it, the first of each
/// controller's pods checked first, at most 3,000 pods and one second.
pub(crate) fn namespace_update_warnings(
    store: &dyn Storage,
    next: &Value,
    cur: &Value,
) -> Vec<String> {
    let enforce = |o: &Value| {
        let (p, errors) = namespace_policy(o);
        (p.enforce, errors.is_empty())
    };
    let ((new, valid), (old, _)) = (enforce(next), enforce(cur));
    let looser_or_same = new.version == old.version && new.level <= old.level;
    if !valid || new.level == Level::Privileged || looser_or_same {
        return Vec::new();
    }
    let ns = next
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (pods, _) = store.list(&format!("/registry/pods/{ns}/"));
    // One pod of each controller first, then the others.
    let (mut first, mut rest, mut seen) = (Vec::new(), Vec::new(), Vec::new());
    for pod in &pods {
        let owner = pod
            .at("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|refs| {
                refs.iter()
                    .find(|r| r.get("controller") == Some(&Value::Bool(true)))
            })
            .and_then(|r| r.get("uid"))
            .and_then(Value::as_str);
        match owner {
            Some(uid) if seen.contains(&uid) => rest.push(pod),
            Some(uid) => {
                seen.push(uid);
                first.push(pod);
            }
            None => first.push(pod),
        }
    }
    let total = first.len() + rest.len();
    let deadline = Instant::now() + NAMESPACE_CHECK_TIME;
    let mut checked = 0;
    // The reasons → (the smallest pod name, how many pods).
    let mut groups: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for pod in first.into_iter().chain(rest).take(NAMESPACE_MAX_PODS) {
        checked += 1;
        if let Some((meta, spec)) = pod_parts(pod.get("metadata"), pod.get("spec")) {
            let verdict = evaluate(new, &meta, &spec);
            if !verdict.allowed() {
                let name = meta.name.unwrap_or_default();
                let g = groups.entry(verdict.reasons()).or_insert((name.clone(), 0));
                g.1 += 1;
                if name < g.0 {
                    g.0 = name;
                }
            }
        }
        if Instant::now() > deadline {
            break;
        }
    }
    let mut out = Vec::new();
    if checked < total {
        out.push(format!(
            "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        ));
    }
    if groups.is_empty() {
        return out;
    }
    out.push(format!(
        "existing pods in namespace {ns:?} violate the new PodSecurity enforce level \"{new}\""
    ));
    let mut lines: Vec<String> = groups
        .into_iter()
        .map(|(reasons, (pod, n))| match n {
            1 => format!("{pod}: {reasons}"),
            2 => format!("{pod} (and 1 other pod): {reasons}"),
            n => format!("{pod} (and {} other pods): {reasons}", n - 1),
        })
        .collect();
    lines.sort();
    out.extend(lines);
    out
}

//! What kube-apiserver warns of in a valid pod or pod template (upstream `pkg/api/pod/warnings.go`,
//! `GetWarningsForPod` and `GetWarningsForPodTemplate`): each sentence a client prints as
//! `Warning: …` while the object is still stored. Pods are warned of on create only (upstream
//! skips pod updates, a high-frequency path); workloads on create and on a template change.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::apiserver::registry::formats;
use crate::scheduler::quantity::Quantity;

/// `pkg/api/node`'s deprecated node labels and what replaces each.
const DEPRECATED_NODE_LABELS: &[(&str, &str)] = &[
    (
        "beta.kubernetes.io/arch",
        r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
    ),
    (
        "beta.kubernetes.io/os",
        r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
    ),
    (
        "beta.kubernetes.io/instance-type",
        r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#,
    ),
];

const DEPRECATED_ANNOTATIONS: &[(&str, &str)] = &[
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        r#"non-functional in v1.16+; use the "priorityClassName" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        r#"non-functional in v1.11+; use the "sysctls" field instead"#,
    ),
];

/// Volume sources upstream warns are deprecated or no longer work: the JSON key, the name
/// upstream's path gives it (`storageOS`, whose key is `storageos`), the sentence.
const DEPRECATED_VOLUMES: &[(&str, &str, &str)] = &[
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "deprecated in v1.11, non-functional in v1.16+",
    ),
    ("gitRepo", "gitRepo", "deprecated in v1.11"),
    (
        "scaleIO",
        "scaleIO",
        "deprecated in v1.16, non-functional in v1.22+",
    ),
    (
        "flocker",
        "flocker",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "storageos",
        "storageOS",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "quobyte",
        "quobyte",
        "deprecated in v1.22, non-functional in v1.25+",
    ),
    (
        "glusterfs",
        "glusterfs",
        "deprecated in v1.25, non-functional in v1.26+",
    ),
    (
        "cephfs",
        "cephfs",
        "deprecated in v1.28, non-functional in v1.31+",
    ),
    (
        "rbd",
        "rbd",
        "deprecated in v1.28, non-functional in v1.31+",
    ),
];

const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";

/// A Pod's WarningsOnCreate: its name as a hostname, then its spec and metadata.
pub(crate) fn on_pod_create(pod: &Value) -> Vec<String> {
    let mut out: Vec<String> = name_not_a_label(pod, "the Pod's hostname")
        .into_iter()
        .collect();
    spec_and_meta(&mut out, "", pod, false);
    out
}

/// The warning for a name that is not a DNS label, where the name is `used_in`.
fn name_not_a_label(obj: &Value, used_in: &str) -> Option<String> {
    let msgs = formats::dns1123_label(str_of(obj.pointer("/metadata/name")));
    (!msgs.is_empty()).then(|| format!(
        "metadata.name: this is used in {used_in}, which can result in surprising behavior; a DNS label is recommended: [{}]",
        msgs.join(" ")
    ))
}

/// The warning a workload whose pods are named after it gets for a name that is not a DNS
/// label (Deployments, ReplicaSets, ReplicationControllers, Jobs, CronJobs).
fn workload_name(obj: &Value) -> Option<String> {
    name_not_a_label(obj, "Pod names and hostnames")
}

/// A workload's WarningsOnCreate: its name when its pods are named after it (`named`), then
/// its pod template at `pointer`, its fields named from `path`.
pub(crate) fn workload_on_create(
    obj: &Value,
    named: bool,
    pointer: &str,
    path: &str,
) -> Vec<String> {
    let mut out: Vec<String> = named
        .then(|| workload_name(obj))
        .flatten()
        .into_iter()
        .collect();
    template(&mut out, obj, pointer, path);
    out
}

/// A workload's WarningsOnUpdate: the new template, when the update moved the generation.
pub(crate) fn workload_on_update(
    next: &Value,
    cur: &Value,
    pointer: &str,
    path: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    if generation_moved(next, cur) {
        template(&mut out, next, pointer, path);
    }
    out
}

/// `GetWarningsForPodTemplate` for the template at `pointer` (`/spec/template`), its fields
/// named from `path` (`spec.template`).
pub(crate) fn template(out: &mut Vec<String>, obj: &Value, pointer: &str, path: &str) {
    if let Some(t) = obj.pointer(pointer) {
        spec_and_meta(out, path, t, true);
    }
}

/// Whether an update moved the workload's generation: upstream warns of its template on
/// update only then.
pub(crate) fn generation_moved(next: &Value, cur: &Value) -> bool {
    next.pointer("/metadata/generation") != cur.pointer("/metadata/generation")
}

/// Whether the template at `pointer` differs between two versions of a workload (a
/// DaemonSet's templateGeneration, which moves only then).
pub(crate) fn template_changed(next: &Value, cur: &Value, pointer: &str) -> bool {
    next.pointer(pointer) != cur.pointer(pointer)
}

fn str_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or_default()
}

/// `field.Path` text: `prefix` then `rest`, joined with a dot.
fn at(prefix: &str, rest: &str) -> String {
    if prefix.is_empty() {
        rest.to_string()
    } else {
        format!("{prefix}.{rest}")
    }
}

fn array<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `warningsForPodSpecAndMeta`, in upstream's order. `obj` holds `metadata` and `spec`.
fn spec_and_meta(out: &mut Vec<String>, prefix: &str, obj: &Value, is_template: bool) {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let annotations: BTreeMap<&str, &Value> = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default();
    let deprecated_label = |k: &str| {
        DEPRECATED_NODE_LABELS
            .iter()
            .find(|(l, _)| *l == k)
            .map(|(_, m)| *m)
    };
    if let Some(sel) = spec.get("nodeSelector").and_then(Value::as_object) {
        let mut keys: Vec<&String> = sel.keys().collect();
        keys.sort();
        for k in keys {
            if let Some(msg) = deprecated_label(k) {
                out.push(format!("{}[{k}]: {msg}", at(prefix, "spec.nodeSelector")));
            }
        }
    }
    // Required terms are the terms themselves; preferred ones hold theirs as `preference`.
    for (list, term_at) in [
        (
            "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
            "",
        ),
        (
            "preferredDuringSchedulingIgnoredDuringExecution",
            "preference",
        ),
    ] {
        let field = list.replace('/', ".");
        for (i, term) in array(spec, &format!("/affinity/nodeAffinity/{list}"))
            .iter()
            .enumerate()
        {
            let (term, inner) = match term_at {
                "" => (Some(term), String::new()),
                k => (term.get(k), format!(".{k}")),
            };
            let path = at(
                prefix,
                &format!("spec.affinity.nodeAffinity.{field}[{i}]{inner}"),
            );
            if let Some(term) = term {
                node_selector_term(out, term, &path, &deprecated_label);
            }
        }
    }
    for (i, c) in array(spec, "/topologySpreadConstraints").iter().enumerate() {
        let path = at(prefix, &format!("spec.topologySpreadConstraints[{i}]"));
        let key = str_of(c.get("topologyKey"));
        if let Some(msg) = deprecated_label(key) {
            out.push(format!("{path}.topologyKey: {key} is {msg}"));
        }
        if c.get("labelSelector").is_none_or(Value::is_null) {
            out.push(format!(
                "{path}.labelSelector: a null labelSelector results in matching no pod"
            ));
        }
    }
    let annotations_path = at(prefix, "metadata.annotations");
    for (key, msg) in DEPRECATED_ANNOTATIONS {
        if annotations.contains_key(key) {
            out.push(format!("{annotations_path}[{key}]: {msg}"));
        }
    }
    for (i, v) in array(spec, "/volumes").iter().enumerate() {
        for (key, source, msg) in DEPRECATED_VOLUMES {
            if v.get(*key).is_some_and(|s| !s.is_null()) {
                out.push(format!(
                    "{}.{source}: {msg}",
                    at(prefix, &format!("spec.volumes[{i}]"))
                ));
            }
        }
    }
    overlapping_paths(out, array(spec, "/volumes"));
    let mut seen = HashSet::new();
    for (i, a) in array(spec, "/hostAliases").iter().enumerate() {
        let ip = str_of(a.get("ip"));
        if !seen.insert(ip) {
            out.push(format!(
                "{}: duplicate ip {ip:?}",
                at(prefix, &format!("spec.hostAliases[{i}].ip"))
            ));
        }
    }
    let secrets = array(spec, "/imagePullSecrets");
    let mut seen = HashSet::new();
    for (i, s) in secrets.iter().enumerate() {
        let name = str_of(s.get("name"));
        if !seen.insert(name) {
            out.push(format!(
                "{}: duplicate name {name:?}",
                at(prefix, &format!("spec.imagePullSecrets[{i}].name"))
            ));
        }
    }
    for (i, s) in secrets.iter().enumerate() {
        let name = str_of(s.get("name"));
        if name.is_empty() {
            out.push(format!(
                "{}: invalid empty name {name:?}",
                at(prefix, &format!("spec.imagePullSecrets[{i}].name"))
            ));
        }
    }
    for r in ["memory", "ephemeral-storage"] {
        fractional_bytes(
            out,
            spec.pointer(&format!("/overhead/{r}")),
            &format!("{}[{r}]", at(prefix, "spec.overhead")),
        );
    }
    if spec.pointer("/securityContext/seccompProfile").is_none()
        && annotations.contains_key(SECCOMP_POD)
    {
        out.push(format!(
            r#"{annotations_path}[{SECCOMP_POD}]: non-functional in v1.27+; use the "seccompProfile" field instead"#
        ));
    }
    let pod_apparmor = spec.pointer("/securityContext/appArmorProfile").is_some();
    let containers = containers(spec, prefix);
    for (c, path) in &containers {
        let name = str_of(c.get("name"));
        let seccomp = format!("{SECCOMP_CONTAINER}{name}");
        if c.pointer("/securityContext/seccompProfile").is_none()
            && annotations.contains_key(seccomp.as_str())
        {
            out.push(format!(
                r#"{annotations_path}[{seccomp}]: non-functional in v1.27+; use the "seccompProfile" field instead"#
            ));
        }
        // A pod's own AppArmor annotations are answered when its fields are synced from them.
        let apparmor = format!("{APPARMOR_CONTAINER}{name}");
        if is_template
            && !pod_apparmor
            && c.pointer("/securityContext/appArmorProfile").is_none()
            && annotations.contains_key(apparmor.as_str())
        {
            out.push(format!(
                r#"{annotations_path}[{apparmor}]: deprecated since v1.30; use the "appArmorProfile" field instead"#
            ));
        }
        for (kind, r) in [
            ("limits", "memory"),
            ("requests", "memory"),
            ("limits", "ephemeral-storage"),
            ("requests", "ephemeral-storage"),
        ] {
            fractional_bytes(
                out,
                c.pointer(&format!("/resources/{kind}/{r}")),
                &format!("{path}.resources.{kind}[{r}]"),
            );
        }
        env_hides(out, c, path);
    }
    ports(out, &containers);
    if spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|g| g < 0)
    {
        out.push(format!(
            "{}: must be >= 0; negative values are invalid and will be treated as 1",
            at(prefix, "spec.terminationGracePeriodSeconds")
        ));
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let base = format!("spec.affinity.{kind}");
        let req = format!("/affinity/{kind}/requiredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in array(spec, &req).iter().enumerate() {
            if t.get("labelSelector").is_none_or(Value::is_null) {
                out.push(format!(
                    "{}.labelSelector: a null labelSelector results in matching no pod",
                    at(
                        prefix,
                        &format!("{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
                    )
                ));
            }
        }
        let pref = format!("/affinity/{kind}/preferredDuringSchedulingIgnoredDuringExecution");
        for (i, t) in array(spec, &pref).iter().enumerate() {
            if t.pointer("/podAffinityTerm/labelSelector")
                .is_none_or(Value::is_null)
            {
                out.push(format!(
                    "{}.podAffinityTerm.labelSelector: a null labelSelector results in matching no pod",
                    at(prefix, &format!("{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"))
                ));
            }
        }
    }
}

fn node_selector_term(
    out: &mut Vec<String>,
    term: &Value,
    path: &str,
    deprecated: &dyn Fn(&str) -> Option<&'static str>,
) {
    for (i, e) in array(term, "/matchExpressions").iter().enumerate() {
        let key = str_of(e.get("key"));
        if let Some(msg) = deprecated(key) {
            out.push(format!("{path}.matchExpressions[{i}].key: {key} is {msg}"));
        }
    }
}

/// `pods.VisitContainersWithPath`: init containers, containers, then ephemeral containers.
fn containers<'a>(spec: &'a Value, prefix: &str) -> Vec<(&'a Value, String)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|list| {
            array(spec, &format!("/{list}"))
                .iter()
                .enumerate()
                .map(move |(i, c)| (c, at(prefix, &format!("spec.{list}[{i}]"))))
        })
        .collect()
}

/// A byte count with a fraction of a byte (`MilliValue() % 1000 != 0`), named in its canonical
/// form.
fn fractional_bytes(out: &mut Vec<String>, q: Option<&Value>, path: &str) {
    let Some(q) = q
        .and_then(Value::as_str)
        .and_then(|s| Quantity::parse(s).ok())
    else {
        return;
    };
    if q.milli_value().is_ok_and(|m| m % 1000 != 0) {
        let shown = q.canonical().unwrap_or_default();
        out.push(format!(
            "{path}: fractional byte value {shown:?} is invalid, must be an integer"
        ));
    }
}

/// A second env var of one name that does not build on the first (`X=$(X)…`), which apply
/// may drop.
fn env_hides(out: &mut Vec<String>, c: &Value, path: &str) {
    let env = array(c, "/env");
    if env.len() < 2 {
        return;
    }
    let mut seen = HashSet::new();
    for (i, e) in env.iter().enumerate() {
        let name = str_of(e.get("name"));
        if seen.insert(name) {
            continue;
        }
        let value = str_of(e.get("value"));
        let reference = format!("$({name})");
        let bad = e.get("valueFrom").is_some_and(|v| !v.is_null())
            || value == reference
            || !value.contains(&reference);
        if bad {
            out.push(format!(
                "{path}.env[{i}]: hides previous definition of {name:?}, which may be dropped when using apply"
            ));
        }
    }
}

/// One container port as Go's `%+v` prints core's `ContainerPort`.
fn go_port(p: &Value) -> String {
    format!(
        "{{Name:{} HostPort:{} ContainerPort:{} Protocol:{} HostIP:{}}}",
        str_of(p.get("name")),
        p.get("hostPort").and_then(Value::as_i64).unwrap_or(0),
        p.get("containerPort").and_then(Value::as_i64).unwrap_or(0),
        str_of(p.get("protocol")),
        str_of(p.get("hostIP")),
    )
}

/// The ports seen so far of one (containerPort, protocol): where each is, its hostIP and
/// hostPort.
type SamePort<'a> = Vec<(String, &'a str, i64)>;

/// Ports across every container that collide on (containerPort, protocol).
fn ports(out: &mut Vec<String>, containers: &[(&Value, String)]) {
    let mut seen: BTreeMap<(i64, &str), SamePort> = BTreeMap::new();
    for (c, path) in containers {
        for (i, p) in array(c, "/ports").iter().enumerate() {
            let here = format!("{path}.ports[{i}]");
            let host_ip = str_of(p.get("hostIP"));
            let host_port = p.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if !host_ip.is_empty() && host_port == 0 {
                out.push(format!(
                    "{here}: hostIP set without hostPort: {}",
                    go_port(p)
                ));
            }
            let key = (
                p.get("containerPort").and_then(Value::as_i64).unwrap_or(0),
                str_of(p.get("protocol")),
            );
            let others = seen.entry(key).or_default();
            for (other, other_ip, other_port) in others.iter() {
                let (a, b) = (host_ip.is_empty(), other_ip.is_empty());
                if host_ip == *other_ip && host_port == *other_port {
                    out.push(format!("{here}: duplicate port definition with {other}"));
                } else if host_port == 0 || *other_port == 0 {
                    out.push(format!("{here}: overlapping port definition with {other}"));
                } else if host_port == *other_port && a != b {
                    out.push(format!(
                        "{here}: dangerously ambiguous port definition with {other}"
                    ));
                }
            }
            others.push((here, host_ip, host_port));
        }
    }
}

/// `warningsForOverlappingVirtualPaths`: two items of one volume written to one file, or one
/// inside the other's directory.
fn overlapping_paths(out: &mut Vec<String>, volumes: &[Value]) {
    let item_paths = |v: &Value| -> Vec<String> {
        array(v, "/items")
            .iter()
            .map(|i| str_of(i.get("path")).to_string())
            .collect()
    };
    for v in volumes {
        let name = str_of(v.get("name"));
        if let Some(cm) = v.get("configMap").filter(|c| c.get("items").is_some()) {
            let msg = format!(
                "volume {name:?} (ConfigMap {:?}): overlapping paths",
                str_of(cm.get("name"))
            );
            check_overlap(out, &item_paths(cm), &msg);
        }
        if let Some(s) = v.get("secret").filter(|c| c.get("items").is_some()) {
            let msg = format!(
                "volume {name:?} (Secret {:?}): overlapping paths",
                str_of(s.get("secretName"))
            );
            check_overlap(out, &item_paths(s), &msg);
        }
        if let Some(d) = v.get("downwardAPI").filter(|c| c.get("items").is_some()) {
            let msg = format!("volume {name:?} (DownwardAPI): overlapping paths");
            check_overlap(out, &item_paths(d), &msg);
        }
        let Some(sources) = v.pointer("/projected/sources").and_then(Value::as_array) else {
            continue;
        };
        let mut all: Vec<String> = Vec::new();
        for source in sources {
            if source
                .as_object()
                .is_some_and(|m| m.values().all(Value::is_null))
            {
                out.push(format!(
                    "volume {name:?} (Projected) has no sources provided"
                ));
                continue;
            }
            let (paths, msg) = if let Some(cm) =
                source.get("configMap").filter(|c| c.get("items").is_some())
            {
                (
                    item_paths(cm),
                    format!(
                        "volume {name:?} (Projected ConfigMap {:?}): overlapping paths",
                        str_of(cm.get("name"))
                    ),
                )
            } else if let Some(s) = source.get("secret").filter(|c| c.get("items").is_some()) {
                (
                    item_paths(s),
                    format!(
                        "volume {name:?} (Projected Secret {:?}): overlapping paths",
                        str_of(s.get("name"))
                    ),
                )
            } else if let Some(d) = source
                .get("downwardAPI")
                .filter(|c| c.get("items").is_some())
            {
                (
                    item_paths(d),
                    format!("volume {name:?} (Projected DownwardAPI): overlapping paths"),
                )
            } else if let Some(t) = source.get("serviceAccountToken") {
                (
                    vec![str_of(t.get("path")).to_string()],
                    format!("volume {name:?} (Projected ServiceAccountToken): overlapping paths"),
                )
            } else {
                continue;
            };
            if paths.is_empty() {
                continue;
            }
            check_overlap(out, &paths, &msg);
            // Across sources: this source's paths, once each, beside every earlier one, sorted.
            let mut unique: Vec<String> = paths.clone();
            unique.sort();
            unique.dedup();
            let mut ordered: Vec<String> = unique.iter().chain(all.iter()).cloned().collect();
            ordered.sort();
            check_overlap(out, &ordered, &msg);
            for p in unique {
                if !all.contains(&p) {
                    all.push(p);
                }
            }
        }
    }
}

fn check_overlap(out: &mut Vec<String>, paths: &[String], msg: &str) {
    let mut seen: Vec<String> = Vec::new();
    for p in paths {
        let p = p.trim_end_matches('/').to_string();
        if let Some(hit) = seen.iter().find_map(|item| overlap(item, &p)) {
            out.push(format!("{msg}: {p:?} with {hit:?}"));
        }
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
}

/// upstream `checkForOverlap` for one earlier path: the same file, or one a directory of the
/// other. An empty path overlaps nothing.
fn overlap(item: &str, path: &str) -> Option<String> {
    if item.is_empty() || path.is_empty() {
        return None;
    }
    let hit = item == path
        || format!("{item}/").starts_with(path)
        || format!("{path}/").starts_with(item);
    hit.then(|| item.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    #[test]
    fn ports_that_collide_are_named_as_upstream() {
        let w = on_pod_create(&pod(json!({"containers": [
            {"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "TCP"}]},
            {"name": "b", "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 8080},
                                     {"containerPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}]},
        ]})));
        assert_eq!(
            w,
            [
                "spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]",
                "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[0]",
                "spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[1]",
                "spec.containers[1].ports[1]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:53 Protocol:UDP HostIP:10.0.0.1}",
            ]
        );
    }

    #[test]
    fn a_template_is_named_from_its_path() {
        let d = json!({"metadata": {"name": "web.v2"}, "spec": {"template": {
        "metadata": {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
        "spec": {
            "nodeSelector": {"beta.kubernetes.io/os": "linux"},
            "terminationGracePeriodSeconds": -5,
            "containers": [{"name": "c", "resources": {"requests": {"memory": "1.5"}},
                "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}, {"name": "B", "value": "x"}, {"name": "B", "value": "$(B)y"}]}],
            "topologySpreadConstraints": [{"topologyKey": "failure-domain.beta.kubernetes.io/zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
        }}}});
        let mut w: Vec<String> = workload_name(&d).into_iter().collect();
        template(&mut w, &d, "/spec/template", "spec.template");
        assert_eq!(
            w,
            [
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]",
                r#"spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead"#,
                r#"spec.template.spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
                "spec.template.spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
                r#"spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead"#,
                r#"spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer"#,
                r#"spec.template.spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply"#,
                "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
            ]
        );
    }

    #[test]
    fn deprecated_labels_in_node_affinity_terms() {
        let term = json!({"matchExpressions": [{"key": "kubernetes.io/os", "operator": "Exists"},
            {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]});
        let w = on_pod_create(&pod(
            json!({"containers": [{"name": "c"}], "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term.clone()]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term}],
            }}}),
        ));
        assert_eq!(
            w,
            [
                r#"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead"#,
                r#"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[1].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead"#,
            ]
        );
    }

    #[test]
    fn a_clean_pod_gets_no_warning_and_a_dotted_name_one() {
        let clean = pod(json!({"containers": [{"name": "c", "image": "x",
            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"}],
            "resources": {"requests": {"memory": "64Mi"}}}]}));
        assert!(on_pod_create(&clean).is_empty());
        let mut dotted = clean.clone();
        dotted["metadata"]["name"] = json!("web.1");
        assert_eq!(
            on_pod_create(&dotted),
            [
                "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"
            ]
        );
    }

    #[test]
    fn overlapping_volume_paths_and_duplicates() {
        let w = on_pod_create(&pod(json!({
            "containers": [{"name": "c"}],
            "hostAliases": [{"ip": "1.2.3.4"}, {"ip": "1.2.3.4"}],
            "imagePullSecrets": [{"name": "r"}, {"name": "r"}, {"name": ""}],
            "volumes": [{"name": "v", "configMap": {"name": "cm", "items": [
                {"key": "a", "path": "p"}, {"key": "b", "path": "p/q"}]}},
                {"name": "g", "gitRepo": {"repository": "x"}}],
        })));
        assert_eq!(
            w,
            [
                "spec.volumes[1].gitRepo: deprecated in v1.11",
                r#"volume "v" (ConfigMap "cm"): overlapping paths: "p/q" with "p""#,
                r#"spec.hostAliases[1].ip: duplicate ip "1.2.3.4""#,
                r#"spec.imagePullSecrets[1].name: duplicate name "r""#,
                r#"spec.imagePullSecrets[2].name: invalid empty name """#,
            ]
        );
    }
}

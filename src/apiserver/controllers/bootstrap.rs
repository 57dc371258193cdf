//! What a fresh cluster holds before anyone talks to it: system namespaces with their
//! `default` ServiceAccounts, built-in PriorityClasses, the bootstrap RBAC policy (plus the
//! `developers` role of the workshop), and the demo cluster of the seed: three workers and a
//! tainted control-plane node, with running pods using the seed's resources. What upstream's
//! own components write carries their managedFields entries (kube-apiserver's, or
//! kube-controller-manager's); the demo's nodes and pods, and a scenario's objects, none.

use serde_json::{Value, json};

use crate::apiserver::controllers::{
    bootstrap_roles, client, clusterrole_aggregation, provisioner, root_ca_cert_publisher,
};
use crate::apiserver::endpoints::create;
use crate::apiserver::endpoints::managed_fields;
use crate::apiserver::filters::authn::PUBLIC_INFO_URLS;
use crate::apiserver::registry::resources::{self, ResourceDef};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;

fn meta(name: &str, ns: Option<&str>) -> Value {
    let mut m = json!({"name": name, "uid": util::uuid(), "creationTimestamp": util::now()});
    if let Some(ns) = ns {
        m["namespace"] = json!(ns);
    }
    m
}

/// Create an object as the server itself would (no admission): used for bootstrap and scenarios.
/// Create `obj` as kind `def` unless its key is taken (then false: the first one stays).
pub(crate) fn put(store: &dyn Storage, def: &ResourceDef, mut obj: Value) -> bool {
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    obj["kind"] = json!(def.kind);
    obj["apiVersion"] = json!(def.api_version());
    if obj.pointer("/metadata/uid").is_none() {
        obj["metadata"]["uid"] = json!(util::uuid());
    }
    if obj.pointer("/metadata/creationTimestamp").is_none() {
        obj["metadata"]["creationTimestamp"] = json!(util::now());
    }
    if def.namespaced {
        obj["metadata"]["namespace"] = json!(ns);
    }
    store
        .create(&def.key_for(&ns, &name), obj, Write::Commit)
        .is_ok()
}

/// `obj` with the managed fields upstream's writer of it leaves: `manager`'s Update entry owning
/// what it sent (`sent`, defaulted), as `controllers::client::create_as` records a control
/// loop's create. kube-apiserver writes the system namespaces, priority classes and RBAC
/// policy; kube-controller-manager the root CA ConfigMap and the aggregated roles' rules.
fn stamped(def: &ResourceDef, mut obj: Value, sent: &Value, manager: &str) -> Value {
    let fields = managed_fields::created_field_set(def, &create::defaulted(def, sent));
    managed_fields::stamp_created(&mut obj, def, manager, "Update", &fields, &util::now());
    obj
}

/// [`put`] as kube-apiserver, which sent all of `obj`.
fn put_by_apiserver(store: &dyn Storage, def: &ResourceDef, obj: Value) -> bool {
    let sent = obj.clone();
    put(store, def, stamped(def, obj, &sent, client::APISERVER))
}

fn def(group: &str, plural: &str) -> Option<&'static ResourceDef> {
    resources::RESOURCES
        .iter()
        .find(|r| r.group == group && r.plural == plural)
}

pub(crate) fn ensure_default_sa(store: &dyn Storage, ns: &str) {
    if let Some(d) = def("", "serviceaccounts") {
        put(store, d, json!({"metadata": meta("default", Some(ns))}));
    }
}

/// A namespace as a fresh cluster has it: with the `default` ServiceAccount and the root CA
/// ConfigMap its controllers would add (here before any pod of the bootstrap or a scenario
/// needs them).
fn namespace(api: &Api, name: &str) {
    let store = &*api.store;
    if let Some(d) = def("", "namespaces") {
        let ns = json!({"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        // Upstream's system namespaces controller sends a name; the rest is the server's.
        let sent = json!({"metadata": {"name": name}});
        put(store, d, stamped(d, ns, &sent, client::APISERVER));
    }
    ensure_default_sa(store, name);
    if let (Some(d), Some(ca)) = (def("", "configmaps"), api.root_ca.as_deref()) {
        let cm = root_ca_cert_publisher::config_map(name, ca);
        put(store, d, stamped(d, cm.clone(), &cm, client::MANAGER));
    }
}

fn rbac_labels() -> Value {
    json!({"kubernetes.io/bootstrapping": "rbac-defaults"})
}

fn cluster_role(store: &dyn Storage, name: &str, rules: Value) {
    cluster_role_with(store, name, json!({}), None, rules);
}

/// A ClusterRole with labels beside the bootstrap policy's, and an aggregationRule.
fn cluster_role_with(
    store: &dyn Storage,
    name: &str,
    labels: Value,
    aggregation_rule: Option<Value>,
    rules: Value,
) {
    if let Some(d) = def(resources::RBAC, "clusterroles") {
        let mut m = meta(name, None);
        m["labels"] = rbac_labels();
        for (k, v) in labels.as_object().into_iter().flatten() {
            m["labels"][k] = v.clone();
        }
        m["annotations"] = json!({"rbac.authorization.kubernetes.io/autoupdate": "true"});
        let mut role = json!({"metadata": m, "rules": rules});
        let Some(a) = aggregation_rule else {
            put_by_apiserver(store, d, role);
            return;
        };
        // kube-apiserver writes an aggregated role without rules; the aggregation controller
        // (kube-controller-manager) fills them in.
        role["aggregationRule"] = a;
        let mut created = role.clone();
        created["rules"] = json!([]);
        let sent = created.clone();
        let created = stamped(d, created, &sent, client::APISERVER);
        let mut filled = role;
        filled["metadata"]["managedFields"] = created["metadata"]["managedFields"].clone();
        managed_fields::record_own_write(d, &created, &mut filled, client::MANAGER);
        put(store, d, filled);
    }
}

fn cluster_role_binding(store: &dyn Storage, name: &str, role: &str, groups: &[&str]) {
    if let Some(d) = def(resources::RBAC, "clusterrolebindings") {
        let mut m = meta(name, None);
        m["labels"] = rbac_labels();
        m["annotations"] = json!({"rbac.authorization.kubernetes.io/autoupdate": "true"});
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g}))
            .collect();
        put_by_apiserver(
            store,
            d,
            json!({"metadata": m, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}, "subjects": subjects}),
        );
    }
}

/// Namespaces, service accounts, priority classes and RBAC policy.
pub fn system(api: &Api) {
    let store = &*api.store;
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        namespace(api, ns);
    }
    if let Some(d) = def("scheduling.k8s.io", "priorityclasses") {
        for (name, value, desc) in [
            (
                "system-cluster-critical",
                2000000000,
                "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
            ),
            (
                "system-node-critical",
                2000001000,
                "Used for system critical pods that must not be moved from their current node.",
            ),
        ] {
            put_by_apiserver(
                store,
                d,
                json!({"metadata": meta(name, None), "value": value, "description": desc, "preemptionPolicy": "PreemptLowerPriority"}),
            );
        }
    }
    cluster_role(
        store,
        "cluster-admin",
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
    );
    cluster_role_binding(store, "cluster-admin", "cluster-admin", &["system:masters"]);
    // view, edit and admin: what feeds each, then each with the rules the aggregation
    // controller would give it, so that they hold them before it first runs.
    for u in &bootstrap_roles::USER_FACING {
        let (name, labels, rules) = u.source();
        cluster_role_with(store, &name, labels, None, Value::Array(rules));
    }
    for u in &bootstrap_roles::USER_FACING {
        let (labels, rule) = u.role();
        let unbuilt = json!({"metadata": {"name": u.name}, "aggregationRule": rule});
        let roles = store.list("/registry/clusterroles/").0;
        let rules = clusterrole_aggregation::aggregated_rules(&unbuilt, &roles).unwrap_or_default();
        cluster_role_with(store, u.name, labels, Some(rule), Value::Array(rules));
    }
    cluster_role(
        store,
        "system:discovery",
        json!([{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}]),
    );
    cluster_role_binding(
        store,
        "system:discovery",
        "system:discovery",
        &["system:authenticated"],
    );
    // Read access to the control plane's monitoring endpoints, for the system:monitoring group.
    cluster_role(
        store,
        "system:monitoring",
        json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"]}]),
    );
    cluster_role_binding(
        store,
        "system:monitoring",
        "system:monitoring",
        &["system:monitoring"],
    );
    // kexplore's trace endpoints; the handlers narrow them to the caller's own requests and to
    // pods the caller may get.
    cluster_role(
        store,
        "kexplore:trace-reader",
        json!([{"verbs": ["get"], "nonResourceURLs": ["/debug/kexplore/*"]}]),
    );
    cluster_role_binding(
        store,
        "kexplore:trace-reader",
        "kexplore:trace-reader",
        &["system:authenticated"],
    );
    cluster_role(
        store,
        "system:public-info-viewer",
        json!([{"verbs": ["get"], "nonResourceURLs": PUBLIC_INFO_URLS}]),
    );
    cluster_role_binding(
        store,
        "system:public-info-viewer",
        "system:public-info-viewer",
        &["system:authenticated", "system:unauthenticated"],
    );
    cluster_role(
        store,
        "system:basic-user",
        json!([
            {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}
        ]),
    );
    cluster_role_binding(
        store,
        "system:basic-user",
        "system:basic-user",
        &["system:authenticated"],
    );
    // Unbound, as upstream: for servers that delegate authentication and authorization here.
    cluster_role(
        store,
        "system:auth-delegator",
        json!([
            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"]},
            {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"]}
        ]),
    );
    cluster_role(
        store,
        "system:kube-scheduler",
        json!([
            {"verbs": ["create"], "apiGroups": [""], "resources": ["bindings", "pods/binding"]},
            {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["nodes", "pods"]},
            {"verbs": ["patch", "update"], "apiGroups": [""], "resources": ["pods/status"]},
            {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["persistentvolumeclaims", "persistentvolumes"]},
            {"verbs": ["get", "list", "watch"], "apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"]},
            {"verbs": ["create", "patch", "update"], "apiGroups": ["", "events.k8s.io"], "resources": ["events"]}
        ]),
    );
    // The workshop's restricted user: group `developers` manages pods in `default` only.
    if let (Some(rd), Some(bd)) = (
        def(resources::RBAC, "roles"),
        def(resources::RBAC, "rolebindings"),
    ) {
        put(
            store,
            rd,
            json!({"metadata": meta("pod-manager", Some("default")), "rules": [
                {"verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods/log", "pods/status", "events"]},
                {"verbs": ["get", "list", "watch"], "apiGroups": ["events.k8s.io"], "resources": ["events"]}
            ]}),
        );
        put(
            store,
            bd,
            json!({"metadata": meta("developers-pod-manager", Some("default")),
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-manager"},
                   "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "developers"}]}),
        );
    }
}

/// A node as a kubelet registers it.
pub(crate) fn node(name: &str, cpu: &str, memory: &str, index: u32, control_plane: bool) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"});
    let mut spec = json!({"podCIDR": format!("10.244.{index}.0/24"), "podCIDRs": [format!("10.244.{index}.0/24")]});
    if control_plane {
        labels["node-role.kubernetes.io/control-plane"] = json!("");
        spec["taints"] =
            json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]);
    }
    let now = util::now();
    let cap = json!({"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"});
    json!({
        "metadata": {"name": name, "labels": labels, "annotations": {"kexplore.dev/simulated": "true"}},
        "spec": spec,
        "status": {
            "capacity": cap, "allocatable": cap,
            "conditions": crate::apiserver::controllers::kubelet_node::conditions(&now),
            "addresses": [{"type": "InternalIP", "address": format!("10.0.0.{}", 10 + index)}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "6.1.0-kexplore", "osImage": "kexplore simulated node",
                          "containerRuntimeVersion": "simulated://1.0", "kubeletVersion": "v1.33.1", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}
        }
    })
}

/// A running pod already on a node, taking `cpu`/`memory` of it.
fn running_pod(
    ns: &str,
    name: &str,
    node: &str,
    host: &str,
    cpu: &str,
    memory: &str,
    ip: &str,
) -> Value {
    let now = util::now();
    json!({
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", "imagePullPolicy": "IfNotPresent",
                 "resources": {"requests": {"cpu": cpu, "memory": memory}}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                 "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30,
                 "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {}, "enableServiceLinks": true, "priority": 0, "preemptionPolicy": "PreemptLowerPriority"},
        "status": {"phase": "Running", "qosClass": "Burstable", "hostIP": host, "hostIPs": [{"ip": host}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
                   "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now},
                                  {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": now},
                                  {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": now},
                                  {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": now}],
                   "containerStatuses": [{"name": "main", "ready": true, "started": true, "restartCount": 0, "image": "registry.k8s.io/pause:3.10",
                                          "imageID": "", "containerID": "simulated://main", "state": {"running": {"startedAt": now}}}]}
    })
}

/// The seed's cluster: node-1 4 CPU/8Gi (2.5/3Gi used), node-2 2/4Gi (1.8/3.5Gi),
/// node-3 8/16Gi (3/6Gi), and a tainted control-plane node.
pub fn demo(api: &Api) {
    let store = &*api.store;
    let Some(nd) = def("", "nodes") else { return };
    let Some(pd) = def("", "pods") else { return };
    namespace(api, "demo");
    for (i, (name, cpu, mem, used_cpu, used_mem)) in [
        ("node-1", "4", "8Gi", "2500m", "3Gi"),
        ("node-2", "2", "4Gi", "1800m", "3584Mi"),
        ("node-3", "8", "16Gi", "3", "6Gi"),
    ]
    .into_iter()
    .enumerate()
    {
        let idx = i as u32 + 1;
        put(store, nd, node(name, cpu, mem, idx, false));
        put(
            store,
            pd,
            running_pod(
                "demo",
                &format!("workload-{name}"),
                name,
                &format!("10.0.0.{}", 10 + idx),
                used_cpu,
                used_mem,
                &format!("10.244.{idx}.2"),
            ),
        );
    }
    put(store, nd, node("control-plane", "2", "4Gi", 0, true));
    // The default class, as kind's: claims get volumes from the demo's provisioner.
    if let Some(sc) = def(crate::apiserver::registry::storage::GROUP, "storageclasses") {
        let mut class = provisioner::default_class();
        class["metadata"]["uid"] = json!(util::uuid());
        class["metadata"]["creationTimestamp"] = json!(util::now());
        put(store, sc, class);
    }
}

/// Preload manifests (`--scenario`): single objects, multi-document YAML, `kind: List`, JSON.
pub(crate) fn load_scenario(api: &Api, path: &std::path::Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut n = 0;
    parse_scenario(&text, |objects| {
        for (d, o) in objects {
            let ns = o
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default");
            if d.namespaced && store_missing_ns(&*api.store, ns) {
                namespace(api, ns);
            }
            if put(&*api.store, d, o) {
                n += 1;
            }
        }
    })
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(n)
}

/// How much YAML one core parses before its objects are stored: ~3,500 pods, ~20 MB of
/// parsed objects. Parsing the whole file first held 1.2 GB of them for a 5,000-node,
/// 150,000-pod scenario, the server's peak.
const PART_BYTES: usize = 1 << 20;

/// The scenario's objects, each checked against its kind and given what loading adds, handed
/// to `each` in file order, a wave at a time. Parsing and checking are most of a big
/// scenario's start (a 5,000-node, 150,000-pod file is 42 MB of YAML), so each wave's
/// documents are shared out over the cores.
fn parse_scenario(
    text: &str,
    mut each: impl FnMut(Vec<(&'static ResourceDef, Value)>),
) -> Result<(), String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts = split_documents(text, threads.max(text.len() / PART_BYTES));
    if parts.len() > 1 {
        let mut clean = true;
        for wave in parts.chunks(threads) {
            match compile_wave(wave) {
                Ok(objects) => each(objects),
                Err(_) => {
                    clean = false;
                    break;
                }
            }
        }
        if clean {
            return Ok(());
        }
    }
    // One stream: what names the first bad document as the whole file reads it (its line,
    // not its part's), and what reads text that does not split cleanly at `---` lines (the
    // objects of the waves before come again; the store keeps the first of each).
    each(compile_documents(text)?);
    Ok(())
}

/// One part per core, compiled side by side; their objects in order.
fn compile_wave(parts: &[&str]) -> Result<Vec<(&'static ResourceDef, Value)>, String> {
    let results: Vec<Result<Vec<_>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .map(|part| s.spawn(move || compile_documents(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("could not be read".to_string()))
            })
            .collect()
    });
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// `text` cut into about `parts` pieces at document boundaries (lines that are `---`).
fn split_documents(text: &str, parts: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    for i in (1..parts).rev() {
        let want = rest.len() / (i + 1);
        let Some(at) = rest
            .get(want..)
            .and_then(|t| t.find("\n---\n"))
            .map(|at| want + at + 1)
        else {
            break;
        };
        out.push(&rest[..at]);
        rest = &rest[at..];
    }
    out.push(rest);
    out
}

fn compile_documents(text: &str) -> Result<Vec<(&'static ResourceDef, Value)>, String> {
    let mut objects = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc).map_err(|e| e.to_string())?;
        if v.is_null() {
            continue;
        }
        if !v.is_object() {
            return Err("every document must be a Kubernetes object".into());
        }
        match v.get("kind").and_then(Value::as_str) {
            Some(k) if k.ends_with("List") => {
                for item in v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    objects.push(compile_object(item)?);
                }
            }
            _ => objects.push(compile_object(&v)?),
        }
    }
    Ok(objects)
}

/// One scenario object checked against its kind, with what loading adds to it.
fn compile_object(o: &Value) -> Result<(&'static ResourceDef, Value), String> {
    let av = o.get("apiVersion").and_then(Value::as_str).unwrap_or("v1");
    let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
    let group = av.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    let Some(d) = resources::by_kind(group, kind).filter(|d| d.stored()) else {
        return Err(format!(
            "kind {kind:?} in {av:?} is not served by the embedded server"
        ));
    };
    // Typed first: a manifest that is not a valid object of its kind is bad input, not a crash.
    let mut o = crate::apiserver::codec::decode::roundtrip(d, o).map_err(|e| {
        let name = o
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        format!("{kind} {name}: {e}")
    })?;
    if o.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(format!("a {kind} without metadata.name"));
    }
    if d.kind == "Pod" {
        prepare_scenario_pod(&mut o);
    }
    if d.kind == "Node" && o.pointer("/status/allocatable").is_none() {
        // Node defaulting: allocatable is the capacity unless the kubelet reserves some.
        if let Some(c) = o.pointer("/status/capacity").cloned() {
            o["status"]["allocatable"] = c;
        }
    }
    Ok((d, o))
}

fn store_missing_ns(store: &dyn Storage, ns: &str) -> bool {
    store.get(&format!("/registry/namespaces/{ns}")).is_none()
}

/// Scenario pods: defaults applied; pods with a nodeName count as running there. The QoS
/// class is the one the pod's requests and limits give, as for a pod created through the API.
fn prepare_scenario_pod(o: &mut Value) {
    let mut qos = "BestEffort";
    if let Ok(mut p) = serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(o.clone()) {
        crate::apiserver::registry::defaults::default_pod(&mut p);
        qos = crate::apiserver::registry::defaults::qos_class(&p);
        if let Ok(v) = serde_json::to_value(&p) {
            *o = v;
        }
    }
    let bound = o
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if o.pointer("/status/phase").is_none() {
        let phase = if bound { "Running" } else { "Pending" };
        o["status"] = json!({"phase": phase, "qosClass": qos});
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(n: usize) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{n}\nspec:\n  nodeName: node-{n}\n  containers:\n  - name: c\n    image: nginx\n"
        )
    }

    #[test]
    fn a_scenario_pod_gets_the_qos_class_its_resources_give() {
        let qos = |resources: Value, node: Option<&str>| {
            let mut o = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}]}});
            if let Some(n) = node {
                o["spec"]["nodeName"] = json!(n);
            }
            prepare_scenario_pod(&mut o);
            (
                o["status"]["qosClass"].clone(),
                o["status"]["phase"].clone(),
            )
        };
        let req = json!({"requests": {"cpu": "100m", "memory": "128Mi"}});
        let both = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}});
        assert_eq!(
            qos(json!({}), None),
            (json!("BestEffort"), json!("Pending"))
        );
        assert_eq!(
            qos(req.clone(), None),
            (json!("Burstable"), json!("Pending"))
        );
        assert_eq!(qos(req, Some("n1")), (json!("Burstable"), json!("Running")));
        assert_eq!(
            qos(both, Some("n1")),
            (json!("Guaranteed"), json!("Running"))
        );
    }

    #[test]
    fn a_scenario_split_over_the_cores_reads_as_the_whole_stream_does() {
        let text: String = (0..7).map(|n| format!("---\n{}", doc(n))).collect();
        for parts in 1..=4 {
            let split = split_documents(&text, parts);
            assert_eq!(split.concat(), text, "{parts} parts cover the text");
            assert!(split.len() <= parts);
            assert!(split[1..].iter().all(|p| p.starts_with("---\n")));
        }
        let names = |objs: Vec<(&'static ResourceDef, Value)>| -> Vec<String> {
            objs.iter()
                .map(|(_, o)| o["metadata"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        let whole = names(compile_documents(&text).expect("one stream"));
        assert_eq!(whole.len(), 7);
        let mut waves = Vec::new();
        parse_scenario(&text, |objs| waves.extend(names(objs))).expect("parallel");
        assert_eq!(waves, whole);
        // A bad document is named as the whole file reads it (its line, not its part's).
        let bad = format!("{text}---\napiVersion: v1\nkind: Pod\nmetadata: [x\n");
        let e = parse_scenario(&bad, |_| {}).err().unwrap_or_default();
        assert!(e.contains("line 75"), "{e}");
    }
}

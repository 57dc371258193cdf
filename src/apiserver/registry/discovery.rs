//! Discovery: `/version`, `/api`, `/apis`, `/api/v1`, `/apis/<g>/<v>` — legacy JSON, or aggregated
//! discovery (apidiscovery.k8s.io) in exactly the version the client asked for, since kubectl
//! 1.27–1.29 only understand v2beta1 and break when handed v2.

use serde_json::{Value, json};

use crate::apiserver::registry::resources::{RESOURCES, ResourceDef, group_versions};

/// The version this server reports; the gcloud kubectl dispatcher picks its client by `minor`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.1-kexplore",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-21T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else { std::env::consts::ARCH }),
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32"
    })
}

pub fn api_versions(server_addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_addr}]
    })
}

fn group_entry(group: &str, versions: &[&str]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    // The preferred version is the first listed (v1 before v1beta1).
    json!({"name": group, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

pub fn api_group_list() -> Value {
    let groups: Vec<Value> = group_versions()
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, vs)| group_entry(g, &vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn api_group(group: &str) -> Option<Value> {
    let (_, vs) = group_versions()
        .into_iter()
        .find(|(g, _)| *g == group && !g.is_empty())?;
    let mut e = group_entry(group, &vs);
    e["kind"] = json!("APIGroup");
    e["apiVersion"] = json!("v1");
    Some(e)
}

/// What a subresource answers: pods/binding takes a Binding, `scale` is autoscaling/v1 Scale
/// (upstream serves it for every workload kind), `status` is the kind itself.
fn subresource_kind(
    r: &ResourceDef,
    sub: &str,
) -> (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
) {
    match sub {
        "binding" => (r.group, r.version, "Binding", &["create"]),
        "token" => ("authentication.k8s.io", "v1", "TokenRequest", &["create"]),
        "scale" => ("autoscaling", "v1", "Scale", &["get", "patch", "update"]),
        "eviction" => ("policy", "v1", "Eviction", &["create"]),
        "log" => (r.group, r.version, r.kind, &["get"]),
        "finalize" => (r.group, r.version, r.kind, &["update"]),
        "exec" => (r.group, r.version, "PodExecOptions", &["create", "get"]),
        "attach" => (r.group, r.version, "PodAttachOptions", &["create", "get"]),
        "portforward" => (
            r.group,
            r.version,
            "PodPortForwardOptions",
            &["create", "get"],
        ),
        _ => (r.group, r.version, r.kind, &["get", "patch", "update"]),
    }
}

fn legacy_resource(r: &ResourceDef) -> Vec<Value> {
    let mut out = vec![{
        let mut e = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            e["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            e["categories"] = json!(r.categories);
        }
        e
    }];
    for sub in r.subresources {
        let (group, version, kind, verbs) = subresource_kind(r, sub);
        let mut e = json!({"name": format!("{}/{sub}", r.plural), "singularName": "", "namespaced": r.namespaced, "kind": kind, "verbs": verbs});
        if group != r.group {
            e["group"] = json!(group);
            e["version"] = json!(version);
        }
        out.push(e);
    }
    out
}

pub fn api_resource_list(group: &str, version: &str) -> Option<Value> {
    let rs: Vec<&ResourceDef> = RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let resources: Vec<Value> = rs.iter().flat_map(|r| legacy_resource(r)).collect();
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

fn aggregated_resource(r: &ResourceDef) -> Value {
    let mut e = json!({
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        e["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        e["categories"] = json!(r.categories);
    }
    let subs: Vec<Value> = r
        .subresources
        .iter()
        .map(|s| {
            let (group, version, kind, verbs) = subresource_kind(r, s);
            json!({"subresource": s, "responseKind": {"group": group, "version": version, "kind": kind}, "verbs": verbs})
        })
        .collect();
    if !subs.is_empty() {
        e["subresources"] = Value::Array(subs);
    }
    e
}

/// `APIGroupDiscoveryList` for `/api` (core) or `/apis` (groups), in `apidiscovery.k8s.io/<v>`.
pub fn aggregated(core: bool, disc_version: &str) -> Value {
    let items: Vec<Value> = group_versions()
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = RESOURCES
                        .iter()
                        .filter(|r| r.group == g && r.version == *v)
                        .map(aggregated_resource)
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut meta = json!({"creationTimestamp": null});
            if !g.is_empty() {
                meta["name"] = json!(g);
            }
            json!({"metadata": meta, "versions": versions})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{disc_version}"), "metadata": {}, "items": items})
}

/// Which aggregated-discovery version the client asked for first, if any.
pub fn wants_aggregated(accept: Option<&str>) -> Option<&'static str> {
    for item in accept.unwrap_or_default().split(',') {
        let item = item.replace(' ', "");
        if item.starts_with("application/json")
            && item.contains("g=apidiscovery.k8s.io")
            && item.contains("as=APIGroupDiscoveryList")
        {
            if item.contains("v=v2beta1") {
                return Some("v2beta1");
            }
            if item.contains("v=v2") {
                return Some("v2");
            }
        } else if item.starts_with("application/json") || item.starts_with("*/*") {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_discovery_version() {
        let v130 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(wants_aggregated(Some(v130)), Some("v2"));
        let v127 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(wants_aggregated(Some(v127)), Some("v2beta1"));
        assert_eq!(wants_aggregated(Some("application/json, */*")), None);
        assert!(api_resource_list("", "v1").is_some());
    }
}

//! Where view 5's cluster comes from: the live server (`GET /api/v1/nodes`, `GET /api/v1/pods`,
//! `GET /version` for the release to model) or manifest files (tests, benches). Either way the
//! objects go through the same manifest reader `kexplore schedule` uses, so a `kubectl get
//! nodes,pods -o yaml` of the same state gives the same numbers there.

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::live::{self, Listing, LiveCluster};
use super::model::ClusterData;
use crate::client::http::ApiClient;
use crate::kubeconfig::ResolvedContext;
use crate::scheduler::KubeVersion;
use crate::scheduler::manifests::Manifests;

/// The release to model for a server's `/version`: its own when modelled, else the newest.
pub fn version_for(git_version: &str) -> KubeVersion {
    let t = git_version.trim_start_matches('v');
    let mm: Vec<&str> = t.split(['.', '-', '+']).take(2).collect();
    KubeVersion::parse(&mm.join(".")).unwrap_or_default()
}

/// Splits manifests into the cluster and the pod to place. `focus` (`ns/name`) picks a pod from
/// the input, taken off its node; without one (or when absent) `fallback` is placed.
pub fn cluster_from(
    source: String,
    m: Manifests,
    focus: Option<&str>,
    fallback: Pod,
    version: KubeVersion,
) -> ClusterData {
    let key = live::key_of;
    let mut pod = None;
    let mut running = Vec::new();
    for (p, _) in m.pods {
        if pod.is_none() && focus.is_some_and(|f| f == key(&p)) {
            pod = Some(p);
        } else if p.spec.as_ref().is_some_and(|s| s.node_name.is_some()) {
            running.push(p);
        }
    }
    let mut pod = pod.unwrap_or(fallback);
    // The pod as it was when the scheduler saw it: not yet bound, no status.
    if let Some(s) = pod.spec.as_mut() {
        s.node_name = None;
    }
    pod.status = None;
    ClusterData {
        source,
        nodes: m.nodes.into_iter().map(|(n, _)| n).collect(),
        running,
        pod,
        version,
    }
}

/// GET `path` as JSON; on a non-200 answer the status code and a plain message.
async fn get_json(client: &ApiClient, path: &str) -> Result<Value, (u16, String)> {
    let r = client.get(path).await.map_err(|e| (0, e.to_string()))?;
    if r.status != 200 {
        let msg = r
            .json()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_default();
        return Err((r.status, format!("GET {path}: {} {msg}", r.status)));
    }
    r.json()
        .ok_or_else(|| (r.status, format!("GET {path}: not JSON")))
}

/// The pods the user may list: every namespace's, else (403) the context namespace's, else
/// none; each refusal becomes a note of what the simulation then does not see.
async fn list_pods(
    client: &ApiClient,
    namespace: &str,
    hidden: &mut Vec<String>,
) -> Result<(String, Value), String> {
    let all = "/api/v1/pods".to_string();
    match get_json(client, &all).await {
        Ok(v) => return Ok((all, v)),
        Err((403, _)) => {}
        Err((_, e)) => return Err(e),
    }
    let ns = format!("/api/v1/namespaces/{namespace}/pods");
    match get_json(client, &ns).await {
        Ok(v) => {
            hidden.push(format!(
                "RBAC: pods outside namespace {namespace} are hidden (list pods at cluster scope: forbidden); the simulation does not count their requests"
            ));
            Ok((ns, v))
        }
        Err((403, _)) => {
            hidden.push(format!(
                "RBAC: no pods could be listed (cluster scope and namespace {namespace}: forbidden); the nodes look empty to the simulation"
            ));
            Ok((
                ns,
                serde_json::json!({"kind": "PodList", "apiVersion": "v1", "items": []}),
            ))
        }
        Err((_, e)) => Err(e),
    }
}

/// Lists the live cluster's nodes and pods: the simulation's input and the pods to choose from.
pub async fn fetch(
    ctx: &ResolvedContext,
    focus: Option<String>,
    fallback: Pod,
) -> Result<LiveCluster, String> {
    let client = ApiClient::connect(ctx).await.map_err(|e| e.to_string())?;
    let version = get_json(&client, "/version")
        .await
        .ok()
        .and_then(|v| v["gitVersion"].as_str().map(version_for))
        .unwrap_or_default();
    let nodes = get_json(&client, "/api/v1/nodes")
        .await
        .map_err(|(code, e)| match code {
            403 => format!(
                "{e} — RBAC: this user may not list nodes, and the simulation needs them (ask for list on nodes, e.g. a ClusterRole with nodes: [get, list])"
            ),
            _ => e,
        })?;
    let mut hidden = Vec::new();
    let (pods_path, pods) = list_pods(&client, &ctx.namespace, &mut hidden).await?;
    let mut m = Manifests::default();
    for (name, v) in [("/api/v1/nodes".to_string(), nodes), (pods_path, pods)] {
        let text = serde_json::to_string(&v).map_err(|e| e.to_string())?;
        m.add_text(&format!("GET {name}"), &text)
            .map_err(|e| e.to_string())?;
    }
    let pods: Vec<Pod> = m.pods.iter().map(|(p, _)| p.clone()).collect();
    let listing = Listing::new(&pods, hidden);
    let data = cluster_from(
        format!("{} ({})", ctx.cluster.server, ctx.context_name),
        m,
        focus.as_deref(),
        fallback,
        version,
    );
    Ok(LiveCluster { data, listing })
}

/// Reads manifest files (YAML or JSON) the way `kexplore schedule -f` does.
pub fn from_files(
    files: &[(String, String)],
    focus: Option<&str>,
    fallback: Pod,
    version: KubeVersion,
) -> Result<ClusterData, String> {
    let mut m = Manifests::default();
    for (name, text) in files {
        m.add_text(name, text).map_err(|e| e.to_string())?;
    }
    let source = files
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    Ok(cluster_from(source, m, focus, fallback, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_versions_map_to_modelled_releases() {
        assert_eq!(version_for("v1.33.1-kexplore").to_string(), "v1.33");
        assert_eq!(version_for("v1.30.2+k3s1").to_string(), "v1.30");
        assert_eq!(version_for("garbage"), KubeVersion::default());
    }
}

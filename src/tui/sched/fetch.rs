//! Where view 5's cluster comes from: the live server (nodes, pods and namespaces listed in
//! pages by `client::snapshot`, `/version` for the release to model; `watch.rs` then keeps them
//! current) or manifest files (tests, benches). Either way the
//! objects go through the same manifest reader `kexplore schedule` uses, so a `kubectl get
//! nodes,pods -o yaml` of the same state gives the same numbers there.

use k8s_openapi::api::core::v1::{Node, Pod};

use super::live::{self, Listing, LiveCluster};
use super::model::ClusterData;
use crate::client::http::ApiClient;
use crate::client::snapshot::{WatchFrom, fetch_live};
use crate::kubeconfig::ResolvedContext;
use crate::scheduler::manifests::{Manifests, Source};
use crate::scheduler::release::Modelling;
use crate::scheduler::{KubeVersion, why};

/// Splits manifests into the cluster and the pod to place. `focus` (`ns/name`) picks a pod from
/// the input; without one (or when absent) `fallback` is placed. Either way the pod is taken out
/// of the cluster by `why::split_out`, as `schedule --pod` does: a pod already bound must not
/// weigh on its own node, so every path gives it the score kube-scheduler gave it.
pub fn cluster_from(
    source: String,
    mut m: Manifests,
    focus: Option<&str>,
    fallback: Pod,
    release: Modelling,
) -> ClusterData {
    let chosen = focus.and_then(|f| why::split_out(&mut m, f));
    let pod = match chosen {
        Some(f) => f.pod,
        None => {
            // The manifest's pod may already be in the cluster (view 4 created it): the same
            // object, so it is not also counted on the node it was bound to.
            let _ = why::split_out(&mut m, &live::key_of(&fallback));
            let mut pod = fallback;
            // The pod as it was when the scheduler saw it: not yet bound, no status.
            if let Some(s) = pod.spec.as_mut() {
                s.node_name = None;
            }
            pod.status = None;
            pod
        }
    };
    let running = m
        .pods
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()))
        .collect();
    ClusterData {
        source,
        nodes: m.nodes.into_iter().map(|(n, _)| n).collect(),
        running,
        pod,
        release,
    }
}

/// Lists the live cluster's nodes and pods in pages (`client::snapshot`): the simulation's
/// input and the pods to choose from, and what a watch needs to keep them current.
pub async fn fetch(
    ctx: &ResolvedContext,
    focus: Option<String>,
    fallback: Pod,
) -> Result<(LiveCluster, Seed), String> {
    let api = ApiClient::connect(ctx).await.map_err(|e| e.to_string())?;
    let listed = fetch_live(&api, &ctx.namespace)
        .await
        .map_err(|e| format!("listing the cluster: {e}"))?;
    if listed.watch_from.nodes.is_none() {
        let why = listed
            .not_visible
            .iter()
            .find_map(|n| n.strip_prefix("nodes: "))
            // The note's consequence is said better below.
            .and_then(|n| n.split(" — ").next())
            .unwrap_or("nodes: forbidden")
            .to_string();
        return Err(format!(
            "{why} — RBAC: this user may not list nodes, and the simulation needs them (ask for list on nodes, e.g. a ClusterRole with nodes: [get, list, watch])"
        ));
    }
    let seed = Seed {
        ctx: ctx.clone(),
        api,
        watch_from: listed.watch_from,
        nodes: listed
            .manifests
            .nodes
            .iter()
            .map(|(n, _)| n.clone())
            .collect(),
        pods: listed
            .manifests
            .pods
            .iter()
            .map(|(p, _)| p.clone())
            .collect(),
        hidden: listed.not_visible,
        source: format!("{} ({})", ctx.cluster.server, ctx.context_name),
        focus,
        fallback,
        release: listed.modelling,
    };
    Ok((seed.cluster(), seed))
}

/// The listed cluster and what it takes to list it again, watch it and rebuild the view's data.
#[derive(Debug, Clone)]
pub struct Seed {
    /// To connect again: the watches each get a connection of their own.
    pub ctx: ResolvedContext,
    pub api: ApiClient,
    pub watch_from: WatchFrom,
    pub nodes: Vec<Node>,
    /// Every pod listed, Pending and finished ones too.
    pub pods: Vec<Pod>,
    /// What RBAC hid, in plain words.
    pub hidden: Vec<String>,
    pub source: String,
    pub focus: Option<String>,
    pub fallback: Pod,
    pub release: Modelling,
}

impl Seed {
    /// The view's data for the current `nodes` and `pods`.
    pub fn cluster(&self) -> LiveCluster {
        let listing = Listing::new(&self.pods, self.hidden.clone());
        let src = |file: &str| Source {
            file: file.to_string(),
            document: 1,
        };
        let m = Manifests {
            nodes: self
                .nodes
                .iter()
                .map(|n| (n.clone(), src("nodes")))
                .collect(),
            pods: self.pods.iter().map(|p| (p.clone(), src("pods"))).collect(),
            ..Default::default()
        };
        let data = cluster_from(
            self.source.clone(),
            m,
            self.focus.as_deref(),
            self.fallback.clone(),
            self.release.clone(),
        );
        LiveCluster {
            data,
            listing,
            feed: None,
        }
    }
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
    Ok(cluster_from(
        source,
        m,
        focus,
        fallback,
        Modelling::asked(version, None),
    ))
}

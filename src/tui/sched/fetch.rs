//! Where view 5's cluster comes from: the live server (nodes, pods, namespaces, and the
//! claims, volumes and classes VolumeBinding judges with, listed in
//! pages by `client::snapshot`, at once and with progress, `/version` for the release to
//! model; `kept.rs` compiles them once and `watch.rs` keeps them current) or manifest files
//! (tests, benches). Either way the pods compile through the same `PodInfo` `kexplore
//! schedule` uses, so a `kubectl get nodes,pods -o yaml` of the same state gives the same
//! numbers there.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{Node, Pod};

use super::kept::{Frame, Kept};
use super::live::{self, Listing, LiveCluster};
use super::model::ClusterData;
use crate::client::cluster::ListProgress;
use crate::client::http::ApiClient;
use crate::client::snapshot::{EncodedPods, FetchOptions, WatchFrom, fetch_live_with};
use crate::kubeconfig::ResolvedContext;
use crate::scheduler::manifests::Manifests;
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
    fetch_with(ctx, focus, fallback, &|_, _| {}).await
}

/// `fetch`, calling `progress` after each page of each collection. The lists run at once;
/// the objects are compiled into the kept snapshot and the first model built on a blocking
/// thread, so neither the UI nor the runtime's workers wait on them.
pub async fn fetch_with(
    ctx: &ResolvedContext,
    focus: Option<String>,
    fallback: Pod,
    progress: &(dyn Fn(&str, &ListProgress) + Send + Sync),
) -> Result<(LiveCluster, Seed), String> {
    let api = ApiClient::connect(ctx).await.map_err(|e| e.to_string())?;
    // What a list recovered from (a dropped connection, an expired continue token), said on
    // screen after loading too.
    let recovered: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let report = |what: &str, p: &ListProgress| {
        if let Some(n) = &p.note {
            recovered
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(what.to_string(), n.clone());
        }
        progress(what, p)
    };
    let opts = FetchOptions {
        progress: &report,
        trim: true,
        pods_encoded: true,
        storage: true,
    };
    let listed = fetch_live_with(&api, &ctx.namespace, opts)
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
    let mut hidden = listed.not_visible;
    hidden.extend(
        recovered
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|(what, note)| format!("{what}: {note}")),
    );
    let storage = listed.manifests.storage.then(|| {
        let m = &listed.manifests;
        (
            m.claims.clone(),
            m.volumes.clone(),
            m.storage_classes.clone(),
        )
    });
    let nodes: Vec<Node> = listed.manifests.nodes.into_iter().map(|(n, _)| n).collect();
    let pods = listed.encoded_pods;
    let source = format!("{} ({})", ctx.cluster.server, ctx.context_name);
    let release = listed.modelling;
    let watch_from = listed.watch_from;
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || {
        let keep = focus
            .iter()
            .cloned()
            .chain([live::key_of(&fallback)])
            .collect();
        let mut undecodable = (0, None);
        let decoded = pods
            .into_iter()
            .flat_map(EncodedPods::decode)
            .filter_map(|p| {
                p.map_err(|e| {
                    undecodable.0 += 1;
                    undecodable.1.get_or_insert(e);
                })
                .ok()
            });
        let mut kept = Kept::new(nodes, decoded, release.version.pod_level_resources(), keep);
        if let Some((claims, volumes, classes)) = storage {
            kept.set_storage(claims, volumes, classes);
        }
        if let (n, Some(first)) = undecodable {
            hidden.push(format!(
                "pods: {n} listed pod(s) could not be read and are left out (the first: {first})"
            ));
        }
        let seed = Seed {
            ctx,
            api,
            watch_from,
            kept,
            hidden,
            source,
            focus,
            fallback,
            release,
        };
        let frame = seed.frame();
        let data = frame.data.clone();
        let built = frame.build(seed.hidden.clone());
        // The pods list goes with the model, to be moved, not copied, on the UI thread.
        let live = LiveCluster {
            data,
            listing: Listing::default(),
            feed: None,
            model: Some(Arc::new(Mutex::new(Some(built)))),
        };
        (live, seed)
    })
    .await
    .map_err(|e| format!("building the scheduler's snapshot: {e}"))
}

/// The listed cluster, kept, and what it takes to watch it and build the view's data.
#[derive(Debug, Clone)]
pub struct Seed {
    /// To connect again: the watches each get a connection of their own.
    pub ctx: ResolvedContext,
    pub api: ApiClient,
    pub watch_from: WatchFrom,
    /// The nodes and every pod listed (Pending and finished ones too), compiled.
    pub kept: Kept,
    /// What RBAC hid, and what a list recovered from, in plain words.
    pub hidden: Vec<String>,
    pub source: String,
    pub focus: Option<String>,
    pub fallback: Pod,
    pub release: Modelling,
}

impl Seed {
    /// The view's input for the kept cluster now.
    pub fn frame(&self) -> Frame {
        self.kept.frame(
            self.focus.as_deref(),
            &self.fallback,
            &self.source,
            &self.release,
        )
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

//! The live cluster as the scheduler simulation needs it: every node and pod, listed in pages,
//! plus the server's release. A user RBAC keeps from listing something gets the rest and a
//! plain note of what is missing, never an error for that alone.

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use serde::de::DeserializeOwned;

use super::cluster::{ListError, Listed, PAGE_SIZE, list_all};
use super::http::ApiClient;
use crate::scheduler::manifests::{Manifests, Source};
use crate::scheduler::release::Modelling;

/// What was listed, and what could not be.
#[derive(Debug)]
pub struct LiveCluster {
    pub manifests: Manifests,
    /// The release the simulation models for that server, and why.
    pub modelling: Modelling,
    /// One line per collection RBAC hid ("nodes: forbidden ... the simulation sees no nodes").
    pub not_visible: Vec<String>,
    /// Pages fetched in all (`limit`/`continue`).
    pub pages: usize,
    /// Where a watch of each listed collection continues from; `None` where RBAC hid it.
    pub watch_from: WatchFrom,
}

/// A collection path and the resourceVersion its list was read at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchFrom {
    pub nodes: Option<(String, String)>,
    /// Cluster-wide pods, or only the namespace's when that is all RBAC allows.
    pub pods: Option<(String, String)>,
}

/// Lists `path`; a 403 becomes `Ok(None)` with a note in `not_visible`.
async fn list_or_note<T: DeserializeOwned>(
    api: &ApiClient,
    path: &str,
    what: &str,
    consequence: &str,
    not_visible: &mut Vec<String>,
) -> Result<Option<Listed<T>>, ListError> {
    match list_all::<T>(api, path, PAGE_SIZE).await {
        Ok(l) => Ok(Some(l)),
        Err(ListError::Forbidden(m)) => {
            not_visible.push(format!("{what}: {m} — {consequence}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Lists nodes, pods (cluster-wide, else `namespace` only) and namespaces.
pub async fn fetch_live(api: &ApiClient, namespace: &str) -> Result<LiveCluster, ListError> {
    let git_version = match api.get("/version").await {
        Ok(r) if r.status == 200 => r
            .json()
            .and_then(|v| v["gitVersion"].as_str().map(str::to_string)),
        _ => None,
    };
    let modelling = Modelling::for_server(git_version.as_deref());
    let mut not_visible = Vec::new();
    let mut pages = 0;
    let mut watch_from = WatchFrom::default();
    let mut m = Manifests::default();
    let src = |file: &str| Source {
        file: file.to_string(),
        document: 1,
    };
    if let Some(l) = list_or_note::<Node>(
        api,
        "/api/v1/nodes",
        "nodes",
        "the simulation sees no nodes, so every pod looks unschedulable",
        &mut not_visible,
    )
    .await?
    {
        pages += l.pages;
        watch_from.nodes = Some(("/api/v1/nodes".to_string(), l.resource_version.clone()));
        m.nodes = l
            .items
            .into_iter()
            .map(|n| (n, src("GET /api/v1/nodes")))
            .collect();
    }
    let pods = match list_or_note::<Pod>(
        api,
        "/api/v1/pods",
        "pods in all namespaces",
        &format!("only namespace {namespace:?} is listed, so other namespaces' pods do not use up node resources in the simulation"),
        &mut not_visible,
    )
    .await?
    {
        Some(l) => Some((l, "GET /api/v1/pods".to_string())),
        None => {
            let path = format!("/api/v1/namespaces/{namespace}/pods");
            list_or_note::<Pod>(
                api,
                &path,
                &format!("pods in namespace {namespace:?}"),
                "no pod is visible: nodes look empty and there is no pending pod to explain",
                &mut not_visible,
            )
            .await?
            .map(|l| (l, format!("GET {path}")))
        }
    };
    if let Some((l, file)) = pods {
        pages += l.pages;
        let path = file.trim_start_matches("GET ").to_string();
        watch_from.pods = Some((path, l.resource_version.clone()));
        m.pods = l.items.into_iter().map(|p| (p, src(&file))).collect();
    }
    if let Some(l) = list_or_note::<Namespace>(
        api,
        "/api/v1/namespaces",
        "namespaces",
        "namespace selectors of pod affinity terms match no namespace labels",
        &mut not_visible,
    )
    .await?
    {
        pages += l.pages;
        m.namespaces = l.items;
    }
    Ok(LiveCluster {
        manifests: m,
        modelling,
        not_visible,
        pages,
        watch_from,
    })
}

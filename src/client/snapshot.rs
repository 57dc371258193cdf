//! The live cluster as the scheduler simulation needs it: every node and pod, listed in pages
//! (the collections at once, each reporting progress), plus the server's release. A user RBAC keeps from listing something gets the rest and a
//! plain note of what is missing, never an error for that alone.

use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodStatus,
};
use k8s_openapi::api::storage::v1::StorageClass;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::cluster::{ListError, ListProgress, Listed, PAGE_SIZE, list_paged};
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
    /// The pods as listed, still encoded, when `FetchOptions::pods_encoded` asked for that
    /// (`manifests.pods` is then empty).
    pub encoded_pods: Option<EncodedPods>,
}

/// Listed pods kept as the server sent them, to be decoded one at a time by their consumer:
/// typed, a pod is ~5 KB whatever it holds (k8s-openapi's structs are wide), so 150,000 of them
/// were 730 MB at once before the view compiled them; encoded they are ~700 bytes each.
#[derive(Debug)]
pub struct EncodedPods {
    items: Vec<Box<RawValue>>,
    trim: bool,
    /// The request that listed them, as a pod's `Source` names it.
    pub source: Source,
}

impl EncodedPods {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Pod `namespace/name` taken out and decoded (trimmed if the fetch asked): `--pod` on a
    /// big cluster, without decoding every other pod into a typed one first.
    pub fn take(&mut self, key: &str) -> Option<Result<Pod, String>> {
        #[derive(serde::Deserialize)]
        struct Meta<'a> {
            #[serde(borrow)]
            namespace: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow)]
            name: Option<std::borrow::Cow<'a, str>>,
        }
        #[derive(serde::Deserialize)]
        struct Named<'a> {
            #[serde(borrow)]
            metadata: Option<Meta<'a>>,
        }
        let (ns, name) = key.split_once('/')?;
        let i = self.items.iter().position(|raw| {
            serde_json::from_str::<Named<'_>>(raw.get())
                .ok()
                .and_then(|n| n.metadata)
                .is_some_and(|m| {
                    m.namespace.as_deref().unwrap_or("default") == ns
                        && m.name.as_deref() == Some(name)
                })
        })?;
        let raw = self.items.remove(i);
        Some(
            serde_json::from_str::<Pod>(raw.get())
                .map(|mut p| {
                    if self.trim {
                        trim_pod(&mut p);
                    }
                    p
                })
                .map_err(|e| e.to_string()),
        )
    }

    /// Each pod decoded (and trimmed if the fetch asked), or what is wrong with it; each
    /// encoded item is freed as it is decoded.
    pub fn decode(self) -> impl Iterator<Item = Result<Pod, String>> {
        let trim = self.trim;
        self.items.into_iter().map(move |raw| {
            let mut p: Pod = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            if trim {
                trim_pod(&mut p);
            }
            Ok(p)
        })
    }
}

/// A collection path and the resourceVersion its list was read at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchFrom {
    pub nodes: Option<(String, String)>,
    /// Cluster-wide pods, or only the namespace's when that is all RBAC allows.
    pub pods: Option<(String, String)>,
    /// PersistentVolumeClaims, PersistentVolumes and StorageClasses, when they were listed.
    pub claims: Option<(String, String)>,
    pub volumes: Option<(String, String)>,
    pub classes: Option<(String, String)>,
}

/// What a caller wants beyond the objects.
#[derive(Clone, Copy)]
pub struct FetchOptions<'a> {
    /// Called after each page with the collection ("nodes", "pods", "namespaces") and how far
    /// its list has got.
    pub progress: &'a (dyn Fn(&str, &ListProgress) + Send + Sync),
    /// Drop, as each item is decoded, the fields no simulation reads (managed fields, most
    /// annotations, pod status beyond the phase, node conditions).
    pub trim: bool,
    /// Keep the pods encoded (`LiveCluster::encoded_pods`) for a consumer that compiles them
    /// one at a time, instead of all decoded in `manifests.pods`.
    pub pods_encoded: bool,
    /// List PersistentVolumeClaims, PersistentVolumes and StorageClasses too, so VolumeBinding
    /// is judged (a view kept live watches them from `WatchFrom` like nodes and pods).
    pub storage: bool,
}

impl FetchOptions<'_> {
    /// Every field kept, no progress reported.
    pub fn full() -> FetchOptions<'static> {
        FetchOptions {
            progress: &|_, _| {},
            trim: false,
            pods_encoded: false,
            storage: true,
        }
    }
}

/// The annotation that marks a mirror pod, the only one the simulation reads on pods.
const MIRROR: &str = "kubernetes.io/config.mirror";
/// The only node annotation the simulation reads.
const AVOID_PODS: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

/// Leaves a pod what the scheduler and view 5 read: metadata (no managed fields, only the
/// mirror annotation), the spec, the phase, and a Pending pod's PodScheduled=False condition.
pub fn trim_pod(p: &mut Pod) {
    p.metadata.managed_fields = None;
    if let Some(a) = p.metadata.annotations.as_mut() {
        a.retain(|k, _| k == MIRROR);
    }
    let unbound = p
        .spec
        .as_ref()
        .is_none_or(|s| s.node_name.as_deref().unwrap_or("").is_empty());
    if let Some(s) = p.status.take() {
        // A Pending pod keeps why it is unscheduled (the pods list shows it); bound pods,
        // nearly all of a big cluster, keep no condition.
        let conditions = s
            .conditions
            .map(|c| {
                c.into_iter()
                    .filter(|c| unbound && c.type_ == "PodScheduled" && c.status == "False")
                    .collect::<Vec<_>>()
            })
            .filter(|c| !c.is_empty());
        p.status = Some(PodStatus {
            phase: s.phase,
            conditions,
            ..Default::default()
        });
    }
}

/// Leaves a node what the scheduler reads: no managed fields, conditions or other annotations.
pub fn trim_node(n: &mut Node) {
    n.metadata.managed_fields = None;
    if let Some(a) = n.metadata.annotations.as_mut() {
        a.retain(|k, _| k == AVOID_PODS);
    }
    if let Some(s) = n.status.as_mut() {
        s.conditions = None;
    }
}

/// Lists `path`, each item beside the `Source` that names the request; a 403 becomes
/// `Ok((None, note))`.
async fn list_or_note<T: DeserializeOwned>(
    api: &ApiClient,
    (path, label): (&str, &str),
    what: &str,
    consequence: &str,
    opts: FetchOptions<'_>,
    trim: fn(&mut T),
) -> Result<(Option<Listed<(T, Source)>>, Option<String>), ListError> {
    let file = Source {
        file: format!("GET {path}"),
        document: 1,
    };
    let listed = list_paged(
        api,
        path,
        PAGE_SIZE,
        |p| (opts.progress)(label, p),
        |mut item: T| {
            if opts.trim {
                trim(&mut item)
            }
            (item, file.clone())
        },
    )
    .await;
    match listed {
        Ok(l) => Ok((Some(l), None)),
        Err(ListError::Forbidden(m)) => Ok((None, Some(format!("{what}: {m} — {consequence}")))),
        Err(e) => Err(e),
    }
}

/// Lists nodes, pods (cluster-wide, else `namespace` only) and namespaces, every field kept.
pub async fn fetch_live(api: &ApiClient, namespace: &str) -> Result<LiveCluster, ListError> {
    fetch_live_with(api, namespace, FetchOptions::full()).await
}

/// Lists nodes, pods (cluster-wide, else `namespace` only) and namespaces, the three at once.
pub async fn fetch_live_with(
    api: &ApiClient,
    namespace: &str,
    opts: FetchOptions<'_>,
) -> Result<LiveCluster, ListError> {
    let git_version = match api.get("/version").await {
        Ok(r) if r.status == 200 => r
            .json()
            .and_then(|v| v["gitVersion"].as_str().map(str::to_string)),
        _ => None,
    };
    let modelling = Modelling::for_server(git_version.as_deref());
    let nodes = list_or_note::<Node>(
        api,
        ("/api/v1/nodes", "nodes"),
        "nodes",
        "the simulation sees no nodes, so every pod looks unschedulable",
        opts,
        trim_node,
    );
    let pods = async {
        let all = list_or_note::<Box<RawValue>>(
            api,
            ("/api/v1/pods", "pods"),
            "pods in all namespaces",
            &format!("only namespace {namespace:?} is listed, so other namespaces' pods do not use up node resources in the simulation"),
            opts,
            |_| {},
        )
        .await?;
        let (all, note) = all;
        if let Some(l) = all {
            return Ok::<_, ListError>((Some((l, "/api/v1/pods".to_string())), Vec::new()));
        }
        let path = format!("/api/v1/namespaces/{namespace}/pods");
        let (l, second) = list_or_note::<Box<RawValue>>(
            api,
            (&path, "pods"),
            &format!("pods in namespace {namespace:?}"),
            "no pod is visible: nodes look empty and there is no pending pod to explain",
            opts,
            |_| {},
        )
        .await?;
        let notes: Vec<String> = note.into_iter().chain(second).collect();
        Ok((l.map(|l| (l, path)), notes))
    };
    let namespaces = list_or_note::<Namespace>(
        api,
        ("/api/v1/namespaces", "namespaces"),
        "namespaces",
        "namespace selectors of pod affinity terms match no namespace labels",
        opts,
        |_| {},
    );
    let storage = async {
        if !opts.storage {
            return Ok::<_, ListError>((None, None));
        }
        const SKIPPED: &str = "VolumeBinding is not simulated (it passes every node)";
        let (claims, volumes, classes) = tokio::join!(
            list_or_note::<PersistentVolumeClaim>(
                api,
                ("/api/v1/persistentvolumeclaims", "persistentvolumeclaims"),
                "persistentvolumeclaims in all namespaces",
                SKIPPED,
                opts,
                |_| {},
            ),
            list_or_note::<PersistentVolume>(
                api,
                ("/api/v1/persistentvolumes", "persistentvolumes"),
                "persistentvolumes",
                SKIPPED,
                opts,
                |_| {},
            ),
            list_or_note::<StorageClass>(
                api,
                ("/apis/storage.k8s.io/v1/storageclasses", "storageclasses"),
                "storageclasses",
                SKIPPED,
                opts,
                |_| {},
            ),
        );
        // Storage only sharpens the answer: a list that fails (a proxy without the path,
        // say) is a note, not the end of it.
        fn or_note<T>(
            r: Result<(Option<T>, Option<String>), ListError>,
            what: &str,
        ) -> (Option<T>, Option<String>) {
            r.unwrap_or_else(|e| (None, Some(format!("{what}: {e} — {SKIPPED}"))))
        }
        let (claims, n1) = or_note(claims, "persistentvolumeclaims");
        let (volumes, n2) = or_note(volumes, "persistentvolumes");
        let (classes, n3) = or_note(classes, "storageclasses");
        let note = n1.or(n2).or(n3);
        Ok(match (claims, volumes, classes) {
            (Some(c), Some(v), Some(s)) => (Some((c, v, s)), note),
            _ => (None, note),
        })
    };
    let (nodes, pods, namespaces, storage) = tokio::join!(nodes, pods, namespaces, storage);
    let ((nodes, node_note), (pods, pod_notes), (namespaces, ns_note), (storage, storage_note)) =
        (nodes?, pods?, namespaces?, storage?);
    let not_visible: Vec<String> = node_note
        .into_iter()
        .chain(pod_notes)
        .chain(ns_note)
        .chain(storage_note)
        .collect();
    let mut pages = 0;
    let mut watch_from = WatchFrom::default();
    let mut m = Manifests::default();
    let mut encoded_pods = None;
    if let Some(l) = nodes {
        pages += l.pages;
        watch_from.nodes = Some(("/api/v1/nodes".to_string(), l.resource_version));
        m.nodes = l.items;
    }
    if let Some((l, path)) = pods {
        pages += l.pages;
        let file = format!("GET {path}");
        watch_from.pods = Some((path, l.resource_version));
        let encoded = EncodedPods {
            items: l.items.into_iter().map(|(raw, _)| raw).collect(),
            trim: opts.trim,
            source: Source { file, document: 1 },
        };
        if opts.pods_encoded {
            encoded_pods = Some(encoded);
        } else {
            let source = encoded.source.clone();
            m.pods = encoded
                .decode()
                .map(|p| p.map(|p| (p, source.clone())))
                .collect::<Result<_, _>>()
                .map_err(ListError::Decode)?;
        }
    }
    if let Some(l) = namespaces {
        pages += l.pages;
        m.namespaces = l.items.into_iter().map(|(n, _)| n).collect();
    }
    if let Some((claims, volumes, classes)) = storage {
        fn items<T>(l: Listed<(T, Source)>) -> Vec<T> {
            l.items.into_iter().map(|(o, _)| o).collect()
        }
        pages += claims.pages + volumes.pages + classes.pages;
        watch_from.claims = Some((
            "/api/v1/persistentvolumeclaims".into(),
            claims.resource_version.clone(),
        ));
        watch_from.volumes = Some((
            "/api/v1/persistentvolumes".into(),
            volumes.resource_version.clone(),
        ));
        watch_from.classes = Some((
            "/apis/storage.k8s.io/v1/storageclasses".into(),
            classes.resource_version.clone(),
        ));
        m.claims = items(claims);
        m.volumes = items(volumes);
        m.storage_classes = items(classes);
        m.storage = true;
    }
    Ok(LiveCluster {
        manifests: m,
        modelling,
        not_visible,
        pages,
        watch_from,
        encoded_pods,
    })
}

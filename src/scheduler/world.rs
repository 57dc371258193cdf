//! Manifests → a snapshot of the running cluster plus the pending pods, with every input
//! problem reported as "file: object: field: what is wrong".

use std::borrow::Borrow;
use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;

use super::manifests::{Manifests, Source};
use super::podinfo::PodInfo;
use super::selector::Selector;
use super::snapshot::Snapshot;
use super::version::KubeVersion;

#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct WorldError(pub String);

/// The cluster state the command simulates on, and the pods waiting for a node.
pub struct World {
    pub snapshot: Snapshot,
    pub pending: Vec<PodInfo>,
    /// Things worth telling the user (ignored kinds, pods bound to unknown nodes, ...).
    pub warnings: Vec<String>,
    /// What the simulation assumed for valid but incomplete input (a node without
    /// allocatable), in input order.
    pub notes: Vec<String>,
}

pub fn build(m: &Manifests, version: KubeVersion) -> Result<World, WorldError> {
    build_with_pods(m, m.pods.iter().map(|(p, s)| (p, s)), version)
}

/// [`build`] with the pods given apart from `m` (whose own pods are not read), each compiled
/// as it comes: a caller holding them encoded decodes one at a time instead of all at once.
pub fn build_with_pods<P: Borrow<Pod>, S: Borrow<Source>>(
    m: &Manifests,
    pods: impl IntoIterator<Item = (P, S)>,
    version: KubeVersion,
) -> Result<World, WorldError> {
    let mut warnings = Vec::new();
    let mut node_files: HashMap<String, &str> = HashMap::new();
    for (n, src) in &m.nodes {
        let name = n.metadata.name.clone().unwrap_or_default();
        if let Some(prev) = node_files.insert(name.clone(), &src.file) {
            return Err(WorldError(format!(
                "{}: Node {name}: metadata.name: two Nodes have this name (the other is in {prev})",
                src.file
            )));
        }
    }
    let nodes: Vec<_> = m.nodes.iter().map(|(n, _)| n.clone()).collect();
    let mut snap = Snapshot::build(&nodes, &[], version.pod_level_resources()).map_err(|e| {
        let name = e.object.trim_start_matches("Node ");
        let file = node_files.get(name).copied().unwrap_or("<input>");
        WorldError(format!("{file}: {e}"))
    })?;
    let notes = nodes
        .iter()
        .filter_map(|n| snap.node(n.metadata.name.as_deref()?)?.allocatable_note())
        .collect();

    for ns in &m.namespaces {
        if let (Some(name), Some(labels)) = (&ns.metadata.name, &ns.metadata.labels) {
            snap.set_namespace_labels(name, labels);
        }
    }
    for s in &m.services {
        let ns = s
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        if let Some(sel) = s.spec.as_ref().and_then(|sp| sp.selector.clone()) {
            snap.services.push((ns, sel));
        }
    }
    if m.storage {
        snap.volumes = Some(std::sync::Arc::new(
            super::plugins::volume_binding::Volumes::new(
                m.claims.clone(),
                m.volumes.clone(),
                m.storage_classes.clone(),
            ),
        ));
    }
    let mut add_ctrl = |kind: &str,
                        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
                        sel: Selector| {
        let ns = meta.namespace.clone().unwrap_or_else(|| "default".into());
        let name = meta.name.clone().unwrap_or_default();
        snap.controllers.insert((ns, kind.to_string(), name), sel);
    };
    for rs in &m.replica_sets {
        let sel = Selector::from_label_selector(rs.spec.as_ref().map(|s| &s.selector));
        add_ctrl("ReplicaSet", &rs.metadata, sel);
    }
    for ss in &m.stateful_sets {
        let sel = Selector::from_label_selector(ss.spec.as_ref().map(|s| &s.selector));
        add_ctrl("StatefulSet", &ss.metadata, sel);
    }
    for rc in &m.replication_controllers {
        let sel = rc
            .spec
            .as_ref()
            .and_then(|s| s.selector.clone())
            .unwrap_or_default();
        add_ctrl(
            "ReplicationController",
            &rc.metadata,
            Selector::from_labels(&sel),
        );
    }

    let mut pod_files: HashMap<String, String> = HashMap::new();
    let mut pending = Vec::new();
    for (p, src) in pods {
        let (p, src) = (p.borrow(), src.borrow());
        let ns = p
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let key = format!("{ns}/{}", p.metadata.name.as_deref().unwrap_or(""));
        if let Some(prev) = pod_files.insert(key.clone(), src.file.clone()) {
            return Err(WorldError(format!(
                "{}: Pod {key}: metadata.name: two Pods have this namespace/name (the other is in {prev})",
                src.file
            )));
        }
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) {
            continue;
        }
        let info = snap
            .pod_info(p)
            .map_err(|e| WorldError(format!("{}: {e}", src.file)))?;
        match &info.node_name {
            Some(node) => match snap.node_index.get(node).copied() {
                Some(i) => {
                    snap.add_pod(info, i);
                }
                None => warnings.push(format!(
                    "{}: Pod {key} is bound to node {node:?}, which is not in the input; ignored",
                    src.file
                )),
            },
            None => pending.push(info),
        }
    }
    for (kind, n) in &m.ignored {
        warnings.push(format!("ignored {n} object(s) of kind {kind}"));
    }
    Ok(World {
        snapshot: snap,
        pending,
        warnings,
        notes,
    })
}

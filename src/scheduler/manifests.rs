//! Kubernetes manifests (text) → the objects the simulation uses. Pure: the caller reads the
//! files. Accepts single objects, multi-document YAML, `kind: List` (as `kubectl get -o yaml`
//! writes it) and JSON. Nodes and Pods are used; Services, ReplicaSets, StatefulSets,
//! ReplicationControllers and Namespaces feed PodTopologySpread's defaults and namespace
//! selectors; every other kind is counted and ignored.

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::storage::v1::StorageClass;
use serde::Deserialize;
use serde_json::Value;

/// Where an object came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub file: String,
    /// 1-based document number within the file.
    pub document: usize,
}

#[derive(Debug, Default, Clone)]
pub struct Manifests {
    pub nodes: Vec<(Node, Source)>,
    pub pods: Vec<(Pod, Source)>,
    pub services: Vec<Service>,
    pub replica_sets: Vec<ReplicaSet>,
    pub stateful_sets: Vec<StatefulSet>,
    pub replication_controllers: Vec<ReplicationController>,
    pub namespaces: Vec<Namespace>,
    /// PersistentVolumeClaims, PersistentVolumes and StorageClasses; `storage` says the input
    /// holds the cluster's (a live cluster listed them, or a file gave one), so VolumeBinding
    /// judges with them instead of passing every node.
    pub claims: Vec<PersistentVolumeClaim>,
    pub volumes: Vec<PersistentVolume>,
    pub storage_classes: Vec<StorageClass>,
    pub storage: bool,
    /// Kinds present but not used, with counts.
    pub ignored: Vec<(String, usize)>,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ManifestError {
    pub file: String,
    pub message: String,
}

fn typed<T: for<'de> Deserialize<'de>>(
    v: Value,
    src: &Source,
    what: &str,
) -> Result<T, ManifestError> {
    serde_json::from_value(v).map_err(|e| ManifestError {
        file: src.file.clone(),
        message: format!("document {}: {what}: {e}", src.document),
    })
}

impl Manifests {
    /// Adds every object of one file's text.
    pub fn add_text(&mut self, file: &str, text: &str) -> Result<(), ManifestError> {
        let bad = |message: String| ManifestError {
            file: file.to_string(),
            message,
        };
        let mut docs = Vec::new();
        for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
            let v = serde_yaml::Value::deserialize(de)
                .map_err(|e| bad(format!("not valid YAML or JSON (document {}): {e}", i + 1)))?;
            docs.push(v);
        }
        for (i, doc) in docs.into_iter().enumerate() {
            let src = Source {
                file: file.to_string(),
                document: i + 1,
            };
            if doc.is_null() {
                continue;
            }
            let v: Value =
                serde_json::to_value(&doc).map_err(|e| bad(format!("document {}: {e}", i + 1)))?;
            self.add_value(v, &src)?;
        }
        Ok(())
    }

    fn add_value(&mut self, v: Value, src: &Source) -> Result<(), ManifestError> {
        let bad = |message: String| ManifestError {
            file: src.file.clone(),
            message: format!("document {}: {message}", src.document),
        };
        if !v.is_object() {
            return Err(bad(
                "expected a Kubernetes object (a mapping with kind)".into()
            ));
        }
        let kind = v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let name = v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let what = format!("{kind} {name:?}");
        match kind.as_str() {
            "List"
            | "NodeList"
            | "PodList"
            | "PersistentVolumeClaimList"
            | "PersistentVolumeList"
            | "StorageClassList" => {
                let items = v
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for item in items {
                    let mut item = item;
                    // `kubectl get nodes -o yaml` lists omit kind on items of typed lists.
                    if item.get("kind").is_none() && kind != "List" {
                        item["kind"] = Value::String(kind.trim_end_matches("List").to_string());
                    }
                    self.add_value(item, src)?;
                }
            }
            "Node" => {
                if name.is_empty() {
                    return Err(bad("Node without metadata.name".into()));
                }
                let n: Node = typed(v, src, &what)?;
                self.nodes.push((n, src.clone()));
            }
            "Pod" => {
                if name.is_empty() {
                    return Err(bad("Pod without metadata.name".into()));
                }
                let p: Pod = typed(v, src, &what)?;
                self.pods.push((p, src.clone()));
            }
            "Service" => self.services.push(typed(v, src, &what)?),
            "ReplicaSet" => self.replica_sets.push(typed(v, src, &what)?),
            "StatefulSet" => self.stateful_sets.push(typed(v, src, &what)?),
            "ReplicationController" => self.replication_controllers.push(typed(v, src, &what)?),
            "Namespace" => self.namespaces.push(typed(v, src, &what)?),
            "PersistentVolumeClaim" => {
                self.claims.push(typed(v, src, &what)?);
                self.storage = true;
            }
            "PersistentVolume" => {
                self.volumes.push(typed(v, src, &what)?);
                self.storage = true;
            }
            "StorageClass" => {
                self.storage_classes.push(typed(v, src, &what)?);
                self.storage = true;
            }
            "" => return Err(bad("object without kind".into())),
            other => match self.ignored.iter_mut().find(|(k, _)| k == other) {
                Some((_, c)) => *c += 1,
                None => self.ignored.push((other.to_string(), 1)),
            },
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_doc_list_and_json() {
        let mut m = Manifests::default();
        m.add_text("a.yaml", "kind: Node\nmetadata: {name: n1}\n---\n---\napiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n")
            .unwrap();
        m.add_text(
            "b.json",
            r#"{"kind":"NodeList","items":[{"metadata":{"name":"n2"}}]}"#,
        )
        .unwrap();
        m.add_text("c.yaml", "kind: ConfigMap\nmetadata: {name: x}\n")
            .unwrap();
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(m.pods.len(), 1);
        assert_eq!(m.ignored, vec![("ConfigMap".to_string(), 1)]);
        assert!(
            !m.storage,
            "no storage object given: VolumeBinding is not judged"
        );
        m.add_text("e.yaml", "kind: PersistentVolumeClaimList\nitems:\n- metadata: {name: data, namespace: default}\n  spec: {accessModes: [ReadWriteOnce]}\n")
            .unwrap();
        assert!(m.storage && m.claims.len() == 1);
        let e = m.add_text("d.yaml", "kind: Node\n  : : [").unwrap_err();
        assert!(e.to_string().starts_with("d.yaml: not valid YAML"), "{e}");
    }
}

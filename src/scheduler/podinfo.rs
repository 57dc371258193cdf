//! `PodInfo`: a pod parsed once into what the plugins read — requests, ports, tolerations,
//! compiled node/pod affinity and spread constraints — so no cycle re-reads the API object.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodAffinityTerm, Toleration};

use super::requests::{FieldError, PodRequests, pod_requests};
use super::selector::{Labels, NodeSelectorTerms, NodeTerm, Selector};

/// A host port a pod wants or holds: (hostIP, protocol, port), already sanitized
/// (empty IP → 0.0.0.0, empty protocol → TCP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub ip: String,
    pub protocol: String,
    pub port: i32,
}

/// Which namespaces an affinity term looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AffinityTerm {
    pub selector: Selector,
    pub namespaces: Vec<String>,
    pub namespace_selector: Selector,
    pub topology_key: String,
}

impl AffinityTerm {
    fn compile(t: &PodAffinityTerm, owner: &Pod, owner_ns: &str) -> AffinityTerm {
        let mut selector = Selector::from_label_selector(t.label_selector.as_ref());
        let own_labels = owner.metadata.labels.clone().unwrap_or_default();
        // matchLabelKeys / mismatchLabelKeys merge the pod's own values into the selector (as
        // the API server does since v1.31); only when a selector is present.
        if t.label_selector.is_some() {
            for k in t.match_label_keys.iter().flatten() {
                if let Some(v) = own_labels.get(k) {
                    selector.add_label_key(k, v, false);
                }
            }
            for k in t.mismatch_label_keys.iter().flatten() {
                if let Some(v) = own_labels.get(k) {
                    selector.add_label_key(k, v, true);
                }
            }
        }
        let mut namespaces = t.namespaces.clone().unwrap_or_default();
        let namespace_selector = Selector::from_label_selector(t.namespace_selector.as_ref());
        if namespaces.is_empty() && t.namespace_selector.is_none() {
            namespaces.push(owner_ns.to_string());
        }
        AffinityTerm {
            selector,
            namespaces,
            namespace_selector,
            topology_key: t.topology_key.clone(),
        }
    }

    /// Whether `pod` is one of the pods this term selects.
    pub fn matches(&self, pod: &PodInfo) -> bool {
        (self.namespaces.contains(&pod.namespace)
            || self.namespace_selector.matches(&pod.namespace_labels))
            && self.selector.matches(&pod.labels)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpreadConstraint {
    pub max_skew: i64,
    pub topology_key: String,
    pub do_not_schedule: bool,
    pub selector: Selector,
    pub min_domains: Option<i64>,
    /// nodeAffinityPolicy Honor (default) / Ignore.
    pub honor_node_affinity: bool,
    /// nodeTaintsPolicy Honor / Ignore (default).
    pub honor_node_taints: bool,
}

/// The PersistentVolumeClaims a pod's volumes use (see [`PodInfo::claims`]).
pub fn pod_claims(pod: &Pod) -> Vec<(String, bool)> {
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    pod.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| match (&v.persistent_volume_claim, &v.ephemeral) {
            (Some(c), _) => Some((c.claim_name.clone(), false)),
            (None, Some(_)) => Some((format!("{pod_name}-{}", v.name), true)),
            (None, None) => None,
        })
        .collect()
}

/// Everything the plugins need about one pod.
#[derive(Debug, Clone)]
pub struct PodInfo {
    pub namespace: String,
    pub name: String,
    pub labels: Labels,
    pub namespace_labels: Arc<Labels>,
    pub priority: i32,
    /// `spec.schedulerName` (default "default-scheduler"): picks the profile.
    pub scheduler_name: String,
    pub preemption_never: bool,
    /// `status.nominatedNodeName`: where an earlier preemption made room for this pod.
    pub nominated_node_name: Option<String>,
    pub node_name: Option<String>,
    pub requests: PodRequests,
    pub host_ports: Vec<HostPort>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: Labels,
    pub required_node_affinity: Option<NodeSelectorTerms>,
    pub preferred_node_affinity: Vec<(i64, NodeTerm)>,
    pub required_affinity: Vec<AffinityTerm>,
    pub required_anti_affinity: Vec<AffinityTerm>,
    pub preferred_affinity: Vec<(i64, AffinityTerm)>,
    pub preferred_anti_affinity: Vec<(i64, AffinityTerm)>,
    pub spread_constraints: Vec<SpreadConstraint>,
    /// Image references of init then app containers, normalized (":latest" added).
    pub images: Vec<String>,
    /// Volumes a volume plugin would judge (PVCs, ephemeral, in-tree disks), by name.
    pub judged_volumes: Vec<String>,
    /// The PersistentVolumeClaims the pod's volumes use, by name, in volume order: a
    /// `persistentVolumeClaim`'s claimName, or a generic ephemeral volume's `<pod>-<volume>`
    /// (true: ephemeral).
    pub claims: Vec<(String, bool)>,
    pub has_resource_claims: bool,
    pub scheduling_gated: bool,
    /// `metadata.deletionTimestamp` set: still on the node, but not counted for spreading.
    pub terminating: bool,
    pub owner: Option<(String, String)>,
    /// Creation time in nanoseconds since the epoch (queue order).
    pub creation_timestamp: Option<i128>,
}

impl PodInfo {
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    pub fn has_affinity(&self) -> bool {
        !(self.required_affinity.is_empty()
            && self.required_anti_affinity.is_empty()
            && self.preferred_affinity.is_empty()
            && self.preferred_anti_affinity.is_empty())
    }

    /// Compiles a pod. `pod_level_resources` follows the modelled version.
    pub fn from_pod(
        pod: &Pod,
        namespace_labels: Arc<Labels>,
        pod_level_resources: bool,
    ) -> Result<PodInfo, FieldError> {
        let meta = &pod.metadata;
        let namespace = meta.namespace.clone().unwrap_or_else(|| "default".into());
        let name = meta.name.clone().unwrap_or_default();
        let requests = pod_requests(pod, pod_level_resources)?;
        let empty = k8s_openapi::api::core::v1::PodSpec::default();
        let spec = pod.spec.as_ref().unwrap_or(&empty);

        let mut host_ports = Vec::new();
        let sidecars = spec
            .init_containers
            .iter()
            .flatten()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"));
        for c in spec.containers.iter().chain(sidecars) {
            for p in c.ports.iter().flatten() {
                let port = p.host_port.unwrap_or(0);
                if port <= 0 {
                    continue;
                }
                host_ports.push(HostPort {
                    ip: p
                        .host_ip
                        .clone()
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| "0.0.0.0".into()),
                    protocol: p
                        .protocol
                        .clone()
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| "TCP".into()),
                    port,
                });
            }
        }

        let affinity = spec.affinity.clone().unwrap_or_default();
        let na = affinity.node_affinity.unwrap_or_default();
        let required_node_affinity =
            na.required_during_scheduling_ignored_during_execution
                .map(|r| NodeSelectorTerms {
                    terms: r
                        .node_selector_terms
                        .iter()
                        .map(NodeTerm::compile)
                        .collect(),
                });
        let preferred_node_affinity = na
            .preferred_during_scheduling_ignored_during_execution
            .unwrap_or_default()
            .iter()
            .map(|p| (i64::from(p.weight), NodeTerm::compile(&p.preference)))
            .collect();
        let pa = affinity.pod_affinity.unwrap_or_default();
        let paa = affinity.pod_anti_affinity.unwrap_or_default();
        let terms = |v: Option<Vec<PodAffinityTerm>>| -> Vec<AffinityTerm> {
            v.unwrap_or_default()
                .iter()
                .map(|t| AffinityTerm::compile(t, pod, &namespace))
                .collect()
        };
        let weighted = |v: Option<Vec<k8s_openapi::api::core::v1::WeightedPodAffinityTerm>>| {
            v.unwrap_or_default()
                .iter()
                .map(|w| {
                    (
                        i64::from(w.weight),
                        AffinityTerm::compile(&w.pod_affinity_term, pod, &namespace),
                    )
                })
                .collect::<Vec<_>>()
        };

        let labels = meta.labels.clone().unwrap_or_default();
        let spread_constraints = spec
            .topology_spread_constraints
            .iter()
            .flatten()
            .map(|c| {
                let mut selector = Selector::from_label_selector(c.label_selector.as_ref());
                if c.label_selector.is_some() {
                    for k in c.match_label_keys.iter().flatten() {
                        if let Some(v) = labels.get(k) {
                            selector.add_label_key(k, v, false);
                        }
                    }
                }
                SpreadConstraint {
                    max_skew: i64::from(c.max_skew),
                    topology_key: c.topology_key.clone(),
                    do_not_schedule: c.when_unsatisfiable == "DoNotSchedule",
                    selector,
                    min_domains: c.min_domains.map(i64::from),
                    honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
                    honor_node_taints: c.node_taints_policy.as_deref() == Some("Honor"),
                }
            })
            .collect();

        let images = spec
            .init_containers
            .iter()
            .flatten()
            .chain(spec.containers.iter())
            .map(|c| normalized_image_name(c.image.as_deref().unwrap_or("")))
            .collect();

        let claims = pod_claims(pod);
        let judged_volumes = spec
            .volumes
            .iter()
            .flatten()
            .filter(|v| {
                v.persistent_volume_claim.is_some()
                    || v.ephemeral.is_some()
                    || v.gce_persistent_disk.is_some()
                    || v.aws_elastic_block_store.is_some()
                    || v.azure_disk.is_some()
                    || v.iscsi.is_some()
                    || v.rbd.is_some()
                    || v.csi.is_some()
                    || v.cinder.is_some()
            })
            .map(|v| v.name.clone())
            .collect();

        let owner = meta
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .map(|o| (o.kind.clone(), o.name.clone()));

        Ok(PodInfo {
            namespace_labels,
            priority: spec.priority.unwrap_or(0),
            scheduler_name: spec
                .scheduler_name
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| super::DEFAULT_SCHEDULER.into()),
            preemption_never: spec.preemption_policy.as_deref() == Some("Never"),
            nominated_node_name: pod
                .status
                .as_ref()
                .and_then(|s| s.nominated_node_name.clone())
                .filter(|n| !n.is_empty()),
            node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
            requests,
            host_ports,
            tolerations: spec.tolerations.clone().unwrap_or_default(),
            node_selector: spec.node_selector.clone().unwrap_or_default(),
            required_node_affinity,
            preferred_node_affinity,
            required_affinity: terms(pa.required_during_scheduling_ignored_during_execution),
            required_anti_affinity: terms(paa.required_during_scheduling_ignored_during_execution),
            preferred_affinity: weighted(pa.preferred_during_scheduling_ignored_during_execution),
            preferred_anti_affinity: weighted(
                paa.preferred_during_scheduling_ignored_during_execution,
            ),
            spread_constraints,
            images,
            judged_volumes,
            claims,
            has_resource_claims: spec.resource_claims.as_ref().is_some_and(|c| !c.is_empty()),
            terminating: meta.deletion_timestamp.is_some(),
            scheduling_gated: spec
                .scheduling_gates
                .as_ref()
                .is_some_and(|g| !g.is_empty()),
            owner,
            creation_timestamp: meta
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_nanosecond()),
            labels,
            namespace,
            name,
        })
    }
}

/// ImageLocality's normalization: a reference without a tag gets ":latest". A tag is a ":"
/// after the last "/"; digests ("@sha256:...") contain ":" and are kept as they are.
pub fn normalized_image_name(name: &str) -> String {
    let last_colon = name.rfind(':');
    let last_slash = name.rfind('/');
    match (last_colon, last_slash) {
        (None, _) => format!("{name}:latest"),
        (Some(c), Some(s)) if c < s => format!("{name}:latest"),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::normalized_image_name as n;

    #[test]
    fn image_names_get_latest() {
        assert_eq!(n("nginx"), "nginx:latest");
        assert_eq!(n("nginx:1.25"), "nginx:1.25");
        assert_eq!(n("localhost:5000/app"), "localhost:5000/app:latest");
        assert_eq!(n("gcr.io/x/y@sha256:abc"), "gcr.io/x/y@sha256:abc");
    }
}

//! VolumeBinding (upstream `pkg/scheduler/framework/plugins/volumebinding`), when the caller
//! gives the cluster's claims, volumes and classes ([`Volumes`]; the embedded cluster does).
//! PreFilter: every claim the pod uses must exist, not be Lost or being deleted, and be bound
//! unless its class waits for the first consumer. Filter, per node: a bound claim's volume
//! must exist and its node affinity admit the node; an unbound WaitForFirstConsumer claim needs
//! an Available volume that fits there, or a class whose provisioner can make one. Without
//! [`Volumes`] (manifests that carry none) the plugin is not simulated, as `volumes.rs` says.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;

use crate::scheduler::framework::{Code, CycleContext, FilterPlugin, PreFilterOutcome, Status};
use crate::scheduler::plugins::volumes::VOLUME_BINDING;
use crate::scheduler::quantity::Quantity;
use crate::scheduler::selector::{Labels, NodeTerm, Selector};
use crate::scheduler::snapshot::NodeInfo;

pub const ERR_REASON_NODE_CONFLICT: &str = "node(s) had volume node affinity conflict";
pub const ERR_REASON_BIND_CONFLICT: &str =
    "node(s) didn't find available persistent volumes to bind";
pub const ERR_REASON_PV_NOT_EXIST: &str =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
pub const UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
pub const WAIT_FOR_FIRST_CONSUMER: &str = "WaitForFirstConsumer";
pub const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// The claims, volumes and classes of the cluster, as the scheduler's informers hold them.
#[derive(Debug, Clone, Default)]
pub struct Volumes {
    claims: HashMap<(String, String), PersistentVolumeClaim>,
    /// In name order, so the same claims meet the same volumes every cycle.
    volumes: Vec<PersistentVolume>,
    classes: HashMap<String, StorageClass>,
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

fn annotation<'a>(
    meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    key: &str,
) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

impl Volumes {
    pub fn new(
        claims: Vec<PersistentVolumeClaim>,
        mut volumes: Vec<PersistentVolume>,
        classes: Vec<StorageClass>,
    ) -> Volumes {
        volumes.sort_by(|a, b| name_of(&a.metadata).cmp(name_of(&b.metadata)));
        Volumes {
            claims: claims
                .into_iter()
                .map(|c| {
                    let key = (
                        c.metadata.namespace.clone().unwrap_or_default(),
                        name_of(&c.metadata).to_string(),
                    );
                    (key, c)
                })
                .collect(),
            volumes,
            classes: classes
                .into_iter()
                .map(|c| (name_of(&c.metadata).to_string(), c))
                .collect(),
        }
    }

    pub fn claim(&self, ns: &str, name: &str) -> Option<&PersistentVolumeClaim> {
        self.claims.get(&(ns.to_string(), name.to_string()))
    }

    pub fn volume(&self, name: &str) -> Option<&PersistentVolume> {
        self.volumes
            .binary_search_by(|v| name_of(&v.metadata).cmp(name))
            .ok()
            .map(|i| &self.volumes[i])
    }

    pub fn volumes(&self) -> &[PersistentVolume] {
        &self.volumes
    }

    pub fn class(&self, name: &str) -> Option<&StorageClass> {
        self.classes.get(name)
    }

    /// `IsDelayBindingMode`: the claim's class exists and waits for the first consumer.
    pub fn delays_binding(&self, claim: &PersistentVolumeClaim) -> bool {
        self.class(claim_class(claim))
            .and_then(|c| c.volume_binding_mode.as_deref())
            == Some(WAIT_FOR_FIRST_CONSUMER)
    }
}

/// `GetPersistentVolumeClaimClass`: "" for none.
pub fn claim_class(c: &PersistentVolumeClaim) -> &str {
    c.spec
        .as_ref()
        .and_then(|s| s.storage_class_name.as_deref())
        .unwrap_or_default()
}

fn volume_name(c: &PersistentVolumeClaim) -> &str {
    c.spec
        .as_ref()
        .and_then(|s| s.volume_name.as_deref())
        .unwrap_or_default()
}

/// `isPVCFullyBound`: it names its volume and the controller finished the binding.
pub fn fully_bound(c: &PersistentVolumeClaim) -> bool {
    !volume_name(c).is_empty() && annotation(&c.metadata, ANN_BIND_COMPLETED).is_some()
}

fn storage(
    q: Option<
        &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >,
    >,
) -> i64 {
    q.and_then(|m| m.get("storage"))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .and_then(|q| q.value().ok())
        .unwrap_or(0)
}

fn pv_storage(pv: &PersistentVolume) -> i64 {
    storage(pv.spec.as_ref().and_then(|s| s.capacity.as_ref()))
}

fn claim_request(c: &PersistentVolumeClaim) -> i64 {
    storage(
        c.spec
            .as_ref()
            .and_then(|s| s.resources.as_ref())
            .and_then(|r| r.requests.as_ref()),
    )
}

/// Whether the volume's claimRef names this claim (any uid when the ref has none).
pub fn names_claim(pv: &PersistentVolume, c: &PersistentVolumeClaim) -> bool {
    let Some(r) = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else {
        return false;
    };
    r.namespace == c.metadata.namespace
        && r.name.as_deref() == c.metadata.name.as_deref()
        && r.uid
            .as_deref()
            .is_none_or(|u| u.is_empty() || Some(u) == c.metadata.uid.as_deref())
}

fn claim_ref_set(pv: &PersistentVolume) -> bool {
    pv.spec.as_ref().is_some_and(|s| s.claim_ref.is_some())
}

/// `CheckNodeAffinity`: a volume without required node affinity fits everywhere; terms are
/// matched against the node's labels only, as upstream builds a Node of labels alone.
pub fn node_affinity_fits(pv: &PersistentVolume, labels: &Labels) -> bool {
    let Some(required) = pv
        .spec
        .as_ref()
        .and_then(|s| s.node_affinity.as_ref())
        .and_then(|a| a.required.as_ref())
    else {
        return true;
    };
    required
        .node_selector_terms
        .iter()
        .any(|t| NodeTerm::compile(t).matches("", labels))
}

/// `checkVolumeSatisfyClaim` without node affinity: class, volume mode, access modes, size
/// and the claim's selector.
pub fn satisfies(pv: &PersistentVolume, c: &PersistentVolumeClaim) -> bool {
    let (Some(ps), Some(cs)) = (pv.spec.as_ref(), c.spec.as_ref()) else {
        return false;
    };
    let mode = |m: Option<&str>| m.unwrap_or("Filesystem").to_string();
    let offered = ps.access_modes.clone().unwrap_or_default();
    ps.storage_class_name.as_deref().unwrap_or_default() == claim_class(c)
        && mode(ps.volume_mode.as_deref()) == mode(cs.volume_mode.as_deref())
        && cs
            .access_modes
            .iter()
            .flatten()
            .all(|m| offered.contains(m))
        && pv_storage(pv) >= claim_request(c)
        && cs.selector.as_ref().is_none_or(|sel| {
            Selector::from_label_selector(Some(sel))
                .matches(pv.metadata.labels.as_ref().unwrap_or(&Labels::new()))
        })
}

/// `FindMatchingVolume`: a volume that already names the claim, else the smallest Available
/// one that satisfies it, names no claim, is not in `taken`, and `fits` (a node's affinity).
pub fn best_match<'a>(
    volumes: &'a [PersistentVolume],
    c: &PersistentVolumeClaim,
    taken: &HashSet<&str>,
    fits: impl Fn(&PersistentVolume) -> bool,
) -> Option<&'a PersistentVolume> {
    let live = || {
        volumes
            .iter()
            .filter(|v| v.metadata.deletion_timestamp.is_none())
            .filter(|v| !taken.contains(name_of(&v.metadata)))
    };
    if let Some(pre) = live().find(|v| names_claim(v, c)) {
        return fits(pre).then_some(pre);
    }
    live()
        .filter(|v| !claim_ref_set(v))
        .filter(|v| v.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Available"))
        .filter(|v| satisfies(v, c) && fits(v))
        .min_by_key(|v| pv_storage(v))
}

/// What a pod's unbound WaitForFirstConsumer claims need on one node.
#[derive(Debug, Default)]
pub struct Plan {
    /// (volume, claim): the volume there that each claim is bound to.
    pub bind: Vec<(String, String)>,
    /// Claims no volume there satisfies, for a provisioner to fill.
    pub provision: Vec<String>,
}

/// The [`Plan`] of the pod's `claims` on `node`; None when the node cannot hold them.
pub fn plan_for_node(
    world: &Volumes,
    ns: &str,
    claims: &[(String, bool)],
    (node, labels): (&str, &Labels),
) -> Option<Plan> {
    let mut delayed: Vec<&PersistentVolumeClaim> = claims
        .iter()
        .filter_map(|(n, _)| world.claim(ns, n))
        .filter(|c| !fully_bound(c) && volume_name(c).is_empty() && world.delays_binding(c))
        .collect();
    // upstream's byPVCSize: the smallest claims choose first.
    delayed.sort_by_key(|c| claim_request(c));
    let mut bind = Vec::new();
    let mut provision = Vec::new();
    let mut taken = HashSet::new();
    for c in delayed {
        let name = name_of(&c.metadata).to_string();
        match annotation(&c.metadata, ANN_SELECTED_NODE) {
            Some(n) if n != node => return None,
            Some(_) => provision.push(name),
            None => match best_match(world.volumes(), c, &taken, |v| {
                node_affinity_fits(v, labels)
            }) {
                Some(pv) => {
                    taken.insert(name_of(&pv.metadata));
                    bind.push((name_of(&pv.metadata).to_string(), name));
                }
                None => provision.push(name),
            },
        }
    }
    for claim in &provision {
        let class = world
            .claim(ns, claim)
            .and_then(|c| world.class(claim_class(c)))?;
        if class.provisioner == NO_PROVISIONER {
            return None;
        }
        let allowed = class.allowed_topologies.as_deref().unwrap_or_default();
        let admits = allowed.is_empty()
            || allowed.iter().any(|t| {
                t.match_label_expressions
                    .iter()
                    .flatten()
                    .all(|e| labels.get(&e.key).is_some_and(|v| e.values.contains(v)))
            });
        if !admits {
            return None;
        }
    }
    Some(Plan { bind, provision })
}

/// The plugin; `claims` holds what PreFilter found for the Filter of each node.
#[derive(Default)]
pub struct VolumeBinding {
    bound: Vec<String>,
    has_delayed: bool,
}

impl FilterPlugin for VolumeBinding {
    fn name(&self) -> &'static str {
        VOLUME_BINDING
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        self.bound.clear();
        self.has_delayed = false;
        let Some(world) = cx.snapshot.volumes.as_deref() else {
            // Not simulated: the caller gave no claims or volumes to judge with.
            return if cx.pod.judged_volumes.is_empty() {
                PreFilterOutcome::skip()
            } else {
                PreFilterOutcome::success()
            };
        };
        if cx.pod.claims.is_empty() {
            return PreFilterOutcome::skip();
        }
        let ns = &cx.pod.namespace;
        let mut immediate = false;
        for (name, ephemeral) in &cx.pod.claims {
            let Some(c) = world.claim(ns, name) else {
                return PreFilterOutcome::status(Status::unresolvable(if *ephemeral {
                    format!(
                        "waiting for ephemeral volume controller to create the persistentvolumeclaim \"{name}\""
                    )
                } else {
                    format!("persistentvolumeclaim \"{name}\" not found")
                }));
            };
            if c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost") {
                return PreFilterOutcome::status(Status::unresolvable(format!(
                    "persistentvolumeclaim \"{name}\" bound to non-existent persistentvolume \"{}\"",
                    volume_name(c)
                )));
            }
            if c.metadata.deletion_timestamp.is_some() {
                return PreFilterOutcome::status(Status::unresolvable(format!(
                    "persistentvolumeclaim \"{name}\" is being deleted"
                )));
            }
            if fully_bound(c) {
                self.bound.push(volume_name(c).to_string());
            } else if world.delays_binding(c) && volume_name(c).is_empty() {
                self.has_delayed = true;
            } else {
                immediate = true;
            }
        }
        if immediate {
            return PreFilterOutcome::status(Status::unresolvable(UNBOUND_IMMEDIATE));
        }
        PreFilterOutcome::success()
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        let Some(world) = cx.snapshot.volumes.as_deref() else {
            return Status::success();
        };
        let mut node_conflict = false;
        let mut pv_missing = false;
        for name in &self.bound {
            match world.volume(name) {
                None => {
                    pv_missing = true;
                    break;
                }
                Some(pv) if !node_affinity_fits(pv, &node.labels) => {
                    node_conflict = true;
                    break;
                }
                Some(_) => {}
            }
        }
        let bind_conflict = self.has_delayed
            && !node_conflict
            && !pv_missing
            && plan_for_node(
                world,
                &cx.pod.namespace,
                &cx.pod.claims,
                (&node.name, &node.labels),
            )
            .is_none();
        let reasons: Vec<String> = [
            (node_conflict, ERR_REASON_NODE_CONFLICT),
            (bind_conflict, ERR_REASON_BIND_CONFLICT),
            (pv_missing, ERR_REASON_PV_NOT_EXIST),
        ]
        .iter()
        .filter(|(hit, _)| *hit)
        .map(|(_, r)| r.to_string())
        .collect();
        if reasons.is_empty() {
            Status::success()
        } else {
            Status {
                code: Code::UnschedulableAndUnresolvable,
                reasons,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::plugins::PluginArgs;
    use crate::scheduler::testutil::{node, pod, world};
    use crate::scheduler::version::NEWEST;
    use crate::scheduler::{Code, run_filter_plugin};
    use serde_json::{Value, json};

    fn claim(name: &str, class: Option<&str>, volume: Option<&str>, bound: bool) -> Value {
        let mut c = json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
        if let Some(class) = class {
            c["spec"]["storageClassName"] = json!(class);
        }
        if let Some(v) = volume {
            c["spec"]["volumeName"] = json!(v);
        }
        if bound {
            c["metadata"]["annotations"] = json!({ANN_BIND_COMPLETED: "yes"});
            c["status"] = json!({"phase": "Bound"});
        }
        c
    }

    fn pv(name: &str, class: &str, size: &str, on_node: Option<&str>) -> Value {
        let mut v = json!({"metadata": {"name": name}, "spec": {"capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"], "storageClassName": class, "hostPath": {"path": "/d"}},
            "status": {"phase": "Available"}});
        if let Some(n) = on_node {
            v["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [n]}]}]}});
        }
        v
    }

    fn class(name: &str, provisioner: &str, mode: &str) -> Value {
        json!({"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode})
    }

    /// PreFilter's status, then each node's (code, reasons), for a pod using `claims`.
    fn run(
        claims: &[&str],
        objects: (Vec<Value>, Vec<Value>, Vec<Value>),
    ) -> (Status, Vec<(Code, Vec<String>)>) {
        let nodes = [
            node("a", json!({"kubernetes.io/hostname": "a"}), json!({})),
            node("b", json!({"kubernetes.io/hostname": "b"}), json!({})),
        ];
        let volumes: Vec<Value> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        let p = pod("p", json!({}), json!({"volumes": volumes}));
        let (mut snap, info) = world(&nodes, &[], &p);
        fn typed<T: serde::de::DeserializeOwned>(v: Vec<Value>) -> Vec<T> {
            v.into_iter()
                .map(|o| serde_json::from_value(o).unwrap())
                .collect()
        }
        let (c, v, s) = objects;
        snap.volumes = Some(std::sync::Arc::new(Volumes::new(
            typed(c),
            typed(v),
            typed(s),
        )));
        let r = run_filter_plugin(&snap, &info, NEWEST, VOLUME_BINDING, &PluginArgs::default())
            .unwrap();
        (
            r.pre_filter,
            r.nodes
                .into_iter()
                .map(|(_, s)| (s.code, s.reasons))
                .collect(),
        )
    }

    #[test]
    fn claims_that_are_missing_or_unbound_stop_the_pod_before_any_node() {
        let (pre, _) = run(&["data"], (vec![], vec![], vec![]));
        assert_eq!(pre.reasons, [r#"persistentvolumeclaim "data" not found"#]);
        assert_eq!(pre.code, Code::UnschedulableAndUnresolvable);
        let (pre, _) = run(
            &["data"],
            (vec![claim("data", None, None, false)], vec![], vec![]),
        );
        assert_eq!(pre.reasons, [UNBOUND_IMMEDIATE]);
        // Named but not yet bound by the controller: still immediate.
        let (pre, _) = run(
            &["data"],
            (
                vec![claim("data", None, Some("pv1"), false)],
                vec![pv("pv1", "", "1Gi", None)],
                vec![],
            ),
        );
        assert_eq!(pre.reasons, [UNBOUND_IMMEDIATE]);
        let mut lost = claim("data", None, Some("gone"), true);
        lost["status"]["phase"] = json!("Lost");
        let (pre, _) = run(&["data"], (vec![lost], vec![], vec![]));
        assert_eq!(
            pre.reasons,
            [r#"persistentvolumeclaim "data" bound to non-existent persistentvolume "gone""#]
        );
    }

    #[test]
    fn a_bound_volume_holds_the_pod_to_its_nodes() {
        let (pre, nodes) = run(
            &["data"],
            (
                vec![claim("data", None, Some("pv1"), true)],
                vec![pv("pv1", "", "1Gi", Some("b"))],
                vec![],
            ),
        );
        assert!(pre.is_success());
        assert_eq!(
            nodes[0],
            (
                Code::UnschedulableAndUnresolvable,
                vec![ERR_REASON_NODE_CONFLICT.to_string()]
            )
        );
        assert_eq!(nodes[1].0, Code::Success);
        let (_, nodes) = run(
            &["data"],
            (
                vec![claim("data", None, Some("gone"), true)],
                vec![],
                vec![],
            ),
        );
        assert_eq!(nodes[0].1, [ERR_REASON_PV_NOT_EXIST]);
    }

    #[test]
    fn a_waiting_claim_needs_a_volume_on_the_node_or_a_provisioner() {
        let local = class("local", NO_PROVISIONER, WAIT_FOR_FIRST_CONSUMER);
        let c = claim("cache", Some("local"), None, false);
        // The only volume is on b, and nothing provisions: a cannot hold the pod.
        let (pre, nodes) = run(
            &["cache"],
            (
                vec![c.clone()],
                vec![pv("lv", "local", "2Gi", Some("b"))],
                vec![local.clone()],
            ),
        );
        assert!(pre.is_success());
        assert_eq!(
            nodes[0],
            (
                Code::UnschedulableAndUnresolvable,
                vec![ERR_REASON_BIND_CONFLICT.to_string()]
            )
        );
        assert_eq!(nodes[1].0, Code::Success);
        // Too small, or of another class: no volume at all.
        let (_, nodes) = run(
            &["cache"],
            (
                vec![c.clone()],
                vec![
                    pv("lv", "local", "512Mi", Some("b")),
                    pv("other", "", "5Gi", None),
                ],
                vec![local],
            ),
        );
        assert!(
            nodes
                .iter()
                .all(|(code, _)| *code == Code::UnschedulableAndUnresolvable)
        );
        // A provisioner can make one anywhere.
        let (_, nodes) = run(
            &["cache"],
            (
                vec![claim("cache", Some("csi"), None, false)],
                vec![],
                vec![class("csi", "csi.example.com", WAIT_FOR_FIRST_CONSUMER)],
            ),
        );
        assert!(nodes.iter().all(|(code, _)| *code == Code::Success));
    }

    #[test]
    fn the_smallest_volume_that_satisfies_the_claim_is_chosen() {
        let world = Volumes::new(
            vec![],
            [
                pv("big", "", "10Gi", None),
                pv("small", "", "512Mi", None),
                pv("fit", "", "2Gi", None),
            ]
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect(),
            vec![],
        );
        let c: PersistentVolumeClaim =
            serde_json::from_value(claim("data", None, None, false)).unwrap();
        let got = best_match(world.volumes(), &c, &HashSet::new(), |_| true);
        assert_eq!(got.and_then(|v| v.metadata.name.as_deref()), Some("fit"));
        let taken = HashSet::from(["fit"]);
        let got = best_match(world.volumes(), &c, &taken, |_| true);
        assert_eq!(got.and_then(|v| v.metadata.name.as_deref()), Some("big"));
    }
}

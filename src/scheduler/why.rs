//! "Why did (or would) the pod land there?": what a simulation models, and — for a pod the real
//! kube-scheduler already bound — the simulation's choice next to the real one with the reasons
//! they can differ. Pure: the caller lists the cluster and runs the cycle.

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::manifests::Manifests;
use super::profile::Profile;
use super::trace::PodTrace;
use super::version::KubeVersion;

/// Plugins of the default profile that run but judge nothing (kexplore lists no volumes,
/// storage classes or resource slices): they pass every node.
pub use super::plugins::volumes::NOT_SIMULATED;

/// The scheduler a simulation stands for, said plainly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Modelled {
    pub kube_version: String,
    pub profile: String,
    /// Filter plugins judged as upstream does.
    pub filters: Vec<String>,
    /// Score plugins with their weights.
    pub scores: Vec<(String, i64)>,
    /// In the profile but passing every node (see [`NOT_SIMULATED`]).
    pub not_simulated: Vec<String>,
}

/// `storage`: the input held the cluster's claims, volumes and classes, so VolumeBinding is
/// judged.
pub fn modelled(profile: &Profile, version: KubeVersion, storage: bool) -> Modelled {
    let judged = |n: &String| {
        (storage && n == super::plugins::volumes::VOLUME_BINDING)
            || !NOT_SIMULATED.contains(&n.as_str())
    };
    Modelled {
        kube_version: version.to_string(),
        profile: profile.scheduler_name.clone(),
        filters: profile
            .filters
            .iter()
            .filter(|n| judged(n))
            .cloned()
            .collect(),
        scores: profile.scores.clone(),
        not_simulated: profile
            .filters
            .iter()
            .filter(|n| !judged(n))
            .cloned()
            .collect(),
    }
}

/// What the caller knows of a bound pod beyond its trace.
#[derive(Debug, Clone, Default)]
pub struct BoundPod {
    /// `spec.nodeName`: where it really runs.
    pub node: String,
    /// `spec.schedulerName` (empty means default-scheduler).
    pub scheduler_name: String,
    /// Kinds of its ownerReferences (DaemonSet, ReplicaSet...).
    pub owner_kinds: Vec<String>,
    /// A mirror pod: the kubelet runs a static pod and reports it; no scheduler chose the node.
    pub mirror: bool,
}

/// The simulation's choice next to the real one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub pod: String,
    pub actual: String,
    pub simulated: Option<String>,
    pub agrees: bool,
    /// How the real node fared in the simulation (filtered out by X, scored N of best M...).
    pub actual_in_simulation: String,
    /// Why the two may differ, most specific first.
    pub reasons: Vec<String>,
}

/// One pod taken out of the input, as the scheduler saw it before placing it.
#[derive(Debug, Clone)]
pub struct Focused {
    /// Unbound, without status: the pod as it waited in the queue.
    pub pod: Pod,
    /// Set when the real scheduler (or someone) had already bound it.
    pub bound: Option<BoundPod>,
}

/// Removes `ns/name` from `m` (so a bound pod's own requests do not weigh on its node) and
/// returns it as it was before scheduling; None when there is no such pod.
impl BoundPod {
    /// The pod's binding facts, or None while it has no node.
    pub fn of(pod: &Pod) -> Option<BoundPod> {
        let spec = pod.spec.as_ref()?;
        Some(BoundPod {
            node: spec.node_name.clone().filter(|n| !n.is_empty())?,
            scheduler_name: spec.scheduler_name.clone().unwrap_or_default(),
            owner_kinds: pod
                .metadata
                .owner_references
                .iter()
                .flatten()
                .map(|o| o.kind.clone())
                .collect(),
            mirror: pod
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/config.mirror")),
        })
    }
}

pub fn split_out(m: &mut Manifests, key: &str) -> Option<Focused> {
    let key_of = |p: &Pod| {
        format!(
            "{}/{}",
            p.metadata.namespace.as_deref().unwrap_or("default"),
            p.metadata.name.as_deref().unwrap_or_default()
        )
    };
    let i = m.pods.iter().position(|(p, _)| key_of(p) == key)?;
    let (mut pod, _) = m.pods.remove(i);
    let bound = BoundPod::of(&pod);
    if let Some(s) = pod.spec.as_mut() {
        s.node_name = None;
    }
    pod.status = None;
    Some(Focused { pod, bound })
}

pub fn compare(trace: &PodTrace, bound: &BoundPod, seed: u64) -> Comparison {
    let actual = bound.node.as_str();
    let agrees = trace.selected.as_deref() == Some(actual);
    let mut reasons = Vec::new();
    if bound.mirror {
        reasons.push(format!(
            "a static pod: the kubelet on {actual} runs it from a file and no scheduler chose the node"
        ));
    }
    if bound.owner_kinds.iter().any(|k| k == "DaemonSet") {
        reasons.push(
            "a DaemonSet pod: its controller pins it to one node with node affinity on metadata.name"
                .into(),
        );
    }
    let scheduler = if bound.scheduler_name.is_empty() {
        super::DEFAULT_SCHEDULER
    } else {
        bound.scheduler_name.as_str()
    };
    if scheduler != trace.profile {
        reasons.push(format!(
            "the pod asks for scheduler {scheduler:?}; the simulation runs profile {:?} (another profile or scheduler weighs nodes its own way)",
            trace.profile
        ));
    }
    let best = trace.score.iter().map(|s| s.total).max();
    let verdict = trace.filter.iter().find(|v| v.node == actual);
    let score = trace.score.iter().find(|s| s.node == actual);
    let actual_in_simulation = match (verdict, score) {
        (Some(v), _) if !v.passed => {
            let why = format!("{}: {}", v.plugin.unwrap_or("?"), v.reasons().join(", "));
            reasons.push(format!(
                "{actual} fails {why} now: the state changed since the pod was bound (other pods arrived, or labels, taints or allocatable changed), or no scheduler placed it (below)"
            ));
            format!("filtered out ({why})")
        }
        (Some(_), Some(s)) => {
            let best = best.unwrap_or(s.total);
            if !agrees && trace.tied.iter().any(|t| *t == actual) {
                reasons.push(format!(
                    "a tie: {} nodes share the best total {best}; kube-scheduler picks one of them at random (the simulation drew with seed {seed})",
                    trace.tied.len()
                ));
            } else if !agrees {
                reasons.push(format!(
                    "{actual} scores {} against {best} now, without the pod itself: the pods on each node may have changed since it was bound",
                    s.total
                ));
            }
            format!("feasible, scored {} (best {best})", s.total)
        }
        (Some(_), None) => "feasible, not scored".to_string(),
        (None, _) if trace.skipped_by_sampling.iter().any(|n| *n == actual) => {
            reasons.push(format!(
                "sampling: the cycle stopped after {} feasible nodes (percentageOfNodesToScore) and never evaluated {actual}; kube-scheduler starts each cycle where the last one stopped, so it sees other nodes",
                trace.num_feasible_nodes_to_find
            ));
            "not evaluated (sampling)".to_string()
        }
        (None, _) => {
            reasons.push(format!(
                "{actual} is not among the listed nodes (deleted since, or not visible to you)"
            ));
            "not in the listed nodes".to_string()
        }
    };
    if !agrees && !bound.mirror {
        reasons.push(
            "spec.nodeName may have been set by whoever created the pod, which bypasses the scheduler"
                .into(),
        );
    }
    if !agrees {
        reasons.push(format!(
            "plugins not simulated pass every node: {} (and any out-of-tree plugin or scheduler extender the cluster runs)",
            NOT_SIMULATED[..4].join(", ")
        ));
    }
    Comparison {
        pod: trace.pod.clone(),
        actual: actual.to_string(),
        simulated: trace.selected.clone(),
        agrees,
        actual_in_simulation,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::trace::{FilterVerdict, Name, NodeScore};
    use crate::scheduler::{Code, version};

    fn trace() -> PodTrace {
        let mut t = PodTrace::new("default/a".into(), "default-scheduler", "v1.33".into(), 3);
        t.filter = vec![
            FilterVerdict {
                node: Name::new("n1"),
                passed: false,
                plugin: Some("NodeResourcesFit"),
                reasons: Some(vec!["Insufficient cpu".into()]),
                code: Code::Unschedulable,
                pre_filter: false,
            },
            FilterVerdict {
                node: Name::new("n2"),
                passed: true,
                plugin: None,
                reasons: None,
                code: Code::Success,
                pre_filter: false,
            },
            FilterVerdict {
                node: Name::new("n3"),
                passed: true,
                plugin: None,
                reasons: None,
                code: Code::Success,
                pre_filter: false,
            },
        ];
        t.score = vec![
            NodeScore {
                node: Name::new("n2"),
                total: 100,
                plugins: vec![],
            },
            NodeScore {
                node: Name::new("n3"),
                total: 100,
                plugins: vec![],
            },
        ];
        t.tied = vec![Name::new("n2"), Name::new("n3")];
        t.selected = Some("n2".into());
        t
    }

    fn bound(node: &str) -> BoundPod {
        BoundPod {
            node: node.into(),
            ..Default::default()
        }
    }

    #[test]
    fn agreement_needs_no_excuse() {
        let c = compare(&trace(), &bound("n2"), 0);
        assert!(c.agrees);
        assert!(c.reasons.is_empty(), "{:?}", c.reasons);
    }

    #[test]
    fn a_tie_is_named_as_such() {
        let c = compare(&trace(), &bound("n3"), 7);
        assert!(!c.agrees);
        assert!(
            c.reasons[0].starts_with("a tie: 2 nodes"),
            "{:?}",
            c.reasons
        );
        assert!(c.reasons[0].contains("seed 7"));
    }

    #[test]
    fn a_node_that_fails_now_means_the_state_changed_or_no_scheduler_chose_it() {
        let c = compare(&trace(), &bound("n1"), 0);
        assert_eq!(
            c.actual_in_simulation,
            "filtered out (NodeResourcesFit: Insufficient cpu)"
        );
        assert!(
            c.reasons[0]
                .starts_with("n1 fails NodeResourcesFit: Insufficient cpu now: the state changed"),
            "{:?}",
            c.reasons
        );
        // Either may be why: a pod created with spec.nodeName never met the filter at all.
        assert!(c.reasons[0].ends_with("or no scheduler placed it (below)"));
        assert!(
            c.reasons
                .iter()
                .any(|r| r.starts_with("spec.nodeName may have been set"))
        );
    }

    #[test]
    fn other_schedulers_static_pods_and_unknown_nodes_are_said() {
        let mut b = bound("gone");
        b.scheduler_name = "my-scheduler".into();
        b.mirror = true;
        let c = compare(&trace(), &b, 0);
        let all = c.reasons.join("\n");
        assert!(all.contains("static pod"), "{all}");
        assert!(all.contains("\"my-scheduler\""), "{all}");
        assert!(all.contains("gone is not among the listed nodes"), "{all}");
    }

    #[test]
    fn the_default_profile_names_what_it_judges_and_what_it_does_not() {
        let m = modelled(
            &Profile::default_for(version::NEWEST),
            version::NEWEST,
            false,
        );
        assert!(m.filters.iter().any(|f| f == "NodeResourcesFit"));
        assert!(m.not_simulated.iter().any(|f| f == "VolumeBinding"));
        assert!(!m.filters.iter().any(|f| f == "VolumeBinding"));
        let with_storage = modelled(
            &Profile::default_for(version::NEWEST),
            version::NEWEST,
            true,
        );
        assert!(with_storage.filters.iter().any(|f| f == "VolumeBinding"));
        assert!(
            !with_storage
                .not_simulated
                .iter()
                .any(|f| f == "VolumeBinding")
        );
        assert!(
            m.scores
                .iter()
                .any(|(n, w)| n == "TaintToleration" && *w == 3)
        );
    }
}

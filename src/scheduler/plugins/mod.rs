//! One file per upstream plugin, under its upstream name, and the registry that builds a
//! cycle's plugin instances from names and arguments.

pub mod image_locality;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_name;
pub mod node_ports;
pub mod node_resources_balanced_allocation;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod pod_topology_spread;
pub mod resource_allocation;
pub mod taint_toleration;
pub mod volume_binding;
pub mod volumes;

use super::framework::{FilterPlugin, ScorePlugin};
use super::legacy;
use super::postfilter::DEFAULT_PREEMPTION;
use inter_pod_affinity::InterPodAffinityArgs;
use node_affinity::NodeAffinityArgs;
use node_resources_fit::FitArgs;
use pod_topology_spread::SpreadArgs;
use resource_allocation::ResourceSpec;

/// Plugin arguments (KubeSchedulerConfiguration `pluginConfig`), defaults as upstream's.
#[derive(Debug, Clone, Default)]
pub struct PluginArgs {
    pub fit: FitArgs,
    pub balanced: Option<Vec<ResourceSpec>>,
    pub spread: SpreadArgs,
    pub inter_pod: InterPodAffinityArgs,
    pub node_affinity: NodeAffinityArgs,
}

/// Which extension points a plugin implements (in the modelled default profile).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Points {
    pub pre_filter: bool,
    pub filter: bool,
    pub post_filter: bool,
    pub pre_score: bool,
    pub score: bool,
    /// Queue-side or bind-side only (PrioritySort, SchedulingGates, DefaultBinder, ...).
    pub other: bool,
}

const fn pts(pre_filter: bool, filter: bool, post_filter: bool, score: bool) -> Points {
    Points {
        pre_filter,
        filter,
        post_filter,
        pre_score: score,
        score,
        other: false,
    }
}

const OTHER: Points = Points {
    pre_filter: false,
    filter: false,
    post_filter: false,
    pre_score: false,
    score: false,
    other: true,
};

/// Plugins with no behaviour here beyond their name: the queue's and the binder.
pub const SCHEDULING_GATES: &str = "SchedulingGates";
pub const PRIORITY_SORT: &str = "PrioritySort";
pub const DEFAULT_BINDER: &str = "DefaultBinder";

/// Every in-tree plugin name a configuration may mention, with its extension points. Each
/// name is its plugin file's `NAME` (or the constant of the file that stands for it).
pub const REGISTRY: &[(&str, Points)] = &[
    (SCHEDULING_GATES, OTHER),
    (PRIORITY_SORT, OTHER),
    (node_unschedulable::NAME, pts(false, true, false, false)),
    (node_name::NAME, pts(false, true, false, false)),
    (taint_toleration::NAME, pts(false, true, false, true)),
    (node_affinity::NAME, pts(true, true, false, true)),
    (node_ports::NAME, pts(true, true, false, false)),
    (node_resources_fit::NAME, pts(true, true, false, true)),
    (volumes::VOLUME_RESTRICTIONS, pts(true, true, false, false)),
    (volumes::NODE_VOLUME_LIMITS, pts(true, true, false, false)),
    (volumes::EBS_LIMITS, pts(true, true, false, false)),
    (volumes::GCE_PD_LIMITS, pts(true, true, false, false)),
    (volumes::AZURE_DISK_LIMITS, pts(true, true, false, false)),
    (volumes::VOLUME_BINDING, pts(true, true, false, false)),
    (volumes::VOLUME_ZONE, pts(true, true, false, false)),
    (pod_topology_spread::NAME, pts(true, true, false, true)),
    (inter_pod_affinity::NAME, pts(true, true, false, true)),
    (volumes::DYNAMIC_RESOURCES, pts(true, true, true, false)),
    (DEFAULT_PREEMPTION, pts(false, false, true, false)),
    (
        node_resources_balanced_allocation::NAME,
        pts(false, false, false, true),
    ),
    (image_locality::NAME, pts(false, false, false, true)),
    (DEFAULT_BINDER, OTHER),
];

pub fn points(name: &str) -> Option<Points> {
    REGISTRY.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The label a narrow column or a one-line sum uses for a score plugin (each file's `SHORT`,
/// v1.13's priorities in `legacy`); any other name is its own label.
pub fn short(name: &str) -> &str {
    match name {
        taint_toleration::NAME => taint_toleration::SHORT,
        node_affinity::NAME => node_affinity::SHORT,
        node_resources_fit::NAME => node_resources_fit::SHORT,
        pod_topology_spread::NAME => pod_topology_spread::SHORT,
        inter_pod_affinity::NAME => inter_pod_affinity::SHORT,
        node_resources_balanced_allocation::NAME => node_resources_balanced_allocation::SHORT,
        image_locality::NAME => image_locality::SHORT,
        other => legacy::short(other).unwrap_or(other),
    }
}

/// A fresh Filter-side instance (PreFilter + Filter) of a plugin.
pub fn new_filter(name: &str, args: &PluginArgs) -> Option<Box<dyn FilterPlugin>> {
    Some(match name {
        node_unschedulable::NAME => Box::new(node_unschedulable::NodeUnschedulable),
        node_name::NAME => Box::new(node_name::NodeName),
        taint_toleration::NAME => Box::new(taint_toleration::TaintToleration),
        node_affinity::NAME => Box::new(node_affinity::NodeAffinity {
            args: args.node_affinity.clone(),
        }),
        node_ports::NAME => Box::new(node_ports::NodePorts),
        node_resources_fit::NAME => Box::new(node_resources_fit::NodeResourcesFit {
            args: args.fit.clone(),
        }),
        pod_topology_spread::NAME => Box::new(pod_topology_spread::PodTopologySpread::new(
            args.spread.clone(),
        )),
        inter_pod_affinity::NAME => Box::new(inter_pod_affinity::InterPodAffinity::default()),
        volumes::VOLUME_BINDING => Box::<volume_binding::VolumeBinding>::default(),
        n if volumes::VOLUME_PLUGINS.contains(&n) => {
            let name = volumes::VOLUME_PLUGINS.iter().find(|v| **v == n)?;
            Box::new(volumes::NotSimulated {
                name,
                claims: false,
            })
        }
        volumes::DYNAMIC_RESOURCES => Box::new(volumes::NotSimulated {
            name: volumes::DYNAMIC_RESOURCES,
            claims: true,
        }),
        _ => return None,
    })
}

/// A fresh Score-side instance (PreScore + Score + NormalizeScore) of a plugin.
pub fn new_score(name: &str, args: &PluginArgs) -> Option<Box<dyn ScorePlugin>> {
    Some(match name {
        taint_toleration::NAME => Box::<taint_toleration::TaintTolerationScore>::default(),
        node_affinity::NAME => Box::new(node_affinity::NodeAffinityScore {
            args: args.node_affinity.clone(),
        }),
        node_resources_fit::NAME => Box::new(node_resources_fit::NodeResourcesFitScore::new(
            args.fit.clone(),
        )),
        pod_topology_spread::NAME => Box::new(pod_topology_spread::PodTopologySpreadScore::new(
            args.spread.clone(),
        )),
        inter_pod_affinity::NAME => Box::new(inter_pod_affinity::InterPodAffinityScore::new(
            args.inter_pod.clone(),
        )),
        node_resources_balanced_allocation::NAME => Box::new(
            node_resources_balanced_allocation::BalancedAllocation::new(args.balanced.clone()),
        ),
        image_locality::NAME => Box::<image_locality::ImageLocality>::default(),
        _ => return None,
    })
}

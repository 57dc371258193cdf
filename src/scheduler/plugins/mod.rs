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
pub mod volumes;

use super::framework::{FilterPlugin, ScorePlugin};
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

/// Every in-tree plugin name a configuration may mention, with its extension points.
pub const REGISTRY: &[(&str, Points)] = &[
    ("SchedulingGates", OTHER),
    ("PrioritySort", OTHER),
    ("NodeUnschedulable", pts(false, true, false, false)),
    ("NodeName", pts(false, true, false, false)),
    ("TaintToleration", pts(false, true, false, true)),
    ("NodeAffinity", pts(true, true, false, true)),
    ("NodePorts", pts(true, true, false, false)),
    ("NodeResourcesFit", pts(true, true, false, true)),
    ("VolumeRestrictions", pts(true, true, false, false)),
    ("NodeVolumeLimits", pts(true, true, false, false)),
    ("EBSLimits", pts(true, true, false, false)),
    ("GCEPDLimits", pts(true, true, false, false)),
    ("AzureDiskLimits", pts(true, true, false, false)),
    ("VolumeBinding", pts(true, true, false, false)),
    ("VolumeZone", pts(true, true, false, false)),
    ("PodTopologySpread", pts(true, true, false, true)),
    ("InterPodAffinity", pts(true, true, false, true)),
    ("DynamicResources", pts(true, true, true, false)),
    ("DefaultPreemption", pts(false, false, true, false)),
    (
        "NodeResourcesBalancedAllocation",
        pts(false, false, false, true),
    ),
    ("ImageLocality", pts(false, false, false, true)),
    ("DefaultBinder", OTHER),
];

pub fn points(name: &str) -> Option<Points> {
    REGISTRY.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// A fresh Filter-side instance (PreFilter + Filter) of a plugin.
pub fn new_filter(name: &str, args: &PluginArgs) -> Option<Box<dyn FilterPlugin>> {
    Some(match name {
        "NodeUnschedulable" => Box::new(node_unschedulable::NodeUnschedulable),
        "NodeName" => Box::new(node_name::NodeName),
        "TaintToleration" => Box::new(taint_toleration::TaintToleration),
        "NodeAffinity" => Box::new(node_affinity::NodeAffinity {
            args: args.node_affinity.clone(),
        }),
        "NodePorts" => Box::new(node_ports::NodePorts),
        "NodeResourcesFit" => Box::new(node_resources_fit::NodeResourcesFit {
            args: args.fit.clone(),
        }),
        "PodTopologySpread" => Box::new(pod_topology_spread::PodTopologySpread::new(
            args.spread.clone(),
        )),
        "InterPodAffinity" => Box::new(inter_pod_affinity::InterPodAffinity::default()),
        "VolumeRestrictions" | "NodeVolumeLimits" | "EBSLimits" | "GCEPDLimits"
        | "AzureDiskLimits" | "VolumeBinding" | "VolumeZone" => {
            let name = REGISTRY.iter().find(|(n, _)| *n == name)?.0;
            Box::new(volumes::NotSimulated {
                name,
                claims: false,
            })
        }
        "DynamicResources" => Box::new(volumes::NotSimulated {
            name: "DynamicResources",
            claims: true,
        }),
        _ => return None,
    })
}

/// A fresh Score-side instance (PreScore + Score + NormalizeScore) of a plugin.
pub fn new_score(name: &str, args: &PluginArgs) -> Option<Box<dyn ScorePlugin>> {
    Some(match name {
        "TaintToleration" => Box::<taint_toleration::TaintTolerationScore>::default(),
        "NodeAffinity" => Box::new(node_affinity::NodeAffinityScore {
            args: args.node_affinity.clone(),
        }),
        "NodeResourcesFit" => Box::new(node_resources_fit::NodeResourcesFitScore::new(
            args.fit.clone(),
        )),
        "PodTopologySpread" => Box::new(pod_topology_spread::PodTopologySpreadScore::new(
            args.spread.clone(),
        )),
        "InterPodAffinity" => Box::new(inter_pod_affinity::InterPodAffinityScore::new(
            args.inter_pod.clone(),
        )),
        "NodeResourcesBalancedAllocation" => Box::new(
            node_resources_balanced_allocation::BalancedAllocation::new(args.balanced.clone()),
        ),
        "ImageLocality" => Box::<image_locality::ImageLocality>::default(),
        _ => return None,
    })
}

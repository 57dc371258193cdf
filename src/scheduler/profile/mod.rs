//! A scheduling profile: which plugins run at each extension point, in which order, with
//! which score weights and arguments. `Profile::default_for` is upstream's default profile for
//! the modelled version; `config` turns a KubeSchedulerConfiguration into profiles.

mod args;
pub mod config;

use super::plugins::{
    DEFAULT_BINDER, PRIORITY_SORT, PluginArgs, SCHEDULING_GATES, image_locality,
    inter_pod_affinity, node_affinity, node_name, node_ports, node_resources_balanced_allocation,
    node_resources_fit, node_unschedulable, pod_topology_spread, taint_toleration, volumes,
};
use super::postfilter::DEFAULT_PREEMPTION;
use super::version::KubeVersion;

#[derive(Debug, Clone)]
pub struct Profile {
    pub scheduler_name: String,
    /// PreFilter plugins, in order.
    pub pre_filters: Vec<String>,
    /// Filter plugins, in order.
    pub filters: Vec<String>,
    pub post_filters: Vec<String>,
    pub pre_scores: Vec<String>,
    /// Score plugins with their weights, in order.
    pub scores: Vec<(String, i64)>,
    /// `percentageOfNodesToScore` (profile's, else the global one); 0 or None = adaptive.
    pub percentage_of_nodes_to_score: Option<i64>,
    pub args: PluginArgs,
}

/// The default `multiPoint` list with weights, in upstream's order (spec §2.1).
pub fn default_multipoint(version: KubeVersion) -> Vec<(String, i64)> {
    let mut v: Vec<(&str, i64)> = vec![
        (SCHEDULING_GATES, 0),
        (PRIORITY_SORT, 0),
        (node_unschedulable::NAME, 0),
        (node_name::NAME, 0),
        (taint_toleration::NAME, 3),
        (node_affinity::NAME, 2),
        (node_ports::NAME, 0),
        (node_resources_fit::NAME, 1),
        (volumes::VOLUME_RESTRICTIONS, 0),
    ];
    if version.in_tree_volume_limits() {
        v.extend([(volumes::EBS_LIMITS, 0), (volumes::GCE_PD_LIMITS, 0)]);
    }
    v.push((volumes::NODE_VOLUME_LIMITS, 0));
    if version.in_tree_volume_limits() {
        v.push((volumes::AZURE_DISK_LIMITS, 0));
    }
    v.extend([
        (volumes::VOLUME_BINDING, 0),
        (volumes::VOLUME_ZONE, 0),
        (pod_topology_spread::NAME, 2),
        (inter_pod_affinity::NAME, 2),
    ]);
    if version.dynamic_resources_in_profile() {
        v.push((volumes::DYNAMIC_RESOURCES, 0));
    }
    v.extend([
        (DEFAULT_PREEMPTION, 0),
        (node_resources_balanced_allocation::NAME, 1),
        (image_locality::NAME, 1),
        (DEFAULT_BINDER, 0),
    ]);
    v.into_iter().map(|(n, w)| (n.to_string(), w)).collect()
}

impl Profile {
    /// The default profile ("default-scheduler") of `version`.
    pub fn default_for(version: KubeVersion) -> Profile {
        config::expand(
            crate::scheduler::DEFAULT_SCHEDULER,
            &default_multipoint(version),
            &config::PointSets::default(),
            None,
            PluginArgs::default(),
        )
        .expect("the built-in default profile only names registered plugins")
    }

    pub fn has_score_plugins(&self) -> bool {
        !self.scores.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::version::NEWEST;

    #[test]
    fn default_profile_order_and_weights() {
        let p = Profile::default_for(NEWEST);
        assert_eq!(
            p.filters,
            [
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration",
                "NodeAffinity",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
                "DynamicResources"
            ]
        );
        let total: i64 = p.scores.iter().map(|(_, w)| w * 100).sum();
        assert_eq!(total, 1200);
        assert_eq!(p.post_filters, ["DynamicResources", "DefaultPreemption"]);
    }
}

//! A scheduling profile: which plugins run at each extension point, in which order, with
//! which score weights and arguments. `Profile::default_for` is upstream's default profile for
//! the modelled version; `config` turns a KubeSchedulerConfiguration into profiles.

pub mod config;

use super::plugins::PluginArgs;
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
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
    ];
    if version.in_tree_volume_limits() {
        v.extend([("EBSLimits", 0), ("GCEPDLimits", 0)]);
    }
    v.push(("NodeVolumeLimits", 0));
    if version.in_tree_volume_limits() {
        v.push(("AzureDiskLimits", 0));
    }
    v.extend([
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
    ]);
    if version.dynamic_resources_in_profile() {
        v.push(("DynamicResources", 0));
    }
    v.extend([
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]);
    v.into_iter().map(|(n, w)| (n.to_string(), w)).collect()
}

impl Profile {
    /// The default profile ("default-scheduler") of `version`.
    pub fn default_for(version: KubeVersion) -> Profile {
        config::expand(
            "default-scheduler",
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

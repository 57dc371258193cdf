//! The volume filters (VolumeRestrictions, NodeVolumeLimits, VolumeZone, and the in-tree
//! EBS/GCEPD/AzureDisk limits of ≤ v1.30), DynamicResources, and VolumeBinding when the caller
//! has no claims or volumes to give (`volume_binding.rs` judges with them) are not simulated:
//! kexplore has no CSINodes, zones of volumes or ResourceSlices to judge with. They skip pods
//! that have nothing for them to judge — exactly as upstream does — and pass every node
//! otherwise, while the cycle records a "not simulated" note in the trace.

use crate::scheduler::framework::{CycleContext, FilterPlugin, PreFilterOutcome, Status};
use crate::scheduler::snapshot::NodeInfo;

pub const VOLUME_RESTRICTIONS: &str = "VolumeRestrictions";
pub const NODE_VOLUME_LIMITS: &str = "NodeVolumeLimits";
pub const VOLUME_BINDING: &str = "VolumeBinding";
pub const VOLUME_ZONE: &str = "VolumeZone";
pub const EBS_LIMITS: &str = "EBSLimits";
pub const GCE_PD_LIMITS: &str = "GCEPDLimits";
pub const AZURE_DISK_LIMITS: &str = "AzureDiskLimits";
pub const DYNAMIC_RESOURCES: &str = "DynamicResources";

/// The plugins that judge volumes, which kexplore does not list.
pub const VOLUME_PLUGINS: [&str; 7] = [
    VOLUME_RESTRICTIONS,
    NODE_VOLUME_LIMITS,
    VOLUME_BINDING,
    VOLUME_ZONE,
    EBS_LIMITS,
    GCE_PD_LIMITS,
    AZURE_DISK_LIMITS,
];

/// Every plugin of a profile that runs but judges nothing here: they pass every node.
pub const NOT_SIMULATED: [&str; 8] = [
    VOLUME_RESTRICTIONS,
    NODE_VOLUME_LIMITS,
    VOLUME_BINDING,
    VOLUME_ZONE,
    EBS_LIMITS,
    GCE_PD_LIMITS,
    AZURE_DISK_LIMITS,
    DYNAMIC_RESOURCES,
];

pub struct NotSimulated {
    pub name: &'static str,
    /// True for DynamicResources (judges resource claims), false for the volume plugins.
    pub claims: bool,
}

impl NotSimulated {
    /// Whether this plugin would have something to judge for the pod.
    pub fn applies(&self, cx: &CycleContext) -> bool {
        if self.claims {
            cx.pod.has_resource_claims
        } else {
            !cx.pod.judged_volumes.is_empty()
        }
    }
}

impl FilterPlugin for NotSimulated {
    fn name(&self) -> &'static str {
        self.name
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        if self.applies(cx) {
            PreFilterOutcome::success()
        } else {
            PreFilterOutcome::skip()
        }
    }

    fn filter(&self, _cx: &CycleContext, _node: &NodeInfo) -> Status {
        Status::success()
    }
}

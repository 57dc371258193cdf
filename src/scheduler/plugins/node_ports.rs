//! NodePorts: a wanted (hostIP, protocol, hostPort) conflicts with one in use on the node when
//! protocol and port are equal and the IPs are equal or either is 0.0.0.0.

use crate::scheduler::framework::{CycleContext, FilterPlugin, PreFilterOutcome, Status};
use crate::scheduler::podinfo::HostPort;
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodePorts";
pub const REASON: &str = "node(s) didn't have free ports for the requested pod ports";

pub struct NodePorts;

/// `HostPortInfo.CheckConflict`.
pub fn conflicts(used: &[HostPort], want: &HostPort) -> bool {
    used.iter().any(|u| {
        u.protocol == want.protocol
            && u.port == want.port
            && (u.ip == want.ip || u.ip == "0.0.0.0" || want.ip == "0.0.0.0")
    })
}

impl FilterPlugin for NodePorts {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        if cx.pod.host_ports.is_empty() {
            PreFilterOutcome::skip()
        } else {
            PreFilterOutcome::success()
        }
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        if cx
            .pod
            .host_ports
            .iter()
            .any(|p| conflicts(&node.used_ports, p))
        {
            Status::unschedulable(REASON)
        } else {
            Status::success()
        }
    }
}

//! NodeName: a pod naming a node in `spec.nodeName` fits only that node.

use crate::scheduler::framework::{CycleContext, FilterPlugin, Status};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodeName";
pub const REASON: &str = "node(s) didn't match the requested node name";

pub struct NodeName;

impl FilterPlugin for NodeName {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        match &cx.pod.node_name {
            Some(n) if *n != node.name => Status::unresolvable(REASON),
            _ => Status::success(),
        }
    }
}

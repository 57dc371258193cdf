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

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod};
    use serde_json::json;

    #[test]
    fn only_the_named_node() {
        let nodes = [
            node("a", json!({}), json!({})),
            node("b", json!({}), json!({})),
        ];
        let v = filter(
            &nodes,
            &[],
            &pod("p", json!({}), json!({"nodeName": "b"})),
            "NodeName",
        );
        assert_eq!(
            (v[0].1, v[0].2.as_slice()),
            (
                Code::UnschedulableAndUnresolvable,
                &[super::REASON.to_string()][..]
            )
        );
        assert_eq!(v[1].1, Code::Success);
    }
}

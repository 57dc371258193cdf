//! NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes only pods tolerating the
//! `node.kubernetes.io/unschedulable:NoSchedule` taint.

use k8s_openapi::api::core::v1::Taint;

use super::taint_toleration::tolerates;
use crate::scheduler::framework::{CycleContext, FilterPlugin, Status};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodeUnschedulable";
pub const REASON: &str = "node(s) were unschedulable";

pub struct NodeUnschedulable;

impl FilterPlugin for NodeUnschedulable {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        if !node.unschedulable {
            return Status::success();
        }
        let taint = Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        };
        if cx.pod.tolerations.iter().any(|t| tolerates(t, &taint)) {
            Status::success()
        } else {
            Status::unresolvable(REASON)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod};
    use serde_json::json;

    #[test]
    fn cordoned_unless_tolerated() {
        let nodes = [node("a", json!({}), json!({"unschedulable": true}))];
        let v = filter(
            &nodes,
            &[],
            &pod("p", json!({}), json!({})),
            "NodeUnschedulable",
        );
        assert_eq!(v[0].1, Code::UnschedulableAndUnresolvable);
        let tol = json!({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]});
        let v = filter(&nodes, &[], &pod("p", json!({}), tol), "NodeUnschedulable");
        assert_eq!(v[0].1, Code::Success);
    }
}

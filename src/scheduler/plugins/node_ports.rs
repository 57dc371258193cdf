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

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod};
    use serde_json::json;

    #[test]
    fn same_port_conflicts_other_protocol_does_not() {
        let nodes = [
            node("a", json!({}), json!({})),
            node("b", json!({}), json!({})),
        ];
        let port = |proto: &str| json!({"nodeName": null, "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80, "protocol": proto}]}]});
        let mut on_a = pod("x", json!({}), port("TCP"));
        on_a.spec.as_mut().unwrap().node_name = Some("a".into());
        let mut on_b = pod("y", json!({}), port("UDP"));
        on_b.spec.as_mut().unwrap().node_name = Some("b".into());
        let v = filter(
            &nodes,
            &[on_a, on_b],
            &pod("p", json!({}), port("TCP")),
            "NodePorts",
        );
        assert_eq!(v[0].1, Code::Unschedulable);
        assert_eq!(
            v[0].2,
            ["node(s) didn't have free ports for the requested pod ports"]
        );
        assert_eq!(v[1].1, Code::Success);
    }
}

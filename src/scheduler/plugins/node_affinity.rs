//! NodeAffinity: Filter on `nodeSelector` and required node affinity (plus the profile's
//! `addedAffinity`); Score sums the weights of matching preferred terms, normalized by the max.

use std::collections::BTreeSet;

use crate::scheduler::framework::{
    CycleContext, FilterPlugin, MAX_NODE_SCORE, PreFilterOutcome, ScorePlugin, Status,
    default_normalize,
};
use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::selector::{NodeSelectorTerms, NodeTerm};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodeAffinity";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "NodeAff";
pub const REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
pub const REASON_CONFLICT: &str = "pod affinity terms conflict";

/// NodeAffinityArgs.addedAffinity, compiled.
#[derive(Debug, Clone, Default)]
pub struct NodeAffinityArgs {
    pub added_required: Option<NodeSelectorTerms>,
    pub added_preferred: Vec<(i64, NodeTerm)>,
}

/// `GetRequiredNodeAffinity(pod).Match(node)`: nodeSelector pairs all present and, when set,
/// one required term matching.
pub fn pod_matches_node(pod: &PodInfo, node: &NodeInfo) -> bool {
    pod.node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v))
        && pod
            .required_node_affinity
            .as_ref()
            .is_none_or(|r| r.matches(&node.name, &node.labels))
}

pub struct NodeAffinity {
    pub args: NodeAffinityArgs,
}

impl FilterPlugin for NodeAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        let pod = cx.pod;
        if pod.required_node_affinity.is_none()
            && self.args.added_required.is_none()
            && pod.node_selector.is_empty()
        {
            return PreFilterOutcome::skip();
        }
        let Some(req) = &pod.required_node_affinity else {
            return PreFilterOutcome::success();
        };
        if req.terms.is_empty() {
            return PreFilterOutcome::success();
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        for t in &req.terms {
            match t.pinned_names() {
                // A term without a metadata.name pin admits every node: the terms are ORed.
                None => return PreFilterOutcome::success(),
                Some(v) => names.extend(v),
            }
        }
        if names.is_empty() {
            return PreFilterOutcome::status(Status::unresolvable(REASON_CONFLICT));
        }
        PreFilterOutcome {
            status: Status::success(),
            node_names: Some(names),
        }
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        if let Some(added) = &self.args.added_required
            && !added.matches(&node.name, &node.labels)
        {
            return Status::unresolvable(REASON_ENFORCED);
        }
        if pod_matches_node(cx.pod, node) {
            Status::success()
        } else {
            Status::unresolvable(REASON_POD)
        }
    }
}

pub struct NodeAffinityScore {
    pub args: NodeAffinityArgs,
}

impl ScorePlugin for NodeAffinityScore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, _feasible: &[usize]) -> Status {
        if cx.pod.preferred_node_affinity.is_empty() && self.args.added_preferred.is_empty() {
            Status::skip()
        } else {
            Status::success()
        }
    }

    fn score(&self, cx: &CycleContext, node: &NodeInfo) -> i64 {
        cx.pod
            .preferred_node_affinity
            .iter()
            .chain(self.args.added_preferred.iter())
            .filter(|(_, t)| t.matches(&node.name, &node.labels))
            .map(|(w, _)| *w)
            .sum()
    }

    fn normalize(&self, _cx: &CycleContext, _feasible: &[usize], scores: &mut [i64]) {
        default_normalize(MAX_NODE_SCORE, false, scores);
    }
}

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod, scores};
    use serde_json::json;

    #[test]
    fn selector_required_and_preferred() {
        let nodes = [
            node("a", json!({"disk": "ssd", "zone": "z1"}), json!({})),
            node("b", json!({"disk": "hdd", "zone": "z1"}), json!({})),
            node("c", json!({"disk": "ssd", "zone": "z2"}), json!({})),
        ];
        let p = pod("p", json!({}), json!({"nodeSelector": {"disk": "ssd"}}));
        let v = filter(&nodes, &[], &p, "NodeAffinity");
        assert_eq!(
            v.iter().map(|x| x.1).collect::<Vec<_>>(),
            [
                Code::Success,
                Code::UnschedulableAndUnresolvable,
                Code::Success
            ]
        );
        let pref = json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}},
            {"weight": 15, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}});
        assert_eq!(
            scores(&nodes, &[], &pod("p", json!({}), pref), "NodeAffinity"),
            [100, 25, 75]
        );
    }
}

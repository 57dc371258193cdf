//! PodTopologySpread: Filter enforces DoNotSchedule constraints (skew = matching pods in the
//! node's domain + self − global minimum ≤ maxSkew); Score prefers domains with fewer matching
//! pods for ScheduleAnyway constraints, or the system defaults (hostname 3, zone 5) when the pod
//! has no constraints and a Service/ReplicaSet/StatefulSet/ReplicationController selects it.

use std::collections::{HashMap, HashSet};

use super::node_affinity::pod_matches_node;
use super::taint_toleration::first_untolerated_hard_taint;
use crate::scheduler::framework::{
    CycleContext, FilterPlugin, MAX_NODE_SCORE, PreFilterOutcome, ScorePlugin, Status,
};
use crate::scheduler::podinfo::{PodInfo, SpreadConstraint};
use crate::scheduler::selector::Selector;
use crate::scheduler::snapshot::{NodeInfo, Snapshot};

pub const NAME: &str = "PodTopologySpread";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "Spread";
pub const REASON_SKEW: &str = "node(s) didn't match pod topology spread constraints";
pub const REASON_LABEL: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";
pub(crate) const HOSTNAME: &str = "kubernetes.io/hostname";
const ZONE: &str = "topology.kubernetes.io/zone";

/// PodTopologySpreadArgs: `defaultingType: System` uses the built-in defaults; `List` uses
/// `defaultConstraints` (selector filled in from the pod's owners).
#[derive(Debug, Clone)]
pub struct SpreadArgs {
    pub system_defaulted: bool,
    /// (maxSkew, topologyKey, DoNotSchedule?)
    pub default_constraints: Vec<(i64, String, bool)>,
}

impl Default for SpreadArgs {
    fn default() -> Self {
        SpreadArgs {
            system_defaulted: true,
            default_constraints: vec![(3, HOSTNAME.into(), false), (5, ZONE.into(), false)],
        }
    }
}

/// `helper.DefaultSelector`: the union of the selecting Services' selectors, ANDed with the
/// controller's selector.
fn default_selector(snap: &Snapshot, pod: &PodInfo) -> Selector {
    let mut set = crate::scheduler::selector::Labels::new();
    for (ns, sel) in &snap.services {
        if *ns == pod.namespace
            && !sel.is_empty()
            && sel.iter().all(|(k, v)| pod.labels.get(k) == Some(v))
        {
            set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let mut selector = Selector::from_labels(&set);
    if let Some((kind, name)) = &pod.owner
        && let Some(c) = snap
            .controllers
            .get(&(pod.namespace.clone(), kind.clone(), name.clone()))
    {
        selector = selector.and(c);
    }
    selector
}

fn constraints_for(
    cx: &CycleContext,
    args: &SpreadArgs,
    do_not_schedule: bool,
) -> Vec<SpreadConstraint> {
    let pod = cx.pod;
    if !pod.spread_constraints.is_empty() {
        return pod
            .spread_constraints
            .iter()
            .filter(|c| c.do_not_schedule == do_not_schedule)
            .cloned()
            .collect();
    }
    default_constraints(cx.snapshot, pod, args, do_not_schedule)
}

/// The defaulted constraints of a pod with none of its own: `args`' defaults with the
/// selector its Services and owning controller give (none when nothing selects the pod).
pub(crate) fn default_constraints(
    snap: &Snapshot,
    pod: &PodInfo,
    args: &SpreadArgs,
    do_not_schedule: bool,
) -> Vec<SpreadConstraint> {
    let defaults: Vec<_> = args
        .default_constraints
        .iter()
        .filter(|c| c.2 == do_not_schedule)
        .collect();
    if defaults.is_empty() {
        return Vec::new();
    }
    let selector = default_selector(snap, pod);
    if selector.is_empty() {
        return Vec::new();
    }
    defaults
        .into_iter()
        .map(|(skew, key, dns)| SpreadConstraint {
            max_skew: *skew,
            topology_key: key.clone(),
            do_not_schedule: *dns,
            selector: selector.clone(),
            min_domains: None,
            honor_node_affinity: true,
            honor_node_taints: false,
        })
        .collect()
}

fn node_has_keys(node: &NodeInfo, cs: &[SpreadConstraint]) -> bool {
    cs.iter().all(|c| node.labels.contains_key(&c.topology_key))
}

fn inclusion(c: &SpreadConstraint, pod: &PodInfo, node: &NodeInfo) -> bool {
    (!c.honor_node_affinity || pod_matches_node(pod, node))
        && (!c.honor_node_taints
            || first_untolerated_hard_taint(&node.taints, &pod.tolerations).is_none())
}

/// `countPodsMatchSelector`: same namespace, not terminating, selector matches.
pub(crate) fn count_matching(snap: &Snapshot, node: &NodeInfo, sel: &Selector, ns: &str) -> i64 {
    node.pods
        .iter()
        .map(|&id| &snap.pods[id])
        .filter(|p| !p.terminating && p.namespace == ns && sel.matches(&p.labels))
        .count() as i64
}

#[derive(Default)]
pub struct PodTopologySpread {
    pub args: SpreadArgs,
    constraints: Vec<SpreadConstraint>,
    pair_counts: HashMap<(usize, String), i64>,
    /// Per constraint: (number of domains, global minimum).
    domains: Vec<(i64, i64)>,
}

impl PodTopologySpread {
    pub fn new(args: SpreadArgs) -> Self {
        PodTopologySpread {
            args,
            ..Default::default()
        }
    }
}

impl FilterPlugin for PodTopologySpread {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        self.constraints = constraints_for(cx, &self.args, true);
        if self.constraints.is_empty() {
            return PreFilterOutcome::skip();
        }
        let snap = cx.snapshot;
        for node in &snap.nodes {
            if !node_has_keys(node, &self.constraints) {
                continue;
            }
            for (i, c) in self.constraints.iter().enumerate() {
                if !inclusion(c, cx.pod, node) {
                    continue;
                }
                let value = node.labels[&c.topology_key].clone();
                let n = count_matching(snap, node, &c.selector, &cx.pod.namespace);
                *self.pair_counts.entry((i, value)).or_default() += n;
            }
        }
        self.domains = (0..self.constraints.len())
            .map(|i| {
                let counts = self
                    .pair_counts
                    .iter()
                    .filter(|((ci, _), _)| *ci == i)
                    .map(|(_, n)| *n);
                let (num, min) =
                    counts.fold((0, i64::from(i32::MAX)), |(k, m), n| (k + 1, m.min(n)));
                (num, min)
            })
            .collect();
        PreFilterOutcome::success()
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        for (i, c) in self.constraints.iter().enumerate() {
            let Some(value) = node.labels.get(&c.topology_key) else {
                return Status::unresolvable(REASON_LABEL);
            };
            let (num_domains, mut min) = self.domains[i];
            if c.min_domains.is_some_and(|m| num_domains < m) {
                min = 0;
            }
            let self_match = i64::from(c.selector.matches(&cx.pod.labels));
            let matched = self
                .pair_counts
                .get(&(i, value.clone()))
                .copied()
                .unwrap_or(0);
            if matched + self_match - min > c.max_skew {
                return Status::unschedulable(REASON_SKEW);
            }
        }
        Status::success()
    }
}

#[derive(Default)]
pub struct PodTopologySpreadScore {
    pub args: SpreadArgs,
    constraints: Vec<SpreadConstraint>,
    ignored: HashSet<String>,
    pair_counts: HashMap<(usize, String), i64>,
    weights: Vec<f64>,
}

impl PodTopologySpreadScore {
    pub fn new(args: SpreadArgs) -> Self {
        PodTopologySpreadScore {
            args,
            ..Default::default()
        }
    }
}

impl ScorePlugin for PodTopologySpreadScore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, feasible: &[usize]) -> Status {
        let snap = cx.snapshot;
        if feasible.is_empty() || snap.nodes.is_empty() {
            return Status::success();
        }
        // Non-default constraints need every key on a node; system defaults need only those
        // present, so a node without a zone still gets hostname spreading.
        let require_all = !cx.pod.spread_constraints.is_empty() || !self.args.system_defaulted;
        self.constraints = constraints_for(cx, &self.args, false);
        if self.constraints.is_empty() {
            return Status::skip();
        }
        let mut topo_size = vec![0usize; self.constraints.len()];
        for &n in feasible {
            let node = &snap.nodes[n];
            if require_all && !node_has_keys(node, &self.constraints) {
                self.ignored.insert(node.name.clone());
                continue;
            }
            for (i, c) in self.constraints.iter().enumerate() {
                if c.topology_key == HOSTNAME {
                    continue;
                }
                let value = node
                    .labels
                    .get(&c.topology_key)
                    .cloned()
                    .unwrap_or_default();
                if let std::collections::hash_map::Entry::Vacant(e) =
                    self.pair_counts.entry((i, value))
                {
                    e.insert(0);
                    topo_size[i] += 1;
                }
            }
        }
        self.weights = self
            .constraints
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let size = if c.topology_key == HOSTNAME {
                    feasible.len() - self.ignored.len()
                } else {
                    topo_size[i]
                };
                ((size + 2) as f64).ln()
            })
            .collect();
        for node in &snap.nodes {
            if require_all && !node_has_keys(node, &self.constraints) {
                continue;
            }
            for (i, c) in self.constraints.iter().enumerate() {
                if !inclusion(c, cx.pod, node) {
                    continue;
                }
                let Some(value) = node.labels.get(&c.topology_key) else {
                    continue;
                };
                let key = (i, value.clone());
                if !self.pair_counts.contains_key(&key) {
                    continue;
                }
                let n = count_matching(snap, node, &c.selector, &cx.pod.namespace);
                *self.pair_counts.get_mut(&key).expect("checked above") += n;
            }
        }
        Status::success()
    }

    fn score(&self, cx: &CycleContext, node: &NodeInfo) -> i64 {
        if self.ignored.contains(&node.name) {
            return 0;
        }
        let mut score = 0.0f64;
        for (i, c) in self.constraints.iter().enumerate() {
            let Some(value) = node.labels.get(&c.topology_key) else {
                continue;
            };
            let cnt = if c.topology_key == HOSTNAME {
                count_matching(cx.snapshot, node, &c.selector, &cx.pod.namespace)
            } else {
                self.pair_counts
                    .get(&(i, value.clone()))
                    .copied()
                    .unwrap_or(0)
            };
            score += cnt as f64 * self.weights[i] + (c.max_skew - 1) as f64;
        }
        score.round() as i64
    }

    fn normalize(&self, cx: &CycleContext, feasible: &[usize], scores: &mut [i64]) {
        let ignored: Vec<bool> = feasible
            .iter()
            .map(|&n| self.ignored.contains(&cx.snapshot.nodes[n].name))
            .collect();
        normalize_with(scores, &ignored);
    }
}

fn normalize_with(scores: &mut [i64], ignored: &[bool]) {
    let mut min = i64::MAX;
    let mut max = 0i64;
    for (s, ig) in scores.iter().zip(ignored) {
        if *ig {
            continue;
        }
        min = min.min(*s);
        max = max.max(*s);
    }
    for (s, ig) in scores.iter_mut().zip(ignored) {
        if *ig {
            *s = 0;
        } else if max == 0 {
            *s = MAX_NODE_SCORE;
        } else {
            *s = MAX_NODE_SCORE * (max + min - *s) / max;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod};
    use serde_json::json;

    #[test]
    fn max_skew_one_across_zones() {
        let nodes = [
            node("a", json!({"zone": "z1"}), json!({})),
            node("b", json!({"zone": "z2"}), json!({})),
            node("c", json!({}), json!({})),
        ];
        let mut running = pod("r", json!({"app": "x"}), json!({}));
        running.spec.as_mut().unwrap().node_name = Some("a".into());
        let p = pod(
            "p",
            json!({"app": "x"}),
            json!({"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}}}]}),
        );
        let v = filter(&nodes, &[running], &p, "PodTopologySpread");
        assert_eq!(v[0].1, Code::Unschedulable);
        assert_eq!(v[1].1, Code::Success);
        assert_eq!(
            (v[2].1, v[2].2[0].as_str()),
            (Code::UnschedulableAndUnresolvable, super::REASON_LABEL)
        );
    }
}

//! InterPodAffinity: Filter enforces the pod's required affinity / anti-affinity and existing
//! pods' required anti-affinity, per topology domain; Score sums preferred terms (both ways)
//! and existing pods' required affinity (hardPodAffinityWeight), min-max normalized.

use std::collections::HashMap;

use crate::scheduler::framework::{
    CycleContext, FilterPlugin, MAX_NODE_SCORE, PreFilterOutcome, ScorePlugin, Status,
};
use crate::scheduler::podinfo::{AffinityTerm, PodInfo};
use crate::scheduler::snapshot::{NodeInfo, Snapshot};

pub const NAME: &str = "InterPodAffinity";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "PodAff";
pub const REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
pub const REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
pub const REASON_EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";

#[derive(Debug, Clone)]
pub struct InterPodAffinityArgs {
    pub hard_pod_affinity_weight: i64,
    pub ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for InterPodAffinityArgs {
    fn default() -> Self {
        InterPodAffinityArgs {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

/// Counts per topology pair (key → value → count), looked up without allocating.
#[derive(Default)]
pub struct TopoCounts(HashMap<String, HashMap<String, i64>>);

impl TopoCounts {
    /// `topologyToMatchedTermCount.update`: add `v` to the node's domain for `key`, dropping
    /// entries that fall back to zero.
    fn bump(&mut self, node: &NodeInfo, key: &str, v: i64) {
        let Some(val) = node.labels.get(key) else {
            return;
        };
        let values = match self.0.get_mut(key) {
            Some(m) => m,
            None => self.0.entry(key.to_string()).or_default(),
        };
        let e = match values.get_mut(val) {
            Some(e) => e,
            None => values.entry(val.clone()).or_default(),
        };
        *e += v;
        if *e == 0 {
            values.remove(val);
            if values.is_empty() {
                self.0.remove(key);
            }
        }
    }

    fn get(&self, key: &str, val: &str) -> i64 {
        self.0
            .get(key)
            .and_then(|m| m.get(val))
            .copied()
            .unwrap_or(0)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// For a term whose selector is a single `key = value` and whose namespaces are listed by name,
/// the number of pods it selects on each node, from the label index and the pods' namespace
/// ids alone — the same count as testing `matches` on every pod, without reading the pods.
fn count_per_node(snap: &Snapshot, t: &AffinityTerm) -> Option<Vec<i64>> {
    if !t.selector.is_single_pair() || !t.namespace_selector.is_nothing() {
        return None;
    }
    let (k, v) = t.selector.index_hint()?;
    let ns: Vec<u32> = t
        .namespaces
        .iter()
        .filter_map(|n| snap.namespace_ids.get(n).copied())
        .collect();
    let ids: &[usize] = snap
        .label_index
        .get(k)
        .and_then(|m| m.get(v))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // A handful of candidates is cheaper to test one by one than a per-node table.
    if ids.len() * 16 < snap.nodes.len() {
        return None;
    }
    let mut per_node = vec![0i64; snap.nodes.len()];
    for &id in ids {
        if ns.contains(&snap.pod_ns[id]) {
            per_node[snap.pod_node[id]] += 1;
        }
    }
    Some(per_node)
}

fn matches_all(terms: &[AffinityTerm], pod: &PodInfo) -> bool {
    !terms.is_empty() && terms.iter().all(|t| t.matches(pod))
}

#[derive(Default)]
pub struct InterPodAffinity {
    existing_anti: TopoCounts,
    affinity: TopoCounts,
    anti: TopoCounts,
}

impl FilterPlugin for InterPodAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_filter(&mut self, cx: &CycleContext) -> PreFilterOutcome {
        let snap = cx.snapshot;
        let pod = cx.pod;
        // Existing pods' required anti-affinity terms that may select this pod (term index).
        snap.required_anti_affinity_terms
            .for_each_candidate(&pod.labels, |id, ti| {
                let t = &snap.pods[id].required_anti_affinity[ti];
                if t.matches(pod) {
                    let node = &snap.nodes[snap.pod_node[id]];
                    self.existing_anti.bump(node, &t.topology_key, 1);
                }
            });
        // Only pods a term's selector can match are tested (label index).
        if let Some(first) = pod.required_affinity.first() {
            if pod.required_affinity.len() == 1
                && let Some(per_node) = count_per_node(snap, first)
            {
                for (n, c) in per_node.iter().enumerate().filter(|(_, c)| **c > 0) {
                    self.affinity.bump(&snap.nodes[n], &first.topology_key, *c);
                }
            } else {
                snap.candidates(&first.selector).for_each(|id| {
                    let existing = &snap.pods[id];
                    if matches_all(&pod.required_affinity, existing) {
                        let node = &snap.nodes[snap.pod_node[id]];
                        for t in &pod.required_affinity {
                            self.affinity.bump(node, &t.topology_key, 1);
                        }
                    }
                });
            }
        }
        for t in &pod.required_anti_affinity {
            if let Some(per_node) = count_per_node(snap, t) {
                for (n, c) in per_node.iter().enumerate().filter(|(_, c)| **c > 0) {
                    self.anti.bump(&snap.nodes[n], &t.topology_key, *c);
                }
                continue;
            }
            snap.candidates(&t.selector).for_each(|id| {
                if t.matches(&snap.pods[id]) {
                    self.anti
                        .bump(&snap.nodes[snap.pod_node[id]], &t.topology_key, 1);
                }
            });
        }
        if self.existing_anti.is_empty()
            && pod.required_affinity.is_empty()
            && pod.required_anti_affinity.is_empty()
        {
            return PreFilterOutcome::skip();
        }
        PreFilterOutcome::success()
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        let pod = cx.pod;
        // Required affinity: every term's domain must hold a matching pod — unless no pod in
        // the cluster matches and the pod matches its own terms (the first of a group).
        let mut pods_exist = true;
        for t in &pod.required_affinity {
            let Some(v) = node.labels.get(&t.topology_key) else {
                return Status::unresolvable(REASON_AFFINITY);
            };
            if self.affinity.get(&t.topology_key, v) <= 0 {
                pods_exist = false;
            }
        }
        let first_of_group = self.affinity.is_empty() && matches_all(&pod.required_affinity, pod);
        if !pods_exist && !first_of_group {
            return Status::unresolvable(REASON_AFFINITY);
        }
        if !self.anti.is_empty() {
            for t in &pod.required_anti_affinity {
                if let Some(v) = node.labels.get(&t.topology_key)
                    && self.anti.get(&t.topology_key, v) > 0
                {
                    return Status::unschedulable(REASON_ANTI_AFFINITY);
                }
            }
        }
        if !self.existing_anti.is_empty() {
            for (k, v) in &node.labels {
                if self.existing_anti.get(k, v) > 0 {
                    return Status::unschedulable(REASON_EXISTING_ANTI_AFFINITY);
                }
            }
        }
        Status::success()
    }
}

#[derive(Default)]
pub struct InterPodAffinityScore {
    pub args: InterPodAffinityArgs,
    /// topologyKey → value → score.
    topology_score: HashMap<String, HashMap<String, i64>>,
}

impl InterPodAffinityScore {
    pub fn new(args: InterPodAffinityArgs) -> Self {
        InterPodAffinityScore {
            args,
            topology_score: HashMap::new(),
        }
    }

    fn add(&mut self, term: &AffinityTerm, weight: i64, target: &PodInfo, node: &NodeInfo) {
        if term.matches(target)
            && let Some(v) = node.labels.get(&term.topology_key)
        {
            *self
                .topology_score
                .entry(term.topology_key.clone())
                .or_default()
                .entry(v.clone())
                .or_default() += weight;
        }
    }
}

impl ScorePlugin for InterPodAffinityScore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, feasible: &[usize]) -> Status {
        if feasible.is_empty() {
            return Status::success();
        }
        let pod = cx.pod;
        let has_constraints =
            !pod.preferred_affinity.is_empty() || !pod.preferred_anti_affinity.is_empty();
        if self.args.ignore_preferred_terms_of_existing_pods && !has_constraints {
            return Status::skip();
        }
        let snap = cx.snapshot;
        // The incoming pod's preferred terms, against the existing pods they can select.
        for (w, t) in &pod.preferred_affinity {
            snap.candidates(&t.selector).for_each(|id| {
                self.add(t, *w, &snap.pods[id], &snap.nodes[snap.pod_node[id]]);
            });
        }
        for (w, t) in &pod.preferred_anti_affinity {
            snap.candidates(&t.selector).for_each(|id| {
                self.add(t, -*w, &snap.pods[id], &snap.nodes[snap.pod_node[id]]);
            });
        }
        // Existing pods' terms that select the incoming pod (symmetry), via the term index.
        if self.args.hard_pod_affinity_weight > 0 {
            let w = self.args.hard_pod_affinity_weight;
            snap.required_affinity_terms
                .for_each_candidate(&pod.labels, |id, ti| {
                    let t = &snap.pods[id].required_affinity[ti];
                    self.add(t, w, pod, &snap.nodes[snap.pod_node[id]]);
                });
        }
        if !self.args.ignore_preferred_terms_of_existing_pods {
            snap.preferred_affinity_terms
                .for_each_candidate(&pod.labels, |id, ti| {
                    let (w, t) = &snap.pods[id].preferred_affinity[ti];
                    self.add(t, *w, pod, &snap.nodes[snap.pod_node[id]]);
                });
            snap.preferred_anti_affinity_terms
                .for_each_candidate(&pod.labels, |id, ti| {
                    let (w, t) = &snap.pods[id].preferred_anti_affinity[ti];
                    self.add(t, -*w, pod, &snap.nodes[snap.pod_node[id]]);
                });
        }
        if self.topology_score.is_empty() {
            return Status::skip();
        }
        Status::success()
    }

    fn score(&self, _cx: &CycleContext, node: &NodeInfo) -> i64 {
        let mut score = 0;
        for (key, values) in &self.topology_score {
            if let Some(v) = node.labels.get(key) {
                score += values.get(v).copied().unwrap_or(0);
            }
        }
        score
    }

    fn normalize(&self, _cx: &CycleContext, _feasible: &[usize], scores: &mut [i64]) {
        if self.topology_score.is_empty() {
            return;
        }
        let min = scores.iter().copied().min().unwrap_or(0);
        let max = scores.iter().copied().max().unwrap_or(0);
        let diff = max - min;
        for s in scores.iter_mut() {
            let f = if diff > 0 {
                MAX_NODE_SCORE as f64 * ((*s - min) as f64 / diff as f64)
            } else {
                0.0
            };
            *s = f as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scheduler::Code;
    use crate::scheduler::testutil::{filter, node, pod, scores};
    use serde_json::json;

    #[test]
    fn affinity_anti_affinity_and_existing_anti_affinity() {
        let nodes = [
            node("a", json!({"h": "a"}), json!({})),
            node("b", json!({"h": "b"}), json!({})),
        ];
        let mut db = pod(
            "db",
            json!({"app": "db"}),
            json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "h"}]}}}),
        );
        db.spec.as_mut().unwrap().node_name = Some("a".into());
        // Affinity to db: only node a has one — but db's own anti-affinity rejects web there.
        let web = pod(
            "w",
            json!({"app": "web"}),
            json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "h"}]}}}),
        );
        let v = filter(&nodes, std::slice::from_ref(&db), &web, "InterPodAffinity");
        assert_eq!(
            (v[0].1, v[0].2[0].as_str()),
            (Code::Unschedulable, super::REASON_EXISTING_ANTI_AFFINITY)
        );
        assert_eq!(
            (v[1].1, v[1].2[0].as_str()),
            (Code::UnschedulableAndUnresolvable, super::REASON_AFFINITY)
        );
        let cache = pod(
            "c",
            json!({"app": "cache"}),
            json!({"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "h"}}]}}}),
        );
        assert_eq!(scores(&nodes, &[db], &cache, "InterPodAffinity"), [100, 0]);
    }
}

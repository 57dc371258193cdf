//! Formulas of the score plugins that count other pods (spec §4.10–4.11): PodTopologySpread
//! and InterPodAffinity. The counts are redone from the snapshot's pods with the pod's own
//! terms and checked against the scheduler's raw score; the normalization over the scored
//! nodes is checked against its normalized score.

use std::collections::BTreeSet;

use super::formula_node::{check, raws};
use super::model::Model;
use crate::scheduler::plugins::node_affinity::pod_matches_node;
use crate::scheduler::plugins::taint_toleration::first_untolerated_hard_taint;
use crate::scheduler::podinfo::{AffinityTerm, SpreadConstraint};
use crate::scheduler::snapshot::NodeInfo;
use crate::scheduler::trace::PluginScore;

const MAX: i64 = 100;
const HOSTNAME: &str = "kubernetes.io/hostname";

/// Snapshot indices of the scored nodes (those the trace scored).
fn scored(m: &Model) -> Vec<usize> {
    (0..m.snapshot.nodes.len())
        .filter(|&k| m.score_of[k].is_some())
        .collect()
}

/// Pods in `ns` on `node` that the selector picks (terminating pods do not count).
fn matching_on(m: &Model, node: &NodeInfo, c: &SpreadConstraint) -> i64 {
    node.pods
        .iter()
        .map(|&id| &m.snapshot.pods[id])
        .filter(|p| {
            !p.terminating && p.namespace == m.pod.namespace && c.selector.matches(&p.labels)
        })
        .count() as i64
}

fn included(m: &Model, c: &SpreadConstraint, node: &NodeInfo) -> bool {
    (!c.honor_node_affinity || pod_matches_node(&m.pod, node))
        && (!c.honor_node_taints
            || first_untolerated_hard_taint(&node.taints, &m.pod.tolerations).is_none())
}

pub fn topology_spread(m: &Model, k: usize, p: &PluginScore, out: &mut Vec<String>) {
    let node = &m.snapshot.nodes[k];
    let cs: Vec<&SpreadConstraint> = m
        .pod
        .spread_constraints
        .iter()
        .filter(|c| !c.do_not_schedule)
        .collect();
    out.push(
        "raw = Σ over constraints: pods in the node's domain × ln(domains + 2) + maxSkew − 1"
            .into(),
    );
    if m.pod.spread_constraints.is_empty() {
        // The system defaults' selector comes from the Services and controllers selecting the
        // pod, which the view does not rebuild: the raw score is the scheduler's.
        out.push(
            "no constraints of its own: the defaults (hostname maxSkew 3, zone maxSkew 5) apply, selecting pods like this one by its Services and controllers; none select it → PreScore skips".into(),
        );
        out.push(format!("raw     {} (the scheduler's)", p.raw));
    } else if cs.is_empty() {
        out.push(
            "only DoNotSchedule constraints: the filter enforces them, the score skips".into(),
        );
        out.push(format!("raw     0 {}", check(0, p.raw, "raw score")));
    } else {
        let has_keys = |n: &NodeInfo| cs.iter().all(|c| n.labels.contains_key(&c.topology_key));
        let feasible: Vec<usize> = scored(m)
            .into_iter()
            .filter(|&j| has_keys(&m.snapshot.nodes[j]))
            .collect();
        if !has_keys(node) {
            out.push("the node lacks a constraint's topology key: ignored, scores 0".into());
        } else {
            let mut total = 0.0f64;
            for c in &cs {
                let Some(value) = node.labels.get(&c.topology_key) else {
                    continue;
                };
                let (domains, count) = if c.topology_key == HOSTNAME {
                    (feasible.len(), matching_on(m, node, c))
                } else {
                    let values: BTreeSet<&String> = feasible
                        .iter()
                        .filter_map(|&j| m.snapshot.nodes[j].labels.get(&c.topology_key))
                        .collect();
                    let count = m
                        .snapshot
                        .nodes
                        .iter()
                        .filter(|n| has_keys(n) && included(m, c, n))
                        .filter(|n| n.labels.get(&c.topology_key) == Some(value))
                        .map(|n| matching_on(m, n, c))
                        .sum();
                    (values.len(), count)
                };
                let w = ((domains + 2) as f64).ln();
                total += count as f64 * w + (c.max_skew - 1) as f64;
                out.push(format!(
                    "{}={value}: {count} pod(s) × ln({domains} + 2) = {count} × {w:.3} + {} − 1",
                    c.topology_key, c.max_skew
                ));
            }
            out.push(format!(
                "raw     round({total:.3}) {}",
                check(total.round() as i64, p.raw, "raw score")
            ));
        }
    }
    // Ignored nodes score 0 both raw and normalized; every other node normalizes to ≥ 0 from
    // the min and max of the rest.
    let all: Vec<(i64, i64)> = m
        .trace
        .score
        .iter()
        .filter_map(|s| s.plugins.iter().find(|q| q.name == p.name))
        .map(|q| (q.raw, q.normalized))
        .collect();
    let counted: Vec<i64> = all
        .iter()
        .filter(|(r, n)| !(*r == 0 && *n == 0))
        .map(|(r, _)| *r)
        .collect();
    let (min, max) = (
        counted.iter().copied().min().unwrap_or(0),
        counted.iter().copied().max().unwrap_or(0).max(0),
    );
    if p.raw == 0 && p.normalized == 0 {
        out.push("normal. an ignored node scores 0".into());
    } else if max == 0 {
        out.push(format!(
            "normal. every raw score is 0: 100 {}",
            check(MAX, p.normalized, "normalized score")
        ));
    } else {
        out.push(format!(
            "normal. 100 × ({max} + {min} − {}) / {max} (fewer matching pods score higher) {}",
            p.raw,
            check(
                MAX * (max + min - p.raw) / max,
                p.normalized,
                "normalized score"
            )
        ));
    }
}

/// What one term adds to `node`: `weight` per pod it selects on a node in the same domain.
fn term_here(
    m: &Model,
    node: &NodeInfo,
    t: &AffinityTerm,
    target_on: impl Fn(usize) -> bool,
) -> i64 {
    let Some(value) = node.labels.get(&t.topology_key) else {
        return 0;
    };
    (0..m.snapshot.pods.len())
        .filter(|&id| target_on(id))
        .filter(|&id| {
            m.snapshot.nodes[m.snapshot.pod_node[id]]
                .labels
                .get(&t.topology_key)
                == Some(value)
        })
        .count() as i64
}

pub fn inter_pod_affinity(m: &Model, k: usize, p: &PluginScore, out: &mut Vec<String>) {
    let node = &m.snapshot.nodes[k];
    let snap = &m.snapshot;
    out.push("raw = Σ weight × pods selected in the node's domain (anti-affinity: −weight)".into());
    let mut raw = 0;
    let own = m
        .pod
        .preferred_affinity
        .iter()
        .map(|(w, t)| (*w, t, "preferred affinity"))
        .chain(
            m.pod
                .preferred_anti_affinity
                .iter()
                .map(|(w, t)| (-*w, t, "preferred anti-affinity")),
        );
    for (w, t, what) in own {
        let n = term_here(m, node, t, |id| t.matches(&snap.pods[id]));
        raw += w * n;
        out.push(format!(
            "{what} ({}): {n} pod(s) × {w:+} = {:+}",
            t.topology_key,
            w * n
        ));
    }
    // Existing pods' terms that select this pod, each counted in its own pod's domain.
    let mut theirs = 0;
    let mut pods = 0;
    for (id, other) in snap.pods.iter().enumerate() {
        let on = &snap.nodes[snap.pod_node[id]];
        let terms = other
            .required_affinity
            .iter()
            .map(|t| (1, t))
            .chain(other.preferred_affinity.iter().map(|(w, t)| (*w, t)))
            .chain(other.preferred_anti_affinity.iter().map(|(w, t)| (-*w, t)));
        for (w, t) in terms {
            if t.matches(&m.pod)
                && let (Some(a), Some(b)) = (
                    on.labels.get(&t.topology_key),
                    node.labels.get(&t.topology_key),
                )
                && a == b
            {
                theirs += w;
                pods += 1;
            }
        }
    }
    if pods > 0 {
        out.push(format!(
            "other pods' terms selecting this pod, in this domain: {pods} term(s), {theirs:+}"
        ));
    }
    raw += theirs;
    out.push(format!("raw     {raw} {}", check(raw, p.raw, "raw score")));
    let all = raws(m, p.name);
    let (min, max) = (
        all.iter().copied().min().unwrap_or(0),
        all.iter().copied().max().unwrap_or(0),
    );
    if max == min {
        out.push(format!(
            "normal. all scored nodes equal: 0 {}",
            check(0, p.normalized, "normalized score")
        ));
    } else {
        let v = (MAX as f64 * ((p.raw - min) as f64 / (max - min) as f64)) as i64;
        // Anti-affinity makes scores negative: bracket them so the subtraction reads right.
        let n = |x: i64| {
            if x < 0 {
                format!("({x})")
            } else {
                x.to_string()
            }
        };
        out.push(format!(
            "normal. 100 × ({} − {}) / ({} − {}) {}",
            p.raw,
            n(min),
            max,
            n(min),
            check(v, p.normalized, "normalized score")
        ));
    }
}

//! `--kube-version 1.13`: the predicates and 0–10 priorities of v1.11–v1.13 (spec §8), so the
//! seed's log analysis (LeastRequested, BalancedResourceAllocation, NodePreferAvoidPods ×10000)
//! can be replayed. Predicates stop at the first failing one (alwaysCheckAllPredicates=false);
//! GeneralPredicates reports all of its own failures. There is no PostFilter/preemption text.

use super::cycle::{Scheduler, num_feasible_nodes_to_find};
use super::framework::{Code, CycleContext, FilterPlugin, ScorePlugin};
use super::plugins::inter_pod_affinity::{
    InterPodAffinity, InterPodAffinityArgs, InterPodAffinityScore,
};
use super::plugins::node_affinity::pod_matches_node;
use super::plugins::node_ports::conflicts;
use super::plugins::taint_toleration::{first_untolerated_hard_taint, tolerates};
use super::podinfo::PodInfo;
use super::postfilter::fit_error;
use super::snapshot::{NodeInfo, Snapshot};
use super::trace::{FilterVerdict, NodeRun, NodeScore, PluginScore, PodTrace};

// v1.13's priority functions, as its scheduler named them.
pub const SELECTOR_SPREAD: &str = "SelectorSpreadPriority";
pub const INTER_POD_AFFINITY: &str = "InterPodAffinityPriority";
pub const LEAST_REQUESTED: &str = "LeastRequestedPriority";
pub const BALANCED: &str = "BalancedResourceAllocation";
pub const PREFER_AVOID_PODS: &str = "NodePreferAvoidPodsPriority";
pub const NODE_AFFINITY: &str = "NodeAffinityPriority";
pub const TAINT_TOLERATION: &str = "TaintTolerationPriority";

/// The label narrow columns use for a v1.13 priority (`plugins::short` for the framework's).
pub fn short(priority: &str) -> Option<&'static str> {
    Some(match priority {
        SELECTOR_SPREAD => "SelSpread",
        INTER_POD_AFFINITY => "PodAff",
        LEAST_REQUESTED => "LeastReq",
        BALANCED => "Balanced",
        PREFER_AVOID_PODS => "Avoid",
        NODE_AFFINITY => "NodeAff",
        TAINT_TOLERATION => "Taint",
        _ => return None,
    })
}

const MAX_PRIORITY: i64 = 10;

fn predicates(
    pod: &PodInfo,
    node: &NodeInfo,
    ipa: &InterPodAffinity,
    cx: &CycleContext,
) -> Option<(&'static str, Vec<String>)> {
    if node.unschedulable {
        return Some((
            "CheckNodeUnschedulable",
            vec!["node(s) were unschedulable".into()],
        ));
    }
    let mut general = Vec::new();
    let req = &pod.requests.actual;
    if node.pods.len() as i64 + 1 > node.allowed_pod_number {
        general.push("Insufficient pods".to_string());
    }
    if !(req.milli_cpu == 0
        && req.memory == 0
        && req.ephemeral_storage == 0
        && req.scalars.is_empty())
    {
        let mut check = |name: &str, want: i64, alloc: i64, used: i64| {
            if want > 0 && want > alloc - used {
                general.push(format!("Insufficient {name}"));
            }
        };
        check(
            "cpu",
            req.milli_cpu,
            node.allocatable.milli_cpu,
            node.requested.milli_cpu,
        );
        check(
            "memory",
            req.memory,
            node.allocatable.memory,
            node.requested.memory,
        );
        check(
            "ephemeral-storage",
            req.ephemeral_storage,
            node.allocatable.ephemeral_storage,
            node.requested.ephemeral_storage,
        );
        for (name, want) in &req.scalars {
            check(
                name,
                *want,
                node.allocatable.scalar(name),
                node.requested.scalar(name),
            );
        }
    }
    if pod.node_name.as_ref().is_some_and(|n| *n != node.name) {
        general.push("node(s) didn't match the requested hostname".into());
    }
    if pod
        .host_ports
        .iter()
        .any(|p| conflicts(&node.used_ports, p))
    {
        general.push("node(s) didn't have free ports for the requested pod ports".into());
    }
    if !pod_matches_node(pod, node) {
        general.push("node(s) didn't match node selector".into());
    }
    if !general.is_empty() {
        return Some(("GeneralPredicates", general));
    }
    if first_untolerated_hard_taint(&node.taints, &pod.tolerations).is_some() {
        return Some((
            "PodToleratesNodeTaints",
            vec!["node(s) had taints that the pod didn't tolerate".into()],
        ));
    }
    let s = ipa.filter(cx, node);
    if !s.is_success() {
        let mut r = vec!["node(s) didn't match pod affinity/anti-affinity".to_string()];
        r.extend(s.reasons);
        return Some(("MatchInterPodAffinity", r));
    }
    None
}

fn least_requested(node: &NodeInfo, pod: &PodInfo) -> i64 {
    let s = |req: i64, cap: i64| {
        if cap == 0 || req > cap {
            0
        } else {
            (cap - req) * MAX_PRIORITY / cap
        }
    };
    let cpu = s(
        node.legacy_non_zero_milli_cpu + pod.requests.legacy_non_zero_milli_cpu,
        node.allocatable.milli_cpu,
    );
    let mem = s(
        node.legacy_non_zero_memory + pod.requests.legacy_non_zero_memory,
        node.allocatable.memory,
    );
    (cpu + mem) / 2
}

fn balanced(node: &NodeInfo, pod: &PodInfo) -> i64 {
    let f = |req: i64, cap: i64| {
        if cap == 0 {
            1.0
        } else {
            req as f64 / cap as f64
        }
    };
    let cpu = f(
        node.legacy_non_zero_milli_cpu + pod.requests.legacy_non_zero_milli_cpu,
        node.allocatable.milli_cpu,
    );
    let mem = f(
        node.legacy_non_zero_memory + pod.requests.legacy_non_zero_memory,
        node.allocatable.memory,
    );
    if cpu >= 1.0 || mem >= 1.0 {
        return 0;
    }
    ((1.0 - (cpu - mem).abs()) * MAX_PRIORITY as f64) as i64
}

fn prefer_avoid(node: &NodeInfo, pod: &PodInfo) -> i64 {
    match &pod.owner {
        Some((kind, name))
            if (kind == "ReplicationController" || kind == "ReplicaSet")
                && node
                    .avoid_controllers
                    .iter()
                    .any(|(k, n)| k == kind && n == name) =>
        {
            0
        }
        _ => MAX_PRIORITY,
    }
}

/// `NormalizeReduce(MaxPriority, reverse)` of v1.13.
fn normalize_reduce(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().fold(0, i64::max);
    for s in scores.iter_mut() {
        if max == 0 {
            *s = if reverse { MAX_PRIORITY } else { 0 };
        } else {
            *s = MAX_PRIORITY * *s / max;
            if reverse {
                *s = MAX_PRIORITY - *s;
            }
        }
    }
}

/// SelectorSpreadPriority: fewer pods of the same Service/controller on the node (and zone,
/// weighted 2/3) is better; every node scores 10 when nothing selects the pod.
fn selector_spread(snap: &Snapshot, pod: &PodInfo, feasible: &[usize]) -> Vec<i64> {
    let mut selectors = Vec::new();
    for (ns, sel) in &snap.services {
        if *ns == pod.namespace
            && !sel.is_empty()
            && sel.iter().all(|(k, v)| pod.labels.get(k) == Some(v))
        {
            selectors.push(super::selector::Selector::from_labels(sel));
        }
    }
    if let Some((kind, name)) = &pod.owner
        && let Some(c) = snap
            .controllers
            .get(&(pod.namespace.clone(), kind.clone(), name.clone()))
    {
        selectors.push(c.clone());
    }
    let counts: Vec<i64> = feasible
        .iter()
        .map(|&n| {
            if selectors.is_empty() {
                return 0;
            }
            snap.nodes[n]
                .pods
                .iter()
                .map(|&id| &snap.pods[id])
                .filter(|p| {
                    p.namespace == pod.namespace && selectors.iter().any(|s| s.matches(&p.labels))
                })
                .count() as i64
        })
        .collect();
    let zone = |n: usize| {
        let l = &snap.nodes[n].labels;
        let r = l
            .get("failure-domain.beta.kubernetes.io/region")
            .or(l.get("topology.kubernetes.io/region"));
        let z = l
            .get("failure-domain.beta.kubernetes.io/zone")
            .or(l.get("topology.kubernetes.io/zone"));
        match (r, z) {
            (None, None) => String::new(),
            (r, z) => format!(
                "{}:\x00:{}",
                r.map(String::as_str).unwrap_or(""),
                z.map(String::as_str).unwrap_or("")
            ),
        }
    };
    let mut by_zone = std::collections::HashMap::new();
    for (i, &n) in feasible.iter().enumerate() {
        let z = zone(n);
        if !z.is_empty() {
            *by_zone.entry(z).or_insert(0i64) += counts[i];
        }
    }
    let max_node = counts.iter().copied().fold(0, i64::max);
    let max_zone = by_zone.values().copied().fold(0, i64::max);
    feasible
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let mut f = MAX_PRIORITY as f64;
            if max_node > 0 {
                f = MAX_PRIORITY as f64 * ((max_node - counts[i]) as f64 / max_node as f64);
            }
            let z = zone(n);
            if !by_zone.is_empty() && !z.is_empty() {
                let mut zs = MAX_PRIORITY as f64;
                if max_zone > 0 {
                    zs = MAX_PRIORITY as f64 * ((max_zone - by_zone[&z]) as f64 / max_zone as f64);
                }
                f = f * (1.0 - 2.0 / 3.0) + (2.0 / 3.0) * zs;
            }
            f as i64
        })
        .collect()
}

pub fn schedule_one(s: &mut Scheduler, snap: &Snapshot, pod: &PodInfo) -> PodTrace {
    let cx = CycleContext {
        snapshot: snap,
        pod,
        version: s.version,
    };
    let mut trace = PodTrace::new(
        pod.key(),
        "default-scheduler (legacy predicates/priorities)",
        s.version.to_string(),
        snap.num_nodes(),
    );
    trace.priority = pod.priority;
    if !pod.judged_volumes.is_empty() {
        trace.notes.push(format!("volume predicates (CheckVolumeBinding, NoVolumeZoneConflict, Max*VolumeCount, NoDiskConflict) not simulated for volume(s) {:?}", pod.judged_volumes));
    }
    let n = snap.nodes.len();
    if n == 0 {
        trace.message = Some("no nodes available to schedule pods".into());
        return trace;
    }
    let mut ipa = InterPodAffinity::default();
    let _ = ipa.pre_filter(&cx);
    let to_find =
        num_feasible_nodes_to_find(Some(s.version.default_percentage_of_nodes_to_score()), n);
    trace.num_feasible_nodes_to_find = to_find;
    let start = s.next_start_node_index % n;
    trace.start_index = start;
    let mut feasible = Vec::new();
    let mut processed = 0;
    for i in 0..n {
        let idx = (start + i) % n;
        let node = &snap.nodes[idx];
        processed += 1;
        let v = match predicates(pod, node, &ipa, &cx) {
            Some((pred, reasons)) => FilterVerdict {
                node: node.key.clone(),
                passed: false,
                plugin: Some(pred),
                reasons: Some(reasons),
                code: Code::Unschedulable,
                pre_filter: false,
            },
            None => {
                feasible.push(idx);
                FilterVerdict {
                    node: node.key.clone(),
                    passed: true,
                    plugin: None,
                    reasons: None,
                    code: Code::Success,
                    pre_filter: false,
                }
            }
        };
        trace.filter.push(v);
        if feasible.len() >= to_find {
            break;
        }
    }
    if processed < n {
        trace.skipped_by_sampling = NodeRun::new(
            snap.node_keys.clone(),
            (start + processed) % n,
            n - processed,
        );
    }
    s.next_start_node_index = (start + processed) % n;
    trace.nodes_feasible = feasible.len();
    match feasible.len() {
        0 => {
            trace.message = Some(fit_error(n, None, &trace.filter, None, String::new()));
            return trace;
        }
        1 => {
            trace.selected = Some(snap.nodes[feasible[0]].name.clone());
            trace.tie_break =
                Some("the only node that fits: chosen without priorities, as v1.13 does".into());
            return trace;
        }
        _ => {}
    }
    let nodes: Vec<&NodeInfo> = feasible.iter().map(|&i| &snap.nodes[i]).collect();
    let mut ipa_score = InterPodAffinityScore::new(InterPodAffinityArgs::default());
    let ipa_skipped = !ipa_score.pre_score(&cx, &feasible).is_success();
    let mut ipa_raw: Vec<i64> = nodes
        .iter()
        .map(|n| {
            if ipa_skipped {
                0
            } else {
                ipa_score.score(&cx, n)
            }
        })
        .collect();
    let (min, max) = ipa_raw
        .iter()
        .fold((0i64, 0i64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    for v in ipa_raw.iter_mut() {
        *v = if max - min > 0 {
            (MAX_PRIORITY as f64 * ((*v - min) as f64 / (max - min) as f64)) as i64
        } else {
            0
        };
    }
    let mut na: Vec<i64> = nodes
        .iter()
        .map(|n| {
            pod.preferred_node_affinity
                .iter()
                .filter(|(_, t)| t.matches(&n.name, &n.labels))
                .map(|(w, _)| *w)
                .sum()
        })
        .collect();
    normalize_reduce(&mut na, false);
    let mut tt: Vec<i64> = nodes
        .iter()
        .map(|n| {
            let prefer: Vec<_> = pod
                .tolerations
                .iter()
                .filter(|t| matches!(t.effect.as_deref().unwrap_or(""), "" | "PreferNoSchedule"))
                .collect();
            n.taints
                .iter()
                .filter(|x| {
                    x.effect == "PreferNoSchedule" && !prefer.iter().any(|t| tolerates(t, x))
                })
                .count() as i64
        })
        .collect();
    normalize_reduce(&mut tt, true);
    let ss = selector_spread(snap, pod, &feasible);
    let columns: Vec<(&'static str, i64, Vec<i64>)> = vec![
        (SELECTOR_SPREAD, 1, ss),
        (INTER_POD_AFFINITY, 1, ipa_raw),
        (
            LEAST_REQUESTED,
            1,
            nodes.iter().map(|n| least_requested(n, pod)).collect(),
        ),
        (
            BALANCED,
            1,
            nodes.iter().map(|n| balanced(n, pod)).collect(),
        ),
        (
            PREFER_AVOID_PODS,
            10000,
            nodes.iter().map(|n| prefer_avoid(n, pod)).collect(),
        ),
        (NODE_AFFINITY, 1, na),
        (TAINT_TOLERATION, 1, tt),
    ];
    for (i, n) in nodes.iter().enumerate() {
        let plugins: Vec<PluginScore> = columns
            .iter()
            .map(|(name, w, v)| PluginScore {
                name,
                raw: v[i],
                normalized: v[i],
                weight: *w,
                weighted: v[i] * w,
            })
            .collect();
        let total = plugins.iter().map(|p| p.weighted).sum();
        let seed_sum = columns[2].2[i] + columns[3].2[i] + columns[4].2[i];
        trace.notes.push(format!("{}: LeastRequested + BalancedResourceAllocation + NodePreferAvoidPods, unweighted = {seed_sum} (the seed's 29/28/29 are this sum)", n.name));
        trace.score.push(NodeScore {
            node: n.key.clone(),
            total,
            plugins,
        });
    }
    trace.nodes_scored = trace.score.len();
    // v1.13 selectHost: round robin among the nodes sharing the best total.
    let best = trace.score.iter().map(|s| s.total).max().unwrap_or(0);
    trace.tied = trace
        .score
        .iter()
        .filter(|s| s.total == best)
        .map(|s| s.node.clone())
        .collect();
    let ix = (s.legacy_last_node_index % trace.tied.len() as u64) as usize;
    s.legacy_last_node_index += 1;
    trace.selected = Some(trace.tied[ix].to_string());
    trace.tie_break = Some(if trace.tied.len() > 1 {
        format!(
            "round robin among {} tied nodes (lastNodeIndex), as v1.13 does",
            trace.tied.len()
        )
    } else {
        "highest total score".into()
    });
    trace
}

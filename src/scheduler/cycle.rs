//! One scheduling cycle (spec §1, §6): PreFilter, Filter over a round-robin window of nodes
//! until enough feasible ones are found, PostFilter and the FitError when none is, PreScore /
//! Score / NormalizeScore / weights when several are, and selectHost's tie-break.
//!
//! Upstream filters nodes on 16 goroutines; this runs them one after another, which is one of
//! the orders upstream can produce and the only one that is reproducible.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::framework::{Code, CycleContext, FilterPlugin, Status};
use super::legacy;
use super::plugins::{new_filter, new_score, volumes};
use super::podinfo::PodInfo;
use super::postfilter::{self, DEFAULT_PREEMPTION};
use super::profile::Profile;
use super::rng::SplitMix64;
use super::snapshot::{NodeInfo, Snapshot};
use super::trace::{
    Breakdown, FilterVerdict, Name, NodeRun, NodeScore, PhaseRecord, PluginScore, PodTrace,
    Preemption,
};
use super::version::KubeVersion;

const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

/// `numFeasibleNodesToFind`: all nodes below 100; else the percentage (adaptive
/// `50 − n/125`, at least 5, when unset or 0) of n, at least 100.
pub fn num_feasible_nodes_to_find(percentage: Option<i64>, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let n = num_all_nodes as i64;
    let mut pct = percentage.unwrap_or(0);
    if pct == 0 {
        pct = (50 - n / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let num = (n * pct / 100) as usize;
    num.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// The scheduler: profiles, the modelled version, and the state that carries from one cycle to
/// the next (round-robin start, tie-break random source).
pub struct Scheduler {
    pub version: KubeVersion,
    /// Shared so a cycle borrows its profile without copying it.
    pub profiles: Vec<Arc<Profile>>,
    pub next_start_node_index: usize,
    /// Also evaluate every node and score every feasible node, for display only.
    pub full_breakdown: bool,
    pub(crate) rng: SplitMix64,
    pub(crate) legacy_last_node_index: u64,
}

/// The Filter-side plugin instances of one cycle, with the ones PreFilter skipped marked.
pub struct Filters {
    pub plugins: Vec<Box<dyn FilterPlugin>>,
    pub skipped: Vec<bool>,
}

impl Filters {
    /// Runs the filters in order on one node, stopping at the first non-success.
    pub fn run(&self, cx: &CycleContext, node: &NodeInfo) -> FilterVerdict {
        for (p, skipped) in self.plugins.iter().zip(&self.skipped) {
            if *skipped {
                continue;
            }
            let s = p.filter(cx, node);
            if !s.is_success() {
                return FilterVerdict {
                    node: node.key.clone(),
                    passed: false,
                    plugin: Some(p.name()),
                    reasons: Some(s.reasons),
                    code: s.code,
                    pre_filter: false,
                };
            }
        }
        FilterVerdict {
            node: node.key.clone(),
            passed: true,
            plugin: None,
            reasons: None,
            code: Code::Success,
            pre_filter: false,
        }
    }
}

/// PreFilter's overall outcome.
pub enum PreFilterVerdict {
    /// Filter these nodes (None: all of them); `narrowed_by` names the plugins that narrowed.
    Proceed(Option<BTreeSet<String>>, Vec<&'static str>),
    /// A plugin rejected the pod: every node gets this status.
    Rejected(Status, &'static str),
}

/// Runs every PreFilter of the profile in order and builds the Filter instances.
pub fn pre_filter(
    profile: &Profile,
    cx: &CycleContext,
    trace: &mut PodTrace,
) -> (Filters, PreFilterVerdict) {
    let mut filters = Filters {
        plugins: Vec::new(),
        skipped: Vec::new(),
    };
    let mut result: Option<BTreeSet<String>> = None;
    let mut narrowed_by = Vec::new();
    let mut rejection = None;
    for name in &profile.filters {
        let Some(mut p) = new_filter(name, &profile.args) else {
            continue;
        };
        let mut skipped = false;
        if profile.pre_filters.contains(name) && rejection.is_none() {
            let out = p.pre_filter(cx);
            trace.prefilter.push(PhaseRecord {
                plugin: p.name(),
                code: out.status.code,
                reasons: out.status.reasons.clone(),
                node_names: out.node_names.as_ref().map(|s| s.iter().cloned().collect()),
            });
            skipped = out.status.code == Code::Skip;
            let rejected = out.status.is_rejected();
            if rejected {
                rejection = Some((out.status, p.name()));
            } else if let Some(names) = out.node_names {
                narrowed_by.push(p.name());
                let merged: BTreeSet<String> = match result.take() {
                    None => names,
                    Some(prev) => prev.intersection(&names).cloned().collect(),
                };
                if merged.is_empty() {
                    let msg = if narrowed_by.len() == 1 {
                        format!("node(s) didn't satisfy plugin {}", narrowed_by[0])
                    } else {
                        format!(
                            "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                            narrowed_by.join(" ")
                        )
                    };
                    rejection = Some((Status::unresolvable(msg), p.name()));
                }
                result = Some(merged);
            }
            if !skipped
                && !rejected
                && let Some(note) = not_simulated_note(name, cx)
            {
                trace.notes.push(note);
            }
        }
        filters.plugins.push(p);
        filters.skipped.push(skipped);
    }
    let verdict = match rejection {
        Some((s, plugin)) => PreFilterVerdict::Rejected(s, plugin),
        None => PreFilterVerdict::Proceed(result, narrowed_by),
    };
    (filters, verdict)
}

/// The status upstream gives every node outside the PreFilterResult (its "absent nodes"
/// status): the narrowing plugins' names, sorted, as Go prints a string slice.
fn absent_status(narrowed_by: &[&'static str]) -> Status {
    let mut plugins = narrowed_by.to_vec();
    plugins.sort_unstable();
    Status::unresolvable(format!(
        "node(s) didn't satisfy plugin(s) [{}]",
        plugins.join(" ")
    ))
}

/// One verdict per node the PreFilterResult left out, in snapshot order: Filter never runs on
/// them, yet the user asking "why not node2?" needs the line. The plugin is named when one
/// plugin narrowed the set (with several, any of them may have excluded the node).
fn outside_verdicts(
    snap: &Snapshot,
    allowed: &BTreeSet<String>,
    narrowed_by: &[&'static str],
    status: &Status,
) -> Vec<FilterVerdict> {
    let plugin = match narrowed_by {
        [one] => Some(*one),
        _ => None,
    };
    snap.nodes
        .iter()
        .filter(|n| !allowed.contains(&n.name))
        .map(|n| FilterVerdict {
            node: n.key.clone(),
            passed: false,
            plugin,
            reasons: Some(status.reasons.clone()),
            code: status.code,
            pre_filter: true,
        })
        .collect()
}

fn note_nomination(trace: &mut PodTrace, post: &postfilter::PostFilterOutcome) {
    if let Some(n) = &post.nominated {
        trace.notes.push(format!(
            "{DEFAULT_PREEMPTION}: evicting {} lower-priority pod(s) on {n} would make room ({}); kube-scheduler — and the scheduler loop of `kexplore serve` — sets the pod's nominatedNodeName to {n}, deletes them and binds the pod once they are gone; this simulation deletes nothing",
            post.victims.len(),
            post.victims.join(", ")
        ));
        trace.preemption = Some(Preemption {
            node: n.clone(),
            victims: post.victims.clone(),
        });
    }
}

fn not_simulated_note(name: &str, cx: &CycleContext) -> Option<String> {
    match name {
        volumes::DYNAMIC_RESOURCES if cx.pod.has_resource_claims => Some(format!(
            "{name}: the pod has resource claims; DRA allocation is not simulated (treated as passing)"
        )),
        volumes::VOLUME_BINDING if cx.snapshot.volumes.is_some() => None,
        n if volumes::VOLUME_PLUGINS.contains(&n) => Some(format!(
            "{name}: the pod has volume(s) {:?} this plugin would judge; not simulated (treated as passing)",
            cx.pod.judged_volumes
        )),
        _ => None,
    }
}

/// Runs PreScore, Score, NormalizeScore and weights over `feasible` (snapshot indices).
pub fn score(
    profile: &Profile,
    cx: &CycleContext,
    feasible: &[usize],
    prescore: &mut Vec<PhaseRecord>,
) -> Vec<NodeScore> {
    let mut out: Vec<NodeScore> = feasible
        .iter()
        .map(|&n| NodeScore {
            node: cx.snapshot.nodes[n].key.clone(),
            total: 0,
            plugins: Vec::with_capacity(profile.scores.len()),
        })
        .collect();
    let mut raw = vec![0i64; feasible.len()];
    for (name, weight) in &profile.scores {
        let Some(mut p) = new_score(name, &profile.args) else {
            continue;
        };
        let status = p.pre_score(cx, feasible);
        prescore.push(PhaseRecord {
            plugin: p.name(),
            code: status.code,
            reasons: status.reasons.clone(),
            node_names: None,
        });
        if status.code == Code::Skip {
            continue;
        }
        for (i, &n) in feasible.iter().enumerate() {
            raw[i] = p.score(cx, &cx.snapshot.nodes[n]);
        }
        let mut norm = raw.clone();
        p.normalize(cx, feasible, &mut norm);
        for (i, ns) in out.iter_mut().enumerate() {
            let weighted = norm[i] * weight;
            ns.total += weighted;
            ns.plugins.push(PluginScore {
                name: p.name(),
                raw: raw[i],
                normalized: norm[i],
                weight: *weight,
                weighted,
            });
        }
    }
    out
}

impl Scheduler {
    /// A scheduler with the given profiles (None: the version's default profile).
    pub fn new(version: KubeVersion, profiles: Option<Vec<Profile>>, seed: u64) -> Scheduler {
        let profiles = profiles.unwrap_or_else(|| {
            if version.is_legacy() {
                Vec::new()
            } else {
                vec![Profile::default_for(version)]
            }
        });
        Scheduler {
            version,
            profiles: profiles.into_iter().map(Arc::new).collect(),
            next_start_node_index: 0,
            full_breakdown: false,
            rng: SplitMix64::new(seed),
            legacy_last_node_index: 0,
        }
    }

    /// Decides where `pod` goes on `snap` (which it does not change) and says why.
    pub fn schedule_one(&mut self, snap: &Snapshot, pod: &PodInfo) -> PodTrace {
        if self.version.is_legacy() {
            return legacy::schedule_one(self, snap, pod);
        }
        let Some(profile) = self
            .profiles
            .iter()
            .find(|p| p.scheduler_name == pod.scheduler_name)
            .cloned()
        else {
            let mut t = PodTrace::new(
                pod.key(),
                &pod.scheduler_name,
                self.version.to_string(),
                snap.num_nodes(),
            );
            t.notes.push(format!(
                "no profile is named {:?}: kube-scheduler leaves this pod to another scheduler",
                pod.scheduler_name
            ));
            return t;
        };
        let cx = CycleContext {
            snapshot: snap,
            pod,
            version: self.version,
        };
        let mut trace = PodTrace::new(
            pod.key(),
            &profile.scheduler_name,
            self.version.to_string(),
            snap.num_nodes(),
        );
        trace.priority = pod.priority;
        if snap.nodes.is_empty() {
            trace.message = Some("no nodes available to schedule pods".into());
            return trace;
        }
        let (filters, verdict) = pre_filter(&profile, &cx, &mut trace);
        let (allowed, narrowed_by) = match verdict {
            PreFilterVerdict::Rejected(status, plugin) => {
                for n in &snap.nodes {
                    trace.filter.push(FilterVerdict {
                        node: n.key.clone(),
                        passed: false,
                        plugin: Some(plugin),
                        reasons: Some(status.reasons.clone()),
                        code: status.code,
                        pre_filter: true,
                    });
                }
                let post = postfilter::run(&profile, &cx, &filters, &trace.filter, None);
                note_nomination(&mut trace, &post);
                trace.message = Some(postfilter::fit_error(
                    snap.num_nodes(),
                    Some(&status.message()),
                    &trace.filter,
                    None,
                    post.message,
                ));
                return trace;
            }
            PreFilterVerdict::Proceed(allowed, narrowed_by) => (allowed, narrowed_by),
        };
        let nodes: Vec<usize> = match &allowed {
            None => (0..snap.nodes.len()).collect(),
            // Upstream walks a Go map of names here; snapshot order is one of its orders.
            Some(names) => (0..snap.nodes.len())
                .filter(|&i| names.contains(&snap.nodes[i].name))
                .collect(),
        };
        let absent = allowed.as_ref().map(|_| absent_status(&narrowed_by));

        let mut to_find =
            num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, nodes.len());
        if !profile.has_score_plugins() {
            to_find = to_find.min(1);
        }
        trace.num_feasible_nodes_to_find = to_find;
        let start = self.next_start_node_index;
        trace.start_index = start % nodes.len().max(1);
        let mut feasible = Vec::with_capacity(to_find);
        trace.filter.reserve(to_find.min(nodes.len()));
        let mut processed = 0;
        for i in 0..nodes.len() {
            let n = nodes[(start + i) % nodes.len()];
            let v = filters.run(&cx, &snap.nodes[n]);
            processed += 1;
            if v.passed {
                feasible.push(n);
            }
            trace.filter.push(v);
            if feasible.len() >= to_find {
                break;
            }
        }
        if processed < nodes.len() {
            let order: Arc<[Name]> = match &allowed {
                None => snap.node_keys.clone(),
                Some(_) => nodes.iter().map(|&i| snap.nodes[i].key.clone()).collect(),
            };
            let first = (start + processed) % nodes.len();
            trace.skipped_by_sampling = NodeRun::new(order, first, nodes.len() - processed);
        }
        self.next_start_node_index = (start + processed) % snap.nodes.len();
        trace.nodes_feasible = feasible.len();
        let outside = match (&allowed, &absent) {
            (Some(names), Some(status)) => outside_verdicts(snap, names, &narrowed_by, status),
            _ => Vec::new(),
        };
        if self.full_breakdown {
            let mut b = self.breakdown(&profile, &cx, &filters, &nodes, start);
            b.filter.extend(outside.iter().cloned());
            trace.breakdown = Some(b);
        }
        trace.filter.extend(outside);

        match feasible.len() {
            0 => {
                let post = postfilter::run(&profile, &cx, &filters, &trace.filter, absent.as_ref());
                note_nomination(&mut trace, &post);
                trace.message = Some(postfilter::fit_error(
                    snap.num_nodes(),
                    None,
                    &trace.filter,
                    absent.as_ref(),
                    post.message,
                ));
            }
            1 => {
                trace.selected = Some(snap.nodes[feasible[0]].name.clone());
                trace.tie_break = Some(
                    "the only feasible node: selected without scoring, as kube-scheduler does"
                        .into(),
                );
            }
            _ => {
                trace.score = score(&profile, &cx, &feasible, &mut trace.prescore);
                trace.nodes_scored = trace.score.len();
                self.select_host(&mut trace);
            }
        }
        trace
    }

    /// selectHost (v1.27+): the first best total, replaced by the k-th equal one with
    /// probability 1/k (reservoir sampling) — uniform among the tied nodes.
    fn select_host(&mut self, trace: &mut PodTrace) {
        let best = trace.score.iter().map(|s| s.total).max().unwrap_or(0);
        let mut selected = None;
        let mut count = 0u64;
        for s in trace.score.iter().filter(|s| s.total == best) {
            count += 1;
            trace.tied.push(s.node.clone());
            if count == 1 || self.rng.below(count) == 0 {
                selected = Some(s.node.clone());
            }
        }
        trace.tie_break = Some(if count > 1 {
            format!("chosen at random among {count} tied nodes (SplitMix64, --seed)")
        } else {
            "highest total score".into()
        });
        trace.selected = selected.map(|n: Name| n.to_string());
    }

    fn breakdown(
        &self,
        profile: &Profile,
        cx: &CycleContext,
        filters: &Filters,
        nodes: &[usize],
        start: usize,
    ) -> Breakdown {
        let mut b = Breakdown::default();
        let mut feasible = Vec::new();
        for i in 0..nodes.len() {
            let n = nodes[(start + i) % nodes.len()];
            let v = filters.run(cx, &cx.snapshot.nodes[n]);
            if v.passed {
                feasible.push(n);
            }
            b.filter.push(v);
        }
        if !feasible.is_empty() {
            let mut scratch = Vec::new();
            b.score = score(profile, cx, &feasible, &mut scratch);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::num_feasible_nodes_to_find as f;

    #[test]
    fn sampling_numbers() {
        assert_eq!(f(None, 3), 3);
        assert_eq!(f(None, 99), 99);
        assert_eq!(f(None, 500), 230);
        assert_eq!(f(None, 5000), 500);
        assert_eq!(f(None, 6000), 300);
        assert_eq!(f(Some(50), 150), 100);
        assert_eq!(f(Some(100), 5000), 5000);
    }
}

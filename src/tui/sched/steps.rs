//! The scheduler cycle as steps a presenter walks through: the nodes, the filter plugins (each
//! plugin that rejected a node on its own step; runs of plugins that rejected none share one),
//! optionally "which node wins?", the score plugins one by one, and the result. Each node's
//! state at a step comes from the trace: filters stop at the first failure, so a node that
//! failed earlier is out, one that fails at this step shows upstream's reason.

use std::collections::BTreeMap;

use super::model::Model;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Nodes,
    /// Indices into `Model::filters`, consecutive.
    Filter(Vec<usize>),
    /// Ask the audience before the scores are shown.
    Predict,
    /// Index into each `NodeScore::plugins`.
    Score(usize),
    Result,
}

/// The steps for this model; `predict` adds the guess before scoring (presenter mode).
pub fn steps(m: &Model, predict: bool) -> Vec<Step> {
    let mut out = vec![Step::Nodes];
    let mut run: Vec<usize> = Vec::new();
    for (i, name) in m.filters.iter().enumerate() {
        let rejected = m
            .trace
            .filter
            .iter()
            .any(|v| !v.passed && v.plugin == Some(name.as_str()));
        if rejected {
            if !run.is_empty() {
                out.push(Step::Filter(std::mem::take(&mut run)));
            }
            out.push(Step::Filter(vec![i]));
        } else {
            run.push(i);
        }
    }
    if !run.is_empty() {
        out.push(Step::Filter(run));
    }
    let scored = score_plugins(m).len();
    if scored > 0 && m.trace.score.len() > 1 {
        if predict {
            out.push(Step::Predict);
        }
        out.extend((0..scored).map(Step::Score));
    }
    out.push(Step::Result);
    out
}

/// The score plugins that ran, with weights, in the order the trace lists them.
pub fn score_plugins(m: &Model) -> Vec<(&'static str, i64)> {
    m.trace
        .score
        .first()
        .map(|s| s.plugins.iter().map(|p| (p.name, p.weight)).collect())
        .unwrap_or_default()
}

/// A node's state at a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeState<'a> {
    /// Sampling stopped before this node was looked at.
    NotEvaluated,
    /// Passed every filter up to and including this step's.
    Passing,
    /// Failed at this step's plugin: the plugin and upstream's reasons.
    FailsHere(&'a str, &'a [String]),
    /// Failed at an earlier step's plugin.
    Out(&'a str),
}

/// The state of snapshot node `k` once filter plugins up to index `upto` (inclusive) ran;
/// `here` are the plugins of the current step.
pub fn node_state<'a>(m: &'a Model, k: usize, here: &[usize], upto: usize) -> NodeState<'a> {
    let Some(v) = m
        .verdict_of
        .get(k)
        .copied()
        .flatten()
        .map(|i| &m.trace.filter[i])
    else {
        return NodeState::NotEvaluated;
    };
    if v.passed {
        return NodeState::Passing;
    }
    let plugin = v.plugin.unwrap_or("?");
    let at = m.filters.iter().position(|f| f == plugin);
    match at {
        // A PreFilter rejection names a plugin that may not be a filter: it applies from the start.
        None => NodeState::Out(plugin),
        Some(i) if here.contains(&i) => NodeState::FailsHere(plugin, v.reasons()),
        // Decided at PreFilter (outside its PreFilterResult): out before any Filter ran.
        Some(_) if v.pre_filter => NodeState::Out(plugin),
        Some(i) if i < here.first().copied().unwrap_or(0) => NodeState::Out(plugin),
        Some(i) if i <= upto => NodeState::Out(plugin),
        Some(_) => NodeState::Passing,
    }
}

/// For a filter step: how many nodes each reason rejected (a reason per line, like FitError).
pub fn rejections(m: &Model, here: &[usize]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for v in &m.trace.filter {
        if v.passed {
            continue;
        }
        let Some(i) = v.plugin.and_then(|p| m.filters.iter().position(|f| f == p)) else {
            continue;
        };
        if here.contains(&i) {
            for r in v.reasons() {
                *out.entry(r.clone()).or_default() += 1;
            }
        }
    }
    out
}

/// The running total of node score `s` after score plugins `0..=j`.
pub fn running_total(m: &Model, s: usize, j: usize) -> i64 {
    m.trace.score[s]
        .plugins
        .iter()
        .take(j + 1)
        .map(|p| p.weighted)
        .sum()
}

/// What the room may guess at "which node wins?": the nodes that passed the filter, by name,
/// keys 1–9.
pub fn candidates(m: &Model) -> Vec<String> {
    let mut c: Vec<String> = m.trace.score.iter().map(|s| s.node.to_string()).collect();
    c.sort();
    c.truncate(9);
    c
}

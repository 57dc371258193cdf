//! The scheduling framework's vocabulary: status codes, statuses, the cycle context and the
//! extension-point traits each plugin implements (PreFilter+Filter, PreScore+Score+Normalize).
//!
//! Plugin instances are created per cycle, so per-cycle state (what upstream keeps in
//! CycleState) lives in the plugin value itself between PreFilter and Filter.

use std::collections::BTreeSet;

use serde::Serialize;

use super::podinfo::PodInfo;
use super::snapshot::{NodeInfo, Snapshot};
use super::version::KubeVersion;

/// `MaxNodeScore` (renamed `MaxScore` in v1.36; same value).
pub const MAX_NODE_SCORE: i64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub enum Code {
    Success,
    Error,
    Unschedulable,
    UnschedulableAndUnresolvable,
    Skip,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Skip => "Skip",
        }
    }

    pub fn parse(s: &str) -> Option<Code> {
        Some(match s {
            "Success" => Code::Success,
            "Error" => Code::Error,
            "Unschedulable" => Code::Unschedulable,
            "UnschedulableAndUnresolvable" => Code::UnschedulableAndUnresolvable,
            "Skip" => Code::Skip,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    pub code: Code,
    pub reasons: Vec<String>,
}

impl Status {
    pub fn success() -> Status {
        Status {
            code: Code::Success,
            reasons: Vec::new(),
        }
    }

    pub fn skip() -> Status {
        Status {
            code: Code::Skip,
            reasons: Vec::new(),
        }
    }

    pub fn new(code: Code, reason: impl Into<String>) -> Status {
        Status {
            code,
            reasons: vec![reason.into()],
        }
    }

    pub fn unschedulable(reason: impl Into<String>) -> Status {
        Status::new(Code::Unschedulable, reason)
    }

    pub fn unresolvable(reason: impl Into<String>) -> Status {
        Status::new(Code::UnschedulableAndUnresolvable, reason)
    }

    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable
        )
    }

    /// `Status.Message()`: the reasons joined by ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// What every plugin of one cycle can read.
pub struct CycleContext<'a> {
    pub snapshot: &'a Snapshot,
    pub pod: &'a PodInfo,
    pub version: KubeVersion,
}

/// A PreFilter's result: a status and optionally the only node names worth filtering.
pub struct PreFilterOutcome {
    pub status: Status,
    pub node_names: Option<BTreeSet<String>>,
}

impl PreFilterOutcome {
    pub fn success() -> Self {
        PreFilterOutcome {
            status: Status::success(),
            node_names: None,
        }
    }
    pub fn skip() -> Self {
        PreFilterOutcome {
            status: Status::skip(),
            node_names: None,
        }
    }
    pub fn status(status: Status) -> Self {
        PreFilterOutcome {
            status,
            node_names: None,
        }
    }
}

/// PreFilter + Filter of one plugin.
pub trait FilterPlugin {
    fn name(&self) -> &'static str;

    /// Runs once per cycle before any Filter. Default: nothing to prepare.
    fn pre_filter(&mut self, _cx: &CycleContext) -> PreFilterOutcome {
        PreFilterOutcome::success()
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status;
}

/// PreScore + Score + NormalizeScore of one plugin.
pub trait ScorePlugin {
    fn name(&self) -> &'static str;

    /// Runs once per cycle over the feasible nodes (indices into the snapshot). Returning
    /// Skip leaves this plugin out of every node's total.
    fn pre_score(&mut self, _cx: &CycleContext, _feasible: &[usize]) -> Status {
        Status::success()
    }

    fn score(&self, cx: &CycleContext, node: &NodeInfo) -> i64;

    /// Rewrites the raw scores (aligned with `feasible`) in place. Default: none.
    fn normalize(&self, _cx: &CycleContext, _feasible: &[usize], _scores: &mut [i64]) {}
}

/// `DefaultNormalizeScore`: scale to 0..=max by the highest score; reversed on request.
pub fn default_normalize(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    let max = scores.iter().copied().fold(0, i64::max);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|s| *s = max_priority);
        }
        return;
    }
    for s in scores.iter_mut() {
        *s = max_priority * *s / max;
        if reverse {
            *s = max_priority - *s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_reverse() {
        let mut s = [0, 1, 2];
        default_normalize(100, true, &mut s);
        assert_eq!(s, [100, 50, 0]);
        let mut s = [2, 11, 4];
        default_normalize(100, false, &mut s);
        assert_eq!(s, [18, 100, 36]);
        let mut s = [0, 0];
        default_normalize(100, true, &mut s);
        assert_eq!(s, [100, 100]);
    }
}

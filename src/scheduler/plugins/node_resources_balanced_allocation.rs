//! NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay close to each
//! other. Float arithmetic, exactly as upstream (it is the one score that uses floats).

use super::resource_allocation::{ResourceSpec, default_resources, pod_request, with_vectors};
use crate::scheduler::framework::{CycleContext, MAX_NODE_SCORE, ScorePlugin, Status};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodeResourcesBalancedAllocation";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "Balanced";

pub struct BalancedAllocation {
    pub resources: Vec<ResourceSpec>,
    pod_requests: Vec<i64>,
}

impl BalancedAllocation {
    pub fn new(resources: Option<Vec<ResourceSpec>>) -> Self {
        BalancedAllocation {
            resources: resources.unwrap_or_else(default_resources),
            pod_requests: Vec::new(),
        }
    }
}

/// `balancedResourceScorer`: (1 − std of the capped fractions) × 100, truncated.
pub fn balanced_score(requested: &[i64], allocatable: &[i64]) -> i64 {
    // Fractions in order, on the stack for the usual handful of resources.
    let mut inline = [0.0f64; 8];
    let mut heap = Vec::new();
    let mut count = 0;
    let mut total = 0.0f64;
    for (r, a) in requested.iter().zip(allocatable) {
        if *a == 0 {
            continue;
        }
        let f = (*r as f64 / *a as f64).min(1.0);
        total += f;
        if count < inline.len() {
            inline[count] = f;
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&inline);
            }
            heap.push(f);
        }
        count += 1;
    }
    let fractions: &[f64] = if count <= inline.len() {
        &inline[..count]
    } else {
        &heap
    };
    let std = match fractions.len() {
        2 => ((fractions[0] - fractions[1]) / 2.0).abs(),
        n if n > 2 => {
            let mean = total / n as f64;
            let sum: f64 = fractions.iter().map(|f| (f - mean) * (f - mean)).sum();
            (sum / n as f64).sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

impl ScorePlugin for BalancedAllocation {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, _feasible: &[usize]) -> Status {
        self.pod_requests = self
            .resources
            .iter()
            .map(|r| pod_request(cx.pod, &r.name, true))
            .collect();
        // From v1.33 best-effort pods are skipped so they do not all pile onto one node
        // (#130260, fixing #129138).
        if cx.version.balanced_skips_best_effort() && self.pod_requests.iter().all(|v| *v == 0) {
            return Status::skip();
        }
        Status::success()
    }

    fn score(&self, cx: &CycleContext, node: &NodeInfo) -> i64 {
        let with_pod = with_vectors(
            node,
            &self.resources,
            &self.pod_requests,
            true,
            true,
            balanced_score,
        );
        if !cx.version.balanced_with_and_without_pod() {
            return with_pod;
        }
        // v1.36 (#135573): score how much the pod improves or worsens the node's balance.
        let without_pod = with_vectors(
            node,
            &self.resources,
            &self.pod_requests,
            true,
            false,
            balanced_score,
        );
        MAX_NODE_SCORE / 2 + (MAX_NODE_SCORE / 2 + with_pod - without_pod) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::balanced_score;

    #[test]
    fn two_and_three_resources() {
        // fractions 0.75 and 0.5 → std 0.125 → 87
        assert_eq!(balanced_score(&[3, 1], &[4, 2]), 87);
        assert_eq!(balanced_score(&[1, 1], &[2, 2]), 100);
        assert_eq!(balanced_score(&[1, 0], &[2, 0]), 100);
        // 3 fractions 1, 0, 0.5: mean .5, var (.25+.25+0)/3 → std .408 → 59
        assert_eq!(balanced_score(&[2, 0, 1], &[2, 2, 2]), 59);
    }
}

//! NodeResourcesFit: Filter checks pod count, cpu, memory, ephemeral-storage and every scalar
//! resource against allocatable minus what the node's pods request; Score applies the
//! configured strategy (LeastAllocated by default, MostAllocated, RequestedToCapacityRatio).

use super::resource_allocation::{ResourceSpec, default_resources, pod_request, with_vectors};
use crate::scheduler::framework::{
    Code, CycleContext, FilterPlugin, MAX_NODE_SCORE, ScorePlugin, Status,
};
use crate::scheduler::snapshot::NodeInfo;

pub const NAME: &str = "NodeResourcesFit";
/// The label narrow columns and one-line sums use (the CLI's score table, view 5).
pub const SHORT: &str = "Fit";
/// `MaxCustomPriorityScore`: RequestedToCapacityRatio shape scores are 0..10.
const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
const MAX_UTILIZATION: i64 = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScoringStrategy {
    LeastAllocated,
    MostAllocated,
    /// Shape points (utilization 0..100, score 0..10), sorted by utilization.
    RequestedToCapacityRatio(Vec<(i64, i64)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitArgs {
    pub strategy: ScoringStrategy,
    pub resources: Vec<ResourceSpec>,
    pub ignored_resources: Vec<String>,
    pub ignored_resource_groups: Vec<String>,
}

impl Default for FitArgs {
    fn default() -> Self {
        FitArgs {
            strategy: ScoringStrategy::LeastAllocated,
            resources: default_resources(),
            ignored_resources: Vec::new(),
            ignored_resource_groups: Vec::new(),
        }
    }
}

/// Extended resources: a "/" and not in the `kubernetes.io/` native namespace.
fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

pub struct NodeResourcesFit {
    pub args: FitArgs,
}

impl FilterPlugin for NodeResourcesFit {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, cx: &CycleContext, node: &NodeInfo) -> Status {
        let req = &cx.pod.requests.actual;
        let mut reasons: Vec<String> = Vec::new();
        let mut unresolvable = false;
        if node.pods.len() as i64 + 1 > node.allowed_pod_number {
            reasons.push("Too many pods".into());
        }
        if req.milli_cpu == 0
            && req.memory == 0
            && req.ephemeral_storage == 0
            && req.scalars.is_empty()
        {
            return finish(reasons, false, cx);
        }
        let mut check = |name: &str, want: i64, alloc: i64, used: i64| {
            if want > 0 && want > alloc - used {
                reasons.push(format!("Insufficient {name}"));
                unresolvable |= want > alloc;
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
        // Upstream walks a Go map here (random order); sorted by name is one of its orders.
        for (name, want) in &req.scalars {
            if *want == 0 {
                continue;
            }
            if is_extended(name) {
                let group = name.split('/').next().unwrap_or("");
                if self.args.ignored_resources.iter().any(|r| r == name)
                    || self.args.ignored_resource_groups.iter().any(|g| g == group)
                {
                    continue;
                }
            }
            check(
                name,
                *want,
                node.allocatable.scalar(name),
                node.requested.scalar(name),
            );
        }
        finish(reasons, unresolvable, cx)
    }
}

fn finish(reasons: Vec<String>, unresolvable: bool, cx: &CycleContext) -> Status {
    if reasons.is_empty() {
        return Status::success();
    }
    let code = if unresolvable && cx.version.fit_unresolvable_above_allocatable() {
        Code::UnschedulableAndUnresolvable
    } else {
        Code::Unschedulable
    };
    Status { code, reasons }
}

pub struct NodeResourcesFitScore {
    pub args: FitArgs,
    pod_requests: Vec<i64>,
}

impl NodeResourcesFitScore {
    pub fn new(args: FitArgs) -> Self {
        NodeResourcesFitScore {
            args,
            pod_requests: Vec::new(),
        }
    }
}

fn least_requested(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

fn most_requested(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    // Non-zero defaults can push requested above capacity.
    requested.min(capacity) * MAX_NODE_SCORE / capacity
}

/// `BuildBrokenLinearFunction` over shape points already scaled to 0..100 scores.
pub fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for i in 0..shape.len() {
        if p <= shape[i].0 {
            if i == 0 {
                return shape[0].1;
            }
            let (u0, s0) = shape[i - 1];
            let (u1, s1) = shape[i];
            return s0 + (s1 - s0) * (p - u0) / (u1 - u0);
        }
    }
    shape.last().map(|s| s.1).unwrap_or(0)
}

impl NodeResourcesFitScore {
    fn weighted(&self, requested: &[i64], allocatable: &[i64]) -> i64 {
        let (mut sum, mut weights) = (0i64, 0i64);
        match &self.args.strategy {
            ScoringStrategy::LeastAllocated | ScoringStrategy::MostAllocated => {
                let most = self.args.strategy == ScoringStrategy::MostAllocated;
                for (i, r) in self.args.resources.iter().enumerate() {
                    if allocatable[i] == 0 {
                        continue;
                    }
                    let s = if most {
                        most_requested(requested[i], allocatable[i])
                    } else {
                        least_requested(requested[i], allocatable[i])
                    };
                    sum += s * r.weight;
                    weights += r.weight;
                }
                if weights == 0 { 0 } else { sum / weights }
            }
            ScoringStrategy::RequestedToCapacityRatio(points) => {
                let scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
                let shape: Vec<(i64, i64)> = points.iter().map(|(u, s)| (*u, s * scale)).collect();
                for (i, r) in self.args.resources.iter().enumerate() {
                    if allocatable[i] == 0 {
                        continue;
                    }
                    let u = if requested[i] > allocatable[i] {
                        MAX_UTILIZATION
                    } else {
                        requested[i] * MAX_UTILIZATION / allocatable[i]
                    };
                    let s = broken_linear(&shape, u);
                    if s > 0 {
                        sum += s * r.weight;
                        weights += r.weight;
                    }
                }
                if weights == 0 {
                    0
                } else {
                    // math.Round: half away from zero, as f64::round.
                    (sum as f64 / weights as f64).round() as i64
                }
            }
        }
    }
}

impl ScorePlugin for NodeResourcesFitScore {
    fn name(&self) -> &'static str {
        NAME
    }

    fn pre_score(&mut self, cx: &CycleContext, _feasible: &[usize]) -> Status {
        self.pod_requests = self
            .args
            .resources
            .iter()
            .map(|r| pod_request(cx.pod, &r.name, false))
            .collect();
        Status::success()
    }

    fn score(&self, _cx: &CycleContext, node: &NodeInfo) -> i64 {
        with_vectors(
            node,
            &self.args.resources,
            &self.pod_requests,
            false,
            true,
            |req, alloc| self.weighted(req, alloc),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies() {
        // least_allocated_test: cpu 3000/4000 → 25, memory 5000/10000 → 50 → 37
        let s = NodeResourcesFitScore::new(FitArgs::default());
        assert_eq!(s.weighted(&[3000, 5000], &[4000, 10000]), 37);
        let s = NodeResourcesFitScore::new(FitArgs {
            strategy: ScoringStrategy::MostAllocated,
            ..FitArgs::default()
        });
        assert_eq!(s.weighted(&[300, 600], &[250, 1000]), 80);
        assert_eq!(broken_linear(&[(0, 0), (100, 100)], 25), 25);
        let mut a = FitArgs {
            strategy: ScoringStrategy::RequestedToCapacityRatio(vec![(0, 0), (100, 1)]),
            ..FitArgs::default()
        };
        a.resources.truncate(1);
        let s = NodeResourcesFitScore::new(a);
        assert_eq!(s.weighted(&[25], &[100]), 2);
    }
}

//! DefaultPreemption's choice of victims (upstream `framework/preemption` and
//! `plugins/defaultpreemption`): on each node that failed Filter, evict every lower-priority
//! pod and check that the pod then fits; then give back ("reprieve") as many of them as still
//! leave room, the most important first and the ones a PodDisruptionBudget protects before the
//! others. Among the nodes where preemption works, `pickOneNodeForPreemption` prefers the
//! fewest PDB violations, then the lowest highest-priority victim, the smallest sum of victim
//! priorities, and the fewest victims; the first such node in the scheduler's order wins.

use super::cycle::Filters;
use super::framework::CycleContext;
use super::nodeinfo::NodeInfo;
use super::selector::Selector;
use super::snapshot::PodId;

/// A PodDisruptionBudget as preemption reads it: whose pods, and how many may still go.
#[derive(Debug, Clone)]
pub struct DisruptionBudget {
    pub namespace: String,
    pub selector: Selector,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
}

/// The pods to evict on one node, and how many of them a PDB protects.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub node: String,
    pub victims: Vec<PodId>,
    pub pdb_violations: usize,
}

/// `SelectVictimsOnNode`: `Err` carries the node's reasons when evicting every lower-priority
/// pod does not make room (or there is none).
pub fn select_victims_on_node(
    cx: &CycleContext,
    filters: &Filters,
    node: &NodeInfo,
) -> Result<Candidate, Vec<String>> {
    let snap = cx.snapshot;
    let mut potential: Vec<PodId> = node
        .pods
        .iter()
        .copied()
        .filter(|&id| snap.pods[id].priority < cx.pod.priority)
        .collect();
    if potential.is_empty() {
        return Err(vec![super::postfilter::NO_VICTIMS.to_string()]);
    }
    let all_gone = filters.run(cx, &node.without_pods(snap, &potential));
    if !all_gone.passed {
        return Err(all_gone.reasons.unwrap_or_default());
    }
    // `MoreImportantPod`: higher priority, then the earlier start.
    potential.sort_by(|&a, &b| {
        let (pa, pb) = (&snap.pods[a], &snap.pods[b]);
        pb.priority.cmp(&pa.priority).then(
            pa.creation_timestamp
                .unwrap_or(i128::MAX)
                .cmp(&pb.creation_timestamp.unwrap_or(i128::MAX)),
        )
    });
    let (violating, non_violating) = split_by_pdb(cx, &potential);
    let mut victims = potential.clone();
    let mut pdb_violations = 0;
    for (ids, protected) in [(violating, true), (non_violating, false)] {
        for id in ids {
            let without: Vec<PodId> = victims.iter().copied().filter(|&v| v != id).collect();
            if filters.run(cx, &node.without_pods(snap, &without)).passed {
                victims = without;
            } else if protected {
                pdb_violations += 1;
            }
        }
    }
    Ok(Candidate {
        node: node.name.clone(),
        victims,
        pdb_violations,
    })
}

/// `filterPodsWithPDBViolation`: each pod uses up one allowed disruption of every budget that
/// selects it; a pod past a budget's allowance would violate it.
fn split_by_pdb(cx: &CycleContext, pods: &[PodId]) -> (Vec<PodId>, Vec<PodId>) {
    let budgets = &cx.snapshot.disruption_budgets;
    let mut allowed: Vec<i32> = budgets.iter().map(|b| b.disruptions_allowed).collect();
    let (mut violating, mut non_violating) = (Vec::new(), Vec::new());
    for &id in pods {
        let p = &cx.snapshot.pods[id];
        let mut violated = false;
        for (i, b) in budgets.iter().enumerate() {
            if b.namespace != p.namespace || b.selector.is_empty() || !b.selector.matches(&p.labels)
            {
                continue;
            }
            allowed[i] -= 1;
            if allowed[i] < 0 {
                violated = true;
            }
        }
        if violated {
            violating.push(id);
        } else {
            non_violating.push(id);
        }
    }
    (violating, non_violating)
}

/// `pickOneNodeForPreemption`, short of its last rule (the latest start among the
/// highest-priority victims): the first candidate in the scheduler's order wins a tie.
pub fn pick_one(cx: &CycleContext, candidates: Vec<Candidate>) -> Option<Candidate> {
    let pods = &cx.snapshot.pods;
    candidates.into_iter().min_by_key(|c| {
        let highest = c
            .victims
            .iter()
            .map(|&v| pods[v].priority)
            .max()
            .unwrap_or(i32::MIN);
        // Upstream adds MaxInt32+1 per victim so negative priorities still sum upwards.
        let sum: i64 = c
            .victims
            .iter()
            .map(|&v| i64::from(pods[v].priority) + i64::from(i32::MAX) + 1)
            .sum();
        (c.pdb_violations, highest, sum, c.victims.len())
    })
}

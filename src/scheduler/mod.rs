//! A pure, deterministic simulation of kube-scheduler (see ../shared/specs/scheduler.md):
//! no clock, no I/O, no hidden randomness (the tie-break draws from a seeded SplitMix64).
//!
//! Entry points:
//! * [`Scheduler::schedule_one`] — one pod's whole cycle on a [`Snapshot`], as a [`PodTrace`];
//! * [`simulate`] — pending pods in queue order, each placement updating the snapshot;
//! * [`run_filter_plugin`] / [`run_score_plugin`] — one plugin alone, as upstream's plugin
//!   unit tests exercise it (used by the fixture runner and the TUI's per-plugin view).

pub mod cycle;
pub mod framework;
pub mod generate;
pub mod legacy;
pub mod manifests;
pub mod nodeinfo;
pub mod plugins;
pub mod podinfo;
pub mod postfilter;
pub mod preemption;
pub mod profile;
pub mod quantity;
pub mod release;
pub mod requests;
pub mod rng;
pub mod selector;
pub mod snapshot;
pub mod spread_why;
pub mod term_index;
#[cfg(test)]
pub(crate) mod testutil;
pub mod trace;
pub mod version;
pub mod why;
pub mod world;

pub use cycle::Scheduler;

/// The schedulerName of kube-scheduler's default profile, and of every pod that names none.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";
pub use framework::{Code, CycleContext, Status};
pub use podinfo::PodInfo;
pub use profile::Profile;
pub use snapshot::{NodeInfo, Snapshot, SnapshotError};
pub use trace::PodTrace;
pub use version::KubeVersion;

use plugins::{PluginArgs, new_filter, new_score};

/// Queue order (PrioritySort): higher priority first, then earlier creation, then input order.
/// A pod without `creationTimestamp` would get one when created, i.e. after every existing
/// one: it sorts after the timestamped pods of its priority, in input order.
pub fn queue_order(pending: &[PodInfo]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..pending.len()).collect();
    idx.sort_by_key(|&i| {
        let p = &pending[i];
        (
            std::cmp::Reverse(p.priority),
            p.creation_timestamp.unwrap_or(i128::MAX),
            i,
        )
    });
    idx
}

/// Schedules `pending` one by one in queue order; each placement is added to `snap` before the
/// next pod is considered. Pods with scheduling gates stay out of the queue (SchedulingGates).
pub fn simulate(
    scheduler: &mut Scheduler,
    snap: &mut Snapshot,
    pending: Vec<PodInfo>,
) -> Vec<PodTrace> {
    let mut out = Vec::with_capacity(pending.len());
    simulate_each(scheduler, snap, pending, |t| out.push(t));
    out
}

/// `simulate`, handing each trace to `f` as soon as its cycle ends instead of keeping them all
/// (a 5,000-node trace holds hundreds of verdicts and scores; a scheduler loop needs none).
pub fn simulate_each(
    scheduler: &mut Scheduler,
    snap: &mut Snapshot,
    pending: Vec<PodInfo>,
    mut f: impl FnMut(PodTrace),
) {
    let order = queue_order(&pending);
    let mut slots: Vec<Option<PodInfo>> = pending.into_iter().map(Some).collect();
    for i in order {
        let Some(pod) = slots[i].take() else { continue };
        if pod.scheduling_gated {
            let mut t = PodTrace::new(
                pod.key(),
                &pod.scheduler_name,
                scheduler.version.to_string(),
                snap.num_nodes(),
            );
            t.notes.push(
                "SchedulingGates: the pod has scheduling gates and stays out of the active queue"
                    .into(),
            );
            f(t);
            continue;
        }
        let t = scheduler.schedule_one(snap, &pod);
        if let Some(node) = t
            .selected
            .as_ref()
            .and_then(|n| snap.node_index.get(n))
            .copied()
        {
            snap.add_pod(pod, node);
        }
        f(t);
    }
}

/// One Filter plugin's verdicts as its unit tests see them: PreFilter's status, then the
/// plugin's own Filter status on every node in snapshot order (upstream's tests call Filter
/// directly, even after a PreFilter rejection or outside a PreFilterResult). A PreFilter Skip
/// means the framework never runs this Filter: every node passes.
pub struct FilterRun {
    pub pre_filter: Status,
    /// The PreFilterResult node names, when the plugin narrowed the nodes.
    pub pre_filter_nodes: Option<Vec<String>>,
    pub nodes: Vec<(String, Status)>,
}

pub fn run_filter_plugin(
    snap: &Snapshot,
    pod: &PodInfo,
    version: KubeVersion,
    name: &str,
    args: &PluginArgs,
) -> Option<FilterRun> {
    let mut p = new_filter(name, args)?;
    let cx = CycleContext {
        snapshot: snap,
        pod,
        version,
    };
    let pre = p.pre_filter(&cx);
    let nodes = snap
        .nodes
        .iter()
        .map(|n| {
            let s = if pre.status.code == Code::Skip {
                Status::success()
            } else {
                p.filter(&cx, n)
            };
            (n.name.clone(), s)
        })
        .collect();
    Some(FilterRun {
        pre_filter: pre.status,
        pre_filter_nodes: pre.node_names.map(|s| s.into_iter().collect()),
        nodes,
    })
}

/// One Score plugin over `feasible` (snapshot indices; all nodes when None): PreScore's status
/// and each node's final (normalized) score; a skipped plugin scores 0 everywhere.
pub struct ScoreRun {
    pub pre_score: Status,
    pub scores: Vec<(String, i64)>,
}

pub fn run_score_plugin(
    snap: &Snapshot,
    pod: &PodInfo,
    version: KubeVersion,
    name: &str,
    args: &PluginArgs,
    feasible: Option<Vec<usize>>,
) -> Option<ScoreRun> {
    let mut p = new_score(name, args)?;
    let cx = CycleContext {
        snapshot: snap,
        pod,
        version,
    };
    let feasible = feasible.unwrap_or_else(|| (0..snap.nodes.len()).collect());
    let pre = p.pre_score(&cx, &feasible);
    let mut scores: Vec<i64> = vec![0; feasible.len()];
    if pre.code != Code::Skip {
        for (i, &n) in feasible.iter().enumerate() {
            scores[i] = p.score(&cx, &snap.nodes[n]);
        }
        p.normalize(&cx, &feasible, &mut scores);
    }
    Some(ScoreRun {
        pre_score: pre,
        scores: feasible
            .iter()
            .zip(scores)
            .map(|(&n, s)| (snap.nodes[n].name.clone(), s))
            .collect(),
    })
}

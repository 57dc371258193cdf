//! Sampling at scale (spec §6): with ≥ 100 nodes the scheduler stops after
//! numFeasibleNodesToFind feasible nodes and the next cycle starts where this one stopped.

use kexplore::scheduler::generate::{PendingKind, cluster, pending_pod};
use kexplore::scheduler::{Scheduler, Snapshot, simulate, version};

#[test]
fn sampling_and_round_robin_start() {
    let (nodes, pods) = cluster(500, 2);
    let mut snap = Snapshot::build(&nodes, &pods, true).unwrap();
    let pending: Vec<_> = (0..3)
        .map(|i| snap.pod_info(&pending_pod(PendingKind::Plain, i)).unwrap())
        .collect();
    let mut s = Scheduler::new(version::NEWEST, None, 7);
    let traces = simulate(&mut s, &mut snap, pending);
    for (i, t) in traces.iter().enumerate() {
        assert_eq!(t.nodes_total, 500);
        // 500 nodes: adaptive 50 − 500/125 = 46% → 230 feasible nodes wanted.
        assert_eq!(t.num_feasible_nodes_to_find, 230);
        assert_eq!(t.filter.len(), 230);
        assert_eq!(t.skipped_by_sampling.len(), 270);
        assert_eq!(t.start_index, (i * 230) % 500);
        assert_eq!(t.nodes_scored, 230);
        assert!(t.tied.iter().any(|n| n == t.selected.as_ref().unwrap()));
    }
    assert_eq!(snap.pods.len(), 1003);
}

#[test]
fn anti_affinity_groups_never_share_a_node() {
    let (nodes, pods) = cluster(120, 1);
    let mut snap = Snapshot::build(&nodes, &pods, true).unwrap();
    // Groups of ten (i mod 1000): here 30 pods of groups 0..29 ... twice over → pairs per group.
    let pending: Vec<_> = (0..30)
        .chain(1000..1030)
        .map(|i| {
            snap.pod_info(&pending_pod(PendingKind::PodAntiAffinity, i))
                .unwrap()
        })
        .collect();
    let mut s = Scheduler::new(version::NEWEST, None, 1);
    let traces = simulate(&mut s, &mut snap, pending);
    let mut seen = std::collections::HashSet::new();
    for t in &traces {
        let node = t.selected.clone().expect("fits");
        let group = t
            .pod
            .trim_start_matches("default/pending-")
            .parse::<usize>()
            .unwrap()
            % 1000;
        assert!(
            seen.insert((group, node)),
            "two pods of group {group} on one node"
        );
    }
}

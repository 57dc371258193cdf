//! Scheduler benchmarks (docs/BENCHMARKS.md): snapshot build, one pod's full cycle, and
//! throughput of 10,000 pending pods one after another on 5,000 nodes × 30 running pods.
//!
//! Run: cargo bench --bench scheduler
//! Smaller/faster: KEXPLORE_BENCH_NODES=500 cargo bench --bench scheduler

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kexplore::scheduler::generate::{PendingKind, cluster, pending_pod};
use kexplore::scheduler::{PodInfo, Scheduler, Snapshot, simulate_each, version};

fn nodes() -> usize {
    std::env::var("KEXPLORE_BENCH_NODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000)
}

const PODS_PER_NODE: usize = 30;
const PENDING: usize = 10_000;

fn pending(snap: &mut Snapshot, kind: PendingKind) -> Vec<PodInfo> {
    (0..PENDING)
        .map(|i| snap.pod_info(&pending_pod(kind, i)).expect("generated pod"))
        .collect()
}

fn benches(c: &mut Criterion) {
    let n = nodes();
    let (node_objs, pod_objs) = cluster(n, PODS_PER_NODE);
    let mut g = c.benchmark_group(format!("scheduler_{n}_nodes"));
    g.sample_size(10).measurement_time(Duration::from_secs(20));

    g.bench_function("snapshot_build", |b| {
        b.iter(|| Snapshot::build(&node_objs, &pod_objs, true).expect("generated cluster"))
    });

    let base = Snapshot::build(&node_objs, &pod_objs, true).expect("generated cluster");
    drop(pod_objs);
    let v = version::NEWEST;
    let mut probe = base.clone();
    let one = probe
        .pod_info(&pending_pod(PendingKind::Plain, 0))
        .expect("pod");
    g.bench_function("one_pod_cycle", |b| {
        let mut s = Scheduler::new(v, None, 0);
        b.iter(|| s.schedule_one(&base, &one))
    });
    let mut sfull = Scheduler::new(v, None, 0);
    sfull.full_breakdown = true;
    g.bench_function("one_pod_cycle_full_breakdown", |b| {
        b.iter(|| sfull.schedule_one(&base, &one))
    });

    g.throughput(Throughput::Elements(PENDING as u64));
    for (name, kind) in [
        ("10k_pods_plain", PendingKind::Plain),
        ("10k_pods_node_affinity", PendingKind::NodeAffinity),
        ("10k_pods_pod_anti_affinity", PendingKind::PodAntiAffinity),
        ("10k_pods_pod_affinity", PendingKind::PodAffinity),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let mut snap = base.clone();
                    let pods = pending(&mut snap, kind);
                    (snap, pods)
                },
                |(mut snap, pods)| {
                    // Traces are handed over one by one and dropped, as a scheduler loop
                    // would; the snapshot is returned so its teardown is not timed.
                    let mut s = Scheduler::new(v, None, 0);
                    let mut placed = 0usize;
                    simulate_each(&mut s, &mut snap, pods, |t| {
                        assert!(t.selected.is_some(), "every pod fits: {:?}", t.message);
                        placed += 1;
                    });
                    (placed, snap)
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(scheduler, benches);
criterion_main!(scheduler);

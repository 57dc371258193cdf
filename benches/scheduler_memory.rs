//! Peak memory of the 5,000-node / 150,000-pod simulation (docs/BENCHMARKS.md): builds the
//! snapshot, schedules 10,000 plain pods, and prints the process's resident set (VmRSS) and
//! its high-water mark (VmHWM) at each step, from /proc/self/status (Linux).
//!
//! Run: cargo bench --bench scheduler_memory                   (pods fed one by one)
//!      cargo bench --bench scheduler_memory -- --all-at-once  (every API object first)

use std::time::{Duration, Instant};

use kexplore::scheduler::generate::{PendingKind, cluster, node, pending_pod, running_pod};
use kexplore::scheduler::{Scheduler, Snapshot, simulate_each, version};

fn mem(step: &str) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .map(|l| l[k.len()..].trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    println!(
        "{step:<48} VmRSS {:>12}   VmHWM {:>12}",
        field("VmRSS:"),
        field("VmHWM:")
    );
}

fn main() {
    if std::env::args().any(|a| a == "--all-at-once") {
        all_at_once();
    } else {
        streaming();
    }
}

/// The snapshot fed one pod object at a time, as a watch (or the embedded API server) would:
/// the 150,000 Pod objects never exist together.
fn streaming() {
    mem("start");
    let t = Instant::now();
    let nodes: Vec<_> = (0..5000).map(node).collect();
    let mut snap = Snapshot::build(&nodes, &[], true).expect("generated nodes");
    for (i, n) in nodes.iter().enumerate() {
        let idx = snap.node_index[n.metadata.name.as_deref().unwrap_or_default()];
        for k in 0..30 {
            let info = snap.pod_info(&running_pod(i, k)).expect("generated pod");
            snap.add_pod(info, idx);
        }
    }
    let build = t.elapsed();
    drop(nodes);
    mem("snapshot: 5,000 nodes + 150,000 pods");
    schedule(snap, build);
}

/// Every Node and Pod object materialized first, then `Snapshot::build` (what
/// `kexplore schedule -f` does with one big manifest).
fn all_at_once() {
    mem("start");
    let (nodes, pods) = cluster(5000, 30);
    mem("5,000 Node + 150,000 Pod API objects");
    let t = Instant::now();
    let snap = Snapshot::build(&nodes, &pods, true).expect("generated cluster");
    let build = t.elapsed();
    mem("+ snapshot");
    drop(pods);
    drop(nodes);
    mem("API objects dropped");
    schedule(snap, build);
}

fn schedule(mut snap: Snapshot, build: Duration) {
    let pending: Vec<_> = (0..10_000)
        .map(|i| {
            snap.pod_info(&pending_pod(PendingKind::Plain, i))
                .expect("pod")
        })
        .collect();
    let mut s = Scheduler::new(version::NEWEST, None, 0);
    let t = Instant::now();
    let mut placed = 0;
    simulate_each(&mut s, &mut snap, pending, |tr| {
        placed += usize::from(tr.selected.is_some())
    });
    let sched = t.elapsed();
    mem("after scheduling 10,000 pods (traces streamed)");
    println!(
        "snapshot built in {:.0} ms; {placed} pods scheduled in {:.2} s ({:.0} pods/s)",
        build.as_secs_f64() * 1e3,
        sched.as_secs_f64(),
        placed as f64 / sched.as_secs_f64(),
    );
}

//! Snapshot tests (insta) of the scheduler's traces for the scenarios: any change in a verdict,
//! a score or a message shows up as a diff to review.

use kexplore::scheduler::manifests::Manifests;
use kexplore::scheduler::{KubeVersion, Scheduler, simulate, version, world};

fn traces(file: &str, v: KubeVersion) -> serde_json::Value {
    let path = format!("{}/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut m = Manifests::default();
    m.add_text(file, &std::fs::read_to_string(path).unwrap())
        .unwrap();
    let w = world::build(&m, v).unwrap();
    let mut snap = w.snapshot;
    let mut s = Scheduler::new(v, None, 0);
    serde_json::to_value(simulate(&mut s, &mut snap, w.pending)).unwrap()
}

#[test]
fn scenario_traces() {
    for file in [
        "seed-three-nodes.yaml",
        "taints-and-tolerations.yaml",
        "node-affinity.yaml",
        "pod-anti-affinity.yaml",
        "topology-spread-zones.yaml",
        "host-ports.yaml",
        "gpu-extended-resource.yaml",
        "unschedulable.yaml",
    ] {
        insta::assert_json_snapshot!(file, traces(file, version::NEWEST));
    }
    let v113 = KubeVersion::parse("1.13").unwrap();
    insta::assert_json_snapshot!(
        "legacy-v1.13-log-replay.yaml",
        traces("legacy-v1.13-log-replay.yaml", v113)
    );
}

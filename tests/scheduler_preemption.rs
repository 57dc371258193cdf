//! DefaultPreemption's part of the FitError: victims of lower priority make the PostFilter
//! succeed (no suffix, a nomination note); equal priority gives "No preemption victims found".

use kexplore::scheduler::manifests::Manifests;
use kexplore::scheduler::{Scheduler, simulate, version, world};

const CLUSTER: &str = r#"
kind: Node
apiVersion: v1
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
kind: Pod
apiVersion: v1
metadata: {name: low, namespace: default}
spec: {nodeName: n1, priority: 0, containers: [{name: c, resources: {requests: {cpu: 1500m}}}]}
"#;

fn run(pending_priority: i32) -> kexplore::scheduler::PodTrace {
    let mut m = Manifests::default();
    let pod = format!(
        "---\nkind: Pod\napiVersion: v1\nmetadata: {{name: high, namespace: default}}\nspec: {{priority: {pending_priority}, containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}]}}\n"
    );
    m.add_text("t.yaml", &format!("{CLUSTER}{pod}")).unwrap();
    let w = world::build(&m, version::NEWEST).unwrap();
    let mut snap = w.snapshot;
    let mut s = Scheduler::new(version::NEWEST, None, 0);
    simulate(&mut s, &mut snap, w.pending).remove(0)
}

#[test]
fn lower_priority_victims_make_preemption_succeed() {
    let t = run(1000);
    assert_eq!(
        t.message.as_deref(),
        Some("0/1 nodes are available: 1 Insufficient cpu.")
    );
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("DefaultPreemption") && n.contains("n1")),
        "{:?}",
        t.notes
    );
}

#[test]
fn equal_priority_has_no_victims() {
    let t = run(0);
    assert_eq!(
        t.message.as_deref(),
        Some(
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        )
    );
}

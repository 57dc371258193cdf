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

fn plan(cluster: &str, budget: Option<(&str, i32)>) -> kexplore::scheduler::PodTrace {
    let mut m = Manifests::default();
    m.add_text("t.yaml", cluster).unwrap();
    let w = world::build(&m, version::NEWEST).unwrap();
    let mut snap = w.snapshot;
    if let Some((app, allowed)) = budget {
        let labels = [("app".to_string(), app.to_string())].into_iter().collect();
        snap.disruption_budgets
            .push(kexplore::scheduler::preemption::DisruptionBudget {
                namespace: "default".into(),
                selector: kexplore::scheduler::selector::Selector::from_labels(&labels),
                disruptions_allowed: allowed,
            });
    }
    let mut s = Scheduler::new(version::NEWEST, None, 0);
    simulate(&mut s, &mut snap, w.pending).remove(0)
}

const TWO_LOW: &str = r#"
kind: Node
apiVersion: v1
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
kind: Pod
apiVersion: v1
metadata: {name: a, namespace: default, labels: {app: a}}
spec: {nodeName: n1, priority: 10, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
kind: Pod
apiVersion: v1
metadata: {name: b, namespace: default, labels: {app: b}}
spec: {nodeName: n1, priority: 10, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
---
kind: Pod
apiVersion: v1
metadata: {name: high, namespace: default}
spec: {priority: 1000, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"#;

#[test]
fn only_the_pods_that_must_go_are_victims() {
    let t = plan(TWO_LOW, None);
    let p = t.preemption.expect("a preemption plan");
    assert_eq!(p.node, "n1");
    // Both have priority 10: `a` comes first and is given back; `b` must go.
    assert_eq!(p.victims, ["default/b"]);
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("this simulation deletes nothing")),
        "{:?}",
        t.notes
    );
}

#[test]
fn a_pod_a_budget_protects_is_given_back_first() {
    let t = plan(TWO_LOW, Some(("b", 0)));
    let p = t.preemption.expect("a preemption plan");
    assert_eq!(p.victims, ["default/a"]);
}

#[test]
fn preemption_policy_never_plans_nothing() {
    let cluster = TWO_LOW.replace(
        "spec: {priority: 1000,",
        "spec: {priority: 1000, preemptionPolicy: Never,",
    );
    let t = plan(&cluster, None);
    assert!(t.preemption.is_none());
    assert!(
        t.message
            .as_deref()
            .unwrap_or_default()
            .ends_with("preemption: not eligible due to preemptionPolicy=Never."),
        "{:?}",
        t.message
    );
}

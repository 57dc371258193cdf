//! View 5 tells what the scheduler decided about every node (issue 12 B8–B11): nodes outside a
//! PreFilterResult, nodes without allocatable, and the release modelled.

use super::fixtures;
use super::render::render;
use crate::scheduler::KubeVersion;
use crate::tui::action::View;
use crate::tui::sched::fetch;
use crate::tui::sched::model::Model;
use crate::tui::sched::steps::Step;
use crate::tui::state::AppState;

/// View 5 on `yaml` (nodes and bound pods) placing `pod` with the v1.33 model.
fn view5_on(yaml: &str, pod: serde_json::Value) -> AppState {
    let pod = serde_json::from_value(pod).expect("a Pod");
    let data = fetch::from_files(
        &[("cluster.yaml".into(), yaml.into())],
        None,
        pod,
        KubeVersion::parse("1.33").expect("version"),
    )
    .expect("cluster");
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(data));
    s.sched.reorder(false);
    s
}

const THREE_NODES: &str = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-3}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"#;

/// A DaemonSet's pod: required affinity `matchFields metadata.name In [node-1]`.
fn daemon_pod() -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "ds-x", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchFields":
                        [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}}})
}

#[test]
fn nodes_outside_the_prefilter_result_show_upstreams_words() {
    let mut s = view5_on(THREE_NODES, daemon_pod());
    let steps = s.sched.steps(false);
    let affinity = steps
        .iter()
        .position(|st| matches!(st, Step::Filter(v) if v.len() == 1))
        .expect("NodeAffinity rejects nodes on its own step");
    s.sched.step = affinity;
    let screen = render(&s, 120, 40);
    for node in ["node-2", "node-3"] {
        let line = screen
            .lines()
            .find(|l| l.contains(node))
            .unwrap_or_else(|| panic!("{node} not drawn:\n{screen}"));
        assert!(
            line.contains("✗ NodeAffinity: node(s) didn't satisfy plugin(s) [NodeAffinity] (UnschedulableAndUnresolvable, at PreFilter)"),
            "{line}"
        );
    }
    // Before NodeAffinity's step the nodes are already out: Filter never ran on them.
    s.sched.step = 1;
    let screen = render(&s, 120, 40);
    let line = screen
        .lines()
        .find(|l| l.contains("node-2"))
        .expect("node-2");
    assert!(line.contains("– out at NodeAffinity"), "{line}");
    s.sched.step = steps.len() - 1;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Selected: node-1"), "{screen}");
    let line = screen
        .lines()
        .find(|l| l.contains("node-3"))
        .expect("node-3");
    assert!(
        line.contains("✗ NodeAffinity: node(s) didn't satisfy plugin(s) [NodeAffinity]"),
        "{line}"
    );
}

#[test]
fn a_node_without_allocatable_says_so_instead_of_empty_bars() {
    let cluster = r#"
- {apiVersion: v1, kind: Node, metadata: {name: node-1}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2}, status: {allocatable: {cpu: "2"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-3}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"#;
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]}});
    let list = format!("apiVersion: v1\nkind: List\nitems:{cluster}");
    let mut s = view5_on(&list, pod);
    for (w, h) in [(120, 40), (80, 24)] {
        s.sched.step = 0;
        let screen = render(&s, w, h);
        let row = |node: &str| {
            screen
                .lines()
                .find(|l| l.contains(node))
                .unwrap_or_else(|| panic!("{node} not drawn:\n{screen}"))
                .to_string()
        };
        assert!(
            row("node-1").contains("no allocatable reported: treated as 0"),
            "{screen}"
        );
        assert!(
            row("node-2").contains("no allocatable memory or pods reported"),
            "{screen}"
        );
        assert!(row("node-3").contains("cpu "), "{screen}");
    }
    let last = s.sched.steps(false).len() - 1;
    s.sched.step = last;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Selected: node-3"), "{screen}");
    // No node fits once node-3 is full: the FitError per node says where the zero comes from.
    for _ in 0..20 {
        crate::tui::update::update(&mut s, crate::tui::action::Action::More);
    }
    s.sched.step = s.sched.steps(false).len() - 1;
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("node-1: Too many pods (no allocatable pods reported: treated as 0)")
            && screen
                .contains("node-2: Too many pods (no allocatable pods reported: treated as 0)"),
        "{screen}"
    );
}

#[test]
fn a_live_cluster_names_the_release_modelled_and_the_servers() {
    use crate::scheduler::release::Modelling;
    let cluster = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: cp}, spec: {taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: worker}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"#;
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]}});
    let live = |git: &str| {
        let mut s = view5_on(cluster, pod.clone());
        if let Some(Ok(m)) = s.sched.model.as_mut() {
            // As fetch builds it from the server's /version.
            let mut data = m.data.clone();
            data.release = Modelling::for_server(Some(git));
            *m = Model::new(data).expect("model");
        }
        s.sched.reorder(false);
        s
    };
    let mut s = live("v1.31.4");
    for (w, h) in [(120, 40), (80, 24)] {
        let screen = render(&s, w, h);
        assert!(
            screen.contains("modelling kube-scheduler v1.31, the server's release (v1.31.4)"),
            "{screen}"
        );
    }
    // v1.31's behaviour is the one simulated: the taint is named (v1.35 says "taint(s)").
    s.sched.step = 2;
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains(
            "✗ TaintToleration: node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
        ),
        "{screen}"
    );
    let s = live("v1.22.3");
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains(
            "modelling kube-scheduler v1.25, the modelled release nearest to the server's v1.22.3"
        ),
        "{screen}"
    );
}

#[test]
fn score_sums_use_the_plugins_one_short_label() {
    use crate::scheduler::plugins::{inter_pod_affinity, node_affinity};
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "app", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "pause"}],
                 "affinity": {
                    "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions":
                            [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}]}}]},
                    "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "web"}}}}]}}}});
    let cluster = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: web-1, namespace: default, labels: {app: web}}, spec: {nodeName: node-1, containers: [{name: c, image: pause}]}}
"#;
    let mut s = view5_on(cluster, pod);
    s.sched.step = s.sched.steps(false).len() - 1;
    let screen = render(&s, 120, 40);
    for label in [inter_pod_affinity::SHORT, node_affinity::SHORT] {
        assert!(screen.contains(&format!("{label} ")), "{label}: {screen}");
    }
    assert!(!screen.contains("PodAffinity "), "{screen}");
}

/// After view 4's create was refused, view 5 places the manifest itself: its head says the
/// cluster never stored it (or, for a dry run, would refuse it), at 80 columns and in presenter
/// mode, and says nothing of it while no run was refused or a cluster pod is in focus.
#[test]
fn a_refused_manifest_is_placed_with_the_refusal_said() {
    use super::render::flat;
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}], "subdomain": "Bad_Name"}});
    let mut s = view5_on(THREE_NODES, pod);
    assert!(!flat(&render(&s, 80, 24)).contains("refuse"));
    let mut c = super::journey_data::collected();
    c.create = Some((
        422,
        serde_json::json!({"kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
            "message": "Pod \"app\" is invalid: spec.subdomain: Invalid value: \"Bad_Name\""}),
    ));
    s.journey.collected = Some(c.clone());
    let said = "✗ the API server refused this Pod (HTTP 422 Invalid): the cluster never stored \
                this manifest; what follows places it as written (4 shows why)";
    for (present, w, h) in [(false, 80, 24), (false, 120, 40), (true, 80, 24)] {
        s.present = present;
        let screen = render(&s, w, h);
        assert!(
            flat(&screen).contains(said),
            "{w}x{h}, presenter {present}:\n{screen}"
        );
    }
    s.present = false;
    c.dry_run = true;
    s.journey.collected = Some(c);
    let screen = render(&s, 80, 24);
    assert!(
        flat(&screen).contains(
            "✗ the API server would refuse this Pod (dry run, HTTP 422 Invalid): what follows \
             places the manifest as written (4 shows why)"
        ),
        "{screen}"
    );
    // A pod of the cluster in focus is not the manifest.
    s.sched.focus_pod = Some("default/web-1".into());
    assert!(!flat(&render(&s, 80, 24)).contains("refuse"));
    // Nor is a manifest that was created.
    s.sched.focus_pod = None;
    s.journey.collected = Some(super::journey_data::collected());
    assert!(!flat(&render(&s, 80, 24)).contains("refuse"));
}

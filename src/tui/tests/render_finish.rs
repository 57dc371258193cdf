//! What finishing the views added, drawn into a TestBackend: the `/` filter in views 1 and 2,
//! view 5's pods list on a live cluster and the comparison for a bound pod, and every score
//! plugin's formula.

use super::fixtures;
use super::fixtures::press;
use super::render::render;
use super::sequences_finish::view5_live;
use crate::tui::action::{Action, View};
use crate::tui::update::update;

use ratatui::crossterm::event::KeyCode::Char;

#[test]
fn view1_filtered() {
    let mut s = fixtures::state();
    press(
        &mut s,
        &[Char('/'), Char('p'), Char('r'), Char('o'), Char('d')],
    );
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Contexts (2 of 3)"), "{screen}");
    assert!(
        screen.contains("/prod▏"),
        "the filter shows while typed: {screen}"
    );
    assert!(!screen.contains("│   dev@lab"), "{screen}");
    assert!(screen.contains("Clusters (1 of 2"), "{screen}");
    insta::assert_snapshot!("view1_filtered_typing", screen);
    press(&mut s, &[Char('x')]);
    let none = render(&s, 80, 24);
    assert!(none.contains("no context matches the filter"), "{none}");
    insta::assert_snapshot!("view1_filtered_nothing_80x24", none);
}

#[test]
fn view2_filtered() {
    let mut s = fixtures::state();
    update(&mut s, Action::ShowView(View::Certificates));
    press(&mut s, &[Char('/'), Char('c'), Char('l'), Char('u')]);
    update(&mut s, Action::FilterEnd(true));
    let screen = render(&s, 120, 40);
    assert!(screen.contains("/clu · 2 of 3"), "{screen}");
    insta::assert_snapshot!("view2_filtered", screen);
}

#[test]
fn view5_pods_list() {
    let mut s = view5_live(None);
    let closed = render(&s, 120, 40);
    assert!(
        closed.contains("live cluster: 1 Pending pod(s), 3 bound — w lists them"),
        "{closed}"
    );
    press(&mut s, &[Char('w')]);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Pods: 1 Pending, 3 bound"), "{screen}");
    assert!(screen.contains("○ default/app"), "{screen}");
    assert!(
        screen.contains("● demo/workload-node-1  on node-1"),
        "{screen}"
    );
    insta::assert_snapshot!("view5_pods_list", screen);
    insta::assert_snapshot!("view5_pods_list_80x24", render(&s, 80, 24));
}

/// A finished pod is bound too: the head counts it apart, so "3 bound" is not read as all the
/// bound pods, and a list with nothing but finished pods says why it is empty.
#[test]
fn view5_finished_pods_counted_apart_from_the_bound() {
    let mut s = view5_live(None);
    let l = s.sched.listing.as_mut().expect("a pods list");
    l.finished = 2;
    let head = render(&s, 80, 24);
    assert!(
        head.contains("3 bound, 2 finished") && head.contains("w lists all but the"),
        "{head}"
    );
    let l = s.sched.listing.as_mut().expect("a pods list");
    l.pods.clear();
    press(&mut s, &[Char('w')]);
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("no pods to list: 2 finished, which hold no node's capacity"),
        "{screen}"
    );
}

#[test]
fn view5_bound_pod_compared_with_the_cluster() {
    let mut s = view5_live(Some("demo/workload-node-2"));
    let first = render(&s, 120, 40);
    assert!(
        first.contains("scheduled by the cluster to node-2; the last step compares"),
        "the pick stays hidden until the result: {first}"
    );
    s.sched.step = s.sched.steps(false).len() - 1;
    s.sched.reorder(false);
    let screen = render(&s, 120, 40);
    let m = s.sched.model().expect("model");
    let picked = m.trace.selected.clone().expect("a node fits");
    let line = if picked == "node-2" {
        "✓ scheduled by the cluster to node-2; the simulation picks node-2 too".to_string()
    } else {
        format!("! scheduled by the cluster to node-2; the simulation picks {picked}")
    };
    assert!(screen.contains(&line), "{line} in\n{screen}");
    insta::assert_snapshot!("view5_bound_pod", screen);
}

#[test]
fn view5_rbac_note() {
    let mut s = view5_live(None);
    if let Some(l) = s.sched.listing.as_mut() {
        l.hidden.push(
            "RBAC: pods outside namespace default are hidden (list pods at cluster scope: forbidden); the simulation does not count their requests".into(),
        );
    }
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("! RBAC: pods outside namespace default are hidden"),
        "{screen}"
    );
    press(&mut s, &[Char('w')]);
    let list = render(&s, 120, 40);
    assert!(list.contains("! RBAC: pods outside"), "{list}");
}

/// View 5 on the cluster where every score plugin differs, at the score step of `plugin`, with
/// the formula open for node `node`.
fn formula_screen(plugin: &str, node: &str) -> String {
    use crate::scheduler::KubeVersion;
    use crate::tui::sched::steps::Step;
    use crate::tui::sched::{fetch, model::Model};
    let text = include_str!("data/every_score_plugin.yaml");
    let data = fetch::from_files(
        &[("every.yaml".into(), text.into())],
        Some("default/web"),
        super::stepped_fixtures::app_pod(),
        KubeVersion::parse("1.33").expect("version"),
    )
    .expect("cluster");
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(data));
    let m = s.sched.model().expect("model");
    let j = crate::tui::sched::steps::score_plugins(m)
        .iter()
        .position(|(n, _)| *n == plugin)
        .expect("the plugin scores");
    s.sched.step = s
        .sched
        .steps(false)
        .iter()
        .position(|st| *st == Step::Score(j))
        .expect("its step");
    s.sched.reorder(false);
    s.sched.cursor = s
        .sched
        .order
        .iter()
        .position(|&k| s.sched.model().expect("model").snapshot.nodes[k].name == node)
        .expect("the node");
    update(&mut s, Action::ToggleFormula);
    render(&s, 120, 40)
}

#[test]
fn view5_formula_of_every_score_plugin() {
    for (plugin, node, needle) in [
        (
            "TaintToleration",
            "a-2",
            "raw     1 PreferNoSchedule taint(s), 0 tolerated = 1 ✓",
        ),
        ("NodeAffinity", "b-1", "term 1  weight  20  ✓ matches"),
        (
            "PodTopologySpread",
            "a-1",
            "topology.kubernetes.io/zone=a: 2 pod(s) × ln(2 + 2)",
        ),
        (
            "InterPodAffinity",
            "b-2",
            "other pods' terms selecting this pod",
        ),
        (
            "ImageLocality",
            "a-1",
            "registry.example/web:1: 500 MiB × 2/4 nodes = 250 MiB",
        ),
    ] {
        let screen = formula_screen(plugin, node);
        assert!(screen.contains(&format!("{plugin} on {node}")), "{screen}");
        assert!(screen.contains(needle), "{needle} in\n{screen}");
        assert!(!screen.contains("! the scheduler says"), "{screen}");
        insta::assert_snapshot!(format!("view5_formula_{plugin}"), screen);
    }
}

//! Views 3-5 drawn at every step into a TestBackend (snapshots in `snapshots/`), with the
//! assertions that say what each step must show whatever the layout.

use super::fixtures;
use super::journey_data;
use super::render::render;
use super::stepped_fixtures as fx;
use crate::tui::action::{Action, View};
use crate::tui::journey::{JourneyState, STEP_COUNT};
use crate::tui::sched::model::Model;
use crate::tui::state::AppState;
use crate::tui::update::update;

fn view3(failure: bool) -> AppState {
    let mut s = fixtures::state();
    s.view = View::Connection;
    let report = fx::connection(failure.then(fx::unknown_authority));
    s.conn.set(report, Some(&fx::alibaba_creds()));
    s
}

#[test]
fn view3_every_rung() {
    let mut s = view3(false);
    let n = s.conn.rungs.len();
    assert_eq!(n, 10);
    for step in 1..=n {
        s.conn.step = step;
        let screen = render(&s, 120, 40);
        insta::assert_snapshot!(format!("view3_step_{step:02}"), screen);
    }
    let screen = render(&s, 120, 40);
    for needle in [
        "✓ ──▶ TCP connect",
        "◀── Certificate (server)",
        "CN=kube-apiserver",
        "send a certificate from: CN=c0",
        "server says  user 252771643302762862, groups",
        "connected, and the server knows who you are",
    ] {
        assert!(screen.contains(needle), "missing {needle:?} in\n{screen}");
    }
    s.conn.step = 4;
    let cert = render(&s, 120, 40);
    assert!(cert.contains("matches IP:127.0.0.1"), "{cert}");
    assert!(cert.contains("signed by CA #1"), "{cert}");
    insta::assert_snapshot!("view3_80x24", render(&s, 80, 24));
}

#[test]
fn view3_failure_stops_the_ladder_with_why_and_fix() {
    let mut s = view3(true);
    assert_eq!(
        s.conn.rungs.len(),
        4,
        "TCP, ClientHello, ServerHello, then the failure"
    );
    s.conn.step = 4;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("✗ ◀── Certificate (server)"), "{screen}");
    assert!(screen.contains("✗ Why"), "{screen}");
    assert!(screen.contains("kubeconfig trusts only:"), "{screen}");
    assert!(screen.contains("the connection stops here"), "{screen}");
    assert!(screen.contains("Fix"), "{screen}");
    insta::assert_snapshot!("view3_failure", screen);
}

#[test]
fn view3_failure_says_what_kubectl_prints() {
    let mut s = fixtures::state();
    s.view = View::Connection;
    let mut failure = fx::unknown_authority();
    failure.kubectl_says = vec![
        "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority".into(),
    ];
    s.conn
        .set(fx::connection(Some(failure)), Some(&fx::alibaba_creds()));
    s.conn.step = 4;
    let said = "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority";
    for (w, h) in [(120, 40), (80, 24)] {
        let screen = render(&s, w, h);
        assert!(screen.contains("kubectl says"), "{w}x{h}:\n{screen}");
        // The detail pane wraps the line: its words, read row after row, are kubectl's.
        let pane: Vec<&str> = screen
            .lines()
            .map(|l| l.split_once("││").map_or(l, |(_, r)| r).trim_matches('│'))
            .flat_map(str::split_whitespace)
            .collect();
        assert!(pane.join(" ").contains(said), "{w}x{h}:\n{screen}");
    }
}

fn view4() -> AppState {
    let mut s = fixtures::state();
    s.view = View::PodJourney;
    s.embedded = Some(crate::tui::embedded::EmbeddedFacts {
        url: "https://127.0.0.1:6443".into(),
        kubeconfig: "/tmp/kexplore-tui-test/kubeconfig".into(),
        instead_of: None,
        etcd_kubeconfig: None,
    });
    s.journey = JourneyState::new(
        "app.json".into(),
        Some(include_str!("../../../scenarios/app.json")),
        true,
    );
    s.journey.collected = Some(journey_data::collected());
    s
}

#[test]
fn view4_every_stage() {
    let mut s = view4();
    for step in 0..STEP_COUNT {
        s.journey.step = step;
        insta::assert_snapshot!(format!("view4_step_{step:02}"), render(&s, 120, 40));
    }
    s.journey.step = 0;
    let req = render(&s, 120, 40);
    assert!(
        req.contains("curl -X POST -H 'Content-Type: application/json;charset=utf-8'"),
        "{req}"
    );
    assert!(req.contains("kubectl create -f app.json"), "{req}");
    s.journey.step = 4;
    let adm = render(&s, 120, 40);
    assert!(
        adm.contains("~ spec.dnsPolicy: (unset) → ClusterFirst"),
        "{adm}"
    );
    assert!(
        adm.contains("+ spec.tolerations[0]: {effect: NoExecute, key: node.kubernetes.io/"),
        "{adm}"
    );
    assert!(adm.contains("ServiceAccount"), "{adm}");
    s.journey.step = 6;
    assert!(render(&s, 120, 40).contains("/registry/pods/default/app"));
    s.journey.step = 12;
    let end = render(&s, 120, 40);
    assert!(end.contains("Running"), "{end}");
    for src in ["[observed]", "[reported]"] {
        assert!(end.contains(src), "{src} in {end}");
    }
    s.journey.step = 12;
    let small = render(&s, 80, 24);
    assert!(
        small.contains("▶ ✓ Kubelet"),
        "the current stage stays on screen: {small}"
    );
    insta::assert_snapshot!("view4_80x24_kubelet", small);
    insta::assert_snapshot!("view4_80x24_admission", {
        s.journey.step = 4;
        render(&s, 80, 24)
    });
}

#[test]
fn view4_marks_stages_not_yet_arrived_as_waiting() {
    let mut s = view4();
    let mut c = journey_data::collected();
    c.server_trace = None;
    c.final_pod = None;
    c.watch_events.clear();
    s.journey.collected = Some(c);
    s.journey.running = true;
    s.journey.step = 12;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("waiting for this stage"), "{screen}");
}

fn view5() -> AppState {
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(fx::demo_cluster()));
    s.sched.reorder(false);
    s
}

#[test]
fn view5_every_step() {
    let mut s = view5();
    let steps = s.sched.steps(false);
    assert_eq!(steps.len(), 8, "{steps:?}");
    for i in 0..steps.len() {
        s.sched.step = i;
        s.sched.reorder(false);
        insta::assert_snapshot!(format!("view5_step_{i:02}"), render(&s, 120, 40));
    }
    let result = render(&s, 120, 40);
    assert!(result.contains("Selected: node-3"), "{result}");
    assert!(result.contains("Taint 300 + Fit 61 + Image 0"), "{result}");
    s.sched.step = 2;
    let taint = render(&s, 120, 40);
    assert!(
        taint.contains("✗ TaintToleration: node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
        "{taint}"
    );
    s.sched.step = 0;
    insta::assert_snapshot!("view5_80x24_nodes", render(&s, 80, 24));
    s.sched.step = 5;
    insta::assert_snapshot!("view5_80x24_score", render(&s, 80, 24));
}

#[test]
fn view5_formula_shows_the_pods_numbers() {
    let mut s = view5();
    s.sched.step = 5; // Score: NodeResourcesFit
    s.sched.cursor = 3; // node-3
    update(&mut s, Action::ToggleFormula);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("NodeResourcesFit on node-3"), "{screen}");
    assert!(
        screen.contains("cpu     (8 − 3.1) × 100 / 8 = 61"),
        "{screen}"
    );
    assert!(
        screen.contains("= 61 ✓ (the scheduler's raw score)"),
        "{screen}"
    );
    insta::assert_snapshot!("view5_formula", screen);
}

#[test]
fn view5_fit_error_inverted_per_node() {
    let mut s = view5();
    for _ in 0..12 {
        update(&mut s, Action::More);
    }
    let n = s.sched.steps(false).len();
    s.sched.step = n - 1;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("0/4 nodes are available:"), "{screen}");
    assert!(
        screen.contains("node-1: Insufficient cpu (needs 6, has 1.5 free)"),
        "{screen}"
    );
    insta::assert_snapshot!("view5_fit_error", screen);
}

#[test]
fn view5_presenter_asks_before_the_scores() {
    let mut s = view5();
    update(&mut s, Action::TogglePresent);
    let steps = s.sched.steps(true);
    let predict = steps
        .iter()
        .position(|st| *st == crate::tui::sched::steps::Step::Predict)
        .expect("a predict step");
    s.sched.step = predict;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Which node wins?"), "{screen}");
    assert!(!screen.contains(" 1 Kubeconfig "), "tabs hidden: {screen}");
    assert!(screen.contains("Before the scores"), "caption: {screen}");
    insta::assert_snapshot!("view5_presenter_predict", screen);
    insta::assert_snapshot!("view5_presenter_80x24", render(&s, 80, 24));
}

#[test]
fn view5_five_thousand_nodes_summarize_and_scroll() {
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(fx::big_cluster(5000)));
    s.sched.reorder(false);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Nodes (5000)"), "{screen}");
    assert!(screen.contains("sampling"), "{screen}");
    for _ in 0..3 {
        update(&mut s, Action::PageDown);
    }
    assert_eq!(s.sched.cursor, 30);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("▶ node-00030"), "{screen}");
    update(&mut s, Action::StartFilter);
    for c in "node-0499".chars() {
        update(&mut s, Action::FilterInput(c));
    }
    update(&mut s, Action::FilterEnd(true));
    assert_eq!(s.sched.order.len(), 10, "node-04990 … node-04999");
    let last = s.sched.steps(false).len() - 1;
    s.sched.step = last;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Selected:"), "{screen}");
    insta::assert_snapshot!("view5_5000_filtered_result", screen);
}

#[test]
fn views_3_to_5_in_presenter_mode_have_captions() {
    let mut s = view3(false);
    s.present = true;
    s.conn.step = 4;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("diploma"), "{screen}");
    insta::assert_snapshot!("view3_presenter", screen);
    let mut s = view4();
    s.present = true;
    s.journey.step = 11;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("It starts nothing itself"), "{screen}");
    insta::assert_snapshot!("view4_presenter", screen);
}

#[test]
fn view4_in_presenter_mode_keeps_the_node_out_of_the_watch_stage_until_score() {
    let mut s = view4();
    let watch = crate::journey::STAGES
        .iter()
        .position(|x| *x == crate::journey::Stage::Watch)
        .map_or(0, |i| i + 1);
    s.journey.step = watch;
    let plain = render(&s, 120, 40);
    assert!(plain.contains("node node-"), "{plain}");
    s.present = true;
    let shown = render(&s, 120, 40);
    assert!(shown.contains("? (revealed at Score)"), "{shown}");
    assert!(!shown.contains("node node-"), "{shown}");
    assert!(!shown.contains("node-3"), "{shown}");
    // An event of the pod before it had a node says so, in presenter mode or not.
    let mut c = s.journey.collected.take().expect("a run");
    c.watch_events = vec![serde_json::json!({"type": "MODIFIED",
        "object": {"metadata": {"resourceVersion": "87"}, "spec": {}, "status": {"phase": "Pending"}}})];
    s.journey.collected = Some(c);
    for present in [true, false] {
        s.present = present;
        let screen = render(&s, 120, 40);
        assert!(
            screen.contains("phase Pending  node (none yet)"),
            "{screen}"
        );
    }
}

/// Paging down a detail shorter than its pane leaves it where it is (it used to scroll the one
/// line of Validation out of sight until PgUp); a long one pages down to its last line and no
/// further, and PgUp is felt at once.
#[test]
fn view4_page_down_stops_at_the_end_of_the_detail() {
    let mut s = view4();
    s.journey.step = 5;
    let before = render(&s, 80, 24);
    assert!(before.contains("no field errors"), "{before}");
    for _ in 0..3 {
        update(&mut s, Action::PageDown);
    }
    let after = render(&s, 80, 24);
    assert!(after.contains("no field errors"), "{after}");
    assert_eq!(s.detail_scroll, 0);

    s.journey.step = 4;
    render(&s, 80, 24);
    let max = s.detail_scroll_max.get();
    assert!(max > 0, "admission's changes fill more than the pane");
    for _ in 0..50 {
        update(&mut s, Action::PageDown);
    }
    assert_eq!(s.detail_scroll, max);
    let bottom = render(&s, 80, 24);
    update(&mut s, Action::PageUp);
    assert!(s.detail_scroll < max);
    assert_ne!(render(&s, 80, 24), bottom);
}

#[test]
fn view4_a_refused_create_is_not_called_a_201() {
    let mut s = view4();
    s.journey.collected = Some(journey_data::already_exists());
    s.journey.step = 7;
    let screen = render(&s, 120, 40);
    assert!(screen.contains("✗ Response"), "{screen}");
    assert!(screen.contains("409"), "{screen}");
    assert!(!screen.contains("201"), "{screen}");
}

//! Key presses in views 3-5 through the keymap and `update`: what they change and which
//! effects they ask for. Also: view 5's numbers are `kexplore schedule`'s on the same state.

use ratatui::crossterm::event::KeyCode;

use super::fixtures::{self, NOW, press};
use super::journey_data;
use super::stepped_fixtures as fx;
use crate::tui::action::{Action, Payload, View};
use crate::tui::sched::model::Model;
use crate::tui::state::AppState;
use crate::tui::update::{Effect, update};

use KeyCode::{Backspace, Char, Enter, Esc};

fn with_journey() -> AppState {
    fixtures::with_app_json(true)
}

#[test]
fn view3_connects_on_entry_and_steps_through_the_ladder() {
    let mut s = fixtures::state();
    assert_eq!(
        press(&mut s, &[Char('3')]),
        vec![Effect::Connect("admin@prod".into())]
    );
    update(
        &mut s,
        Action::ConnectionDone(Payload::new(fx::connection(None))),
    );
    assert_eq!(s.conn.step, 1, "the first rung shows at once");
    press(&mut s, &[Char(' '), Char('n'), Char(' ')]);
    assert_eq!(s.conn.step, 4);
    press(&mut s, &[Backspace, Char('p')]);
    assert_eq!(s.conn.step, 2);
    press(&mut s, &[Backspace, Backspace, Backspace]);
    assert_eq!(s.conn.step, 1, "never below the first rung");
    press(&mut s, &[KeyCode::Down, KeyCode::Down, KeyCode::PageDown]);
    assert_eq!(s.detail_scroll, 12, "arrows and pages scroll the details");
    press(&mut s, &[Char(' '), Backspace]);
    assert_eq!(s.detail_scroll, 0, "a new step starts at the top");
    for _ in 0..20 {
        press(&mut s, &[Char(' ')]);
    }
    assert_eq!(s.conn.step, 10, "never past the last rung");
    assert_eq!(
        press(&mut s, &[Char('r')]),
        vec![Effect::Connect("admin@prod".into())],
        "r reconnects"
    );
    assert!(s.conn.report.is_none());
}

#[test]
fn view4_sends_the_pod_when_leaving_the_request_step() {
    let mut s = with_journey();
    assert!(
        press(&mut s, &[Char('4')]).is_empty(),
        "nothing is sent on entry"
    );
    let effects = press(&mut s, &[Char(' ')]);
    assert!(
        matches!(&effects[..], [Effect::RunJourney { context, replace: true, .. }] if context == "admin@prod"),
        "{effects:?}"
    );
    assert!(s.journey.running);
    assert!(press(&mut s, &[Char(' ')]).is_empty(), "sent once");
    update(
        &mut s,
        Action::JourneyProgress(Payload::new(journey_data::collected()), true),
    );
    assert!(!s.journey.running);
    for _ in 0..20 {
        press(&mut s, &[Char(' ')]);
    }
    assert_eq!(s.journey.step, 12);
    let effects = press(&mut s, &[Enter]);
    assert_eq!(s.view, View::Scheduler, "Enter jumps to view 5");
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { focus: Some(f), .. }] if f == "default/app"),
        "{effects:?}"
    );
}

#[test]
fn view4_e_asks_for_the_editor_and_takes_the_new_manifest() {
    let mut s = with_journey();
    press(&mut s, &[Char('4')]);
    assert_eq!(
        press(&mut s, &[Char('e')]),
        vec![Effect::Edit("app.json".into())]
    );
    update(&mut s, Action::ManifestEdited(Ok("kind: Service\n".into())));
    assert!(matches!(&s.journey.manifest, Some(Err(e)) if e.contains("kind Pod")));
    update(
        &mut s,
        Action::ManifestEdited(Ok("{kind: Pod, apiVersion: v1, metadata: {name: web}, spec: {containers: [{name: c, image: nginx}]}}".into())),
    );
    assert_eq!(
        s.journey.pod().and_then(|p| p["metadata"]["name"].as_str()),
        Some("web")
    );
}

fn view5() -> AppState {
    let mut s = with_journey();
    s.view = View::Scheduler;
    update(
        &mut s,
        Action::ClusterLoaded(Payload::new(Ok(fx::demo_cluster()))),
    );
    s
}

#[test]
fn view5_lists_the_cluster_on_entry() {
    let mut s = with_journey();
    let effects = press(&mut s, &[Char('5')]);
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { focus: None, .. }]),
        "{effects:?}"
    );
    assert!(s.sched.loading);
}

#[test]
fn view5_plus_until_nothing_fits_gives_upstreams_fit_error() {
    let mut s = view5();
    let mut presses = 0;
    while s
        .sched
        .model()
        .and_then(|m| m.trace.selected.clone())
        .is_some()
    {
        press(&mut s, &[Char('+')]);
        presses += 1;
        assert!(presses < 40, "cpu grows until no node fits");
    }
    let m = s.sched.model().expect("model");
    assert_eq!(
        m.trace.message.as_deref(),
        Some(
            "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
        )
    );
    press(&mut s, &[Char('-')]);
    assert!(
        s.sched
            .model()
            .and_then(|m| m.trace.selected.clone())
            .is_some()
    );
}

#[test]
fn view5_tolerations_selector_sort_and_filter() {
    let mut s = view5();
    press(&mut s, &[Char('t')]);
    let m = s.sched.model().expect("model");
    assert!(
        m.trace.filter.iter().all(|v| v.passed),
        "tolerating the taint opens control-plane"
    );
    press(&mut s, &[Char('t')]);
    // Labels are sorted; the first is kubernetes.io/hostname=control-plane.
    press(&mut s, &[Char('s'), Char('s'), Char('s'), Char('s')]);
    let m = s.sched.model().expect("model");
    assert_eq!(
        m.trace.selected.as_deref(),
        Some("node-3"),
        "nodeSelector hostname=node-3"
    );
    assert_eq!(m.trace.nodes_feasible, 1);
    press(&mut s, &[Char('o')]);
    assert_eq!(s.sched.sort, crate::tui::sched::Sort::Name);
    press(&mut s, &[Char('/'), Char('2'), Enter]);
    assert!(!s.typing);
    assert_eq!(s.sched.order.len(), 1);
    press(&mut s, &[Char('/'), Esc]);
    assert_eq!(s.sched.order.len(), 4, "Esc clears the filter");
    assert!(
        press(&mut s, &[Char('q')]).is_empty() && s.quit,
        "q still quits"
    );
}

#[test]
fn view5_matches_kexplore_schedule_on_the_same_state() {
    use crate::scheduler::manifests::Manifests;
    use crate::scheduler::{KubeVersion, Scheduler, simulate, world};
    let s = view5();
    let m = s.sched.model().expect("model");
    // What `kexplore schedule --kube-version 1.33 -f demo.yaml -f app.json` computes.
    let version = KubeVersion::parse("1.33").expect("version");
    let mut manifests = Manifests::default();
    manifests.add_text("demo.yaml", fx::DEMO).expect("demo");
    manifests
        .add_text("app.json", include_str!("../../../scenarios/app.json"))
        .expect("app");
    let w = world::build(&manifests, version).expect("world");
    let mut snap = w.snapshot;
    let traces = simulate(&mut Scheduler::new(version, None, 0), &mut snap, w.pending);
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].filter, m.trace.filter);
    assert_eq!(traces[0].score, m.trace.score);
    assert_eq!(traces[0].selected, m.trace.selected);
}

#[test]
fn autoplay_advances_one_step_per_interval() {
    let mut s = view5();
    s.autoplay = Some(2.0);
    s.last_step_ms = NOW * 1000;
    update(&mut s, Action::Tick(NOW + 1));
    assert_eq!(s.sched.step, 0);
    update(&mut s, Action::Tick(NOW + 2));
    assert_eq!(s.sched.step, 1);
    update(&mut s, Action::Tick(NOW + 3));
    assert_eq!(s.sched.step, 1);
    update(&mut s, Action::Tick(NOW + 4));
    assert_eq!(s.sched.step, 2);
}

#[test]
fn p_toggles_presenter_mode_and_adds_the_guess() {
    let mut s = view5();
    let before = s.sched.steps(false).len();
    press(&mut s, &[Char('P')]);
    assert!(s.present);
    assert_eq!(s.sched.steps(true).len(), before + 1);
    press(&mut s, &[Char('P')]);
    assert!(!s.present);
}

#[test]
fn a_model_error_is_shown_not_a_panic() {
    let mut s = view5();
    update(
        &mut s,
        Action::ClusterLoaded(Payload::new(Err("GET /api/v1/nodes: 403 forbidden".into()))),
    );
    assert!(s.sched.model().is_none());
    let _ = Model::new(fx::demo_cluster()).expect("the demo builds");
}

#[test]
fn view4_l_cycles_through_the_scenario_pods() {
    let mut s = with_journey();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut choices = vec![(
        s.journey.path.clone(),
        include_str!("../../../scenarios/app.json").to_string(),
    )];
    choices.extend(
        crate::tui::journey::pod_files(&dir)
            .into_iter()
            .filter(|(p, _)| !p.ends_with("app.json")),
    );
    assert!(
        choices.len() >= 3,
        "app.json and the two scenario pods: {choices:?}"
    );
    s.journey.choices = choices;
    press(&mut s, &[Char('4'), Char('l')]);
    assert_eq!(
        s.journey.pod().and_then(|p| p["metadata"]["name"].as_str()),
        Some("my-app")
    );
    press(&mut s, &[Char('l'), Char('l')]);
    assert_eq!(
        s.journey.pod().and_then(|p| p["metadata"]["name"].as_str()),
        Some("app"),
        "wraps around"
    );
}

//! Key and mouse sequences for what finishing the views added: view 5's pods list on a live
//! cluster, what-if on every container, clicks on rungs and stages, and the `/` filter in the
//! lists of views 1 and 2.

use ratatui::crossterm::event::KeyCode;

use super::fixtures::{self, press};
use super::stepped_fixtures as fx;
use crate::tui::action::{Action, Payload, View};
use crate::tui::sched::model::{CPU_STEP, ClusterData, Model};
use crate::tui::state::AppState;
use crate::tui::update::{Effect, update};

use KeyCode::{Char, Down, Enter};

/// View 5 on the demo cluster as a live server lists it.
pub fn view5_live(focus: Option<&str>) -> AppState {
    let mut s = fixtures::with_app_json(true);
    s.view = View::Scheduler;
    s.sched.focus_pod = focus.map(str::to_string);
    update(
        &mut s,
        Action::LiveClusterLoaded(Payload::new(Ok(fx::demo_live(focus)))),
    );
    s
}

#[test]
fn w_lists_pending_then_bound_pods_and_enter_simulates_the_chosen_one() {
    let mut s = view5_live(None);
    let l = s
        .sched
        .listing
        .as_ref()
        .expect("a live cluster has a pods list");
    assert_eq!(l.pods[0].key, "default/app", "Pending first");
    assert_eq!(l.pods[0].node, None);
    assert_eq!(l.pods.len(), 4);
    press(&mut s, &[Char('w')]);
    assert!(s.sched.pods_open);
    press(&mut s, &[Down, Down]);
    assert_eq!(s.sched.pod_cursor, 2);
    assert_eq!(
        s.sched.cursor, 0,
        "arrows move in the pods list, not the nodes"
    );
    let effects = press(&mut s, &[Enter]);
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { focus: Some(f), .. }] if f == "demo/workload-node-2"),
        "{effects:?}"
    );
    assert!(!s.sched.pods_open, "the list closes");
    assert!(
        s.sched.model.is_none(),
        "progress shows until the new cycle arrives"
    );
    assert_eq!(s.sched.focus_pod.as_deref(), Some("demo/workload-node-2"));
    update(
        &mut s,
        Action::LiveClusterLoaded(Payload::new(Ok(fx::demo_live(Some(
            "demo/workload-node-2",
        ))))),
    );
    let m = s.sched.model().expect("model");
    assert_eq!(m.trace.pod, "demo/workload-node-2");
    assert_eq!(
        s.sched.pod_cursor, 2,
        "the cursor stays on the simulated pod"
    );
    assert_eq!(
        s.sched
            .listing
            .as_ref()
            .and_then(|l| l.bound("demo/workload-node-2"))
            .map(|b| b.node),
        Some("node-2".to_string())
    );
    press(&mut s, &[Char('w'), Char('w')]);
    assert!(!s.sched.pods_open, "w toggles");
}

#[test]
fn manifests_have_no_pods_list() {
    let mut s = view5_live(None);
    update(
        &mut s,
        Action::ClusterLoaded(Payload::new(Ok(fx::demo_cluster()))),
    );
    assert!(s.sched.listing.is_none());
    press(&mut s, &[Char('w')]);
    assert!(!s.sched.pods_open, "nothing to open");
}

fn two_containers() -> ClusterData {
    let mut d = fx::demo_cluster();
    let spec = d.pod.spec.as_mut().expect("spec");
    let mut second = spec.containers[0].clone();
    second.name = "sidecar".into();
    spec.containers.push(second);
    d
}

#[test]
fn what_if_changes_every_container() {
    let mut m = Model::new(two_containers()).expect("model");
    let before = m.pod_request().0;
    m.bump(true);
    m.rerun();
    assert_eq!(
        m.pod_request().0,
        before + 2 * CPU_STEP,
        "+ adds a step to each of the two containers"
    );
    let pod = m.changed_pod();
    for c in &pod.spec.expect("spec").containers {
        let cpu = c
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .map(|r| r["cpu"].0.clone());
        // app.json asks for no cpu: each container now asks for one step.
        assert_eq!(cpu.as_deref(), Some("500m"), "{}", c.name);
    }
    for _ in 0..10 {
        m.bump(false);
    }
    m.rerun();
    assert_eq!(m.pod_request().0, 0, "never below zero");
    m.bump(true);
    m.rerun();
    assert_eq!(
        m.pod_request().0,
        2 * CPU_STEP,
        "one + after the floor is felt at once"
    );
}

/// Where `needle` is drawn on `screen` (column, row), to click on what the view drew.
pub fn find(screen: &str, needle: &str) -> (u16, u16) {
    for (y, line) in screen.lines().enumerate() {
        if let Some(b) = line.find(needle) {
            return (line[..b].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} is not on screen:\n{screen}");
}

fn view3_at(w: u16, h: u16) -> AppState {
    let mut s = fixtures::state();
    s.view = View::Connection;
    s.conn.set(fx::connection(None), Some(&fx::alibaba_creds()));
    s.conn.step = s.conn.rungs.len();
    update(&mut s, Action::Resize(w, h));
    s
}

#[test]
fn a_click_on_a_rung_jumps_to_that_step() {
    // At 80x24 the ladder shows its last rungs only.
    for (w, h, rung) in [(120, 40, "ServerHello"), (80, 24, "Finished")] {
        let mut s = view3_at(w, h);
        let screen = super::render::render(&s, w, h);
        let (x, y) = find(&screen, rung);
        let want = 1 + s
            .conn
            .rungs
            .iter()
            .position(|r| r.title.starts_with(rung))
            .expect("the rung");
        assert!(update(&mut s, Action::Click(x, y)).is_empty());
        assert_eq!(s.conn.step, want, "at {w}x{h}");
        // Rungs not revealed yet are not drawn, so there is nothing to click below the last.
        let (x, y) = find(&super::render::render(&s, w, h), rung);
        update(&mut s, Action::Click(x, y + 6));
        assert_eq!(
            s.conn.step, want,
            "a click below the ladder changes nothing"
        );
    }
}

#[test]
fn a_click_on_a_stage_jumps_there_and_sends_the_pod_once() {
    let mut s = fixtures::with_app_json(true);
    s.view = View::PodJourney;
    update(&mut s, Action::Resize(120, 40));
    let screen = super::render::render(&s, 120, 40);
    let (x, y) = find(&screen, "Storage");
    let effects = update(&mut s, Action::Click(x, y));
    assert_eq!(s.journey.step, 6, "storage is the sixth stage");
    assert!(
        matches!(&effects[..], [Effect::RunJourney { .. }]),
        "leaving the request sends the pod: {effects:?}"
    );
    update(
        &mut s,
        Action::JourneyProgress(Payload::new(super::journey_data::collected()), true),
    );
    let (x, y) = find(&super::render::render(&s, 120, 40), "Kubelet");
    assert!(update(&mut s, Action::Click(x, y)).is_empty(), "sent once");
    assert_eq!(s.journey.step, 12);
    let (x, y) = find(&super::render::render(&s, 120, 40), "Request  POST");
    update(&mut s, Action::Click(x, y));
    assert_eq!(s.journey.step, 0, "the request row is step 0");
}

#[test]
fn clicks_in_the_pods_list_move_then_choose() {
    let mut s = view5_live(None);
    update(&mut s, Action::Resize(120, 40));
    press(&mut s, &[Char('w')]);
    let screen = super::render::render(&s, 120, 40);
    let (x, y) = find(&screen, "demo/workload-node-3");
    assert!(update(&mut s, Action::Click(x, y)).is_empty());
    assert_eq!(s.sched.pod_cursor, 3, "the first click moves the cursor");
    let effects = update(&mut s, Action::Click(x, y));
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { focus: Some(f), .. }] if f == "demo/workload-node-3"),
        "the second chooses: {effects:?}"
    );
}

fn type_text(s: &mut AppState, text: &str) {
    let keys: Vec<KeyCode> = text.chars().map(Char).collect();
    press(s, &keys);
}

#[test]
fn slash_filters_view_1s_lists_enter_keeps_esc_clears() {
    let mut s = fixtures::state();
    assert_eq!(s.context_cursor, 0, "admin@prod");
    press(&mut s, &[Char('/')]);
    assert!(s.typing);
    type_text(&mut s, "lab");
    assert_eq!(s.list_filter.kubeconfig, "lab");
    assert_eq!(s.context_cursor, 1, "the cursor follows to dev@lab");
    assert_eq!(crate::tui::filter::visible_contexts(&s), [1]);
    press(&mut s, &[Enter]);
    assert!(!s.typing, "Enter keeps the filter and ends typing");
    assert_eq!(s.list_filter.kubeconfig, "lab");
    press(&mut s, &[Down, Down]);
    assert_eq!(s.context_cursor, 1, "arrows stay among the matching rows");
    let effects = press(&mut s, &[Enter]);
    assert_eq!(
        effects,
        [Effect::LoadContext("dev@lab".into())],
        "Enter then switches to the context under the cursor"
    );
    press(&mut s, &[Char('/'), KeyCode::Backspace, KeyCode::Backspace]);
    assert_eq!(s.list_filter.kubeconfig, "l");
    press(&mut s, &[KeyCode::Esc]);
    assert!(s.list_filter.kubeconfig.is_empty(), "Esc clears");
    assert_eq!(crate::tui::filter::visible_contexts(&s).len(), 3);
    press(&mut s, &[Char('q')]);
    assert!(s.quit, "q quits again once typing ended");
}

#[test]
fn slash_filters_view_2s_certificates_and_clicks_follow() {
    let mut s = fixtures::state();
    update(&mut s, Action::Resize(120, 40));
    press(&mut s, &[Char('2'), Char('/')]);
    type_text(&mut s, "ANN");
    press(&mut s, &[Enter]);
    let rows = crate::tui::filter::visible_certs(&s);
    assert_eq!(rows.len(), 1, "only CN=ann");
    assert_eq!(s.cert_cursor, rows[0], "the cursor moved to it");
    let screen = super::render::render(&s, 120, 40);
    assert!(!screen.contains("CN=root-ca\n"), "{screen}");
    let (x, y) = find(&screen, "CN=ann");
    update(&mut s, Action::Click(x, y));
    assert_eq!(
        s.cert_cursor, rows[0],
        "a click lands on the row drawn there"
    );
    press(&mut s, &[Char('/'), KeyCode::Esc]);
    assert_eq!(crate::tui::filter::visible_certs(&s).len(), 3);
}

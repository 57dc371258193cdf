//! View 4 on a Deployment: its stages, its pod list, and a pod opened into its own journey,
//! drawn into TestBackend at 80×24 and driven by the keys a user presses.

use super::fixtures;
use super::render::{flat, render};
use super::workload_fixture::{self, PODS};
use crate::tui::action::{Action, View};
use crate::tui::state::AppState;
use crate::tui::update::update;

fn state() -> AppState {
    let mut s = fixtures::state();
    s.view = View::PodJourney;
    s.journey = workload_fixture::state();
    s
}

#[test]
fn the_workload_s_stages_come_first_with_their_sources() {
    let mut s = state();
    s.journey.step = 8;
    let screen = render(&s, 80, 24);
    assert!(screen.contains("4 Workload journey · 8/10"), "{screen}");
    assert!(
        screen.contains("deployment-controller · reported"),
        "{screen}"
    );
    assert!(
        flat(&screen).contains(
            "ReplicaSet web-7f9d59dc7f (pod-template-hash 7f9d59dc7f, revision 1, replicas 3) ← ownerReferences: Deployment web"
        ),
        "{screen}"
    );
    s.journey.step = 0;
    let screen = render(&s, 80, 24);
    assert!(screen.contains("Request  POST …/deployments"), "{screen}");
    assert!(
        flat(&screen).contains("/apis/apps/v1/namespaces/"),
        "{screen}"
    );
    s.journey.step = 9;
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("replicaset-controller · reported"),
        "{screen}"
    );
    assert!(screen.contains("SuccessfulCreate"), "{screen}");
}

#[test]
fn the_pod_list_has_one_row_per_pod_and_space_opens_the_pod_under_the_cursor() {
    let mut s = state();
    s.journey.step = 10;
    let screen = render(&s, 80, 24);
    for (name, node) in PODS {
        assert!(
            screen.contains(&format!("{name} {node} Running")),
            "{screen}"
        );
    }
    assert!(screen.contains("Pods (3)"), "{screen}");
    let _ = update(&mut s, Action::MoveDown);
    assert_eq!(s.journey.pod_cursor, 1);
    let screen = render(&s, 80, 24);
    assert!(screen.contains(&format!("▸ {}", PODS[1].0)), "{screen}");
    let _ = update(&mut s, Action::NextStep);
    assert!(s.journey.pod_open);
    assert_eq!(s.journey.step, 1);
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains(&format!("4 Pod journey · 1/12 · default/{}", PODS[1].0))
            || screen.contains(&format!("default/{}", PODS[1].0)),
        "{screen}"
    );
    assert!(
        screen.contains("↩ the Deployment's pods (Backspace)"),
        "{screen}"
    );
    assert!(
        screen.contains("created in-process by the replicaset-controller"),
        "{screen}"
    );
    let _ = update(&mut s, Action::PreviousStep);
    assert!(!s.journey.pod_open);
    assert_eq!(s.journey.step, 10);
}

#[test]
fn a_dry_run_of_a_workload_says_no_pod_exists() {
    let mut s = state();
    if let Some(w) = s.journey.workload.as_mut() {
        w.request.dry_run = true;
        w.pods.clear();
        w.pods_total = 0;
        w.replicasets.clear();
        w.events.clear();
    }
    s.journey.step = 8;
    let screen = render(&s, 80, 24);
    assert!(
        flat(&screen).contains("no ReplicaSet is created"),
        "{screen}"
    );
    s.journey.step = 10;
    let screen = render(&s, 80, 24);
    assert!(screen.contains("Pods (0)"), "{screen}");
    assert!(flat(&screen).contains("no pod was created"), "{screen}");
    let _ = update(&mut s, Action::NextStep);
    assert!(!s.journey.pod_open, "no pod to open");
}

#[test]
fn enter_places_a_pod_of_the_workload_in_view_5() {
    use crate::tui::update::Effect;
    // Sent and run: the pod under the cursor, as its ReplicaSet named it.
    let mut s = state();
    s.journey.pod_cursor = 1;
    let effects = update(&mut s, Action::OpenInScheduler);
    let want = format!("default/{}", PODS[1].0);
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { focus: Some(f), .. }] if *f == want),
        "{effects:?}"
    );
    // Not sent yet: a pod of the template, since no controller has named one.
    let mut s = state();
    s.journey.workload = None;
    let effects = update(&mut s, Action::OpenInScheduler);
    match &effects[..] {
        [
            Effect::LoadCluster {
                focus: None,
                fallback,
                ..
            },
        ] => {
            assert_eq!(fallback.metadata.name.as_deref(), Some("web-template"));
            let labels = fallback.metadata.labels.clone().unwrap_or_default();
            assert_eq!(labels.get("app").map(String::as_str), Some("web"));
            let spec = fallback.spec.clone().unwrap_or_default();
            assert_eq!(spec.containers[0].image.as_deref(), Some("nginx:1.27"));
        }
        other => panic!("{other:?}"),
    }
}

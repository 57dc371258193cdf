//! View 5's coalesced watch updates through `update`: one applies whatever is open on screen
//! (the publisher waits for it to be taken), keeps the what-if and the cursors, and an update
//! from a watch the view no longer holds is taken and dropped.

use ratatui::crossterm::event::KeyCode::{Char, Down, Enter};

use super::fixtures;
use super::fixtures::press;
use super::stepped_fixtures as fx;
use crate::tui::action::{Action, Payload, View};
use crate::tui::sched::model::{CPU_STEP, Model};
use crate::tui::sched::watch::{Feed, LiveStatus, LiveUpdate};
use crate::tui::state::{AppState, Overlay};
use crate::tui::update::update;

fn watched() -> (AppState, Feed) {
    let mut s = fixtures::with_app_json(true);
    s.view = View::Scheduler;
    let (feed, _alive) = Feed::new();
    let mut live = fx::demo_live(None);
    live.feed = Some(feed.clone());
    update(&mut s, Action::LiveClusterLoaded(Payload::new(Ok(live))));
    (s, feed)
}

/// The demo cluster again, one pod fewer in the list, as a watch would send it.
fn changed(feed: u64, events: u64) -> LiveUpdate {
    let live = fx::demo_live(None);
    let mut listing = live.listing;
    listing.pods.remove(0);
    let status = LiveStatus {
        nodes: live.data.nodes.len(),
        pods: listing.pods.len(),
        events,
        ..Default::default()
    };
    LiveUpdate::new(feed, status, None, Some((Model::new(live.data), listing)))
}

#[test]
fn an_update_applies_under_the_help_overlay_and_keeps_the_what_if() {
    let (mut s, feed) = watched();
    let before = s.sched.listing.as_ref().map_or(0, |l| l.pods.len());
    press(&mut s, &[Char('+'), Char('j'), Char('?')]);
    assert!(matches!(s.overlay, Some(Overlay::Help { .. })));
    let cursor = s.sched.cursor;
    let u = changed(feed.id, 7);
    update(&mut s, Action::LiveChanged(Payload::new(u.clone())));
    assert!(u.taken(), "the publisher may send the next update");
    assert!(matches!(s.overlay, Some(Overlay::Help { .. })));
    let live = s.sched.live.as_ref().expect("still watching");
    assert_eq!((live.applied, live.status.events), (1, 7));
    assert_eq!(
        s.sched.listing.as_ref().map(|l| l.pods.len()),
        Some(before - 1)
    );
    let m = s.sched.model().expect("a model");
    assert_eq!(m.whatif.cpu_milli, CPU_STEP, "the what-if carries over");
    assert_eq!(s.sched.cursor, cursor, "the cursor stays on its node");
}

#[test]
fn an_update_from_a_dropped_watch_is_taken_and_ignored() {
    let (mut s, feed) = watched();
    // `r` lists again: the old feed is let go, and its late update changes nothing.
    update(&mut s, Action::Refresh);
    assert!(s.sched.live.is_none());
    let u = changed(feed.id, 9);
    update(&mut s, Action::LiveChanged(Payload::new(u.clone())));
    assert!(u.taken());
    assert!(s.sched.live.is_none());
    assert!(s.sched.loading, "still waiting for the new list");
}

#[test]
fn enter_in_the_pods_list_places_the_pod_on_the_watched_cluster_without_a_new_list() {
    let (mut s, feed) = watched();
    press(&mut s, &[Char('w'), Down, Down]);
    let effects = press(&mut s, &[Enter]);
    assert!(effects.is_empty(), "no new list: {effects:?}");
    assert_eq!(s.sched.focus_pod.as_deref(), Some("demo/workload-node-2"));
    assert!(s.sched.model.is_none() && s.sched.loading);
    assert!(s.sched.live.is_some(), "the watch stays");
    let screen = super::render::render(&s, 80, 24);
    assert!(
        screen.contains("Placing demo/workload-node-2 on the watched cluster (no new list)"),
        "{screen}"
    );
    // Built before the Enter, for the pod placed until then: taken, not shown.
    let old = changed(feed.id, 3);
    update(&mut s, Action::LiveChanged(Payload::new(old.clone())));
    assert!(old.taken());
    assert!(s.sched.model.is_none() && s.sched.loading);
    let live = fx::demo_live(Some("demo/workload-node-2"));
    let u = LiveUpdate::new(
        feed.id,
        LiveStatus::default(),
        Some("demo/workload-node-2".into()),
        Some((Model::new(live.data), live.listing)),
    );
    update(&mut s, Action::LiveChanged(Payload::new(u)));
    assert!(!s.sched.loading);
    let m = s.sched.model().expect("the chosen pod's cycle");
    assert_eq!(m.data.pod.metadata.name.as_deref(), Some("workload-node-2"));
    assert_eq!(s.sched.step, 0, "shown from its first step");
    let l = s.sched.listing.as_ref().expect("pods list");
    assert_eq!(l.pods[s.sched.pod_cursor].key, "demo/workload-node-2");
}

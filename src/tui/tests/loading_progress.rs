//! View 5 while a big cluster loads: each collection's count against the server's total, what
//! a list recovered from, then the snapshot step; once loaded, a recovery stays said on screen
//! and a late progress report does not bring the loading pane back.

use ratatui::crossterm::event::KeyCode::Char;

use super::fixtures::{self, press};
use super::render::render;
use super::stepped_fixtures as fx;
use crate::client::cluster::ListProgress;
use crate::tui::action::{Action, Payload};
use crate::tui::update::{Effect, update};

fn progress(loaded: u64, total: u64, pages: usize, note: Option<&str>) -> ListProgress {
    ListProgress {
        loaded,
        total: Some(total),
        pages,
        note: note.map(str::to_string),
        done: loaded == total,
    }
}

const EXPIRED: &str =
    "the continue token expired after 48,000 items (410 Gone): listed again from the start";

#[test]
fn loading_shows_each_collections_count_against_its_total() {
    let mut s = fixtures::with_app_json(true);
    let effects = press(&mut s, &[Char('5')]);
    assert!(
        matches!(&effects[..], [Effect::LoadCluster { .. }]),
        "{effects:?}"
    );
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("Listing the cluster's nodes and pods"),
        "{screen}"
    );
    update(
        &mut s,
        Action::ClusterProgress(Payload::new(vec![
            ("nodes".into(), progress(5_000, 5_000, 10, None)),
            ("pods".into(), progress(48_000, 150_000, 96, None)),
        ])),
    );
    let screen = render(&s, 120, 40);
    assert!(screen.contains("nodes      5,000 / 5,000"), "{screen}");
    assert!(screen.contains("pods       48,000 / 150,000"), "{screen}");
    assert!(screen.contains("(96 pages)"), "{screen}");
    assert!(
        screen.contains("Listing the cluster's nodes and pods"),
        "{screen}"
    );

    // The continue token expired: the count starts again, and the screen says why.
    update(
        &mut s,
        Action::ClusterProgress(Payload::new(vec![
            ("nodes".into(), progress(5_000, 5_000, 10, None)),
            ("pods".into(), progress(500, 150_000, 1, Some(EXPIRED))),
        ])),
    );
    let screen = render(&s, 120, 40);
    assert!(screen.contains("pods       500 / 150,000"), "{screen}");
    assert!(screen.contains(&format!("↻ {EXPIRED}")), "{screen}");

    // Every list done: what is left is compiling the snapshot, and it says so.
    update(
        &mut s,
        Action::ClusterProgress(Payload::new(vec![
            ("nodes".into(), progress(5_000, 5_000, 10, None)),
            (
                "pods".into(),
                progress(150_000, 150_000, 301, Some(EXPIRED)),
            ),
        ])),
    );
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("Listed; building the scheduler's snapshot"),
        "{screen}"
    );
    assert!(
        screen.contains("✓ pods       150,000 / 150,000"),
        "{screen}"
    );
}

#[test]
fn a_recovery_stays_on_screen_and_late_progress_is_ignored() {
    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('5')]);
    let mut live = fx::demo_live(None);
    live.listing.hidden.push(format!("pods: {EXPIRED}"));
    update(&mut s, Action::LiveClusterLoaded(Payload::new(Ok(live))));
    assert!(!s.sched.loading);
    assert!(s.sched.progress.is_empty());
    update(
        &mut s,
        Action::ClusterProgress(Payload::new(vec![(
            "pods".into(),
            progress(10, 20, 1, None),
        )])),
    );
    assert!(s.sched.progress.is_empty(), "a list already shown");
    let screen = render(&s, 120, 40);
    assert!(!screen.contains("Listing the cluster"), "{screen}");
    assert!(
        screen.contains("! pods: the continue token expired"),
        "{screen}"
    );
}

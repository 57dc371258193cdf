//! View 4 against a remote server: runs are dry runs unless `--for-real`; `W` asks before a
//! real create and only `y` goes ahead; the status bar says READ-ONLY meanwhile.

use ratatui::crossterm::event::KeyCode;

use super::fixtures::{self, press};
use super::render::{flat, render};
use crate::journey::run::WriteMode;
use crate::tui::action::View;
use crate::tui::state::AppState;
use crate::tui::update::Effect;

use KeyCode::Char;

/// The fixture's `admin@prod` context: a remote server, not the embedded sandbox.
fn remote() -> AppState {
    fixtures::with_app_json(false)
}

fn write_of(effects: &[Effect]) -> Option<WriteMode> {
    match effects {
        [Effect::RunJourney { write, .. }] => Some(*write),
        _ => None,
    }
}

#[test]
fn a_remote_run_is_a_dry_run_and_the_status_bar_says_read_only() {
    let mut s = remote();
    press(&mut s, &[Char('4')]);
    assert_eq!(
        write_of(&press(&mut s, &[Char(' ')])),
        Some(WriteMode::DryRun)
    );
    assert!(render(&s, 120, 40).contains("READ-ONLY"));

    let mut s = remote();
    s.journey.for_real = true;
    press(&mut s, &[Char('4')]);
    assert_eq!(
        write_of(&press(&mut s, &[Char(' ')])),
        Some(WriteMode::ForReal)
    );
    assert!(!render(&s, 120, 40).contains("READ-ONLY"));

    // The embedded sandbox creates for real and is not read-only.
    let mut s = remote();
    s.journey.embedded = true;
    assert!(!s.journey.read_only());
}

#[test]
fn w_asks_and_only_y_creates_for_real() {
    let mut s = remote();
    press(&mut s, &[Char('4')]);
    assert!(press(&mut s, &[Char('W')]).is_empty());
    assert!(s.journey.confirm);
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("Create default/app on https://10.0.0.1:6443 for real? y/N"),
        "{screen}"
    );
    // Any other key says no, and does nothing else.
    assert!(press(&mut s, &[Char(' ')]).is_empty());
    assert!(!s.journey.confirm);
    assert_eq!(s.journey.step, 0, "the declined key did not step");
    assert!(!s.journey.running);
    // `y` without the question does nothing.
    assert!(press(&mut s, &[Char('y')]).is_empty());
    press(&mut s, &[Char('W')]);
    let effects = press(&mut s, &[Char('y')]);
    assert_eq!(write_of(&effects), Some(WriteMode::ForReal), "{effects:?}");
    assert!(s.journey.running && !s.journey.confirm);
    assert_eq!(s.view, View::PodJourney);
}

/// A file view 4 cannot send (two objects) stays on the request step, which says why: Space
/// neither sends nor walks into stages that would say "sending the request…" for ever.
#[test]
fn a_manifest_that_cannot_be_sent_keeps_space_on_the_request() {
    let mut s = fixtures::state();
    s.journey = crate::tui::journey::JourneyState::new(
        "two.yaml".into(),
        Some(
            "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n",
        ),
        true,
    );
    press(&mut s, &[Char('4')]);
    let effects = press(&mut s, &[Char(' '), Char(' ')]);
    assert!(effects.is_empty(), "nothing sent: {}", effects.len());
    assert_eq!((s.journey.step, s.journey.running), (0, false));
    let screen = render(&s, 100, 30);
    assert!(screen.contains("2 YAML"), "{screen}");
    assert!(!screen.contains("sending the request"), "{screen}");
    // The request row says nothing leaves; it used to read "POST …/pods".
    assert!(screen.contains("Request  not sent  (two.yaml)"), "{screen}");
    assert!(!screen.contains("POST …/pods"), "{screen}");
    // View 5 has no pod to place, and says why in view 4's words.
    press(&mut s, &[Char('5')]);
    let screen = flat(&render(&s, 100, 30));
    assert!(
        screen.contains(
            "no pod to place: view 4's manifest: two.yaml: 2 YAML documents (Service, Pod)"
        ),
        "{screen}"
    );
}

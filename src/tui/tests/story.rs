//! Presenter mode's story across views: Space and Backspace leave a view at its ends, and the
//! title counts "step N of M".

use ratatui::crossterm::event::KeyCode::{Backspace, Char};

use super::fixtures::{self, press};
use super::render::render;
use crate::tui::action::View;
use crate::tui::story;
use crate::tui::update::Effect;

#[test]
fn space_goes_on_across_views_in_presenter_mode_only() {
    let mut s = fixtures::state();
    press(&mut s, &[Char(' ')]);
    assert_eq!(
        s.view,
        View::Kubeconfig,
        "outside presenter mode Space stays"
    );
    s.present = true;
    assert_eq!(story::position(&s).0, 1);
    press(&mut s, &[Char(' ')]);
    assert_eq!(s.view, View::Certificates);
    assert_eq!(story::position(&s).0, 2);
    let effects = press(&mut s, &[Char(' ')]);
    assert_eq!(s.view, View::Connection);
    assert!(
        effects.iter().any(|e| matches!(e, Effect::Connect(_))),
        "entering view 3 starts the handshake: {effects:?}"
    );
    press(&mut s, &[Char(' ')]);
    assert_eq!(
        s.view,
        View::Connection,
        "a view still loading is not skipped"
    );
    press(&mut s, &[Backspace]);
    assert_eq!(s.view, View::Certificates);
    press(&mut s, &[Backspace, Backspace]);
    assert_eq!(s.view, View::Kubeconfig, "the story's start stays put");
}

#[test]
fn the_presenter_title_counts_the_steps_whole_at_80_columns() {
    let mut s = fixtures::state();
    s.present = true;
    s.size = (80, 24);
    let (n, m) = story::position(&s);
    let screen = render(&s, 80, 24);
    let title = screen.lines().nth(1).unwrap_or_default();
    assert!(
        title.contains(&format!(
            "step {n} of {m} · Space next · Backspace back · P leaves"
        )),
        "{screen}"
    );
    s.autoplay = Some(2.0);
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("autoplay every 2s: any key takes over"),
        "{screen}"
    );
}

#[test]
fn which_node_wins_takes_a_guess_and_the_result_judges_it() {
    use crate::tui::sched::steps::{Step, candidates};
    let mut s = super::sequences_finish::view5_live(None);
    s.present = true;
    s.size = (80, 24);
    while s.sched.current(true) != Some(Step::Predict) {
        let before = s.sched.step;
        press(&mut s, &[Char(' ')]);
        assert_ne!(s.sched.step, before, "the steps lead to the question");
    }
    let m = s.sched.model().expect("model");
    let nodes = candidates(m);
    let winner = m.trace.selected.clone().expect("a winner");
    let screen = render(&s, 80, 24);
    let squashed: String = screen.split_whitespace().collect();
    let choices: Vec<String> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} {n}", i + 1))
        .collect();
    let ask = format!("Guess with 1–{}: {}", nodes.len(), choices.join(" · "));
    assert!(
        squashed.contains(&ask.split_whitespace().collect::<String>()),
        "the choices, whole:\n{screen}"
    );
    assert!(!screen.contains("Selected:"), "no answer before the reveal");
    // A digit here is a guess, not a view.
    let wrong = nodes.iter().position(|n| *n != winner).expect("a loser");
    press(&mut s, &[Char(char::from(b'1' + wrong as u8))]);
    assert_eq!(s.view, View::Scheduler);
    assert_eq!(s.sched.guess.as_deref(), Some(nodes[wrong].as_str()));
    assert!(render(&s, 80, 24).contains(&format!("Your guess: {}", nodes[wrong])));
    while s.sched.current(true) != Some(Step::Result) {
        press(&mut s, &[Char(' ')]);
    }
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains(&format!("your guess, {}: ✗ not this time", nodes[wrong])),
        "{screen}"
    );
}

#[test]
fn autoplay_takes_fractions_of_a_second_on_its_beat() {
    use crate::tui::action::Action;
    use crate::tui::update::update;
    let mut s = fixtures::state();
    s.present = true;
    s.autoplay = Some(0.5);
    let t0 = s.now_ms;
    update(&mut s, Action::Beat(t0 + 300));
    assert_eq!(s.view, View::Kubeconfig, "not yet");
    update(&mut s, Action::Beat(t0 + 500));
    assert_eq!(s.view, View::Certificates, "half a second on");
    update(&mut s, Action::Beat(t0 + 900));
    assert_eq!(s.view, View::Certificates);
    update(&mut s, Action::Beat(t0 + 1000));
    assert_eq!(s.view, View::Connection);
}

//! Presenter mode's story across views: Space and Backspace leave a view at its ends, and the
//! title counts "step N of M".

use ratatui::crossterm::event::KeyCode::{Backspace, Char};

use super::fixtures::{self, press};
use super::render::{flat, render};
use super::stepped_fixtures as stepped;
use crate::tui::action::View;
use crate::tui::quiz::{Phase, Question};
use crate::tui::sched::model::Model;
use crate::tui::story;

#[test]
fn space_goes_on_across_views_in_presenter_mode_only() {
    let mut s = fixtures::state();
    press(&mut s, &[Char(' ')]);
    assert_eq!(
        s.view,
        View::Kubeconfig,
        "outside presenter mode Space stays"
    );
    story::set_present(&mut s, true);
    // Each view opens on its question, then its answer, then the view itself.
    for (view, at) in [(View::Kubeconfig, 1), (View::Certificates, 4)] {
        assert_eq!(s.view, view);
        assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Ask));
        assert_eq!(story::position(&s).0, at);
        press(&mut s, &[Char(' ')]);
        assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Reveal));
        press(&mut s, &[Char(' ')]);
        assert!(story::asking(&s).is_none());
        assert_eq!(story::position(&s).0, at + 2);
        assert_eq!(s.view, view);
        press(&mut s, &[Char(' ')]);
    }
    assert_eq!(s.view, View::Connection);
    assert!(
        s.conn.running.is_some(),
        "entering view 3 starts the handshake"
    );
    press(&mut s, &[Char(' ')]);
    press(&mut s, &[Char(' ')]);
    assert!(
        story::waiting(&s),
        "the answer waits for the real handshake"
    );
    assert_eq!(
        s.view,
        View::Connection,
        "a view still loading is not skipped"
    );
    press(&mut s, &[Backspace, Backspace]);
    assert_eq!(s.view, View::Certificates);
    assert!(
        story::asking(&s).is_none(),
        "back into a view shows the view"
    );
    press(&mut s, &[Backspace]);
    assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Reveal));
    press(&mut s, &[Backspace; 6]);
    assert_eq!(s.view, View::Kubeconfig, "the story's start stays put");
    assert_eq!(story::position(&s).0, 1);
}

/// The room's guess at each question is judged by what kexplore found: the signature that
/// verifies, not the issuer's name.
#[test]
fn a_question_takes_a_guess_and_its_reveal_judges_it() {
    let mut s = fixtures::state();
    story::set_present(&mut s, true);
    press(&mut s, &[Char(' '), Char(' '), Char(' ')]);
    assert_eq!(s.view, View::Certificates);
    let a = story::asking(&s).cloned().expect("asked");
    assert_eq!(a.question, Question::Signer);
    let report = s.active.as_ref().and_then(|c| c.report()).expect("report");
    let truth = report
        .client_signer()
        .map_or("none of these", |c| c.name())
        .to_string();
    let right = a
        .choices
        .iter()
        .position(|c| *c == truth)
        .expect("the answer is a choice");
    let wrong = (0..a.choices.len())
        .find(|i| *i != right)
        .expect("another choice");
    for size in [(80, 24), (120, 40)] {
        let screen = render(&s, size.0, size.1);
        assert!(!screen.contains('✓'), "nothing gives it away:\n{screen}");
        assert!(screen.contains(a.question.ask()), "{screen}");
        for (i, c) in a.choices.iter().enumerate() {
            assert!(screen.contains(&format!("{} [ ] {c}", i + 1)), "{screen}");
        }
    }
    // A digit is a guess here, not a view.
    press(&mut s, &[Char(char::from(b'1' + wrong as u8))]);
    assert_eq!(s.view, View::Certificates);
    assert!(render(&s, 80, 24).contains(&format!("{} [x] {}", wrong + 1, a.choices[wrong])));
    press(&mut s, &[Char(char::from(b'1' + right as u8))]);
    press(&mut s, &[Char(' ')]);
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains(&format!("your guess, {truth}: ✓ right")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("{} ✓ {truth}  (your pick)", right + 1)),
        "{screen}"
    );
}

#[test]
fn the_filter_question_toggles_nodes_and_counts_the_passing_ones() {
    use crate::tui::sched::steps::Step;
    let mut s = super::sequences_finish::view5_live(None);
    story::set_present(&mut s, true);
    s.size = (80, 24);
    assert!(story::asking(&s).is_none(), "the nodes come first");
    press(&mut s, &[Char(' ')]);
    let a = story::asking(&s).cloned().expect("asked after the nodes");
    assert_eq!(a.question, Question::Filter);
    assert_eq!(
        s.sched.current(true),
        Some(Step::Nodes),
        "no filter shown yet"
    );
    press(&mut s, &[Char('1'), Char('2'), Char('1')]);
    assert_eq!(s.quiz.guess(Question::Filter), &[1]);
    assert_eq!(s.view, View::Scheduler);
    press(&mut s, &[Char(' ')]);
    let m = s.sched.model().expect("model");
    let passing = m.trace.filter.iter().filter(|v| v.passed).count();
    let screen = render(&s, 80, 24);
    let fact = format!("{passing} of {} pass", m.snapshot.nodes.len());
    assert!(
        screen.contains(&format!(" {}", fact.to_uppercase()))
            || screen.contains('█')
            || screen.contains('▀'),
        "the answer, large or whole: {screen}"
    );
    press(&mut s, &[Char(' ')]);
    assert!(story::asking(&s).is_none());
    assert!(matches!(s.sched.current(true), Some(Step::Filter(_))));
    press(&mut s, &[Backspace]);
    assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Reveal));
    assert_eq!(s.sched.current(true), Some(Step::Nodes));
}

#[test]
fn the_presenter_title_counts_the_steps_whole_at_80_columns() {
    let mut s = fixtures::state();
    s.present = true;
    s.size = (80, 24);
    // Before view 3's handshake and view 5's load, the story's length is not known yet.
    let (n, m) = story::position(&s);
    assert_eq!(m, None);
    let title = |s: &crate::tui::state::AppState| {
        let screen = render(s, 80, 24);
        screen.lines().nth(1).unwrap_or_default().to_string()
    };
    assert!(
        title(&s).contains(&format!(
            "step {n} · Space next · Backspace back · P leaves"
        )),
        "{}",
        title(&s)
    );
    s.conn
        .set(stepped::connection(None), Some(&stepped::alibaba_creds()));
    assert_eq!(story::position(&s).1, None, "the scheduler's steps to come");
    s.sched.model = Some(Model::new(stepped::demo_cluster()));
    let (n, m) = story::position(&s);
    let m = m.expect("every part's length known");
    assert!(
        title(&s).contains(&format!(
            "step {n} of {m} · Space next · Backspace back · P leaves"
        )),
        "{}",
        title(&s)
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
        let before = (s.sched.step, story::asking(&s).map(|a| a.phase));
        press(&mut s, &[Char(' ')]);
        let after = (s.sched.step, story::asking(&s).map(|a| a.phase));
        assert_ne!(after, before, "the steps lead to the question");
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
    assert!(story::asking(&s).is_some());
    // Three intervals at a question, so the room can answer.
    update(&mut s, Action::Beat(t0 + 1900));
    assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Ask));
    update(&mut s, Action::Beat(t0 + 2000));
    assert_eq!(story::asking(&s).map(|a| a.phase), Some(Phase::Reveal));
    update(&mut s, Action::Beat(t0 + 2500));
    assert!(story::asking(&s).is_none());
    update(&mut s, Action::Beat(t0 + 3000));
    assert_eq!(s.view, View::Connection);
}

/// A pod the cluster already bound: in presenter mode no screen names its node before the
/// result, at either size (outside it, the head line says where the cluster put it).
#[test]
fn a_bound_pods_node_stays_hidden_until_the_result_in_presenter_mode() {
    use crate::tui::sched::steps::Step;
    let mut s = super::sequences_finish::view5_live(Some("demo/workload-node-2"));
    story::set_present(&mut s, true);
    while s.sched.current(true) != Some(Step::Result) {
        for (w, h) in [(80, 24), (120, 40)] {
            let screen = render(&s, w, h);
            assert!(!screen.contains("node-2;"), "{screen}");
            assert!(!screen.contains("Selected"), "{screen}");
        }
        let before = (s.sched.step, story::asking(&s).map(|a| a.phase));
        press(&mut s, &[Char(' ')]);
        assert_ne!((s.sched.step, story::asking(&s).map(|a| a.phase)), before);
    }
    assert!(render(&s, 120, 40).contains("scheduled by the cluster to node-2"));
}

/// The identity question asks for the user, so a group (O) is a fair wrong answer; the reveal
/// names the kubeconfig's entry apart from the certificate's CN.
#[test]
fn the_identity_question_asks_for_the_user_and_sets_the_entry_apart() {
    let mut s = fixtures::state();
    story::set_present(&mut s, true);
    let a = story::asking(&s).cloned().expect("asked");
    assert_eq!(a.question, Question::Identity);
    assert_eq!(
        a.question.ask(),
        "Which user will the API server see you as?"
    );
    let ann = a.choices.iter().position(|c| c == "ann").expect("the CN");
    press(&mut s, &[Char(char::from(b'1' + ann as u8)), Char(' ')]);
    let screen = render(&s, 80, 24);
    assert!(screen.contains("your guess, ann: ✓ right"), "{screen}");
    assert!(
        screen.contains("the kubeconfig's user entry, admin, is only a label for us"),
        "{screen}"
    );
}

/// A workload's story: its request and its controllers, then the scheduler placing one of its
/// pods, then its pod list with each pod's node — where it ends, instead of flipping between
/// views 4 and 5 — each with a caption about the workload, not a pod's stages.
#[test]
fn a_workload_story_shows_its_pods_after_the_scheduler_and_ends_there() {
    use crate::tui::story::Part;
    let mut s = fixtures::state();
    s.journey = super::workload_fixture::state();
    s.view = View::PodJourney;
    s.present = true;
    let pods = s.journey.pods_step();
    s.journey.step = pods - 1;
    assert_eq!(story::part(&s), Part::JourneyToScheduler);
    let screen = render(&s, 80, 24);
    assert!(
        flat(&screen).contains("The ReplicaSet controller creates pods from the template"),
        "{screen}"
    );
    assert!(!screen.contains("Score:"), "{screen}");
    // The presenter's title names what the pane shows: a workload's journey, not a pod's.
    let title = screen
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert!(
        title.trim_start().starts_with("4 Workload journey  step "),
        "{screen}"
    );
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(stepped::demo_cluster()));
    s.sched.step = s.sched.steps(true).len() - 1;
    assert_eq!(story::part(&s), Part::Scheduler);
    press(&mut s, &[Char(' ')]);
    assert_eq!(
        (s.view, s.journey.step, story::part(&s)),
        (View::PodJourney, pods, Part::JourneyAfterScheduler)
    );
    let screen = render(&s, 80, 24);
    assert!(
        flat(&screen).contains("the scheduler chose its node, that node's kubelet started it"),
        "{screen}"
    );
    // Space ends the story here: the pane does not promise it opens the pod.
    assert!(!screen.contains("Space: this pod's"), "{screen}");
    assert!(
        flat(&screen).contains("P leaves presenter mode"),
        "{screen}"
    );
    let end = story::position(&s);
    for _ in 0..3 {
        press(&mut s, &[Char(' ')]);
        assert_eq!((s.view, story::position(&s)), (View::PodJourney, end));
    }
    press(&mut s, &[Backspace]);
    assert_eq!(s.view, View::Scheduler, "back to the scheduler's last step");
}

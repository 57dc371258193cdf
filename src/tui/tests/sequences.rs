//! Key presses → keymap → `update`, checking the state and the effects that come out.

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::fixtures::{self, NOW, press};
use crate::tui::action::{Action, View};
use crate::tui::app::{AppEvent, to_action};
use crate::tui::keymap::KeyMap;
use crate::tui::session::{LoadedContext, Source};
use crate::tui::state::{AppState, Overlay};
use crate::tui::update::{Effect, update};

use KeyCode::{BackTab, Char, Down, Enter, Esc, Tab, Up};

#[test]
fn number_keys_and_tab_move_between_views() {
    let mut s = fixtures::state();
    press(&mut s, &[Char('2')]);
    assert_eq!(s.view, View::Certificates);
    press(&mut s, &[Char('5'), Tab]);
    assert_eq!(s.view, View::Kubeconfig, "Tab wraps from 5 to 1");
    press(&mut s, &[BackTab]);
    assert_eq!(s.view, View::Scheduler, "Shift-Tab wraps from 1 to 5");
}

#[test]
fn help_opens_blocks_view_keys_and_closes_with_esc() {
    let mut s = fixtures::state();
    press(&mut s, &[Char('?')]);
    assert_eq!(s.overlay, Some(Overlay::Help { scroll: 0 }));
    press(&mut s, &[Char('3'), Down]);
    assert_eq!(s.view, View::Kubeconfig, "digits do nothing under help");
    assert_eq!(
        s.overlay,
        Some(Overlay::Help { scroll: 1 }),
        "arrows scroll help"
    );
    press(&mut s, &[Esc]);
    assert_eq!(s.overlay, None);
    press(&mut s, &[Char('?'), Char('?')]);
    assert_eq!(s.overlay, None, "? toggles");
}

#[test]
fn q_and_ctrl_c_quit_even_under_help() {
    let mut s = fixtures::state();
    press(&mut s, &[Char('?'), Char('q')]);
    assert!(s.quit);
    let mut s = fixtures::state();
    let km = KeyMap::default();
    let ctrl_c = AppEvent::Input(Event::Key(KeyEvent::new(Char('c'), KeyModifiers::CONTROL)));
    let a = to_action(ctrl_c, &s, &km);
    assert_eq!(a, Some(Action::Quit));
    update(&mut s, Action::Quit);
    assert!(s.quit);
}

#[test]
fn enter_on_a_context_asks_for_it_and_the_result_replaces_the_active_one() {
    let mut s = fixtures::state();
    assert_eq!(s.context_cursor, 0, "starts on the current context");
    let effects = press(&mut s, &[Char('j'), Enter]);
    assert_eq!(effects, vec![Effect::LoadContext("dev@lab".into())]);
    assert_eq!(s.pending.as_deref(), Some("dev@lab"));
    let result = LoadedContext {
        name: "dev@lab".into(),
        resolved: Err("cluster 'lab': certificate-authority missing.crt: no such file".into()),
        report: None,
    };
    update(&mut s, Action::ContextLoaded(Box::new(result.clone())));
    assert_eq!(s.pending, None);
    assert_eq!(s.active, Some(result));
}

#[test]
fn cursors_stay_in_range() {
    let mut s = fixtures::state();
    press(&mut s, &[Up, Up, Char('k')]);
    assert_eq!(s.context_cursor, 0);
    press(&mut s, &[Down, Down, Down, Down, Char('j')]);
    assert_eq!(s.context_cursor, 2, "three contexts");
    press(&mut s, &[Char('2'), Down, Down, Down, Down]);
    assert_eq!(s.cert_cursor, 2, "three certificates in the tree");
    press(&mut s, &[Up]);
    assert_eq!(s.cert_cursor, 1);
}

#[test]
fn enter_and_steps_do_nothing_where_they_mean_nothing() {
    let mut s = fixtures::state();
    assert!(press(&mut s, &[Char('2'), Enter]).is_empty());
    // Entering view 3 connects once; stepping before the answer arrives does nothing.
    assert_eq!(
        press(&mut s, &[Char('3')]),
        vec![Effect::Connect("admin@prod".into())]
    );
    assert!(
        press(
            &mut s,
            &[Char(' '), Char('n'), KeyCode::Backspace, Char('3')]
        )
        .is_empty()
    );
    assert_eq!(s.view, View::Connection);
    assert_eq!(s.conn.step, 0);
}

#[test]
fn without_kubeconfig_keys_still_work() {
    let source = Source::NotFound {
        looked: "/home/ann/.kube/config does not exist".into(),
    };
    let mut s = AppState::new(source, None, NOW);
    assert!(press(&mut s, &[Down, Enter, Char('2'), Down, Tab]).is_empty());
    assert_eq!(s.view, View::Connection);
}

#[test]
fn clicks_on_tabs_switch_views_and_ticks_move_the_clock() {
    let mut s = fixtures::state();
    update(&mut s, Action::Click(11, 0));
    assert_eq!(s.view, View::Kubeconfig);
    update(&mut s, Action::Click(30, 0));
    assert_eq!(s.view, View::Certificates);
    update(&mut s, Action::Click(30, 5));
    assert_eq!(
        s.view,
        View::Certificates,
        "clicks below the tabs do not switch"
    );
    update(&mut s, Action::Tick(NOW + 60));
    assert_eq!(s.now_unix, NOW + 60);
    update(&mut s, Action::Resize(80, 24));
    assert_eq!(s.size, (80, 24));
}

#[test]
fn m_opens_the_merged_kubeconfig_in_view_1_only() {
    let mut s = fixtures::state();
    press(&mut s, &[Char('2'), Char('m')]);
    assert_eq!(s.overlay, None, "m means nothing in view 2");
    press(&mut s, &[Char('1'), Char('m'), Down, Down]);
    assert_eq!(s.overlay, Some(Overlay::Merged { scroll: 2 }));
    press(&mut s, &[Char('2')]);
    assert_eq!(
        s.view,
        View::Kubeconfig,
        "view keys wait until the overlay closes"
    );
    press(&mut s, &[Char('?')]);
    assert_eq!(
        s.overlay,
        Some(Overlay::Help { scroll: 0 }),
        "? replaces it with help"
    );
    press(&mut s, &[Esc]);
    assert_eq!(s.overlay, None);
}

#[test]
fn a_late_answer_for_an_earlier_switch_is_ignored() {
    let mut s = fixtures::state();
    press(&mut s, &[Char('j'), Enter, Char('j'), Enter]);
    assert_eq!(s.pending.as_deref(), Some("ci@prod"));
    let stale = LoadedContext {
        name: "dev@lab".into(),
        resolved: Err("late".into()),
        report: None,
    };
    update(&mut s, Action::ContextLoaded(Box::new(stale)));
    assert_eq!(
        s.active.as_ref().map(|a| a.name.as_str()),
        Some("admin@prod")
    );
    assert_eq!(
        s.pending.as_deref(),
        Some("ci@prod"),
        "still waiting for the last one"
    );
}

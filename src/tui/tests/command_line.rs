//! The k9s habits: the `:` command line, `:ns`, Esc clearing a kept filter, `x` undoing the
//! what-ifs, and the `w` pods list opening on the first Pending pod with the scheduler's reason.

use k8s_openapi::api::core::v1::Pod;
use ratatui::crossterm::event::KeyCode;
use serde_json::json;

use super::fixtures::{self, press};
use super::render::render;
use super::sequences_finish::view5_live;
use crate::tui::action::View;
use crate::tui::sched::live::Listing;
use crate::tui::update::Effect;

use KeyCode::{Backspace, Char, Enter, Esc};

fn typed(line: &str) -> Vec<KeyCode> {
    let mut keys = vec![Char(':')];
    keys.extend(line.chars().map(Char));
    keys.push(Enter);
    keys
}

#[test]
fn colon_pods_opens_view_5_on_the_first_pending_pod() {
    let mut s = view5_live(None);
    s.view = View::Kubeconfig;
    press(&mut s, &typed("pods"));
    assert_eq!(s.view, View::Scheduler);
    assert!(s.sched.pods_open);
    let l = s.sched.listing.as_ref().expect("listing");
    assert_eq!(l.pods[s.sched.pod_cursor].node, None, "on a Pending pod");
    press(&mut s, &typed("nodes"));
    assert!(!s.sched.pods_open, ":nodes closes the pods list");
}

#[test]
fn the_line_being_typed_and_a_refusal_show_whole_in_the_footer() {
    let mut s = fixtures::state();
    s.size = (80, 24);
    press(&mut s, &[Char(':'), Char('d'), Char('e')]);
    let screen = render(&s, 80, 24);
    assert!(screen.contains(":de▏"), "{screen}");
    press(&mut s, &[Char('p'), Char('l'), Char('o'), Char('y'), Enter]);
    assert_eq!(s.command, None);
    let screen = render(&s, 80, 24);
    let flash = s.flash.as_ref().expect("a refusal").text.clone();
    assert!(flash.contains("unknown command :deploy"), "{flash}");
    assert!(screen.contains(&flash), "whole at 80 columns:\n{screen}");
    // Esc drops a line; Backspace on an empty one closes it.
    press(&mut s, &[Char(':'), Char('x'), Esc]);
    assert_eq!(s.command, None);
    press(&mut s, &[Char(':'), Backspace]);
    assert_eq!(s.command, None);
    assert_eq!(s.view, View::Kubeconfig, "nothing ran");
}

#[test]
fn colon_ctx_switches_to_a_known_context_and_names_an_unknown_one() {
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    let effects = press(&mut s, &typed("ctx dev@lab"));
    assert!(
        effects.contains(&Effect::LoadContext("dev@lab".into())),
        "{effects:?}"
    );
    assert_eq!(s.pending.as_deref(), Some("dev@lab"));
    assert_eq!(s.view, View::Kubeconfig);
    assert_eq!(s.context_under_cursor(), Some("dev@lab"));
    let effects = press(&mut s, &typed("ctx nope"));
    assert!(effects.is_empty());
    let flash = s.flash.as_ref().expect("refused").text.clone();
    assert!(flash.contains("no context 'nope'"), "{flash}");
}

#[test]
fn colon_ns_shows_one_namespace_and_the_arrows_stay_in_it() {
    let mut s = view5_live(None);
    press(&mut s, &typed("ns demo"));
    assert_eq!(s.sched.namespace.as_deref(), Some("demo"));
    assert!(s.sched.pods_open);
    let l = s.sched.listing.clone().expect("listing");
    let shown = l.shown(Some("demo"));
    assert!(!shown.is_empty() && shown.len() < l.pods.len());
    for _ in 0..l.pods.len() {
        assert!(shown.contains(&s.sched.pod_cursor));
        press(&mut s, &[KeyCode::Down]);
    }
    let screen = render(&s, 120, 40);
    assert!(screen.contains("Pods in demo:"), "{screen}");
    assert!(!screen.contains("○ default/app"), "{screen}");
    press(&mut s, &typed("ns"));
    assert_eq!(s.sched.namespace, None);
    assert!(render(&s, 120, 40).contains("○ default/app"));
}

#[test]
fn esc_clears_a_kept_filter() {
    let mut s = view5_live(None);
    press(&mut s, &[Char('/'), Char('n'), Char('o'), Char('d'), Enter]);
    assert_eq!(s.sched.filter, "nod");
    press(&mut s, &[Esc]);
    assert_eq!(s.sched.filter, "");
    s.view = View::Kubeconfig;
    press(&mut s, &[Char('/'), Char('l'), Char('a'), Char('b'), Enter]);
    assert_eq!(s.list_filter.kubeconfig, "lab");
    press(&mut s, &[Esc]);
    assert_eq!(s.list_filter.kubeconfig, "");
}

#[test]
fn x_undoes_every_what_if() {
    let mut s = view5_live(None);
    let before = s.sched.model().expect("model").trace.clone();
    press(&mut s, &[Char('+'), Char('+'), Char('t'), Char('s')]);
    assert!(!s.sched.model().expect("model").whatif.is_empty());
    press(&mut s, &[Char('x')]);
    let m = s.sched.model().expect("model");
    assert!(m.whatif.is_empty(), "{:?}", m.whatif);
    assert_eq!(
        serde_json::to_value(&m.trace).ok(),
        serde_json::to_value(&before).ok(),
        "the cycle is the pod's own again"
    );
}

#[test]
fn a_pending_pods_row_says_why_in_the_schedulers_words() {
    let mut s = view5_live(None);
    let why = "0/4 nodes are available: 1 node(s) had untolerated taint \
               {node-role.kubernetes.io/control-plane: }, 3 Insufficient cpu.";
    let mut pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": why}
        ]}
    }))
    .expect("pod");
    crate::client::snapshot::trim_pod(&mut pod);
    s.sched.listing = Some(Listing::new(&[pod], vec![]));
    press(&mut s, &[Char('w')]);
    let screen = render(&s, 200, 40);
    assert!(
        screen.contains(&format!("default/big  Pending: {why}")),
        "{screen}"
    );
    // At 80×24 the row has room for its start; the whole sentence is wrapped below the list.
    s.size = (80, 24);
    let screen = render(&s, 80, 24);
    let pane_text = screen
        .lines()
        .filter_map(|l| l.strip_prefix('│'))
        .map(|l| l.trim_end_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        pane_text.contains(&format!("default/big: {why}")),
        "{screen}"
    );
}

#[test]
fn d_describes_the_pod_under_the_cursor_with_its_events() {
    use crate::tui::action::Action;
    use crate::tui::update::update;
    let mut s = view5_live(None);
    press(&mut s, &[Char('d')]);
    assert!(
        s.overlay.is_none(),
        "outside the pods list d says what it needs"
    );
    let flash = s.flash.as_ref().expect("said").text.clone();
    assert!(flash.contains("pods list"), "{flash}");
    press(&mut s, &[Char('w')]);
    let effects = press(&mut s, &[Char('d')]);
    assert!(
        matches!(&effects[..], [Effect::Describe { namespace, name, .. }]
            if namespace == "default" && name == "app"),
        "{effects:?}"
    );
    s.size = (80, 24);
    assert!(render(&s, 80, 24).contains("asking the server for default/app"));
    let message = "0/4 nodes are available: 1 node(s) had untolerated taint \
                   {node-role.kubernetes.io/control-plane: }, 3 Insufficient cpu.";
    let text = crate::client::describe::lines(
        &json!({"metadata": {"name": "app", "namespace": "default"},
                "status": {"phase": "Pending"}}),
        &[
            json!({"type": "Warning", "reason": "FailedScheduling", "message": message,
                 "source": {"component": "default-scheduler"},
                 "lastTimestamp": "2026-01-01T00:00:00Z"}),
        ],
    );
    // An answer for another pod (an earlier d) is not shown.
    update(
        &mut s,
        Action::Described("demo/other".into(), Ok(vec!["Name: other".into()])),
    );
    assert!(!render(&s, 80, 24).contains("Name: other"));
    update(&mut s, Action::Described("default/app".into(), Ok(text)));
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("kubectl describe pod default/app"),
        "{screen}"
    );
    assert!(screen.contains("Status:           Pending"), "{screen}");
    let mut seen = screen.clone();
    for _ in 0..10 {
        press(&mut s, &[KeyCode::Down]);
        seen.push_str(&render(&s, 80, 24));
    }
    let joined = seen
        .lines()
        .filter_map(|l| l.strip_prefix('│'))
        .map(|l| l.trim_end_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(joined.contains("FailedScheduling"), "{seen}");
    // Wrapping breaks lines at spaces, commas, colons and slashes: compare without spaces.
    let bare = |t: &str| t.split_whitespace().collect::<String>();
    assert!(
        bare(&joined).contains(&bare(message)),
        "the message whole, wrapped:\n{seen}"
    );
    press(&mut s, &[Esc]);
    assert!(s.overlay.is_none());
}

#[test]
fn colon_lesson_checks_the_lesson_before_handing_the_terminal_over() {
    let mut s = fixtures::state();
    let effects = press(&mut s, &typed("lesson seeds-experiment"));
    assert!(
        matches!(&effects[..], [Effect::Lesson(p)] if p.ends_with("lessons/seeds-experiment.yaml")),
        "{effects:?}"
    );
    let effects = press(&mut s, &typed("lesson nope"));
    assert!(effects.is_empty());
    let flash = s.flash.clone().expect("refused").text;
    assert!(flash.contains("no lesson 'nope'"), "{flash}");
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "title: t\nsteps:\n  - caption: c\n    view: nowhere\n",
    )
    .expect("write");
    let effects = press(&mut s, &typed(&format!("lesson {}", broken.display())));
    assert!(effects.is_empty());
    let flash = s.flash.clone().expect("refused").text;
    assert!(flash.contains("broken.yaml:4:"), "{flash}");
    press(&mut s, &typed("lesson"));
    assert!(
        s.flash
            .clone()
            .expect("refused")
            .text
            .contains(":lesson needs a name")
    );
}

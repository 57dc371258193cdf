//! `update`: the only place state changes. It does no I/O; work that needs the outside world
//! (resolving a context, later connecting or watching) is returned as an `Effect` for the
//! runner, whose result comes back as another `Action`.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::action::{Action, View};
use super::command;
use super::filter;
use super::state::{AppState, Overlay};
use super::stepped;
use super::story;
use super::trust_tree;
use super::views::scheduler::Hit;
use super::views::{self, certificates, kubeconfig, tabs};
use crate::journey::run::WriteMode;

/// Work for the effects runner.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Resolve this context and inspect its credentials; answers with `Action::ContextLoaded`.
    LoadContext(String),
    /// View 3: handshake and requests with this context's server; `Action::ConnectionDone`.
    Connect(String),
    /// View 3 on the API server's chain to etcd: handshake with etcd and its `/version` and
    /// `/health` (kubeconfig file, context); `Action::ConnectionDone`.
    ConnectEtcd(std::path::PathBuf, String),
    /// View 4: create this pod and follow it; `Action::JourneyProgress` as facts arrive.
    /// `replace` deletes a previous pod of the same name first (embedded server only);
    /// `write` says whether the create is stored or a dry run.
    RunJourney {
        context: String,
        pod: Value,
        replace: bool,
        write: WriteMode,
    },
    /// View 5: list the cluster's nodes and pods; `Action::ClusterLoaded`. `focus` picks the
    /// pod to place (`ns/name`), else `fallback` is placed.
    LoadCluster {
        context: String,
        focus: Option<String>,
        fallback: Box<Pod>,
    },
    /// `d`: read pod `namespace/name` and its events; `Action::Described`.
    Describe {
        context: String,
        namespace: String,
        name: String,
    },
    /// `:lesson`: hand the terminal to the lesson player on this (checked) file, with a fresh
    /// embedded cluster; `Action::LessonDone`. Run by the loop itself, as `Edit`.
    Lesson(PathBuf),
    /// Hand the terminal to $EDITOR on this file; `Action::ManifestEdited`. Run by the loop
    /// itself, since it must stop drawing and reading keys meanwhile.
    Edit(PathBuf),
}

const PAGE: usize = 10;

pub fn update(state: &mut AppState, action: Action) -> Vec<Effect> {
    // View 5's data arrives whatever is open on screen: a help overlay or a question must not
    // swallow it (an update not taken would stop the watch's feed).
    if matches!(
        action,
        Action::LiveClusterLoaded(_) | Action::LiveChanged(_) | Action::ClusterProgress(_)
    ) {
        return stepped::handle(state, &action).unwrap_or_default();
    }
    if let Action::Described(pod, lines) = action {
        // Only the description still asked for is shown (another `d` may have followed).
        if let Some(d) = state.described.as_mut().filter(|d| d.pod == pod) {
            d.lines = Some(lines);
        }
        return Vec::new();
    }
    if let Action::LessonDone(done) = &action {
        let text = match done {
            Ok(title) => format!("lesson '{title}' ended; its cluster is stopped"),
            Err(e) => format!("the lesson stopped: {e}"),
        };
        state.flash(text, done.is_ok());
        return Vec::new();
    }
    if action == Action::Describe && state.overlay.is_none() {
        return describe(state);
    }
    if let Some(effects) = command::handle(state, &action) {
        return effects;
    }
    if let Some(effects) = write_question(state, &action) {
        return effects;
    }
    if let Action::Guess(n) = action
        && story::asking(state).is_some()
    {
        state.quiz.pick(n);
        return Vec::new();
    }
    if state.overlay.is_none()
        && let Some(effects) = stepped::handle(state, &action)
    {
        return effects;
    }
    if filter::handle(state, &action) {
        return Vec::new();
    }
    match action {
        Action::Quit => state.quit = true,
        Action::ShowView(v) => {
            state.view = v;
            return stepped::on_enter(state);
        }
        Action::NextView => {
            state.view = state.view.next();
            return stepped::on_enter(state);
        }
        Action::PreviousView => {
            state.view = state.view.previous();
            return stepped::on_enter(state);
        }
        Action::ToggleHelp => {
            state.overlay = match state.overlay {
                Some(Overlay::Help { .. }) => None,
                _ => Some(Overlay::Help { scroll: 0 }),
            }
        }
        Action::CloseOverlay => state.overlay = None,
        Action::ToggleChain => return toggle_chain(state),
        Action::ShowMerged if state.view == View::Kubeconfig && state.kubeconfig().is_some() => {
            state.overlay = Some(Overlay::Merged { scroll: 0 });
        }
        Action::MoveUp => move_cursor(state, -1),
        Action::MoveDown => move_cursor(state, 1),
        Action::PageUp | Action::PageDown
            if state.view == View::Certificates && state.overlay.is_none() =>
        {
            // Pages scroll the certificate's fields, which may not fit a small screen.
            let delta: i32 = if action == Action::PageUp {
                -(PAGE as i32)
            } else {
                PAGE as i32
            };
            state.fields_scroll = (state.fields_scroll as i32 + delta).clamp(0, 200) as u16;
        }
        Action::PageUp => move_cursor(state, -(PAGE as isize)),
        Action::PageDown => move_cursor(state, PAGE as isize),
        Action::Select => return select(state),
        Action::NextStep if state.present => return story::next(state),
        Action::PreviousStep if state.present => return story::back(state),
        Action::NextStep => return stepped::step(state, true),
        Action::PreviousStep => return stepped::step(state, false),
        Action::Resize(w, h) => state.size = (w, h),
        Action::Tick(now) => {
            state.now_unix = now;
            state.now_ms = state.now_ms.max(now * 1000);
            state.spinner = state.spinner.wrapping_add(1);
            return stepped::autoplay(state);
        }
        Action::Beat(ms) => {
            state.now_ms = ms;
            return stepped::autoplay(state);
        }
        Action::Click(x, y) => return click(state, x, y),
        Action::ContextLoaded(loaded) => {
            // Results can arrive out of order when Enter is pressed on one context, then
            // another: only the last one asked for may become the shown context.
            if state
                .pending
                .as_deref()
                .is_some_and(|p| p != loaded.name.as_str())
            {
                return Vec::new();
            }
            state.pending = None;
            // View 2 opens on what needs attention: the certificate the worst check judged.
            state.cert_cursor = loaded.report().map_or(0, trust_tree::worst_row);
            state.active = Some(*loaded);
            state.fields_scroll = 0;
            // Another context is another server: what views 3-5 learned no longer applies.
            state.conn = Default::default();
            state.journey.collected = None;
            state.journey.step = 0;
            state.sched = Default::default();
        }
        // Handled by `stepped` when they apply; elsewhere they do nothing.
        _ => {}
    }
    Vec::new()
}

/// View 4's `W`: "create … for real? y/N". While the question is open only `y` creates; any
/// other key closes it and does nothing else (results and the clock still arrive).
fn write_question(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    if state.view != View::PodJourney || state.overlay.is_some() {
        return None;
    }
    if !state.journey.confirm {
        if *action == Action::AskForReal
            && !state.journey.running
            && state.journey.sendable().is_some()
        {
            state.journey.confirm = true;
            return Some(Vec::new());
        }
        return None;
    }
    match action {
        Action::Tick(_)
        | Action::Beat(_)
        | Action::Resize(..)
        | Action::ContextLoaded(_)
        | Action::ConnectionDone(_)
        | Action::JourneyProgress(..)
        | Action::ClusterLoaded(_)
        | Action::ManifestEdited(_) => None,
        Action::ConfirmForReal => {
            state.journey.confirm = false;
            let effects = stepped::start_journey(state, WriteMode::ForReal);
            if !effects.is_empty() {
                state.journey.step = 1;
            }
            Some(effects)
        }
        _ => {
            state.journey.confirm = false;
            Some(Vec::new())
        }
    }
}

fn move_cursor(state: &mut AppState, delta: isize) {
    let step = |cur: usize, len: usize| -> usize {
        if len == 0 {
            return 0;
        }
        (cur as isize + delta).clamp(0, len as isize - 1) as usize
    };
    let scrolled = |scroll: u16| (scroll as isize + delta).clamp(0, u16::MAX as isize) as u16;
    match state.overlay {
        Some(Overlay::Help { scroll }) => {
            state.overlay = Some(Overlay::Help {
                scroll: scrolled(scroll),
            });
            return;
        }
        Some(Overlay::Merged { scroll }) => {
            state.overlay = Some(Overlay::Merged {
                scroll: scrolled(scroll),
            });
            return;
        }
        Some(Overlay::Describe { scroll }) => {
            state.overlay = Some(Overlay::Describe {
                scroll: scrolled(scroll),
            });
            return;
        }
        None => {}
    }
    match state.view {
        View::Kubeconfig => {
            state.context_cursor = step(state.context_cursor, state.context_count())
        }
        View::Certificates => {
            let len = state
                .chain_context()
                .and_then(|a| a.report())
                .map_or(0, |r| trust_tree::build(r).len());
            let next = step(state.cert_cursor, len);
            if next != state.cert_cursor {
                state.fields_scroll = 0;
            }
            state.cert_cursor = next;
        }
        View::Connection | View::PodJourney | View::Scheduler => {}
    }
}

/// A left click: a tab switches views; a row moves the cursor there, and clicking the
/// context under the cursor again switches to it, as Enter does.
fn click(state: &mut AppState, x: u16, y: u16) -> Vec<Effect> {
    if state.overlay.is_some() {
        return Vec::new();
    }
    if y == 0 && !state.present {
        if let Some(v) = tabs::tab_at(x, state.size.0) {
            state.view = v;
            return stepped::on_enter(state);
        }
        return Vec::new();
    }
    let body = views::view_area(state);
    match state.view {
        View::Kubeconfig => match kubeconfig::context_at(body, state, x, y) {
            Some(i) if i == state.context_cursor => return select(state),
            Some(i) => state.context_cursor = i,
            None => {}
        },
        View::Certificates => {
            if let Some(i) = certificates::cert_at(body, state, x, y)
                && i != state.cert_cursor
            {
                state.cert_cursor = i;
                state.fields_scroll = 0;
            }
        }
        View::Scheduler => match views::scheduler::hit(body, state, x, y) {
            Some(Hit::Node(i)) => state.sched.cursor = i,
            // As in view 1: a click moves the cursor, a click on the cursor's row chooses.
            Some(Hit::Pod(i)) if i == state.sched.pod_cursor => {
                return stepped::handle(state, &Action::Select).unwrap_or_default();
            }
            Some(Hit::Pod(i)) => state.sched.pod_cursor = i,
            None => {}
        },
        View::Connection => {
            if let Some(step) = views::connection::rung_at(body, state, x, y) {
                return stepped::jump(state, step);
            }
        }
        View::PodJourney => {
            if let Some(step) = views::journey::step_at(body, state, x, y) {
                return stepped::jump(state, step);
            }
        }
    }
    Vec::new()
}

/// `d`: the pod under the cursor of view 5's pods list, described by the server.
fn describe(state: &mut AppState) -> Vec<Effect> {
    let s = &state.sched;
    let pod = s
        .pods_open
        .then_some(s.listing.as_ref())
        .flatten()
        .and_then(|l| l.pods.get(s.pod_cursor))
        .filter(|p| s.namespace.as_deref().is_none_or(|ns| p.namespace() == ns))
        .map(|p| p.key.clone());
    let (Some(pod), Some(context)) = (pod, state.context_name()) else {
        state.flash(
            "d describes a pod of view 5's pods list (w or :pods opens it)",
            false,
        );
        return Vec::new();
    };
    let (namespace, name) = pod.split_once('/').unwrap_or(("default", &pod));
    let effect = Effect::Describe {
        context,
        namespace: namespace.to_string(),
        name: name.to_string(),
    };
    state.described = Some(super::state::Described {
        pod: pod.clone(),
        lines: None,
    });
    state.overlay = Some(Overlay::Describe { scroll: 0 });
    state.flash = None;
    vec![effect]
}

fn select(state: &mut AppState) -> Vec<Effect> {
    if state.view != View::Kubeconfig || state.overlay.is_some() {
        return Vec::new();
    }
    let Some(name) = state.context_under_cursor().map(str::to_string) else {
        return Vec::new();
    };
    state.pending = Some(name.clone());
    vec![Effect::LoadContext(name)]
}

/// `E` in views 2 and 3: the other chain, its worst certificate under the cursor, and in
/// view 3 its connection made if it was not yet.
fn toggle_chain(state: &mut AppState) -> Vec<Effect> {
    use super::etcd_chain::Chain;
    if state.etcd.is_none() {
        state.flash(
            "no etcd chain here: the embedded cluster keeps its objects in memory (start it with --embedded --etcd)",
            false,
        );
        return Vec::new();
    }
    state.chain = match state.chain {
        Chain::Client => Chain::Etcd,
        Chain::Etcd => Chain::Client,
    };
    state.cert_cursor = state
        .chain_context()
        .and_then(|c| c.report())
        .map_or(0, trust_tree::worst_row);
    state.fields_scroll = 0;
    state.detail_scroll = 0;
    stepped::on_enter(state)
}

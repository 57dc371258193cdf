//! `update`: the only place state changes. It does no I/O; work that needs the outside world
//! (resolving a context, later connecting or watching) is returned as an `Effect` for the
//! runner, whose result comes back as another `Action`.

use super::action::{Action, View};
use super::state::{AppState, Overlay};
use super::trust_tree;
use super::views::{self, certificates, kubeconfig, tabs};

/// Work for the effects runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Resolve this context and inspect its credentials; answers with `Action::ContextLoaded`.
    LoadContext(String),
}

const PAGE: usize = 10;

pub fn update(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::Quit => state.quit = true,
        Action::ShowView(v) => state.view = v,
        Action::NextView => state.view = state.view.next(),
        Action::PreviousView => state.view = state.view.previous(),
        Action::ToggleHelp => {
            state.overlay = match state.overlay {
                Some(Overlay::Help { .. }) => None,
                _ => Some(Overlay::Help { scroll: 0 }),
            }
        }
        Action::CloseOverlay => state.overlay = None,
        Action::ShowMerged => {
            if state.view == View::Kubeconfig && state.kubeconfig().is_some() {
                state.overlay = Some(Overlay::Merged { scroll: 0 });
            }
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
        // Views 3-5 will step through their traces here (issue 5); nothing to step yet.
        Action::NextStep | Action::PreviousStep => {}
        Action::Resize(w, h) => state.size = (w, h),
        Action::Tick(now) => state.now_unix = now,
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
            state.active = Some(*loaded);
            state.cert_cursor = 0;
            state.fields_scroll = 0;
        }
    }
    Vec::new()
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
        None => {}
    }
    match state.view {
        View::Kubeconfig => {
            state.context_cursor = step(state.context_cursor, state.context_count())
        }
        View::Certificates => {
            let len = state
                .active
                .as_ref()
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
    if y == 0 {
        if let Some(v) = tabs::tab_at(x, state.size.0) {
            state.view = v;
        }
        return Vec::new();
    }
    let body = views::body_area(state.size);
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
        View::Connection | View::PodJourney | View::Scheduler => {}
    }
    Vec::new()
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

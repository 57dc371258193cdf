//! Presenter mode's story: Space and Backspace go on across the views in the seeds' order —
//! the kubeconfig, its certificates, the handshake, the pod's way through the API server up to
//! the scheduler's watch, the filter and the score, then the binding and the kubelet — so the
//! node the pod lands on is never on screen before "which node wins?" is answered. Autoplay
//! follows the same story. `position` is the "step N of M" the presenter's title shows.

use super::action::{Action, View};
use super::state::AppState;
use super::stepped::{self, predict};
use super::update::Effect;
use crate::journey::{STAGES, Stage};

/// One stretch of the story: a view, or part of view 4 (before or after the scheduler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Kubeconfig,
    Certificates,
    Connection,
    /// View 4 from the request up to (not including) the scheduler's watch.
    JourneyToScheduler,
    Scheduler,
    /// View 4 from the scheduler's watch on: it names the node.
    JourneyAfterScheduler,
}

const ORDER: [Part; 6] = [
    Part::Kubeconfig,
    Part::Certificates,
    Part::Connection,
    Part::JourneyToScheduler,
    Part::Scheduler,
    Part::JourneyAfterScheduler,
];

impl Part {
    fn view(self) -> View {
        match self {
            Part::Kubeconfig => View::Kubeconfig,
            Part::Certificates => View::Certificates,
            Part::Connection => View::Connection,
            Part::JourneyToScheduler | Part::JourneyAfterScheduler => View::PodJourney,
            Part::Scheduler => View::Scheduler,
        }
    }
}

/// View 4's step that shows the scheduler's watch (step 0 is the request). A workload's
/// journey has no such step of its own: it is told whole, then the scheduler.
fn watch_step(state: &AppState) -> usize {
    if state.journey.is_workload() {
        return state.journey.last_step() + 1;
    }
    STAGES
        .iter()
        .position(|s| *s == Stage::Watch)
        .map_or(STAGES.len(), |i| i + 1)
}

pub fn part(state: &AppState) -> Part {
    match state.view {
        View::Kubeconfig => Part::Kubeconfig,
        View::Certificates => Part::Certificates,
        View::Connection => Part::Connection,
        View::Scheduler => Part::Scheduler,
        View::PodJourney if state.journey.step >= watch_step(state) => Part::JourneyAfterScheduler,
        View::PodJourney => Part::JourneyToScheduler,
    }
}

/// (steps of `p`, the step shown now within it when `p` is on screen).
fn extent(state: &AppState, p: Part) -> (usize, usize) {
    let watch = watch_step(state);
    let last = state.journey.last_step();
    match p {
        Part::Kubeconfig | Part::Certificates => (1, 0),
        Part::Connection => (
            state.conn.rungs.len().max(1),
            state.conn.step.saturating_sub(1),
        ),
        Part::JourneyToScheduler => (watch.min(last + 1), state.journey.step),
        Part::Scheduler => (
            state.sched.steps(predict(state)).len().max(1),
            state.sched.step,
        ),
        Part::JourneyAfterScheduler => (
            (last + 1).saturating_sub(watch),
            state.journey.step.saturating_sub(watch),
        ),
    }
}

/// "step N of M" over the whole story as far as it is known (views still loading count one).
pub fn position(state: &AppState) -> (usize, usize) {
    let now = part(state);
    let mut before = 0;
    let mut total = 0;
    let mut here = 0;
    for p in ORDER {
        let (n, at) = extent(state, p);
        if p == now {
            here = before + at.min(n.saturating_sub(1)) + 1;
        }
        if here == 0 {
            before += n;
        }
        total += n;
    }
    (here, total)
}

/// Whether the part on screen has nothing more to show: its last step reached and nothing it
/// waits for still running (a view being loaded is never skipped).
fn at_end(state: &AppState) -> bool {
    let p = part(state);
    let (n, at) = extent(state, p);
    let settled = match p {
        Part::Connection => state.conn.running.is_none(),
        Part::JourneyToScheduler => {
            // Step 0 is the request: Space sends it first.
            state.journey.step > 0 || state.journey.space_sends().is_none()
        }
        Part::JourneyAfterScheduler => !state.journey.running,
        Part::Scheduler => state.sched.model.is_some(),
        Part::Kubeconfig | Part::Certificates => true,
    };
    settled && at + 1 >= n
}

fn at_start(state: &AppState) -> bool {
    extent(state, part(state)).1 == 0
}

/// Space in presenter mode (and autoplay): the next step, or the next part's first.
pub fn next(state: &mut AppState) -> Vec<Effect> {
    if !at_end(state) {
        return stepped::step(state, true);
    }
    let now = part(state);
    let Some(i) = ORDER.iter().position(|p| *p == now) else {
        return Vec::new();
    };
    let Some(&to) = ORDER.get(i + 1) else {
        return Vec::new();
    };
    enter(state, to, true)
}

/// Backspace in presenter mode: the step before, or the previous part's last.
pub fn back(state: &mut AppState) -> Vec<Effect> {
    if !at_start(state) {
        return stepped::step(state, false);
    }
    let now = part(state);
    let Some(i) = ORDER.iter().position(|p| *p == now).filter(|i| *i > 0) else {
        return Vec::new();
    };
    enter(state, ORDER[i - 1], false)
}

/// Shows part `to`, at its first step (`forward`) or its last.
fn enter(state: &mut AppState, to: Part, forward: bool) -> Vec<Effect> {
    state.last_step_ms = state.now_ms;
    state.detail_scroll = 0;
    let mut effects = Vec::new();
    match to {
        Part::Scheduler if forward && state.journey.journey().is_some() => {
            // The pod the room just followed is the one the scheduler places.
            state.view = View::PodJourney;
            effects.extend(stepped::handle(state, &Action::OpenInScheduler).unwrap_or_default());
            state.sched.step = 0;
        }
        Part::JourneyAfterScheduler => {
            state.view = View::PodJourney;
            state.journey.step = if forward {
                watch_step(state).min(state.journey.last_step())
            } else {
                state.journey.last_step()
            };
        }
        Part::JourneyToScheduler if !forward => {
            state.view = View::PodJourney;
            state.journey.step = watch_step(state)
                .saturating_sub(1)
                .min(state.journey.last_step());
        }
        _ => {
            state.view = to.view();
            effects.extend(stepped::on_enter(state));
            if !forward && to == Part::Scheduler {
                let n = state.sched.steps(predict(state)).len();
                state.sched.step = n.saturating_sub(1);
            }
            if !forward && to == Part::Connection {
                state.conn.step = state.conn.rungs.len().max(state.conn.step);
            }
        }
    }
    effects
}

//! Presenter mode's story: Space and Backspace go on across the views in the seeds' order —
//! the kubeconfig, its certificates, the handshake, the pod's way through the API server up to
//! the scheduler's watch, the filter and the score, then the binding and the kubelet — so the
//! node the pod lands on is never on screen before "which node wins?" is answered. Autoplay
//! follows the same story. `position` is the "step N of M" the presenter's title shows.

use super::action::{Action, View};
use super::quiz::{self, Asking, Phase, Question};
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

/// The question asked in part `p` before its view step `at` is shown (predict, then reveal).
fn question_of(p: Part) -> Option<(Question, usize)> {
    match p {
        Part::Kubeconfig => Some((Question::Identity, 0)),
        Part::Certificates => Some((Question::Signer, 0)),
        Part::Connection => Some((Question::Handshake, 0)),
        // After the nodes are shown, before the first filter plugin.
        Part::Scheduler => Some((Question::Filter, 1)),
        Part::JourneyToScheduler | Part::JourneyAfterScheduler => None,
    }
}

/// The question on screen, if it belongs to the part on screen (switching views leaves it).
pub fn asking(state: &AppState) -> Option<&Asking> {
    let a = state.quiz.asking.as_ref()?;
    let (q, _) = question_of(part(state))?;
    (a.question == q).then_some(a)
}

/// The part's question, when there is something to ask about now (in presenter mode only:
/// the question is the presenter's screen).
fn askable(state: &AppState, p: Part) -> Option<(Asking, usize)> {
    if !state.present {
        return None;
    }
    let (q, at) = question_of(p)?;
    quiz::ask(state, q).map(|a| (a, at))
}

/// View 4's step that shows the scheduler's watch (step 0 is the request). A workload's
/// journey has no such step of its own: its request and controllers come before the
/// scheduler, its pod list (each pod's node) after. A pod of it opened whole is told whole.
fn watch_step(state: &AppState) -> usize {
    if state.journey.is_workload() {
        return if state.journey.pod_open {
            state.journey.last_step() + 1
        } else {
            state.journey.pods_step()
        };
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

/// As `extent`, with the part's question counted: asked, then revealed, before its step.
fn story_extent(state: &AppState, p: Part) -> (usize, usize) {
    let (n, at) = extent(state, p);
    let Some((_, q_at)) = askable(state, p).filter(|(_, q_at)| *q_at <= n) else {
        return (n, at);
    };
    let at = match asking(state) {
        Some(a) if part(state) == p => q_at + usize::from(a.phase == Phase::Reveal),
        _ if at >= q_at => at + 2,
        _ => at,
    };
    (n + 2, at)
}

/// Whether every part's length is known. The handshake's rungs come from view 3's probe and
/// the scheduler's steps from view 5's load; until both have run, a total would be a guess
/// that grows under the room's eyes (23, then 32, then 42).
fn counted(state: &AppState) -> bool {
    let conn = state.conn.running.is_none() && !state.conn.rungs.is_empty();
    let sched = !state.sched.loading && state.sched.model.is_some();
    conn && sched
}

/// "step N of M" over the whole story: N counts the steps of the parts before (views still
/// loading count one); M only once every part's length is known.
pub fn position(state: &AppState) -> (usize, Option<usize>) {
    let now = part(state);
    let mut before = 0;
    let mut total = 0;
    let mut here = 0;
    for p in ORDER {
        let (n, at) = story_extent(state, p);
        if p == now {
            here = before + at.min(n.saturating_sub(1)) + 1;
        }
        if here == 0 {
            before += n;
        }
        total += n;
    }
    (here, counted(state).then_some(total))
}

/// Whether the part on screen has nothing more to show: its last step reached and nothing it
/// waits for still running (a view being loaded is never skipped).
fn at_end(state: &AppState) -> bool {
    let p = part(state);
    let (n, at) = extent(state, p);
    let settled = match p {
        Part::Connection => state.conn.running.is_none(),
        Part::JourneyToScheduler => {
            // Step 0 is the request: Space sends it first. A workload's scheduler part places
            // one of its pods: the controllers must have made one.
            (state.journey.step > 0 || state.journey.space_sends().is_none())
                && (!state.journey.is_workload()
                    || state.journey.open_pod().is_some()
                    || !state.journey.running)
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

/// Whether Space would wait: the revealed answer is still being found (the probe running).
pub fn waiting(state: &AppState) -> bool {
    asking(state).is_some_and(|a| a.phase == Phase::Reveal && quiz::answer(state, a).is_none())
}

/// Space in presenter mode (and autoplay): the next step, or the next part's first.
pub fn next(state: &mut AppState) -> Vec<Effect> {
    if let Some(phase) = asking(state).map(|a| a.phase) {
        if waiting(state) {
            return Vec::new();
        }
        state.last_step_ms = state.now_ms;
        let q_at = question_of(part(state)).map_or(0, |(_, at)| at);
        return match phase {
            Phase::Ask => {
                if let Some(a) = state.quiz.asking.as_mut() {
                    a.phase = Phase::Reveal;
                }
                Vec::new()
            }
            Phase::Reveal => {
                state.quiz.asking = None;
                if q_at == 0 {
                    Vec::new()
                } else {
                    stepped::step(state, true)
                }
            }
        };
    }
    // The question comes between the step before it and its own.
    if let Some((a, q_at)) = askable(state, part(state)) {
        let at = extent(state, part(state)).1;
        if q_at > 0 && at + 1 == q_at && !at_end(state) {
            state.last_step_ms = state.now_ms;
            state.quiz.asking = Some(a);
            return Vec::new();
        }
    }
    if !at_end(state) {
        return stepped::step(state, true);
    }
    let now = part(state);
    let Some(i) = ORDER.iter().position(|p| *p == now) else {
        return Vec::new();
    };
    // A part with no step (a workload's pod opened whole has nothing after the scheduler)
    // is passed over: entering it would show the part before it again.
    let Some(&to) = ORDER[i + 1..].iter().find(|p| extent(state, **p).0 > 0) else {
        return Vec::new();
    };
    let effects = enter(state, to, true);
    ask_on_entry(state);
    effects
}

/// Backspace in presenter mode: the step before, or the previous part's last.
pub fn back(state: &mut AppState) -> Vec<Effect> {
    if let Some(phase) = asking(state).map(|a| a.phase) {
        state.last_step_ms = state.now_ms;
        match phase {
            Phase::Reveal => {
                if let Some(a) = state.quiz.asking.as_mut() {
                    a.phase = Phase::Ask;
                }
                return Vec::new();
            }
            Phase::Ask => {
                let q_at = question_of(part(state)).map_or(0, |(_, at)| at);
                if q_at == 0 && part(state) == ORDER[0] {
                    // The story's first screen.
                    return Vec::new();
                }
                state.quiz.asking = None;
                if q_at > 0 {
                    // The step before the question is on screen again.
                    return Vec::new();
                }
                return previous_part(state);
            }
        }
    }
    // Back from the question's own step shows its answer again.
    if let Some((mut a, q_at)) = askable(state, part(state))
        && extent(state, part(state)).1 == q_at
    {
        let effects = if q_at > 0 {
            stepped::step(state, false)
        } else {
            Vec::new()
        };
        state.last_step_ms = state.now_ms;
        a.phase = Phase::Reveal;
        state.quiz.asking = Some(a);
        return effects;
    }
    if !at_start(state) {
        return stepped::step(state, false);
    }
    previous_part(state)
}

fn previous_part(state: &mut AppState) -> Vec<Effect> {
    let now = part(state);
    let Some(i) = ORDER.iter().position(|p| *p == now) else {
        return Vec::new();
    };
    let Some(&to) = ORDER[..i].iter().rev().find(|p| extent(state, **p).0 > 0) else {
        return Vec::new();
    };
    enter(state, to, false)
}

/// Presenter mode begins (or ends) on the view on screen: at a part's start, its question
/// comes first.
pub fn set_present(state: &mut AppState, on: bool) {
    state.present = on;
    state.quiz.asking = None;
    if on && at_start(state) {
        ask_on_entry(state);
    }
}

/// The question of a part entered forward at its first step is asked before it is shown.
fn ask_on_entry(state: &mut AppState) {
    if let Some((a, 0)) = askable(state, part(state)) {
        state.quiz.asking = Some(a);
    }
}

/// Shows part `to`, at its first step (`forward`) or its last.
fn enter(state: &mut AppState, to: Part, forward: bool) -> Vec<Effect> {
    state.last_step_ms = state.now_ms;
    // The story follows the kubeconfig's chain (`E` shows the API server's to etcd).
    state.chain = super::etcd_chain::Chain::Client;
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

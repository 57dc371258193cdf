//! Presenter mode's frame: no tabs and no status bar, a margin, one title row saying where we
//! are, and a caption box under the view with the concept of the current step in plain words.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::journey::workload::kind_of;
use crate::tui::action::View;
use crate::tui::quiz::Phase;
use crate::tui::sched::steps::Step;
use crate::tui::state::AppState;
use crate::tui::stepped::predict;
use crate::tui::theme::Theme;
use crate::tui::widgets::big;
use crate::tui::{captions, captions_workload};

const CAPTION: u16 = 4;

/// Below this many rows the stage is named in the title row only: the view needs the room.
const BIG_TITLE_ROWS: u16 = 32;

/// The title rows, the view, the caption; the stage said large on a tall enough screen.
fn areas(area: Rect, big_title: bool) -> [Rect; 3] {
    let inner = area.inner(Margin::new(2, 1));
    let title = if big_title { 1 + big::CELL.1 } else { 1 };
    Layout::vertical([
        Constraint::Length(title),
        Constraint::Min(3),
        Constraint::Length(CAPTION),
    ])
    .areas(inner)
}

/// The view's area inside the presenter frame.
pub fn body(area: Rect, state: &AppState) -> Rect {
    areas(area, stage_word(state, area).is_some())[1]
}

/// The view's name in the title: view 4 names what it shows, a pod's or a workload's journey.
fn view_name(state: &AppState) -> &'static str {
    match state.view {
        View::PodJourney => super::journey::name(state),
        v => v.title(),
    }
}

/// The stage on screen, in one or two words the room reads from the back — when it fits large
/// and no question is on screen (a question's answer is said large instead).
pub fn stage_word(state: &AppState, area: Rect) -> Option<String> {
    if area.height < BIG_TITLE_ROWS || crate::tui::story::asking(state).is_some() {
        return None;
    }
    let word = match state.view {
        View::Kubeconfig => "kubeconfig",
        View::Certificates => "chain of trust",
        View::Connection => "handshake",
        View::PodJourney if state.journey.is_workload() && !state.journey.pod_open => {
            match state.journey.workload_step() {
                (_, true) => "its pods",
                (None, _) => "the request",
                (Some(s), _) => s.title(),
            }
        }
        View::PodJourney => match state.journey.step {
            0 => "the request",
            n => crate::journey::STAGES
                .get(n - 1)
                .map_or("pod journey", |s| s.title()),
        },
        View::Scheduler => match state.sched.current(predict(state)) {
            Some(Step::Nodes) => "the nodes",
            Some(Step::Filter(_)) => "filter",
            Some(Step::Predict) => "which node?",
            Some(Step::Score(_)) => "score",
            Some(Step::Result) => "result",
            None => "scheduler",
        },
    };
    big::fits(word, area.width.saturating_sub(4)).then(|| word.to_string())
}

pub fn caption(state: &AppState) -> String {
    if crate::tui::story::asking(state).is_some_and(|a| a.phase == Phase::Ask) {
        return "Predict, then reveal: the room guesses with the number keys; Space shows the answer, computed from this cluster.".into();
    }
    match state.view {
        View::Connection => captions::connection(state.conn.current()),
        View::PodJourney if state.journey.is_workload() && !state.journey.pod_open => {
            let (stage, pods) = state.journey.workload_step();
            let manifest = state.journey.sendable();
            let kind = manifest
                .and_then(|m| m["kind"].as_str())
                .unwrap_or("workload");
            let plural = manifest.and_then(kind_of).map_or("workloads", |(r, _)| r);
            captions_workload::caption(stage, pods, (kind, plural), state.journey.shown_write())
        }
        View::PodJourney => {
            let ended = state.journey.journey().and_then(|j| {
                j.stages
                    .iter()
                    .find(|r| r.status == crate::stage::Status::Failed)
                    .map(|r| r.stage)
            });
            captions::journey(state.journey.step, state.journey.shown_write(), ended)
        }
        View::Scheduler => {
            let placed = state
                .sched
                .model()
                .is_some_and(|m| m.trace.selected.is_some());
            let scored = state.sched.model().is_some_and(|m| m.trace.score.len() > 1);
            captions::scheduler(
                state.sched.current(predict(state)).as_ref(),
                placed,
                scored,
            )
            .to_string()
        }
        View::Kubeconfig => "A kubeconfig says where the cluster is (server), how to trust it (the CA) and who we are (a certificate or a token).".into(),
        View::Certificates => "Trust is a chain: the client trusts the server because it trusts the CA that signed the server's certificate.".into(),
    }
}

/// Draws the title and the caption; returns where the view goes.
pub fn draw_frame(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) -> Rect {
    let word = stage_word(state, area);
    let [title, body, cap] = areas(area, word.is_some());
    let [title, large] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(title);
    if let Some(w) = &word {
        big::draw(frame, large, w, theme.title);
    }
    let (n, m) = crate::tui::story::position(state);
    // One row at 80 columns: while autoplay runs, its line replaces the keys.
    let keys = match state.autoplay {
        Some(s) => format!("autoplay every {s}s: any key takes over"),
        None => "Space next · Backspace back · P leaves".to_string(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                format!("{} {}", state.view.index() + 1, view_name(state)),
                theme.title,
            ),
            Span::styled(
                match m {
                    Some(m) => format!("  step {n} of {m} · {keys}"),
                    None => format!("  step {n} · {keys}"),
                },
                theme.muted,
            ),
        ])),
        title,
    );
    frame.render_widget(
        Paragraph::new(Line::styled(caption(state), theme.caption))
            .wrap(Wrap { trim: true })
            .block(
                ratatui::widgets::Block::bordered()
                    .border_type(ratatui::widgets::BorderType::Rounded)
                    .border_style(theme.border),
            ),
        cap,
    );
    body
}

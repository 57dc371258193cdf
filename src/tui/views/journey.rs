//! View 4: the pod's journey. On the left the request and the twelve stages, each marked
//! observed / reported / inferred and revealed one per Space; on the right what the current
//! stage did, from the journey the apiserver branch's `journey::build` assembled.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;

use super::connection::SPINNER;
use super::journey_detail;
use super::{ellipsize, inner_width, pane};
use crate::journey::run::WriteMode;
use crate::journey::{STAGES, Source, Stage, StageReport, Status};
use crate::tui::action::View;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::field;

const SIDE_BY_SIDE: u16 = 100;

pub fn title(stage: Stage) -> &'static str {
    stage.title()
}

pub fn source_word(s: Source) -> &'static str {
    match s {
        Source::Observed => "observed",
        Source::Reported => "reported",
        Source::Inferred => "inferred",
    }
}

/// The symbol and style of a stage; a stage not reached yet while the run goes on is waiting.
pub fn mark<'a>(
    stage: Option<&StageReport>,
    running: bool,
    spin: &'a str,
    theme: &Theme,
) -> (&'a str, ratatui::style::Style) {
    match stage.map(|s| s.status) {
        Some(Status::Ok) => ("✓", theme.ok),
        Some(Status::Failed) => ("✗", theme.error),
        Some(Status::Skipped) if running => (spin, theme.warn),
        Some(Status::Skipped) => ("–", theme.muted),
        None if running => (spin, theme.warn),
        None => ("·", theme.muted),
    }
}

/// The stages list and the details, side by side when wide enough; the list widens (up to half
/// the view) so its title keeps the pod's name whole.
fn areas(area: Rect, state: &AppState) -> (Rect, Rect) {
    if area.width >= SIDE_BY_SIDE {
        let wanted = state.journey.journey().map_or(0, |j| {
            list_title(&j.pod, state.journey.step).chars().count() as u16 + 4
        });
        // Wider only when that makes the whole title fit; else the pod gets a row of its own.
        let w = if wanted > 40 && wanted <= area.width / 2 {
            wanted
        } else {
            40
        };
        let [l, r] = Layout::horizontal([Constraint::Length(w), Constraint::Min(30)]).areas(area);
        (l, r)
    } else {
        let h = (STAGES.len() as u16 + 3).min(area.height / 2);
        let [l, r] = Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
        (l, r)
    }
}

/// The first stage listed: the list scrolls to keep the current one on screen.
fn first_stage(list_area: Rect, step: usize, pod_rows: usize) -> usize {
    // Inside the borders, below the pod's own rows and the request row.
    let inner = (list_area.height.saturating_sub(3) as usize).saturating_sub(pod_rows);
    step.saturating_sub(inner.max(1))
}

/// The pod's name as rows at the top of the list, when the list's title cannot hold it.
fn pod_rows(state: &AppState, list_area: Rect) -> Vec<String> {
    match state.journey.journey() {
        Some(jj) if !title_fits(&jj.pod, state.journey.step, list_area) => {
            field::wrap(&format!("pod {}", jj.pod), inner_width(list_area))
        }
        _ => Vec::new(),
    }
}

fn title_fits(pod: &str, step: usize, list_area: Rect) -> bool {
    list_title(pod, step).chars().count() + 4 <= list_area.width as usize
}

/// The step a click at (x, y) asks for: 0 on the request row, else the stage drawn there.
pub fn step_at(body: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let (list, _) = areas(body, state);
    let top = list.y + 1;
    if x <= list.x || x + 1 >= list.x + list.width || y < top || y + 1 >= list.y + list.height {
        return None;
    }
    let pod = pod_rows(state, list).len();
    let row = ((y - top) as usize).checked_sub(pod)?;
    if row == 0 {
        return Some(0);
    }
    let step = first_stage(list, state.journey.step, pod) + row;
    (step <= STAGES.len()).then_some(step)
}

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let j = &state.journey;
    if j.is_workload() && !j.pod_open && !j.confirm {
        return super::journey_workload::draw(frame, area, state, theme);
    }
    let journey = j.journey();
    let (list_area, detail_area) = areas(area, state);
    let spin = SPINNER[state.spinner % SPINNER.len()];
    let width = inner_width(list_area);
    let pod = pod_rows(state, list_area);
    let pod_count = pod.len();
    let mut lines: Vec<Line> = pod
        .into_iter()
        .map(|r| Line::styled(r, theme.accent))
        .collect();
    lines.push(Line::from(vec![
        Span::styled(if j.step == 0 { "▶ " } else { "  " }, theme.accent),
        Span::styled(
            ellipsize(
                &if j.pod_open {
                    format!("↩ the {}'s pods (Backspace)", workload_kind(j))
                } else if j.can_leave_request() {
                    format!("Request  POST …/pods  ({})", file_name(j))
                } else {
                    format!("Request  not sent  ({})", file_name(j))
                },
                width.saturating_sub(2),
            ),
            if j.step == 0 {
                theme.selection
            } else {
                theme.text
            },
        ),
    ]));
    let skip = first_stage(list_area, j.step, pod_count);
    for (i, name) in STAGES.iter().enumerate().skip(skip) {
        let n = i + 1;
        if n > j.step {
            lines.push(Line::styled(format!("  · {}", title(*name)), theme.muted));
            continue;
        }
        let stage = journey.as_ref().and_then(|jj| jj.stages.get(i));
        let (sym, style) = mark(stage, j.pod_running(), spin, theme);
        let src = stage.map_or(String::new(), |s| format!("[{}]", source_word(s.source)));
        let row = format!("{:<16}{src}", title(*name));
        lines.push(Line::from(vec![
            Span::styled(if n == j.step { "▶ " } else { "  " }, theme.accent),
            Span::styled(format!("{sym} "), style),
            Span::styled(
                ellipsize(&row, width.saturating_sub(4)),
                if n == j.step {
                    theme.selection
                } else {
                    theme.text
                },
            ),
        ]));
    }
    // The step count comes first so it is never cut; a pod name too long for the title has
    // the list's first rows (`pod_rows`).
    let count = format!("4 {} · {}/{}", name(state), j.step, STAGES.len());
    let head = match &journey {
        Some(jj) if title_fits(&jj.pod, j.step, list_area) => list_title(&jj.pod, j.step),
        _ => count,
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane(head, theme, true)),
        list_area,
    );
    let dw = inner_width(detail_area);
    let (detail_title, detail) = if j.confirm {
        ("Create for real?".to_string(), confirm_lines(state, theme))
    } else if j.step == 0 {
        (
            "The request".to_string(),
            journey_detail::request(state, dw, theme),
        )
    } else {
        let name = STAGES[j.step - 1];
        let stage = journey.as_ref().and_then(|jj| jj.stages.get(j.step - 1));
        let t = match stage {
            Some(s) => format!("{} · {}", title(name), source_word(s.source)),
            None => title(name).to_string(),
        };
        let body = match stage {
            Some(s) if s.status == Status::Skipped && j.pod_running() => vec![Line::styled(
                format!("{spin} waiting for this stage — the pod is on its way"),
                theme.warn,
            )],
            Some(s) => journey_detail::stage(state, s, dw, theme),
            None if j.pod_running() => vec![Line::styled(
                format!("{spin} sending the request…"),
                theme.warn,
            )],
            None => vec![Line::styled("not reached", theme.muted)],
        };
        (t, body)
    };
    let scroll = super::detail_scroll(state, detail.len(), detail_area);
    frame.render_widget(
        Paragraph::new(detail).scroll((scroll, 0)).block(pane(
            format!("{detail_title} (PgUp/PgDn)"),
            theme,
            false,
        )),
        detail_area,
    );
}

/// The stages list's title: the view, the step, the pod.
fn list_title(pod: &str, step: usize) -> String {
    format!(
        "4 {} · {step}/{} · {pod}",
        View::PodJourney.title(),
        STAGES.len()
    )
}

/// What view 4 shows now: a pod's journey, or a workload's (with its controllers and pods).
/// The pane's title and the presenter's read this, so they say the same.
pub fn name(state: &AppState) -> &'static str {
    let j = &state.journey;
    if j.is_workload() && !j.pod_open {
        "Workload journey"
    } else {
        View::PodJourney.title()
    }
}

/// `W`'s question: which pod, on which server, and that only `y` goes ahead.
fn confirm_lines(state: &AppState, theme: &Theme) -> Vec<Line<'static>> {
    let facts = state.active.as_ref().and_then(|a| a.resolved.as_ref().ok());
    let server = facts.map_or("the server", |f| f.server.as_str());
    let pod = state
        .journey
        .sendable()
        .map_or(String::from("the pod"), |p| {
            let ns =
                crate::journey::run::namespace_of(p, facts.map_or("", |f| f.namespace.as_str()));
            let name = format!(
                "{ns}/{}",
                text(p.get("metadata").unwrap_or(&Value::Null), "name")
            );
            match p["kind"].as_str() {
                Some(kind) if kind != "Pod" => format!("{kind} {name}"),
                _ => name,
            }
        });
    vec![
        Line::styled(
            format!("! Create {pod} on {server} for real? y/N"),
            theme.warn,
        ),
        Line::raw(""),
        Line::styled(
            "y stores the pod; the real scheduler binds it and a kubelet runs it.",
            theme.text,
        ),
        Line::styled(
            match state.journey.write_mode() {
                WriteMode::DryRun => {
                    "Any other key: no. Space and r send dry runs (dryRun=All): nothing stored."
                }
                WriteMode::ForReal => "Any other key: no. Space and r create it for real too.",
            },
            theme.muted,
        ),
    ]
}

fn workload_kind(j: &crate::tui::journey::JourneyState) -> String {
    j.sendable()
        .and_then(|v| v["kind"].as_str())
        .unwrap_or("workload")
        .to_string()
}

pub fn file_name(j: &crate::tui::journey::JourneyState) -> String {
    j.path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("pod")
        .to_string()
}

/// `detail[key]` as text, for the detail pane.
pub fn text(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "—".into(),
        Some(other) => other.to_string(),
    }
}

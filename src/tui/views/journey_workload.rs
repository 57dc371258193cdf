//! View 4 on a workload: on the left the request, the workload's stages (its own request's,
//! then each controller's) and its pods (one row each: node, phase); on the right what the
//! current stage did, or the pod under the cursor. Space on the pod list opens that pod's
//! journey in the pod view (`journey.rs`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;

use super::connection::SPINNER;
use super::journey::{file_name, mark, source_word, title};
use super::journey_detail;
use super::{ellipsize, inner_width, pane};
use crate::journey::workload::kind_of;
use crate::journey::workload_text::controller_lines;
use crate::journey::{Stage, StageReport, Status};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::field;

const SIDE_BY_SIDE: u16 = 100;

/// A workload stage's name in the list: the request's as in the pod view, a controller's as
/// kube-controller-manager names it.
fn stage_title(name: Stage) -> &'static str {
    if name.is_controller() {
        name.as_str()
    } else {
        title(name)
    }
}

/// `Deployment web`: the manifest's kind and name.
fn workload_name(state: &AppState) -> String {
    state.journey.sendable().map_or(String::new(), |v| {
        format!(
            "{} {}",
            v["kind"].as_str().unwrap_or_default(),
            v.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )
    })
}

fn list_title(state: &AppState) -> String {
    let j = &state.journey;
    format!(
        "4 {} · {}/{} · {}",
        super::journey::name(state),
        j.step,
        j.pods_step(),
        workload_name(state)
    )
}

fn count_title(state: &AppState) -> String {
    let j = &state.journey;
    format!(
        "4 {} · {}/{}",
        super::journey::name(state),
        j.step,
        j.pods_step()
    )
}

fn pod_row(p: &crate::journey::build::Collected) -> (String, String, String) {
    let v = p.final_pod.as_ref().unwrap_or(&Value::Null);
    let name = p.pod.rsplit('/').next().unwrap_or_default().to_string();
    let node = v
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("—")
        .to_string();
    let phase = v
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("—")
        .to_string();
    (name, node, phase)
}

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let j = &state.journey;
    let wj = j.workload_journey();
    let names = j.workload_stage_names();
    let spin = SPINNER[state.spinner % SPINNER.len()];
    let rows_wanted =
        names.len() as u16 + 3 + j.workload.as_ref().map_or(0, |w| w.pods.len()) as u16;
    let (list_area, detail_area) = if area.width >= SIDE_BY_SIDE {
        let [l, r] = Layout::horizontal([Constraint::Length(44), Constraint::Min(30)]).areas(area);
        (l, r)
    } else {
        // The pod list gets the room it needs, leaving the details a few rows.
        let room = if j.step >= j.pods_step() {
            area.height.saturating_sub(8).max(area.height / 2)
        } else {
            area.height / 2
        };
        let h = (rows_wanted + 2).min(room);
        let [l, r] = Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
        (l, r)
    };
    let width = inner_width(list_area);
    let title_fits = list_title(state).chars().count() + 4 <= list_area.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    if !title_fits {
        for r in field::wrap(&workload_name(state), width) {
            lines.push(Line::styled(r, theme.accent));
        }
    }
    let here = |n: usize| if n == j.step { "▶ " } else { "  " };
    let style = |n: usize| {
        if n == j.step {
            theme.selection
        } else {
            theme.text
        }
    };
    let resource = j.sendable().and_then(kind_of).map_or("pods", |(r, _)| r);
    lines.push(Line::from(vec![
        Span::styled(here(0), theme.accent),
        Span::styled(
            ellipsize(
                &format!("Request  POST …/{resource}  ({})", file_name(j)),
                width.saturating_sub(2),
            ),
            style(0),
        ),
    ]));
    let mut current_row = lines.len() - 1;
    let running = j.running || j.workload.is_none();
    for (i, name) in names.iter().enumerate() {
        let n = i + 1;
        if n == j.step {
            current_row = lines.len();
        }
        if n > j.step {
            lines.push(Line::styled(
                format!("  · {}", stage_title(*name)),
                theme.muted,
            ));
            continue;
        }
        let stage = wj.as_ref().and_then(|w| w.workload.stages.get(i));
        let (sym, st) = mark(stage, running, spin, theme);
        let src = stage.map_or(String::new(), |s| format!("[{}]", source_word(s.source)));
        lines.push(Line::from(vec![
            Span::styled(here(n), theme.accent),
            Span::styled(format!("{sym} "), st),
            Span::styled(
                ellipsize(
                    &format!("{:<22}{src}", stage_title(*name)),
                    width.saturating_sub(4),
                ),
                style(n),
            ),
        ]));
    }
    let pods_step = j.pods_step();
    let pods = j.workload.as_ref().map_or(&[][..], |w| &w.pods[..]);
    if pods_step == j.step {
        current_row = lines.len();
    }
    let total = j.workload.as_ref().map_or(0, |w| w.pods_total);
    let pods_head = if pods.len() < total {
        format!("Pods ({} of {total})", pods.len())
    } else {
        format!("Pods ({})", pods.len())
    };
    lines.push(Line::styled(
        format!("{}{pods_head}", here(pods_step)),
        if j.step >= pods_step {
            theme.label
        } else {
            theme.muted
        },
    ));
    if j.step >= pods_step {
        let name_w = pods
            .iter()
            .map(|p| pod_row(p).0.chars().count())
            .max()
            .unwrap_or(0);
        for (i, p) in pods.iter().enumerate() {
            let (name, node, phase) = pod_row(p);
            let on = i == j.pod_cursor;
            if on {
                current_row = lines.len();
            }
            lines.push(Line::from(vec![
                Span::styled(if on { "  ▸ " } else { "    " }, theme.accent),
                Span::styled(
                    ellipsize(
                        &format!("{name:<name_w$} {node} {phase}"),
                        width.saturating_sub(4),
                    ),
                    if on { theme.selection } else { theme.text },
                ),
            ]));
        }
    }
    // Scroll the list so the current row stays in view.
    let inner_h = list_area.height.saturating_sub(2) as usize;
    // On the pod list, as many of its rows as fit below the cursor are shown too.
    let bottom = if j.step >= pods_step {
        lines.len()
    } else {
        current_row + 1
    };
    let skip = bottom.saturating_sub(inner_h.max(1)).min(current_row);
    let lines: Vec<Line> = lines.into_iter().skip(skip).collect();
    let head = if title_fits {
        list_title(state)
    } else {
        count_title(state)
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane(head, theme, true)),
        list_area,
    );

    let dw = inner_width(detail_area);
    let (detail_title, detail) = if j.step == 0 {
        (
            "The request".to_string(),
            journey_detail::request(state, dw, theme),
        )
    } else if j.step < pods_step {
        let name = names[j.step - 1];
        let stage = wj.as_ref().and_then(|w| w.workload.stages.get(j.step - 1));
        let t = match stage {
            Some(s) => format!("{} · {}", stage_title(name), source_word(s.source)),
            None => stage_title(name).to_string(),
        };
        let body = match stage {
            Some(s) if s.status == Status::Skipped && j.running => vec![Line::styled(
                format!("{spin} waiting for this stage — the controllers are at work"),
                theme.warn,
            )],
            Some(s) if name.is_controller() => controller_detail(s, dw, theme),
            Some(s) => journey_detail::stage(state, s, dw, theme),
            None if running => vec![Line::styled(
                format!("{spin} sending the request…"),
                theme.warn,
            )],
            None => vec![Line::styled("not reached", theme.muted)],
        };
        (t, body)
    } else {
        ("Pods".to_string(), pods_detail(state, dw, theme, spin))
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

fn wrapped(text: &str, width: usize, style: ratatui::style::Style) -> Vec<Line<'static>> {
    field::lines("", 0, text, width, style, style)
}

/// What a controller did: what it created (with ownerReferences) and its Events.
fn controller_detail(s: &StageReport, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if let Some(e) = s.detail.get("explanation").and_then(Value::as_str) {
        out.extend(wrapped(e, width, theme.muted));
    }
    for l in controller_lines(&s.detail) {
        out.extend(wrapped(&l, width, theme.text));
    }
    if out.is_empty() {
        out.push(Line::styled("nothing created yet", theme.muted));
    }
    out
}

/// The pod under the cursor, and how to open its journey.
fn pods_detail(state: &AppState, width: usize, theme: &Theme, spin: &str) -> Vec<Line<'static>> {
    let j = &state.journey;
    let Some(p) = j.open_pod() else {
        let why = match j.workload_journey() {
            _ if j.running => format!("{spin} waiting for the controllers' pods…"),
            Some(w) => w
                .first
                .stages
                .get(7)
                .and_then(|s| s.detail["explanation"].as_str())
                .unwrap_or("no pod")
                .to_string(),
            None => "Space sends the manifest first".into(),
        };
        return wrapped(&why, width, theme.muted);
    };
    let (name, node, phase) = pod_row(p);
    let mut out = Vec::new();
    let row = |label: &str, v: String| field::lines(label, 10, &v, width, theme.label, theme.text);
    out.extend(row("pod", name));
    out.extend(row("node", node));
    out.extend(row("phase", phase));
    let by = p
        .created_by
        .as_ref()
        .and_then(|b| b["owner"].as_str())
        .unwrap_or_default()
        .to_string();
    out.extend(row("owner", by));
    // In presenter mode Space moves the story on (it ends here), so it opens nothing.
    let keys = if state.present {
        "↑/↓ another pod · P leaves presenter mode; then Space shows this pod's twelve stages"
    } else {
        "Space: this pod's twelve stages · ↑/↓ another pod"
    };
    out.extend(wrapped(keys, width, theme.key_hint));
    out
}

//! View 5's pods list on a live cluster (`w`): the cluster's Pending pods, then its bound pods,
//! and a note of what RBAC hid. Enter (or a click on the row under the cursor) re-runs the
//! simulation for the pod under the cursor. Only the rows on screen are built.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ellipsize, inner_width, pane, scroll_for};
use crate::tui::sched::live::Listing;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// Rows inside the pane taken by the RBAC notes, above the pods.
fn note_rows(l: &Listing) -> u16 {
    l.hidden.len() as u16
}

/// Rows of pods that fit in `area` under the notes.
fn pod_rows(area: Rect, l: &Listing) -> u16 {
    area.height.saturating_sub(2 + note_rows(l)).max(1)
}

/// The index into `listing.pods` of the row at (x, y), for mouse clicks.
pub fn pod_at(area: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let l = state.sched.listing.as_ref()?;
    let top = area.y + 1 + note_rows(l);
    let rows = pod_rows(area, l);
    if x <= area.x || x + 1 >= area.x + area.width || y < top || y >= top + rows {
        return None;
    }
    let i = scroll_for(state.sched.pod_cursor, rows) + (y - top) as usize;
    (i < l.pods.len()).then_some(i)
}

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let Some(l) = &state.sched.listing else {
        return;
    };
    let width = inner_width(area);
    let mut lines: Vec<Line> = l
        .hidden
        .iter()
        .map(|h| Line::styled(ellipsize(&format!("! {h}"), width), theme.warn))
        .collect();
    let rows = pod_rows(area, l) as usize;
    let first = scroll_for(state.sched.pod_cursor, rows as u16);
    let key_w = l
        .pods
        .iter()
        .map(|p| p.key.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 2);
    for (i, p) in l.pods.iter().enumerate().skip(first).take(rows) {
        let selected = i == state.sched.pod_cursor;
        let (sym, sym_style, place) = match &p.node {
            None => ("○", theme.warn, "Pending: not bound to a node".to_string()),
            Some(n) => (
                "●",
                theme.ok,
                match &p.phase {
                    Some(phase) => format!("on {n} ({phase})"),
                    None => format!("on {n}"),
                },
            ),
        };
        let focus = state.sched.focus_pod.as_deref() == Some(p.key.as_str());
        let row = format!(
            "{:<key_w$}  {place}{}",
            ellipsize(&p.key, key_w),
            if focus { "  ◀ simulated" } else { "" }
        );
        lines.push(Line::from(vec![
            Span::styled(format!("{sym} "), sym_style),
            Span::styled(
                ellipsize(&row, width.saturating_sub(2)),
                if selected {
                    theme.selection
                } else {
                    theme.text
                },
            ),
        ]));
    }
    if l.pods.is_empty() {
        lines.push(Line::styled("no pods to list", theme.muted));
    }
    let title = format!(
        "Pods: {} Pending, {} bound — Enter simulates, w closes",
        l.pending(),
        l.pods.len() - l.pending()
    );
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, true)), area);
}

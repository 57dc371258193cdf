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
use crate::tui::widgets::field::wrap;

/// Rows inside the pane taken by the RBAC notes, above the pods.
fn note_rows(l: &Listing) -> u16 {
    l.hidden.len() as u16
}

/// The selected Pending pod's whole reason, wrapped: its row has room for the start only.
fn reason_lines(state: &AppState, l: &Listing, width: usize) -> Vec<String> {
    l.pods
        .get(state.sched.pod_cursor)
        .filter(|p| p.node.is_none())
        .filter(|p| {
            state
                .sched
                .namespace
                .as_deref()
                .is_none_or(|ns| p.namespace() == ns)
        })
        .and_then(|p| Some(format!("{}: {}", p.key, p.reason.as_ref()?)))
        .map(|t| wrap(&t, width))
        .unwrap_or_default()
}

/// Rows of pods that fit in `area` between the notes and the selected pod's reason (which
/// gives way when the pane is too small for both).
fn pod_rows(area: Rect, state: &AppState, l: &Listing) -> u16 {
    let room = area.height.saturating_sub(2 + note_rows(l)).max(1);
    let reason = reason_lines(state, l, inner_width(area)).len() as u16;
    if room > reason + 3 {
        room - reason
    } else {
        room
    }
}

/// The index into `listing.pods` of the row at (x, y), for mouse clicks.
pub fn pod_at(area: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let l = state.sched.listing.as_ref()?;
    let top = area.y + 1 + note_rows(l);
    let rows = pod_rows(area, state, l);
    if x <= area.x || x + 1 >= area.x + area.width || y < top || y >= top + rows {
        return None;
    }
    let shown = l.shown(state.sched.namespace.as_deref());
    let at = shown
        .iter()
        .position(|&i| i >= state.sched.pod_cursor)
        .unwrap_or(0);
    shown
        .get(scroll_for(at, rows) + (y - top) as usize)
        .copied()
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
    let rows = pod_rows(area, state, l) as usize;
    let ns = state.sched.namespace.as_deref();
    let shown = l.shown(ns);
    let at = shown
        .iter()
        .position(|&i| i >= state.sched.pod_cursor)
        .unwrap_or(0);
    let first = scroll_for(at, rows as u16);
    let key_w = shown
        .iter()
        .map(|&i| l.pods[i].key.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 2);
    for &i in shown.iter().skip(first).take(rows) {
        let p = &l.pods[i];
        let selected = i == state.sched.pod_cursor;
        let (sym, sym_style, place) = match &p.node {
            None => (
                "○",
                theme.warn,
                match &p.reason {
                    Some(why) => format!("Pending: {why}"),
                    None => "Pending: not bound to a node".to_string(),
                },
            ),
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
    let reason = reason_lines(state, l, width);
    if rows < area.height.saturating_sub(2 + note_rows(l)) as usize {
        let used = lines.len() - note_rows(l) as usize;
        lines.extend((used..rows).map(|_| Line::raw("")));
        lines.extend(reason.into_iter().map(|r| Line::styled(r, theme.warn)));
    }
    if shown.is_empty() {
        lines.push(Line::styled(
            match ns {
                Some(ns) => format!("no pods in namespace {ns} (:ns alone shows all)"),
                None if l.finished > 0 => format!(
                    "no pods to list: {} finished, which hold no node's capacity",
                    l.finished
                ),
                None => "no pods to list".to_string(),
            },
            theme.muted,
        ));
    }
    let pending = shown.iter().filter(|&&i| l.pods[i].node.is_none()).count();
    let title = format!(
        "Pods{}: {pending} Pending, {} bound — Enter simulates, w closes",
        ns.map(|n| format!(" in {n}")).unwrap_or_default(),
        shown.len() - pending
    );
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, true)), area);
}

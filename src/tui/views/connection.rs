//! View 3: the connection as a ladder between client and server, revealed one rung per Space,
//! with the current rung's facts beside it (below it on narrow screens). A failed rung ends the
//! ladder and says why and what would fix it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{ellipsize, inner_width, pane};
use crate::tui::connection::ladder::{Arrow, Rung};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::{field, status};

/// Wide enough to put the details beside the ladder.
const SIDE_BY_SIDE: u16 = 110;

pub const SPINNER: [&str; 4] = ["|", "/", "-", "\\"];

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let c = state.conn();
    if c.report.is_none() {
        let text = match (&c.running, state.context_name()) {
            (Some(_), _) if state.chain == crate::tui::etcd_chain::Chain::Etcd => format!(
                "{} Connecting to etcd as the API server does: TCP, TLS handshake with its etcd client certificate, then GET /version and /health…",
                SPINNER[state.spinner % SPINNER.len()]
            ),
            (Some(ctx), _) => format!(
                "{} Connecting to the server of context '{ctx}': TCP, TLS handshake, then three requests…",
                SPINNER[state.spinner % SPINNER.len()]
            ),
            (None, None) => "No usable context: pick one in view 1 (Enter).".into(),
            (None, Some(_)) => "Press r to connect.".into(),
        };
        frame.render_widget(
            Paragraph::new(Line::styled(text, theme.muted))
                .wrap(Wrap { trim: true })
                .block(pane("3 Connection", theme, false)),
            area,
        );
        return;
    }
    let (ladder_area, detail_area) = areas(area, state);
    draw_ladder(frame, ladder_area, state, theme);
    // A summary the ladder row had to cut is said whole at the top of the details.
    let room = summary_room(ladder_area, state);
    let cut = c
        .current()
        .is_some_and(|r| r.summary.chars().count() > room);
    draw_detail(frame, detail_area, c.current(), cut, state, theme);
}

/// The columns a rung's summary gets in the ladder: below the title when each rung takes two
/// rows, else beside it.
fn summary_room(area: Rect, state: &AppState) -> usize {
    let width = inner_width(area);
    if rows(area, state).per == 2 {
        width.saturating_sub(7)
    } else {
        width.saturating_sub(7 + 26)
    }
}

/// The ladder and the details, side by side when wide enough, else one above the other.
fn areas(area: Rect, state: &AppState) -> (Rect, Rect) {
    if area.width >= SIDE_BY_SIDE {
        let [l, r] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(area);
        (l, r)
    } else {
        let h = (state.conn.rungs.len() as u16 + 3)
            .min(area.height / 2)
            .max(5);
        let [l, r] = Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
        (l, r)
    }
}

/// Where the revealed rungs sit in the ladder pane: the first rung shown and the rows each
/// takes (two when every rung fits on two rows, else one).
struct Rows {
    first: usize,
    per: usize,
}

fn rows(area: Rect, state: &AppState) -> Rows {
    let c = state.conn();
    let shown = c.step.min(c.rungs.len());
    // Tall enough for every rung on two rows (title, then what it carried): no truncation.
    let per = if area.height as usize >= 2 * c.rungs.len() + 4 {
        2
    } else {
        1
    };
    // Borders, the client/server row and the line after the rungs take four rows.
    let visible = (area.height.saturating_sub(4) as usize / per).max(1);
    Rows {
        first: shown.saturating_sub(visible),
        per,
    }
}

/// The step (1-based rung count) a click at (x, y) asks for: the revealed rung drawn there.
pub fn rung_at(body: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let c = state.conn();
    c.report.as_ref()?;
    let (ladder, _) = areas(body, state);
    // Below the top border and the client/server row.
    let top = ladder.y + 2;
    if x <= ladder.x || x + 1 >= ladder.x + ladder.width || y < top {
        return None;
    }
    let r = rows(ladder, state);
    let i = r.first + (y - top) as usize / r.per;
    (i < c.step.min(c.rungs.len())).then_some(i + 1)
}

fn arrow(a: Arrow) -> &'static str {
    match a {
        Arrow::ToServer => "──▶",
        Arrow::ToClient => "◀──",
        Arrow::Local => " ● ",
        Arrow::RoundTrip => "◀─▶",
    }
}

fn draw_ladder(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let etcd = state.chain == crate::tui::etcd_chain::Chain::Etcd;
    let c = state.conn();
    let width = inner_width(area);
    let url = c.report.as_ref().map_or("", |r| r.server_url.as_str());
    let mut lines = vec![Line::from(vec![
        Span::styled(" client", theme.label),
        Span::raw(" ".repeat(width.saturating_sub(14))),
        Span::styled("server", theme.label),
    ])];
    let shown = c.step.min(c.rungs.len());
    let Rows { first, per } = rows(area, state);
    let two_rows = per == 2;
    for (i, r) in c.rungs.iter().enumerate().take(shown).skip(first) {
        let style = if i + 1 == shown {
            theme.selection
        } else {
            theme.text
        };
        let head = format!(" {} {} ", status::symbol(r.status), arrow(r.arrow));
        if two_rows {
            let rest = width.saturating_sub(head.chars().count());
            lines.push(Line::from(vec![
                Span::styled(head, status::style(theme, r.status)),
                Span::styled(ellipsize(&r.title, rest), style),
            ]));
            lines.push(Line::styled(
                format!("       {}", ellipsize(&r.summary, width.saturating_sub(7))),
                theme.muted,
            ));
            continue;
        }
        let title = format!("{:<26}", r.title);
        let rest = width.saturating_sub(head.chars().count() + title.chars().count());
        lines.push(Line::from(vec![
            Span::styled(head, status::style(theme, r.status)),
            Span::styled(title, style),
            Span::styled(ellipsize(&r.summary, rest), style),
        ]));
    }
    let left = c.rungs.len().saturating_sub(shown);
    let failed = c
        .rungs
        .get(shown.wrapping_sub(1))
        .is_some_and(|r| r.failure.is_some());
    if failed {
        lines.push(Line::styled(
            "   ✗ the connection stops here (why and fix: details)",
            theme.error,
        ));
    } else if left > 0 {
        lines.push(Line::styled(
            format!("   … {left} more (Space)"),
            theme.muted,
        ));
    } else if c.rungs.last().is_some_and(|r| r.failure.is_none()) {
        lines.push(Line::styled(
            if etcd {
                "   ✓ etcd accepted the API server's certificate"
            } else {
                "   ✓ connected, and the server knows who you are"
            },
            theme.ok,
        ));
    }
    let title = format!(
        "3 {} · {} · step {}/{}",
        if etcd {
            "API server → etcd"
        } else {
            "Connection"
        },
        ellipsize(url, if etcd { 28 } else { 40 }),
        shown,
        c.rungs.len()
    );
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, true)), area);
}

fn draw_detail(
    frame: &mut Frame,
    area: Rect,
    rung: Option<&Rung>,
    summary_cut: bool,
    state: &AppState,
    theme: &Theme,
) {
    let Some(r) = rung else {
        frame.render_widget(pane("Details", theme, false), area);
        return;
    };
    let width = inner_width(area);
    let label_w = r
        .details
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .min(14)
        + 2;
    let mut lines: Vec<Line> = Vec::new();
    if summary_cut {
        lines.extend(
            field::wrap(&r.summary, width)
                .into_iter()
                .map(|l| Line::styled(l, theme.text)),
        );
        lines.push(Line::raw(""));
    }
    if let Some(f) = &r.failure {
        lines.extend(field::lines(
            "✗ Why",
            7,
            &f.why,
            width,
            theme.error,
            theme.error,
        ));
        lines.extend(field::lines(
            "  Fix",
            7,
            &f.fix,
            width,
            theme.label,
            theme.text,
        ));
        // kubectl's own words, whole, so the line a user saw elsewhere can be found here.
        for said in &f.kubectl_says {
            lines.extend(field::lines(
                "  kubectl says",
                15,
                said,
                width,
                theme.label,
                theme.text,
            ));
        }
        lines.push(Line::raw(""));
    }
    for (label, value) in &r.details {
        lines.extend(field::lines(
            label,
            label_w,
            value,
            width,
            theme.label,
            theme.text,
        ));
    }
    // Rows below the pane's end are announced, so a cut list is never mistaken for a whole one.
    let scroll = super::detail_scroll(state, lines.len(), area);
    let below = (lines.len() as u16).saturating_sub(scroll + area.height.saturating_sub(2));
    let keys = if below > 0 {
        format!(
            "PgDn: {below} more {}",
            if below == 1 { "row" } else { "rows" }
        )
    } else {
        "PgUp/PgDn".to_string()
    };
    frame.render_widget(
        Paragraph::new(lines).scroll((scroll, 0)).block(pane(
            format!("{} ({keys})", r.title),
            theme,
            false,
        )),
        area,
    );
}

//! View 5's `b`: two columns in place of the nodes — the default profile's scores and winner
//! beside the bin-packing profile's, for the same pod on the same cluster.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{ellipsize, inner_width, pane};
use crate::tui::sched::compare::{self, Column};
use crate::tui::sched::model::Model;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, m: &Model, theme: &Theme) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let default = compare::column(compare::DEFAULT_TITLE, &Ok(m.trace.clone()));
    let packing = match &m.bin_packing {
        Some(t) => compare::column(compare::BIN_PACKING_TITLE, t),
        None => return,
    };
    draw_column(frame, left, &default, theme);
    draw_column(frame, right, &packing, theme);
}

fn draw_column(frame: &mut Frame, area: Rect, c: &Column, theme: &Theme) {
    let width = inner_width(area);
    let mut lines: Vec<Line> = Vec::new();
    match &c.winner {
        Some(w) => lines.push(Line::styled(format!("★ {w} wins"), theme.ok)),
        None => lines.push(Line::styled("✗ no node fits", theme.error)),
    }
    let rows = (area.height as usize).saturating_sub(3 + usize::from(c.infeasible > 0));
    let name_w = c
        .rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0)
        .min(width.saturating_sub(14));
    let shown = if c.rows.len() > rows {
        rows.saturating_sub(1)
    } else {
        rows
    };
    for (node, total) in c.rows.iter().take(shown) {
        let won = c.winner.as_deref() == Some(node.as_str());
        lines.push(Line::from(vec![
            Span::styled(if won { "★ " } else { "  " }, theme.ok),
            Span::styled(
                format!("{:<name_w$}  total {total}", ellipsize(node, name_w)),
                if won { theme.ok } else { theme.text },
            ),
        ]));
    }
    if c.rows.len() > shown {
        lines.push(Line::styled(
            format!("  … {} more scored", c.rows.len() - shown),
            theme.muted,
        ));
    }
    if c.infeasible > 0 {
        lines.push(Line::styled(
            format!("  {} node(s) filtered out", c.infeasible),
            theme.muted,
        ));
    }
    if let (None, Some(msg)) = (&c.winner, &c.message) {
        lines.push(Line::styled(msg.clone(), theme.muted));
    }
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(pane(
            ellipsize(c.title, width.saturating_sub(2)),
            theme,
            true,
        )),
        area,
    );
}

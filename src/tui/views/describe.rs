//! The `d` overlay: a pod as `kubectl describe pod` prints it, with its events, over the whole
//! view. Long lines (an event's message) wrap under their start instead of being cut.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

use super::{ellipsize, inner_width, pane};
use crate::tui::state::Described;
use crate::tui::theme::Theme;
use crate::tui::widgets::field::wrap;

pub fn draw(frame: &mut Frame, area: Rect, d: &Described, scroll: u16, theme: &Theme) {
    let width = inner_width(area);
    let lines: Vec<Line> = match &d.lines {
        None => vec![Line::styled(
            format!("asking the server for {} and its events…", d.pod),
            theme.muted,
        )],
        Some(Err(e)) => wrap(&format!("✗ cannot describe {}: {e}", d.pod), width)
            .into_iter()
            .map(|l| Line::styled(l, theme.error))
            .collect(),
        Some(Ok(text)) => text
            .iter()
            .flat_map(|l| {
                // Continuation lines hang under the line's own start.
                let indent = l.len() - l.trim_start().len();
                let pad = (indent + 2).min(width / 2);
                wrap(l, width.saturating_sub(pad).max(1))
                    .into_iter()
                    .enumerate()
                    .map(move |(i, p)| {
                        if i == 0 {
                            p
                        } else {
                            format!("{}{p}", " ".repeat(pad))
                        }
                    })
            })
            .map(|l| Line::styled(l, theme.text))
            .collect(),
    };
    let height = area.height.saturating_sub(2) as usize;
    let scroll = (scroll as usize).min(lines.len().saturating_sub(height)) as u16;
    frame.render_widget(Clear, area);
    let title = format!("kubectl describe pod {} — ↑↓ scroll, Esc closes", d.pod);
    frame.render_widget(
        Paragraph::new(lines).scroll((scroll, 0)).block(pane(
            ellipsize(&title, width.saturating_sub(2)),
            theme,
            true,
        )),
        area,
    );
}

//! The `?` overlay: every binding of the keymap, one line each, so help can never drift from
//! what the keys actually do.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::pane;
use crate::tui::keymap::KeyMap;
use crate::tui::state::{AppState, Overlay};
use crate::tui::theme::Theme;

pub fn lines(keymap: &KeyMap, theme: &Theme) -> Vec<Line<'static>> {
    let width = keymap
        .bindings
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    let mut lines: Vec<Line<'static>> = keymap
        .bindings
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!(" {:<width$}  ", b.label), theme.key_hint),
                Span::styled(b.help, theme.text),
            ])
        })
        .collect();
    let commands: Vec<&str> = crate::tui::command::COMMANDS
        .iter()
        .map(|c| c.usage)
        .collect();
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<width$}  ", "commands"), theme.key_hint),
        Span::styled(commands.join("  "), theme.text),
    ]));
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<width$}  ", "mouse"), theme.key_hint),
        Span::styled(
            "click a tab, a row, a rung (3), a stage (4), a node or a pod (5); twice: choose it",
            theme.text,
        ),
    ]));
    lines
}

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme, keymap: &KeyMap) {
    let lines = lines(keymap, theme);
    let wanted_height = lines.len() as u16 + 2;
    let wanted_width = lines.iter().map(|l| l.width()).max().unwrap_or(20) as u16 + 3;
    let rect = area.centered(
        Constraint::Length(wanted_width.min(area.width)),
        Constraint::Length(wanted_height.min(area.height)),
    );
    let scroll = match state.overlay {
        Some(Overlay::Help { scroll }) => {
            let max = wanted_height.saturating_sub(rect.height);
            scroll.min(max)
        }
        _ => 0,
    };
    frame.render_widget(Clear, rect);
    let block = pane("Keys — Esc or ? closes", theme, true);
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.text)
            .block(block)
            .scroll((scroll, 0)),
        rect,
    );
}

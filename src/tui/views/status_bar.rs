//! The bottom two rows: where you are (context, server, identity, worst check), then the
//! keys that work here, taken from the keymap.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::keymap::KeyMap;
use crate::tui::state::{AppState, Source};
use crate::tui::theme::Theme;
use crate::tui::widgets::status;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme, keymap: &KeyMap) {
    let [facts, keys] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(facts_line(state, theme)).style(theme.status_bar),
        facts,
    );
    let mut spans = Vec::new();
    for (key, word) in keymap.hints(state.view, state.help_open()) {
        spans.push(Span::styled(format!(" {key}"), theme.key_hint));
        spans.push(Span::styled(format!(" {word} "), theme.muted));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), keys);
}

fn facts_line(state: &AppState, theme: &Theme) -> Line<'static> {
    let sep = || Span::raw("  │ ");
    let mut spans = vec![Span::raw(" ")];
    match (&state.source, &state.active) {
        (Source::NotFound { .. }, _) => {
            spans.push(Span::raw("no kubeconfig found (see view 1)"));
            return Line::from(spans);
        }
        (_, None) => {
            spans.push(Span::raw("no context"));
            return Line::from(spans);
        }
        (_, Some(active)) => {
            let name = if active.name.is_empty() {
                "(none)"
            } else {
                &active.name
            };
            spans.push(Span::raw(format!("ctx {name}")));
            if let Some(p) = &state.pending {
                spans.push(Span::raw(format!(" (switching to {p}…)")));
            }
            match &active.resolved {
                Ok(facts) => {
                    spans.push(sep());
                    spans.push(Span::raw(facts.server.clone()));
                }
                Err(_) => {
                    spans.push(sep());
                    spans.push(status::labelled(
                        theme,
                        crate::pki::CheckStatus::Error,
                        "does not resolve",
                    ));
                    return Line::from(spans);
                }
            }
            match &active.report {
                Some(Ok(report)) => {
                    spans.push(sep());
                    match &report.user.identity {
                        Some(id) => {
                            let groups = if id.groups.is_empty() {
                                "-".to_string()
                            } else {
                                id.groups.join(",")
                            };
                            spans.push(Span::raw(format!("user {}  groups {groups}", id.user)));
                        }
                        None => spans.push(Span::raw(format!("auth {}", report.user.auth))),
                    }
                    spans.push(sep());
                    let worst = report.worst();
                    let count = report.checks.iter().filter(|c| c.status == worst).count();
                    let text = match worst {
                        crate::pki::CheckStatus::Ok => "checks ok".to_string(),
                        _ => format!("{count} {}", status::word(worst)),
                    };
                    spans.push(status::labelled(theme, worst, text));
                }
                Some(Err(_)) => {
                    spans.push(sep());
                    spans.push(status::labelled(
                        theme,
                        crate::pki::CheckStatus::Error,
                        "credentials not inspected",
                    ));
                }
                None => {}
            }
        }
    }
    Line::from(spans)
}

//! The bottom two rows: where you are (context, server, identity, worst check), then the
//! keys that work here, taken from the keymap.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::pki::CheckStatus;
use crate::tui::keymap::KeyMap;
use crate::tui::state::{AppState, Source};
use crate::tui::theme::Theme;
use crate::tui::widgets::status;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme, keymap: &KeyMap) {
    let [facts, keys] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(facts_line(state, theme, facts.width as usize)).style(theme.status_bar),
        facts,
    );
    if let Some(line) = &state.command {
        let typed = Line::from(vec![
            Span::styled(format!(":{line}▏"), theme.key_hint),
            Span::styled("  Enter runs · Esc drops · :help lists", theme.muted),
        ]);
        frame.render_widget(Paragraph::new(typed), keys);
        return;
    }
    if let Some(f) = state.flash.as_ref().filter(|f| state.now_unix < f.until) {
        let status = if f.ok {
            CheckStatus::Ok
        } else {
            CheckStatus::Error
        };
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::raw(" "),
                status::labelled(theme, status, f.text.clone()),
            ])),
            keys,
        );
        return;
    }
    let mut spans = Vec::new();
    let hints = keymap.hints(state.view, state.overlay_open());
    // No point hinting a switch without contexts, or the merged view without a kubeconfig.
    let hints: Vec<_> = hints
        .into_iter()
        .filter(|(_, w)| match *w {
            "use context" => state.context_count() > 0,
            "merged" => state.kubeconfig().is_some(),
            _ => true,
        })
        .collect();
    for (key, word) in fitting(hints, keys.width as usize) {
        spans.push(Span::styled(format!(" {key}"), theme.key_hint));
        spans.push(Span::styled(format!(" {word} "), theme.muted));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), keys);
}

/// The hints that fit whole in `width`, as ` key word ` each: Tab's goes first (the number
/// keys reach every view), then from the last; a hint is left out, never cut.
fn fitting(
    mut hints: Vec<(&'static str, &'static str)>,
    width: usize,
) -> Vec<(&'static str, &'static str)> {
    let total = |h: &[(&str, &str)]| {
        h.iter()
            .map(|(k, w)| k.chars().count() + w.chars().count() + 3)
            .sum::<usize>()
    };
    if total(&hints) > width {
        hints.retain(|(_, w)| *w != "views");
    }
    while total(&hints) > width {
        hints.pop();
    }
    hints
}

/// Context first, then the worst check (what needs attention must survive narrow screens),
/// then who the certificate says you are, then the server: the parts that do not fit whole
/// in `width` are left out from the last, never cut.
fn facts_line(state: &AppState, theme: &Theme, width: usize) -> Line<'static> {
    let mut parts: Vec<Span<'static>> = Vec::new();
    match (&state.source, &state.active) {
        (Source::NotFound { .. }, _) => {
            parts.push(Span::raw("no kubeconfig found (see view 1)"));
        }
        (_, None) => parts.push(Span::raw("no context")),
        (_, Some(active)) => {
            let name = if active.name.is_empty() {
                "(none)"
            } else {
                &active.name
            };
            let mut ctx = format!("ctx {name}");
            if state.embedded.is_some() {
                ctx.push_str(" (embedded)");
            }
            if let Some(p) = &state.pending {
                ctx.push_str(&format!(" (switching to {p}…)"));
            }
            parts.push(Span::raw(ctx));
            // Writes to a real cluster are opt-in: say so where it is always visible.
            if active.resolved.is_ok() && state.journey.read_only() {
                parts.push(status::labelled(theme, CheckStatus::Warn, "READ-ONLY"));
            }
            match (&active.resolved, &active.report) {
                (Err(_), _) => {
                    parts.push(status::labelled(
                        theme,
                        CheckStatus::Error,
                        "does not resolve",
                    ));
                }
                (Ok(facts), Some(Ok(report))) => {
                    let worst = report.worst();
                    let count = report.checks.iter().filter(|c| c.status == worst).count();
                    let text = match worst {
                        CheckStatus::Ok => "checks ok".to_string(),
                        _ => format!("{count} {}", status::word(worst)),
                    };
                    parts.push(status::labelled(theme, worst, text));
                    parts.push(Span::raw(match &report.user.identity {
                        Some(id) if id.groups.is_empty() => format!("user {}", id.user),
                        Some(id) => format!("user {}  groups {}", id.user, id.groups.join(",")),
                        None => format!("auth {}", report.user.auth),
                    }));
                    parts.push(Span::raw(facts.server.clone()));
                }
                (Ok(facts), _) => {
                    parts.push(status::labelled(
                        theme,
                        CheckStatus::Error,
                        "credentials not inspected",
                    ));
                    parts.push(Span::raw(facts.server.clone()));
                }
            }
        }
    }
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (i, p) in parts.into_iter().enumerate() {
        let sep = if i > 0 { "  │ " } else { "" };
        let w = sep.chars().count() + p.width();
        // The context itself always shows, even cut by a very narrow screen.
        if i > 0 && used + w > width {
            break;
        }
        used += w;
        if i > 0 {
            spans.push(Span::raw(sep));
        }
        spans.push(p);
    }
    Line::from(spans)
}

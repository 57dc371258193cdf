//! Presenter mode's question screen, drawn instead of the view until the answer is revealed:
//! the question, what the room needs to know, the numbered choices with the room's picks;
//! then the answer large, whether the guess was right, and why. Picks are marked with [x] and
//! right choices with ✓, never by colour alone.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::quiz::{self, Asking, Phase};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::{big, flow};

/// The question's lines as drawn below the big answer (or alone), wrapped to `width`.
pub fn lines(state: &AppState, a: &Asking, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let w = width as usize;
    let guess = state.quiz.guess(a.question);
    let mut out = Vec::new();
    match a.phase {
        Phase::Ask => {
            out.extend(flow::sentence(a.question.ask(), theme.title, w));
            out.push(Line::raw(""));
            for f in &a.facts {
                out.extend(flow::sentence(f, theme.text, w));
            }
            out.push(Line::raw(""));
            for (i, c) in a.choices.iter().enumerate() {
                let mark = if guess.contains(&i) { "[x]" } else { "[ ]" };
                out.extend(flow::rows(
                    vec![
                        Span::styled(format!("{} ", i + 1), theme.key_hint),
                        Span::styled(format!("{mark} {c}"), theme.text),
                    ],
                    w,
                ));
            }
            out.push(Line::raw(""));
            let keys = if a.multi {
                format!(
                    "1–{}: pick every one you think (again to unpick)",
                    a.choices.len()
                )
            } else {
                format!("1–{}: your guess", a.choices.len())
            };
            out.extend(flow::sentence(
                &format!("{keys} · Space: the answer"),
                theme.muted,
                w,
            ));
        }
        Phase::Reveal => {
            out.extend(flow::sentence(a.question.ask(), theme.muted, w));
            let Some(answer) = quiz::answer(state, a) else {
                out.extend(flow::sentence(
                    "finding out… (the answer comes from the real cluster)",
                    theme.text,
                    w,
                ));
                return out;
            };
            if let Some(v) = quiz::verdict(a, &answer, guess) {
                let style = if guess == answer.right.as_slice() {
                    theme.ok
                } else {
                    theme.warn
                };
                out.extend(flow::sentence(&v, style, w));
            }
            for l in &answer.lines {
                out.extend(flow::sentence(l, theme.text, w));
            }
            out.push(Line::raw(""));
            for (i, c) in a.choices.iter().enumerate() {
                let right = if answer.right.contains(&i) {
                    "✓"
                } else {
                    " "
                };
                let picked = if guess.contains(&i) {
                    "  (your pick)"
                } else {
                    ""
                };
                out.extend(flow::rows(
                    vec![
                        Span::styled(format!("{} ", i + 1), theme.key_hint),
                        Span::styled(format!("{right} {c}{picked}"), theme.text),
                    ],
                    w,
                ));
            }
        }
    }
    out
}

/// The key fact said large: the answer once revealed and known.
pub fn key_fact(state: &AppState, a: &Asking) -> Option<String> {
    (a.phase == Phase::Reveal)
        .then(|| quiz::answer(state, a))
        .flatten()
        .map(|x| x.key_fact)
}

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, a: &Asking, theme: &Theme) {
    let text = lines(state, a, area.width, theme);
    let fact = key_fact(state, a);
    let large = fact
        .as_deref()
        .filter(|f| big::fits(f, area.width) && text.len() as u16 + big::CELL.1 < area.height);
    let text_area = match large {
        Some(f) => {
            let [top, _, rest] = Layout::vertical([
                Constraint::Length(big::CELL.1),
                Constraint::Length(1),
                Constraint::Min(1),
            ])
            .areas(area);
            big::draw(frame, top, f, theme.title);
            rest
        }
        None => {
            let mut text = text;
            if let Some(f) = fact {
                text.insert(
                    0,
                    Line::styled(
                        format!(" {}", f.to_uppercase()),
                        theme.title.add_modifier(ratatui::style::Modifier::BOLD),
                    ),
                );
            }
            frame.render_widget(Paragraph::new(text), area);
            return;
        }
    };
    frame.render_widget(Paragraph::new(text), text_area);
}

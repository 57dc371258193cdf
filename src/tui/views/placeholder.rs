//! Views 3-5 until their issues land: one honest line each, nothing that pretends to work.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::pane;
use crate::tui::action::View;
use crate::tui::theme::Theme;

/// The line shown for a view that is not built yet.
pub fn message(view: View) -> &'static str {
    match view {
        View::Connection => {
            "Not built yet: the mTLS handshake, step by step, arrives with issues 5 and 6."
        }
        View::PodJourney => {
            "Not built yet: a pod's journey through the API server arrives with issues 4 and 5."
        }
        View::Scheduler => {
            "Not built yet: the scheduler's filter and score phases arrive with issues 3 and 5."
        }
        View::Kubeconfig | View::Certificates => "",
    }
}

pub fn draw(frame: &mut Frame, area: Rect, view: View, theme: &Theme) {
    let block = pane(
        format!("{} {}", view.index() + 1, view.title()),
        theme,
        false,
    );
    let text = Line::styled(message(view), theme.muted);
    frame.render_widget(
        Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block),
        area,
    );
}

//! Drawing: the frame is tabs on top, the current view, the status bar at the bottom, and an
//! overlay above it all when one is open. Views read the state; they never change it.

pub mod cert_fields;
pub mod certificates;
pub mod connection;
pub mod describe;
pub mod help;
pub mod journey;
pub mod journey_detail;
pub mod journey_workload;
pub mod kubeconfig;
pub mod kubeconfig_lists;
pub mod merged;
pub mod presenter;
pub mod question;
pub mod scheduler;
pub mod scheduler_compare;
pub mod scheduler_loading;
pub mod scheduler_pods;
pub mod scheduler_rows;
pub mod status_bar;
pub mod tabs;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use super::action::View;
use super::keymap::KeyMap;
use super::state::{AppState, Overlay};
use super::theme::Theme;

/// Smaller than this, nothing useful fits: say so instead of drawing a mess.
const MIN_WIDTH: u16 = 40;
const MIN_HEIGHT: u16 = 10;

pub fn draw(frame: &mut Frame, state: &AppState, theme: &Theme, keymap: &KeyMap) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.text), area);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "Terminal too small ({}×{}); kexplore needs at least {MIN_WIDTH}×{MIN_HEIGHT}. q quits.",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(msg)
                .style(theme.warn)
                .wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let body = if state.present {
        presenter::draw_frame(frame, area, state, theme)
    } else {
        let [top, body, bottom] = frame_areas(area);
        tabs::draw(frame, top, state.view, theme);
        status_bar::draw(frame, bottom, state, theme, keymap);
        body
    };
    match crate::tui::story::asking(state).filter(|_| state.present) {
        Some(a) => question::draw(frame, body, state, a, theme),
        None => draw_view(frame, body, state, theme),
    }
    match state.overlay {
        Some(Overlay::Help { .. }) => help::draw(frame, body, state, theme, keymap),
        Some(Overlay::Merged { scroll }) => {
            if let Some(kc) = state.kubeconfig() {
                merged::draw_merged_overlay(frame, body, kc, scroll, theme);
            }
        }
        Some(Overlay::Describe { scroll }) => {
            if let Some(d) = &state.described {
                describe::draw(frame, body, d, scroll, theme);
            }
        }
        None => {}
    }
}

fn draw_view(frame: &mut Frame, body: Rect, state: &AppState, theme: &Theme) {
    match state.view {
        View::Kubeconfig => kubeconfig::draw(frame, body, state, theme),
        View::Certificates => certificates::draw(frame, body, state, theme),
        View::Connection => connection::draw(frame, body, state, theme),
        View::PodJourney => journey::draw(frame, body, state, theme),
        View::Scheduler => scheduler::draw(frame, body, state, theme),
    }
}

/// Tabs, the current view, the status bar. Drawing and mouse clicks both use this.
fn frame_areas(area: Rect) -> [Rect; 3] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(2),
    ])
    .areas(area)
}

/// Where the current view is drawn on a terminal of `size` (columns, rows).
pub fn body_area(size: (u16, u16)) -> Rect {
    frame_areas(Rect::new(0, 0, size.0, size.1))[1]
}

/// Where the current view is drawn, presenter mode included (mouse clicks use this).
pub fn view_area(state: &AppState) -> Rect {
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    if state.present {
        presenter::body(area, state)
    } else {
        frame_areas(area)[1]
    }
}

/// A bordered pane; the focused one (where arrows move) has the focus border.
/// The first of `lines` lines to show in a pane drawn in `area` (inside its borders): where the
/// keys scrolled to, but never past the point where the last line reaches the bottom. That
/// point is kept for the keys (`detail_scroll_max`).
pub fn detail_scroll(state: &AppState, lines: usize, area: Rect) -> u16 {
    let inside = usize::from(area.height.saturating_sub(2));
    let max = u16::try_from(lines.saturating_sub(inside)).unwrap_or(u16::MAX);
    state.detail_scroll_max.set(max);
    state.detail_scroll.min(max)
}

pub fn pane<'a>(title: impl Into<String>, theme: &Theme, focused: bool) -> Block<'a> {
    let border = if focused {
        theme.border_focus
    } else {
        theme.border
    };
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(Line::styled(format!(" {} ", title.into()), theme.title))
}

/// The first row to show so that `cursor` stays visible in `height` rows.
pub fn scroll_for(cursor: usize, height: u16) -> usize {
    let h = height.max(1) as usize;
    cursor.saturating_sub(h - 1)
}

/// Shortens `s` to `max` characters with an ellipsis, for one-line cells.
pub fn ellipsize(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The inner width of a bordered area.
pub fn inner_width(area: Rect) -> usize {
    area.width.saturating_sub(2) as usize
}

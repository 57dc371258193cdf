//! Large text for the one fact a room reads from the back (tui-big-text, quadrant blocks,
//! which every terminal font draws). Only ASCII has big glyphs; anything else, or text that
//! would not fit, stays normal size.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

/// Columns and rows one character takes.
pub const CELL: (u16, u16) = (4, 4);

/// Whether `text` can be drawn large within `width` columns.
pub fn fits(text: &str, width: u16) -> bool {
    text.is_ascii() && !text.is_empty() && text.chars().count() as u16 * CELL.0 <= width
}

/// Draws `text` large (upper case) on the first `CELL.1` rows of `area`.
pub fn draw(frame: &mut Frame, area: Rect, text: &str, style: Style) {
    frame.render_widget(
        tui_big_text::BigText::builder()
            .pixel_size(tui_big_text::PixelSize::Quadrant)
            .style(style.add_modifier(Modifier::BOLD))
            .lines(vec![Line::raw(text.to_uppercase())])
            .build(),
        area,
    );
}

//! The top row: the name, then one tab per view with its number key. The same layout
//! function draws the tabs and answers mouse clicks, so they can never disagree.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::action::View;
use crate::tui::theme::Theme;

const BRAND: &str = " kexplore ";

/// Below this width the name gives its place to the tabs.
const BRAND_MIN_WIDTH: u16 = 90;

fn brand(width: u16) -> &'static str {
    if width >= BRAND_MIN_WIDTH { BRAND } else { "" }
}

/// Each tab's text and first column, on a row `width` columns wide.
fn layout(width: u16) -> Vec<(View, String, u16)> {
    let mut x = match brand(width) {
        "" => 0,
        b => b.chars().count() as u16 + 1,
    };
    View::ALL
        .into_iter()
        .map(|v| {
            let text = format!(" {} {} ", v.index() + 1, v.title());
            let start = x;
            x += text.chars().count() as u16 + 1;
            (v, text, start)
        })
        .collect()
}

/// The view whose tab covers column `x` of the top row.
pub fn tab_at(x: u16, width: u16) -> Option<View> {
    layout(width).into_iter().find_map(|(v, text, start)| {
        (x >= start && x < start + text.chars().count() as u16).then_some(v)
    })
}

pub fn draw(frame: &mut Frame, area: Rect, current: View, theme: &Theme) {
    let mut spans = Vec::new();
    if !brand(area.width).is_empty() {
        spans.extend([Span::styled(BRAND, theme.title), Span::raw(" ")]);
    }
    for (v, text, _) in layout(area.width) {
        let style = if v == current {
            theme.tab_active
        } else {
            theme.tab
        };
        spans.push(Span::styled(text, style));
        spans.push(Span::raw(" "));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clicks_hit_the_drawn_tabs() {
        // " kexplore " is 10 wide, then a space: tab 1 starts at column 11.
        assert_eq!(tab_at(11, 120), Some(View::Kubeconfig));
        assert_eq!(tab_at(0, 120), None);
        assert_eq!(tab_at(0, 80), Some(View::Kubeconfig));
        let (_, text, start) = &layout(120)[1];
        assert_eq!(tab_at(*start, 120), Some(View::Certificates));
        assert_eq!(
            tab_at(start + text.chars().count() as u16 - 1, 120),
            Some(View::Certificates)
        );
    }
}

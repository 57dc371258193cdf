//! Pieces of a sentence laid into rows of a given width: a piece that fits goes on the current
//! row, one that does not starts the next, one wider than a row wraps. Nothing is cut, so a
//! header line that a wide terminal shows on one row takes two at 80 columns.

use ratatui::text::{Line, Span};

use super::field;

/// `pieces` laid into rows of at most `width` columns, each row after a one-column margin;
/// spaces at the start of a piece that begins a row are dropped.
pub fn rows(pieces: Vec<Span<'static>>, width: usize) -> Vec<Line<'static>> {
    let room = width.saturating_sub(1).max(1);
    let mut out: Vec<Vec<Span<'static>>> = Vec::new();
    let mut used = room + 1; // no row open yet
    for p in pieces {
        let len = p.content.chars().count();
        if used + len <= room {
            used += len;
            if let Some(row) = out.last_mut() {
                row.push(p);
            }
            continue;
        }
        let text = p.content.trim_start().to_string();
        for piece in field::wrap(&text, room) {
            used = piece.chars().count();
            out.push(vec![Span::raw(" "), Span::styled(piece, p.style)]);
        }
    }
    out.into_iter().map(Line::from).collect()
}

/// `text` after a one-column margin, wrapped to `width` columns.
pub fn sentence(text: &str, style: ratatui::style::Style, width: usize) -> Vec<Line<'static>> {
    rows(vec![Span::styled(text.to_string(), style)], width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn pieces_share_a_row_when_they_fit_and_wrap_when_not() {
        let pieces = || {
            vec![
                Span::raw("pod default/app"),
                Span::raw("  requests cpu 100m"),
                Span::raw("   (+/- change cpu)"),
            ]
        };
        assert_eq!(
            text(&rows(pieces(), 80)),
            vec![" pod default/app  requests cpu 100m   (+/- change cpu)"]
        );
        assert_eq!(
            text(&rows(pieces(), 40)),
            vec![" pod default/app  requests cpu 100m", " (+/- change cpu)"]
        );
        let long = rows(vec![Span::raw("a b c d e f g h i j")], 8);
        assert_eq!(text(&long), vec![" a b c", " d e f", " g h i j"]);
    }
}

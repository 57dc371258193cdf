//! "Label   value" rows whose long values wrap under the value column (a hanging indent), so
//! a fingerprint or a file path stays readable instead of flowing back under the labels.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Splits `text` into pieces of at most `width` characters, preferring to break after a
/// space, comma, colon or slash so names, lists and fingerprints break where a reader expects,
/// and a word longer than half the row after one of its hyphens.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while chars.len() - start > width {
        let window = &chars[start..start + width];
        // A word too long for the row breaks after a hyphen before it breaks anywhere
        // (`kube-apiserver-etcd-` / `client`, not `…-clie` / `nt`).
        let after = |breaks: &dyn Fn(char) -> bool| {
            window
                .iter()
                .rposition(|&c| breaks(c))
                .filter(|&i| i + 1 >= width / 2)
        };
        let cut = after(&|c| matches!(c, ' ' | ',' | ':' | '/'))
            .or_else(|| after(&|c| c == '-'))
            .map_or(width, |i| i + 1);
        out.push(
            chars[start..start + cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        start += cut;
        while start < chars.len() && chars[start] == ' ' {
            start += 1;
        }
    }
    if start < chars.len() || out.is_empty() {
        out.push(chars[start..].iter().collect());
    }
    out
}

/// One labelled value in `width` columns; continuation lines are indented by `label_width`.
pub fn lines(
    label: &str,
    label_width: usize,
    value: &str,
    width: usize,
    label_style: Style,
    value_style: Style,
) -> Vec<Line<'static>> {
    let value_width = width.saturating_sub(label_width).max(8);
    wrap(value, value_width)
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let head = if i == 0 {
                format!("{label:<label_width$}")
            } else {
                " ".repeat(label_width)
            };
            Line::from(vec![
                Span::styled(head, label_style),
                Span::styled(piece, value_style),
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_at_separators_and_keeps_everything() {
        let fp = "99:D4:30:F8:5F:C5:44:15:D5:77:E4:AF";
        let pieces = wrap(fp, 16);
        assert!(pieces.iter().all(|p| p.chars().count() <= 16), "{pieces:?}");
        assert_eq!(pieces.concat(), fp);
        assert!(pieces[0].ends_with(':'), "{pieces:?}");
        assert_eq!(wrap("short", 10), vec!["short"]);
        assert_eq!(wrap("", 10), vec![""]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap("user 'a' in /x/y.yaml", 12),
            vec!["user 'a' in", "/x/y.yaml"]
        );
    }

    /// kubeadm's `kube-apiserver-etcd-client` in the trust tree's 80-column pane: the name
    /// breaks after a hyphen, not inside a word; a space still wins over a hyphen.
    #[test]
    fn a_long_word_breaks_after_a_hyphen() {
        assert_eq!(
            wrap("✓ CN=kube-apiserver-etcd-client", 24),
            vec!["✓ CN=kube-apiserver-", "etcd-client"]
        );
        assert_eq!(wrap("a-b cdefgh", 8), vec!["a-b", "cdefgh"]);
    }
}

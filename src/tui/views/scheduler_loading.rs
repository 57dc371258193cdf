//! View 5 while the cluster loads: each collection's list as it goes ("pods 48,000 / 150,000",
//! the total from the server's `remainingItemCount`), what a list recovered from, and the step
//! after the lists (compiling the snapshot), so a big cluster never shows only a spinner.

use ratatui::text::{Line, Span};

use super::connection::SPINNER;
use crate::client::cluster::ListProgress;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// 150000 → "150,000".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn row(what: &str, p: &ListProgress, theme: &Theme) -> Vec<Line<'static>> {
    let count = match p.total {
        Some(t) => format!("{} / {}", thousands(p.loaded), thousands(t)),
        None => thousands(p.loaded),
    };
    let (mark, style) = if p.done {
        ("✓", theme.ok)
    } else {
        ("…", theme.muted)
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("  {mark} {what:<11}"), style),
        Span::styled(count, style),
        Span::styled(format!("  ({} pages)", p.pages), theme.muted),
    ])];
    if let Some(n) = &p.note {
        lines.push(Line::styled(format!("    ↻ {n}"), theme.warn));
    }
    lines
}

/// The loading pane's lines.
pub fn lines(state: &AppState, theme: &Theme) -> Vec<Line<'static>> {
    let spin = SPINNER[state.spinner % SPINNER.len()];
    let progress = &state.sched.progress;
    let listed = !progress.is_empty() && progress.iter().all(|(_, p)| p.done);
    let head = if let (Some(_), Some(pod), true) = (
        &state.sched.live,
        &state.sched.focus_pod,
        progress.is_empty(),
    ) {
        format!("{spin} Placing {pod} on the watched cluster (no new list)…")
    } else if listed {
        format!("{spin} Listed; building the scheduler's snapshot…")
    } else {
        format!("{spin} Listing the cluster's nodes and pods…")
    };
    let mut out = vec![Line::styled(head, theme.muted)];
    for (what, p) in progress {
        out.extend(row(what, p, theme));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn counts_read_with_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(48_000), "48,000");
        assert_eq!(thousands(150_000), "150,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}

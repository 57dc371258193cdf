//! A status is never shown by colour alone: every one carries its symbol (✓ ! ✗) too.

use ratatui::style::Style;
use ratatui::text::Span;

use crate::pki::CheckStatus;
use crate::tui::theme::Theme;

pub fn symbol(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Ok => "✓",
        CheckStatus::Warn => "!",
        CheckStatus::Error => "✗",
    }
}

pub fn word(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Ok => "ok",
        CheckStatus::Warn => "warn",
        CheckStatus::Error => "error",
    }
}

pub fn style(theme: &Theme, status: CheckStatus) -> Style {
    match status {
        CheckStatus::Ok => theme.ok,
        CheckStatus::Warn => theme.warn,
        CheckStatus::Error => theme.error,
    }
}

/// The symbol in the status's style, e.g. a green `✓`.
pub fn badge(theme: &Theme, status: CheckStatus) -> Span<'static> {
    Span::styled(symbol(status), style(theme, status))
}

/// Symbol and text in the status's style, e.g. `✗ EXPIRED 3d ago`.
pub fn labelled(theme: &Theme, status: CheckStatus, text: impl Into<String>) -> Span<'static> {
    Span::styled(
        format!("{} {}", symbol(status), text.into()),
        style(theme, status),
    )
}

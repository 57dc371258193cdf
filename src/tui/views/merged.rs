//! The merged kubeconfig as `kubectl config view` prints it (secrets replaced): a side pane
//! of view 1 from 100 columns on, and the `m` overlay at any size.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

use super::{ellipsize, inner_width, pane};
use crate::kubeconfig::Kubeconfig;
use crate::tui::theme::Theme;

/// The merge as `kubectl config view` prints it: secrets replaced, sorted by name.
pub fn merged_yaml(kc: &Kubeconfig) -> String {
    let mut config = kc.to_config();
    let omit = |o: &mut Option<String>, word: &str| {
        if o.is_some() {
            *o = Some(word.to_string());
        }
    };
    for c in &mut config.clusters {
        omit(&mut c.cluster.certificate_authority_data, "DATA+OMITTED");
    }
    for u in &mut config.users {
        omit(&mut u.user.client_certificate_data, "DATA+OMITTED");
        omit(&mut u.user.client_key_data, "DATA+OMITTED");
        omit(&mut u.user.token, "REDACTED");
        omit(&mut u.user.password, "REDACTED");
        if let Some(p) = &mut u.user.auth_provider {
            p.config = None;
        }
    }
    serde_yaml::to_string(&config).unwrap_or_else(|e| format!("cannot print: {e}"))
}

/// The `m` overlay: the merged document over the whole view, scrolled with the arrows.
pub fn draw_merged_overlay(
    frame: &mut Frame,
    area: Rect,
    kc: &Kubeconfig,
    scroll: u16,
    theme: &Theme,
) {
    let text = merged_yaml(kc);
    let total = text.lines().count();
    let height = area.height.saturating_sub(2) as usize;
    let scroll = (scroll as usize).min(total.saturating_sub(height)) as u16;
    let lines: Vec<Line> = text.lines().map(|l| Line::raw(l.to_string())).collect();
    frame.render_widget(Clear, area);
    let title = "Merged kubeconfig (kubectl config view) — ↑↓ scroll, Esc closes";
    frame.render_widget(
        Paragraph::new(lines)
            .style(theme.text)
            .scroll((scroll, 0))
            .block(pane(
                ellipsize(title, inner_width(area).saturating_sub(2)),
                theme,
                true,
            )),
        area,
    );
}

pub fn draw_merged(frame: &mut Frame, area: Rect, kc: &Kubeconfig, theme: &Theme) {
    let width = inner_width(area);
    let lines: Vec<Line> = merged_yaml(kc)
        .lines()
        .map(|l| Line::raw(ellipsize(l, width)))
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            "Merged (kubectl config view; m: full size)",
            theme,
            false,
        )),
        area,
    );
}

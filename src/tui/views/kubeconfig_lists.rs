//! View 1's lists: the files in precedence order, the contexts (the cursor moves here), and
//! the clusters and users, each entry with the file it came from.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ellipsize, inner_width, pane, scroll_for};
use crate::kubeconfig::model::AuthInfo;
use crate::kubeconfig::{FileState, Kubeconfig};
use crate::pki::CheckStatus;
use crate::tui::embedded::EmbeddedFacts;
use crate::tui::filter;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::{field, status};

pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
}

/// The files pane's lines: each file in precedence order, then for the embedded cluster what
/// its kubeconfig is and how to use it with kubectl, and why it runs instead of the user's.
pub fn files_lines(
    kc: &Kubeconfig,
    embedded: Option<&EmbeddedFacts>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if let Some(e) = embedded {
        // The one file is kexplore's: what it is and how to use it, said once with its path.
        let wrapped = |text: &str, style| {
            field::wrap(text, width)
                .into_iter()
                .map(move |l| Line::styled(l, style))
        };
        let mut lines: Vec<Line> = wrapped(
            &format!(
                "kexplore wrote it and removes it when it exits. While it runs: {}",
                e.kubectl_line()
            ),
            theme.text,
        )
        .collect();
        if let Some(note) = &e.instead_of {
            lines.extend(wrapped(&format!("! {note}"), theme.warn));
        }
        return lines;
    }
    kc.files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (st, word) = match f.state {
                FileState::Loaded => (CheckStatus::Ok, "loaded "),
                FileState::Missing => (CheckStatus::Warn, "missing"),
            };
            let path = f.path.display().to_string();
            Line::from(vec![
                Span::styled(format!("{} ", i + 1), theme.muted),
                status::labelled(theme, st, word),
                Span::raw(" "),
                Span::raw(ellipsize(&path, width.saturating_sub(12))),
            ])
        })
        .collect()
}

pub fn draw_files(
    frame: &mut Frame,
    area: Rect,
    kc: &Kubeconfig,
    selection: &str,
    embedded: Option<&EmbeddedFacts>,
    theme: &Theme,
) {
    let width = inner_width(area);
    let lines = files_lines(kc, embedded, width, theme);
    // The embedded kubeconfig was not chosen by the user: no flag or variable to name.
    let title = match embedded {
        Some(_) => "Files: the embedded cluster's kubeconfig".to_string(),
        None => format!(
            "Files, in precedence order: {}",
            ellipsize(selection, width / 2)
        ),
    };
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, false)), area);
}

pub fn draw_contexts(
    frame: &mut Frame,
    area: Rect,
    state: &AppState,
    kc: &Kubeconfig,
    theme: &Theme,
) {
    let width = inner_width(area);
    let current = kc.current_context.as_ref().map(|c| c.value.as_str());
    let shown = state.active.as_ref().map(|a| a.name.as_str());
    let col = |f: &dyn Fn(&crate::kubeconfig::model::NamedContext) -> String, cap: usize| {
        kc.contexts
            .iter()
            .map(|c| f(&c.value).chars().count())
            .max()
            .unwrap_or(0)
            .min(cap)
    };
    let name_w = col(&|c| c.name.clone(), width / 2);
    let cluster_w = col(&|c| c.context.cluster.clone(), width / 4);
    let user_w = col(&|c| c.context.user.clone(), width / 4);
    let visible = filter::visible_contexts(state);
    let at = visible
        .iter()
        .position(|&i| i == state.context_cursor)
        .unwrap_or(0);
    let first = scroll_for(at, area.height.saturating_sub(2));
    let lines: Vec<Line> = visible
        .iter()
        .skip(first)
        .map(|&i| (i, &kc.contexts[i]))
        .map(|(i, c)| {
            let name = &c.value.name;
            let cur = if current == Some(name.as_str()) {
                "*"
            } else {
                " "
            };
            let on = if shown == Some(name.as_str()) {
                "●"
            } else {
                " "
            };
            let text = format!(
                "{cur}{on} {:<name_w$}  {:<cluster_w$}  {:<user_w$}  {}",
                ellipsize(name, name_w),
                ellipsize(&c.value.context.cluster, cluster_w),
                ellipsize(&c.value.context.user, user_w),
                file_name(&c.source)
            );
            let style = if i == state.context_cursor {
                theme.selection
            } else if shown == Some(name.as_str()) {
                theme.accent
            } else {
                theme.text
            };
            Line::styled(format!("{:<width$}", ellipsize(&text, width)), style)
        })
        .collect();
    let lines = match (lines.is_empty(), kc.contexts.is_empty()) {
        (false, _) => lines,
        (true, true) => vec![Line::styled("no contexts defined", theme.muted)],
        (true, false) => vec![Line::styled("no context matches the filter", theme.muted)],
    };
    // The filter goes first: a long title is cut at the end.
    let title = format!(
        "{}Contexts ({}): * current-context, ● shown, Enter switches",
        filter_note(state),
        count(visible.len(), kc.contexts.len()),
    );
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            ellipsize(&title, width.saturating_sub(2)),
            theme,
            true,
        )),
        area,
    );
}

/// `3`, or `1 of 3` while a filter hides some.
fn count(shown: usize, all: usize) -> String {
    if shown == all {
        all.to_string()
    } else {
        format!("{shown} of {all}")
    }
}

/// `/text · ` before a list's title while a filter is typed or kept.
pub fn filter_note(state: &AppState) -> String {
    let f = &state.list_filter.kubeconfig;
    if f.is_empty() && !state.typing {
        return String::new();
    }
    format!("/{f}{} · ", if state.typing { "▏" } else { "" })
}

/// Clusters or users: `rows` as (name, what, file); only those `keep` lets through (by name,
/// under the `/` filter) are drawn.
pub fn draw_entries<'a>(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    rows: impl Iterator<Item = (&'a str, String, &'a Path)>,
    wanted: &str,
    keep: &dyn Fn(&str) -> bool,
    theme: &Theme,
) {
    let width = inner_width(area);
    let all: Vec<_> = rows.collect();
    let total = all.len();
    let rows: Vec<_> = all.into_iter().filter(|r| keep(r.0)).collect();
    let name_w = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 3);
    let what_full = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let file_w = rows
        .iter()
        .map(|r| file_name(r.2).chars().count())
        .max()
        .unwrap_or(0);
    // The file is the least important column: it gives way before a server or an auth kind is
    // cut, and the title says it is hidden (view 1's contexts and the merged view still say it).
    let show_file = name_w + 4 + what_full + 2 + file_w <= width;
    let what_w = if show_file {
        what_full
    } else {
        what_full.min(width.saturating_sub(name_w + 4))
    };
    let mut lines: Vec<Line> = rows
        .iter()
        .map(|(name, what, source)| {
            let used = *name == wanted;
            let mark = if used { "→" } else { " " };
            let style = if used { theme.accent } else { theme.text };
            Line::from(vec![
                Span::styled(
                    format!("{mark} {:<name_w$}  ", ellipsize(name, name_w)),
                    style,
                ),
                Span::raw(format!("{:<what_w$}", ellipsize(what, what_w))),
                Span::styled(
                    if show_file {
                        format!("  {}", file_name(source))
                    } else {
                        String::new()
                    },
                    theme.muted,
                ),
            ])
        })
        .collect();
    if lines.is_empty() {
        let why = if total == 0 { "" } else { " match the filter" };
        lines.push(Line::styled(
            format!("no {}{why}", title.to_lowercase()),
            theme.muted,
        ));
    }
    let n = count(rows.len(), total);
    let hidden = if show_file || rows.is_empty() {
        ""
    } else {
        "; file hidden"
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            if area.width >= 60 {
                format!("{title} ({n}; → used by the context under the cursor{hidden})")
            } else if hidden.is_empty() {
                format!("{title} ({n}; → in use)")
            } else {
                // Narrow: what is missing matters more than the arrow's legend.
                format!("{title} ({n}{hidden})")
            },
            theme,
            false,
        )),
        area,
    );
}

/// How a kubeconfig user authenticates, read from the file (before resolving).
pub fn auth_kind(u: &AuthInfo) -> String {
    let set = |o: &Option<String>| o.as_ref().is_some_and(|s| !s.is_empty());
    if set(&u.client_certificate) || set(&u.client_certificate_data) {
        "client certificate".into()
    } else if set(&u.token) || set(&u.token_file) {
        "token".into()
    } else if let Some(exec) = &u.exec {
        format!("exec: {}", exec.command)
    } else if set(&u.username) {
        "basic".into()
    } else if let Some(p) = &u.auth_provider {
        format!("auth-provider: {}", p.name)
    } else {
        "none".into()
    }
}

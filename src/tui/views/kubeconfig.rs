//! View 1, Kubeconfig: the files in precedence order, the contexts (the cursor picks one,
//! Enter explores it), clusters and users each with the file it came from, the context under
//! the cursor in detail with how it resolved, and the merged result as kubectl shows it.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{ellipsize, inner_width, pane, scroll_for};
use crate::kubeconfig::model::AuthInfo;
use crate::kubeconfig::{FileState, Kubeconfig};
use crate::pki::CheckStatus;
use crate::tui::state::{AppState, Source};
use crate::tui::theme::Theme;
use crate::tui::widgets::status;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let (kubeconfig, selection) = match &state.source {
        Source::Loaded {
            kubeconfig,
            selection,
        } => (kubeconfig, selection),
        Source::NotFound { looked } => return draw_not_found(frame, area, looked, theme),
    };
    let Areas {
        files,
        contexts,
        clusters,
        users,
        details,
        merged,
    } = areas(area, kubeconfig);
    draw_files(frame, files, kubeconfig, selection, theme);
    draw_contexts(frame, contexts, state, kubeconfig, theme);
    let cursor = kubeconfig.contexts.get(state.context_cursor);
    let (want_cluster, want_user) = cursor.map_or(("", ""), |c| {
        (
            c.value.context.cluster.as_str(),
            c.value.context.user.as_str(),
        )
    });
    let cluster_rows = kubeconfig.clusters.iter().map(|c| {
        let server = c.value.cluster.server.clone().unwrap_or_default();
        (c.value.name.as_str(), server, &*c.source)
    });
    draw_entries(
        frame,
        clusters,
        "Clusters",
        cluster_rows,
        want_cluster,
        theme,
    );
    let user_rows = kubeconfig
        .users
        .iter()
        .map(|u| (u.value.name.as_str(), auth_kind(&u.value.user), &*u.source));
    draw_entries(frame, users, "Users", user_rows, want_user, theme);
    draw_details(frame, details, state, kubeconfig, theme);
    if let Some(merged) = merged {
        draw_merged(frame, merged, kubeconfig, theme);
    }
}

/// Where each pane goes; shared by drawing and by mouse clicks so they always agree.
struct Areas {
    files: Rect,
    contexts: Rect,
    clusters: Rect,
    users: Rect,
    details: Rect,
    merged: Option<Rect>,
}

fn areas(area: Rect, kubeconfig: &Kubeconfig) -> Areas {
    // The merged document is a bonus: below 100 columns the lists get the whole width.
    let (left, merged) = if area.width >= 100 {
        let [l, r] = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
            .areas(area);
        (l, Some(r))
    } else {
        (area, None)
    };
    // Each list as tall as its entries (plus borders), up to a cap; the details take the rest.
    // On short screens clusters and users share a row, so no list is cut off.
    let n = |len: usize, cap: usize| len.clamp(1, cap) as u16 + 2;
    let side_by_side = area.height < 32;
    let entries_height = if side_by_side {
        n(kubeconfig.clusters.len().max(kubeconfig.users.len()), 4)
    } else {
        n(kubeconfig.clusters.len(), 5)
    };
    let [files, contexts, entries, more_entries, details] = Layout::vertical([
        Constraint::Length(n(kubeconfig.files.len(), 4)),
        Constraint::Length(n(kubeconfig.contexts.len(), 8)),
        Constraint::Length(entries_height),
        Constraint::Length(if side_by_side {
            0
        } else {
            n(kubeconfig.users.len(), 5)
        }),
        Constraint::Min(4),
    ])
    .areas(left);
    let (clusters, users) = if side_by_side {
        let [c, u] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(entries);
        (c, u)
    } else {
        (entries, more_entries)
    };
    Areas {
        files,
        contexts,
        clusters,
        users,
        details,
        merged,
    }
}

/// The context drawn at column `x`, row `y` of the screen, when the view fills `area`.
pub fn context_at(area: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let kubeconfig = state.kubeconfig()?;
    let inner = areas(area, kubeconfig)
        .contexts
        .inner(ratatui::layout::Margin::new(1, 1));
    if !inner.contains(ratatui::layout::Position::new(x, y)) {
        return None;
    }
    let first = scroll_for(state.context_cursor, inner.height);
    let i = first + (y - inner.y) as usize;
    (i < kubeconfig.contexts.len()).then_some(i)
}

fn draw_not_found(frame: &mut Frame, area: Rect, looked: &str, theme: &Theme) {
    let lines = vec![
        Line::from(status::labelled(
            theme,
            CheckStatus::Warn,
            "No kubeconfig found.",
        )),
        Line::raw(""),
        Line::from(vec![
            Span::styled("Looked at: ", theme.label),
            Span::raw(looked.to_string()),
        ]),
        Line::styled(
            "kubectl's order: --kubeconfig, else $KUBECONFIG (a ':'-separated list), else ~/.kube/config.",
            theme.muted,
        ),
        Line::raw(""),
        Line::raw("Point kexplore at one with --kubeconfig PATH or KUBECONFIG=PATH."),
        Line::styled(
            "Starting the embedded cluster when none is found arrives with the embedded-server issue.",
            theme.muted,
        ),
    ];
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(pane("Kubeconfig", theme, false)),
        area,
    );
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
}

fn draw_files(frame: &mut Frame, area: Rect, kc: &Kubeconfig, selection: &str, theme: &Theme) {
    let width = inner_width(area);
    let lines: Vec<Line> = kc
        .files
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
        .collect();
    let title = format!(
        "Files, in precedence order: {}",
        ellipsize(selection, width / 2)
    );
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, false)), area);
}

fn draw_contexts(frame: &mut Frame, area: Rect, state: &AppState, kc: &Kubeconfig, theme: &Theme) {
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
    let first = scroll_for(state.context_cursor, area.height.saturating_sub(2));
    let lines: Vec<Line> = kc
        .contexts
        .iter()
        .enumerate()
        .skip(first)
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
    let lines = if lines.is_empty() {
        vec![Line::styled("no contexts defined", theme.muted)]
    } else {
        lines
    };
    let title = format!(
        "Contexts ({}): * current-context, ● shown, Enter switches",
        kc.contexts.len()
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

fn draw_entries<'a>(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    rows: impl Iterator<Item = (&'a str, String, &'a Path)>,
    wanted: &str,
    theme: &Theme,
) {
    let width = inner_width(area);
    let rows: Vec<_> = rows.collect();
    let name_w = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 3);
    let what_w = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .min(width.saturating_sub(name_w + 16));
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
                Span::styled(format!("  {}", file_name(source)), theme.muted),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            format!("no {}", title.to_lowercase()),
            theme.muted,
        ));
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            if area.width >= 60 {
                format!(
                    "{title} ({}; → used by the context under the cursor)",
                    rows.len()
                )
            } else {
                format!("{title} ({}; → in use)", rows.len())
            },
            theme,
            false,
        )),
        area,
    );
}

/// How a kubeconfig user authenticates, read from the file (before resolving).
fn auth_kind(u: &AuthInfo) -> String {
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

fn field(label: &str, value: impl Into<String>, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<10}"), theme.label),
        Span::raw(value.into()),
    ])
}

fn draw_details(frame: &mut Frame, area: Rect, state: &AppState, kc: &Kubeconfig, theme: &Theme) {
    let Some(ctx) = kc.contexts.get(state.context_cursor) else {
        let msg = match &state.active {
            Some(a) => a.resolved.clone().err().unwrap_or_default(),
            None => String::new(),
        };
        let lines = vec![Line::from(status::labelled(theme, CheckStatus::Error, msg))];
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(pane("Context", theme, false)),
            area,
        );
        return;
    };
    let c = &ctx.value.context;
    let mut lines = Vec::new();
    let active = state.active.as_ref().filter(|a| a.name == ctx.value.name);
    let mut resolved_facts = None;
    if state.pending.as_deref() == Some(ctx.value.name.as_str()) {
        lines.push(Line::styled("resolving and inspecting…", theme.muted));
    } else {
        match active.map(|a| &a.resolved) {
            Some(Ok(facts)) => {
                lines.push(Line::from(status::labelled(
                    theme,
                    CheckStatus::Ok,
                    format!(
                        "resolves; auth {}; view 2 shows its certificates",
                        facts.auth
                    ),
                )));
                resolved_facts = Some(facts);
            }
            Some(Err(e)) => lines.push(Line::from(status::labelled(
                theme,
                CheckStatus::Error,
                e.clone(),
            ))),
            None => lines.push(Line::styled("Enter: explore this context", theme.muted)),
        }
    }
    lines.extend([
        field("from", file_name(&ctx.source), theme),
        field("cluster", c.cluster.clone(), theme),
        field("user", c.user.clone(), theme),
        field(
            "namespace",
            c.namespace.clone().unwrap_or_else(|| "default".into()),
            theme,
        ),
    ]);
    if let Some(cl) = kc.cluster(&c.cluster) {
        lines.push(field(
            "server",
            cl.value.cluster.server.clone().unwrap_or_default(),
            theme,
        ));
    }
    if let Some(facts) = resolved_facts {
        if let Some(o) = &facts.ca_origin {
            lines.push(field("trusts", format!("CA from {o}"), theme));
        }
        if let Some(o) = &facts.cert_origin {
            lines.push(field("presents", format!("certificate from {o}"), theme));
        }
        for w in &facts.warnings {
            lines.push(Line::from(status::labelled(
                theme,
                CheckStatus::Warn,
                w.clone(),
            )));
        }
    }
    let title = format!("Context {}", ctx.value.name);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(Style::default())
            .block(pane(
                ellipsize(&title, inner_width(area).saturating_sub(2)),
                theme,
                false,
            )),
        area,
    );
}

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
    frame.render_widget(ratatui::widgets::Clear, area);
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

fn draw_merged(frame: &mut Frame, area: Rect, kc: &Kubeconfig, theme: &Theme) {
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

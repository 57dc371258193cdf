//! View 1, Kubeconfig: the files in precedence order, the contexts (the cursor picks one,
//! Enter explores it), clusters and users each with the file it came from, the context under
//! the cursor in detail with how it resolved, and the merged result as kubectl shows it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::kubeconfig_lists::{
    auth_kind, draw_contexts, draw_entries, draw_files, file_name, files_lines,
};
use super::merged::draw_merged;
use super::{ellipsize, inner_width, pane, scroll_for};
use crate::kubeconfig::Kubeconfig;
use crate::pki::CheckStatus;
use crate::tui::filter;
use crate::tui::state::{AppState, Source};
use crate::tui::theme::Theme;
use crate::tui::widgets::{self, status};

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
    } = areas(area, state, kubeconfig);
    let embedded = state.embedded.as_ref();
    draw_files(frame, files, kubeconfig, selection, embedded, theme);
    draw_contexts(frame, contexts, state, kubeconfig, theme);
    let cursor = kubeconfig.contexts.get(state.context_cursor);
    let (want_cluster, want_user) = cursor.map_or(("", ""), |c| {
        (
            c.value.context.cluster.as_str(),
            c.value.context.user.as_str(),
        )
    });
    // Under the `/` filter: the clusters and users whose names match, and those the matching
    // contexts use.
    let needle = &state.list_filter.kubeconfig;
    let shown: Vec<&crate::kubeconfig::model::NamedContext> = filter::visible_contexts(state)
        .into_iter()
        .map(|i| &kubeconfig.contexts[i].value)
        .collect();
    let keep_cluster = |name: &str| {
        filter::matches(needle, [name]) || shown.iter().any(|c| c.context.cluster == name)
    };
    let keep_user = |name: &str| {
        filter::matches(needle, [name]) || shown.iter().any(|c| c.context.user == name)
    };
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
        &keep_cluster,
        theme,
    );
    let user_rows = kubeconfig
        .users
        .iter()
        .map(|u| (u.value.name.as_str(), auth_kind(&u.value.user), &*u.source));
    draw_entries(
        frame, users, "Users", user_rows, want_user, &keep_user, theme,
    );
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

fn areas(area: Rect, state: &AppState, kubeconfig: &Kubeconfig) -> Areas {
    // The merged document is a bonus: below 100 columns the lists get the whole width.
    let (left, merged) = if area.width >= 100 {
        let [l, r] = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
            .areas(area);
        (l, Some(r))
    } else {
        (area, None)
    };
    // The embedded cluster's notes are read whole: the files pane grows to hold them. Line
    // counts do not depend on styles, so any theme measures them.
    let file_rows = files_lines(
        kubeconfig,
        state.embedded.as_ref(),
        inner_width(left),
        &Theme::default(),
    )
    .len();
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
        Constraint::Length(n(
            file_rows,
            if state.embedded.is_some() {
                file_rows
            } else {
                4
            },
        )),
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
    let inner = areas(area, state, kubeconfig)
        .contexts
        .inner(ratatui::layout::Margin::new(1, 1));
    if !inner.contains(ratatui::layout::Position::new(x, y)) {
        return None;
    }
    let visible = filter::visible_contexts(state);
    let at = visible
        .iter()
        .position(|&i| i == state.context_cursor)
        .unwrap_or(0);
    let first = scroll_for(at, inner.height);
    visible.get(first + (y - inner.y) as usize).copied()
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
            "kexplore --embedded explores a cluster of its own instead.",
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

/// A resolved context's verdict: the worst check's mark and words (a context that resolves
/// may still be refused by the server), then how it resolved and where view 2 opens.
fn verdict(
    facts: &crate::tui::state::ContextFacts,
    report: Option<&Result<crate::pki::CredentialReport, String>>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let auth = &facts.auth;
    let r = match report {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            return vec![Line::from(status::labelled(
                theme,
                CheckStatus::Error,
                format!("resolves, but its credentials cannot be inspected: {e}"),
            ))];
        }
        None => {
            return vec![Line::from(status::labelled(
                theme,
                CheckStatus::Warn,
                format!("resolves; auth {auth}; its credentials are not inspected yet"),
            ))];
        }
    };
    let Some(worst) = r.worst_check() else {
        return vec![Line::from(status::labelled(
            theme,
            CheckStatus::Ok,
            format!("resolves; auth {auth}; every check passes; view 2 shows its certificates"),
        ))];
    };
    let count = |st| r.checks.iter().filter(|c| c.status == st).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut counts = vec![];
    for (st, word) in [
        (CheckStatus::Error, "error"),
        (CheckStatus::Warn, "warning"),
    ] {
        if count(st) > 0 {
            counts.push(plural(count(st), word));
        }
    }
    let opens = if worst.certificate.is_some() {
        "view 2 opens on the certificate this is about"
    } else {
        "view 2 lists every check"
    };
    vec![
        Line::from(status::labelled(theme, worst.status, worst.message.clone())),
        Line::styled(
            format!("resolves; auth {auth}; {}; {opens}", counts.join(", ")),
            theme.muted,
        ),
    ]
}

/// A labelled value; long values (paths) wrap under the value column.
fn field(label: &str, value: impl AsRef<str>, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    widgets::field::lines(label, 10, value.as_ref(), width, theme.label, theme.text)
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
                let report = active.and_then(|a| a.report.as_ref());
                lines.extend(verdict(facts, report, theme));
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
    let width = inner_width(area);
    lines.extend(field("from", file_name(&ctx.source), width, theme));
    lines.extend(field("cluster", &c.cluster, width, theme));
    lines.extend(field("user", &c.user, width, theme));
    let namespace = c.namespace.as_deref().unwrap_or("default");
    lines.extend(field("namespace", namespace, width, theme));
    if let Some(cl) = kc.cluster(&c.cluster) {
        let server = cl.value.cluster.server.as_deref().unwrap_or_default();
        lines.extend(field("server", server, width, theme));
    }
    if let Some(facts) = resolved_facts {
        if let Some(o) = &facts.ca_origin {
            lines.extend(field("trusts", format!("CA from {o}"), width, theme));
        }
        if let Some(o) = &facts.cert_origin {
            lines.extend(field(
                "presents",
                format!("certificate from {o}"),
                width,
                theme,
            ));
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

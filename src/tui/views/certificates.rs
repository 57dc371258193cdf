//! View 2, Certificates: the chain-of-trust tree on the left (✓/✗ per issuance link, which
//! bundle each certificate came from), the selected certificate's fields on the right, and
//! the checks below — each with its symbol as well as its colour. When there is nothing to
//! show (no kubeconfig, the context does not resolve, inspection failed) it says why.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Margin, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{cert_fields, ellipsize, inner_width, pane, scroll_for};
use crate::pki::{CheckStatus, CredentialReport};
use crate::tui::filter;
use crate::tui::state::{AppState, Source};
use crate::tui::theme::Theme;
use crate::tui::trust_tree::{self, Link, TreeRow};
use crate::tui::widgets::{expiry, field, status};

pub const TREE_TITLE: &str = "Chain of trust";

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState, theme: &Theme) {
    let etcd = state.chain == crate::tui::etcd_chain::Chain::Etcd;
    let problem = match (&state.source, state.chain_context()) {
        (Source::NotFound { .. }, _) if !etcd => Some((
            CheckStatus::Warn,
            "No kubeconfig found, so there are no certificates to show (see view 1).".to_string(),
        )),
        (_, None) => Some((
            CheckStatus::Warn,
            "No context selected (see view 1).".into(),
        )),
        (_, Some(a)) => match (&a.resolved, &a.report) {
            (Err(e), _) => Some((
                CheckStatus::Error,
                format!("Context '{}' does not resolve: {e}", a.name),
            )),
            (Ok(_), Some(Err(e))) => Some((
                CheckStatus::Error,
                format!(
                    "Cannot inspect the credentials of context '{}': {e}",
                    a.name
                ),
            )),
            (Ok(_), None) => Some((CheckStatus::Warn, "Not inspected yet.".into())),
            (Ok(_), Some(Ok(_))) => None,
        },
    };
    if let Some((st, msg)) = problem {
        let lines = vec![Line::from(status::labelled(theme, st, msg))];
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(pane(TREE_TITLE, theme, false)),
            area,
        );
        return;
    }
    let Some(report) = state.chain_context().and_then(|a| a.report()) else {
        return;
    };
    draw_report(frame, area, report, state, theme);
}

/// The tree, fields and checks panes; shared by drawing and by mouse clicks.
fn report_areas(area: Rect, report: &CredentialReport) -> (Rect, Rect, Rect) {
    // As tall as the wrapped checks need, up to 40% of the view. Line counts do not depend
    // on styles, so any theme measures them.
    let cap = (area.height * 2 / 5).max(3) as usize;
    let width = area.width.saturating_sub(2) as usize;
    let measure = Theme::default();
    let wanted = check_lines(report, width, cap.saturating_sub(2).max(1), &measure).len();
    let checks_height = wanted.max(1) as u16 + 2;
    let [top, checks] =
        Layout::vertical([Constraint::Min(5), Constraint::Length(checks_height)]).areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(top);
    (left, right, checks)
}

pub fn draw_report(
    frame: &mut Frame,
    area: Rect,
    report: &CredentialReport,
    state: &AppState,
    theme: &Theme,
) {
    let (left, right, checks) = report_areas(area, report);
    let rows = trust_tree::build(report);
    let cursor = state.cert_cursor.min(rows.len().saturating_sub(1));
    let visible = filter::visible_certs(state);
    let tree = Tree {
        chain_line: chain_line(state),
        rows: &rows,
        visible: &visible,
        cursor,
        filter: &state.list_filter.certs,
        typing: state.typing,
    };
    draw_tree(frame, left, report, &tree, state.now_unix, theme);
    let row = rows.get(cursor);
    let scroll = state.fields_scroll;
    draw_fields(frame, right, report, row, state.now_unix, scroll, theme);
    draw_checks(frame, checks, report, theme);
}

/// With `--etcd`, the tree's first line says which of the chains it is and how to switch.
fn chain_line(state: &AppState) -> Option<String> {
    state.etcd.as_ref()?;
    Some(match state.chain {
        crate::tui::etcd_chain::Chain::Etcd => {
            "API server → etcd: its etcd client certificate (E: the kubeconfig's chain)".into()
        }
        crate::tui::etcd_chain::Chain::Client => {
            "client ↔ API server (E: the API server's chain to etcd)".into()
        }
    })
}

/// The first tree row drawn: rows take two to five lines (a long name wraps), so keep the
/// cursor's row in view in the worst case.
fn first_row(cursor: usize, tree_area: Rect) -> usize {
    scroll_for(cursor, (tree_area.height.saturating_sub(2) / 5).max(1))
}

/// The tree row drawn at column `x`, row `y` of the screen, when the view fills `area`.
pub fn cert_at(area: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let report = state.chain_context()?.report()?;
    let (left, _, _) = report_areas(area, report);
    let inner = left.inner(Margin::new(1, 1));
    if !inner.contains(Position::new(x, y)) {
        return None;
    }
    let rows = trust_tree::build(report);
    let cursor = state.cert_cursor.min(rows.len().saturating_sub(1));
    let visible = filter::visible_certs(state);
    let at = visible.iter().position(|&i| i == cursor).unwrap_or(0);
    let measure = Theme::default();
    let width = inner.width as usize;
    let mut top = inner.y as usize + chain_line(state).map_or(0, |c| field::wrap(&c, width).len());
    for &i in visible.iter().skip(first_row(at, left)) {
        top += row_lines(report, &rows[i], false, width, state.now_unix, &measure).len();
        if (y as usize) < top {
            return Some(i);
        }
    }
    None
}

fn link_span(link: Link, theme: &Theme) -> Span<'static> {
    match link {
        Link::SelfSigned { verified: true } | Link::Issued { verified: true } => {
            status::badge(theme, CheckStatus::Ok)
        }
        Link::SelfSigned { verified: false } | Link::Issued { verified: false } => {
            status::badge(theme, CheckStatus::Error)
        }
        Link::IssuerNotPresent => status::badge(theme, CheckStatus::Warn),
    }
}

fn link_note(link: Link) -> &'static str {
    match link {
        Link::SelfSigned { verified: true } => "self-signed root",
        Link::SelfSigned { verified: false } => "self-signature does not verify",
        Link::Issued { verified: true } => "",
        Link::Issued { verified: false } => "signature does not verify",
        Link::IssuerNotPresent => "issuer not in the kubeconfig",
    }
}

/// The tree as drawn: every row, those the `/` filter lets through, the cursor's row.
struct Tree<'a> {
    /// Which chain this is, when the API server's chain to etcd is there to switch to.
    chain_line: Option<String>,
    rows: &'a [TreeRow],
    visible: &'a [usize],
    cursor: usize,
    filter: &'a str,
    typing: bool,
}

fn draw_tree(
    frame: &mut Frame,
    area: Rect,
    report: &CredentialReport,
    tree: &Tree,
    now: i64,
    theme: &Theme,
) {
    let width = inner_width(area);
    let at = tree
        .visible
        .iter()
        .position(|&i| i == tree.cursor)
        .unwrap_or(0);
    let mut lines: Vec<Line> = tree
        .visible
        .iter()
        .skip(first_row(at, area))
        .flat_map(|&i| row_lines(report, &tree.rows[i], i == tree.cursor, width, now, theme))
        .collect();
    if let Some(c) = &tree.chain_line {
        for (n, l) in field::wrap(c, width).into_iter().enumerate() {
            lines.insert(n, Line::styled(l, theme.key_hint));
        }
    }
    // The legend shortens before the title is cut (the rows say what a ✗ means).
    let mut title = [
        format!("{TREE_TITLE} — ✓ signature verified, ✗ not"),
        format!("{TREE_TITLE} (✓ verified)"),
    ]
    .into_iter()
    .find(|t| t.chars().count() <= width.saturating_sub(2))
    .unwrap_or_else(|| TREE_TITLE.to_string());
    if !tree.filter.is_empty() || tree.typing {
        if tree.visible.is_empty() {
            lines.push(Line::styled(
                "no certificate matches the filter (Esc clears)",
                theme.muted,
            ));
        }
        // The filter goes first: a long title is cut at the end.
        title = format!(
            "/{}{} · {} of {} — ✓ verified, ✗ not",
            tree.filter,
            if tree.typing { "▏" } else { "" },
            tree.visible.len(),
            tree.rows.len()
        );
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane(
            ellipsize(&title, width.saturating_sub(2)),
            theme,
            true,
        )),
        area,
    );
}

/// One certificate in the tree: its name with the link symbol, the bundle it came from, and
/// notes on a broken link or a validity problem.
fn row_lines(
    report: &CredentialReport,
    r: &TreeRow,
    selected: bool,
    width: usize,
    now: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let Some(cert) = trust_tree::cert(report, &r.fingerprint) else {
        return Vec::new();
    };
    let name = cert
        .extra
        .common_name
        .clone()
        .map_or_else(|| cert.subject.clone(), |cn| format!("CN={cn}"));
    let name_style = if selected {
        theme.selection
    } else {
        theme.text
    };
    let prefix_w = r.prefix.chars().count() + 2;
    let indent: String = r.prefix.replace("└─ ", "   ").replace("├─ ", "│  ");
    // A name is never cut: it goes on under itself.
    let mut pieces = field::wrap(&name, width.saturating_sub(prefix_w).max(1)).into_iter();
    let mut lines = vec![Line::from(vec![
        Span::styled(r.prefix.clone(), theme.muted),
        link_span(r.link, theme),
        Span::raw(" "),
        Span::styled(pieces.next().unwrap_or_default(), name_style),
    ])];
    lines.extend(pieces.map(|p| {
        Line::from(vec![
            Span::raw(format!("{indent}  ")),
            Span::styled(p, name_style),
        ])
    }));
    let bundles: Vec<&str> = r.bundles.iter().map(|b| b.label_for(cert.is_ca)).collect();
    lines.push(Line::styled(
        ellipsize(&format!("{indent}  {}", bundles.join(" + ")), width),
        theme.muted,
    ));
    let note = link_note(r.link);
    if !note.is_empty() {
        lines.push(Line::styled(
            ellipsize(&format!("{indent}  {note}"), width),
            theme.muted,
        ));
    }
    // Validity problems show in the tree too: an expired link breaks the chain.
    let (st, words) = expiry::countdown(cert.extra.not_before_unix, cert.extra.not_after_unix, now);
    if st != CheckStatus::Ok {
        lines.push(Line::from(vec![
            Span::raw(format!("{indent}  ")),
            status::labelled(
                theme,
                st,
                ellipsize(&words, width.saturating_sub(indent.chars().count() + 4)),
            ),
        ]));
    }
    lines
}

fn draw_fields(
    frame: &mut Frame,
    area: Rect,
    report: &CredentialReport,
    row: Option<&TreeRow>,
    now: i64,
    scroll: u16,
    theme: &Theme,
) {
    let cert = row.and_then(|r| trust_tree::cert(report, &r.fingerprint).map(|c| (r, c)));
    let (title, lines) = match cert {
        Some((r, c)) => (
            c.extra
                .common_name
                .clone()
                .unwrap_or_else(|| c.subject.clone()),
            cert_fields::lines(report, c, r, now, inner_width(area), theme),
        ),
        None => (
            "Certificate".to_string(),
            vec![Line::styled(
                "This context has no certificates (it trusts the system roots and sends none).",
                theme.muted,
            )],
        ),
    };
    // Never scroll past the end: clamp against the (approximate) wrapped height.
    let inner = inner_width(area).max(1);
    let total: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let inner_height = area.height.saturating_sub(2) as usize;
    let scroll = (scroll as usize).min(total.saturating_sub(inner_height)) as u16;
    let title = if total > inner_height {
        format!("{title} — PgUp/PgDn scroll")
    } else {
        title
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(pane(
                ellipsize(&title, inner.saturating_sub(2)),
                theme,
                false,
            )),
        area,
    );
}

/// The checks, worst first, messages wrapped; when they do not fit in `height` rows the
/// passing ones fold into one line so a warning or an error is never pushed out of sight.
pub fn check_lines(
    report: &CredentialReport,
    width: usize,
    height: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut checks: Vec<_> = report.checks.iter().collect();
    checks.sort_by_key(|c| std::cmp::Reverse(c.status));
    let render = |c: &crate::pki::Check| {
        let text_style = match c.status {
            CheckStatus::Ok => theme.text,
            _ => status::style(theme, c.status),
        };
        field::lines(
            &format!("{} ", status::symbol(c.status)),
            2,
            &format!("{}  [{}]", c.message, c.id),
            width,
            status::style(theme, c.status),
            text_style,
        )
    };
    let all: Vec<Line<'static>> = checks.iter().flat_map(|c| render(c)).collect();
    if all.len() <= height {
        return all;
    }
    let mut lines: Vec<Line<'static>> = checks
        .iter()
        .filter(|c| c.status != CheckStatus::Ok)
        .flat_map(|c| render(c))
        .collect();
    // Passing checks fill what room is left; the rest fold into the last line.
    let ok: Vec<_> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Ok)
        .collect();
    let mut shown = 0;
    for c in &ok {
        let more = render(c);
        if lines.len() + more.len() + 1 > height {
            break;
        }
        lines.extend(more);
        shown += 1;
    }
    let rest: Vec<&str> = ok[shown..].iter().map(|c| c.id.as_str()).collect();
    if !rest.is_empty() {
        let text = format!("{} more checks ok: {}", rest.len(), rest.join(", "));
        lines.push(Line::from(vec![
            status::badge(theme, CheckStatus::Ok),
            Span::raw(" "),
            Span::styled(ellipsize(&text, width.saturating_sub(2)), theme.muted),
        ]));
    }
    lines
}

fn draw_checks(frame: &mut Frame, area: Rect, report: &CredentialReport, theme: &Theme) {
    let height = area.height.saturating_sub(2) as usize;
    let mut lines = check_lines(report, inner_width(area), height, theme);
    if lines.is_empty() {
        lines.push(Line::styled("no checks ran", theme.muted));
    }
    let worst = report.worst();
    let title = format!(
        "Checks ({}) — worst: {} {}",
        report.checks.len(),
        status::symbol(worst),
        status::word(worst)
    );
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, false)), area);
}

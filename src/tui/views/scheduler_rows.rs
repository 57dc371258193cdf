//! View 5's node rows: capacity bars (requested before █, the pod's share ▒, free ░), each
//! filter step's verdict (✓, ✗ with upstream's reason, – greyed when ruled out earlier), and
//! at score steps raw → normalized × weight with the running total as a stacked bar. Only the
//! rows in the window around the cursor are built, whatever the node count.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ellipsize, inner_width, pane};
use crate::tui::sched::model::{Model, cpu_text, memory_text};
use crate::tui::sched::steps::{self, NodeState, Step};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

/// The first row shown so the cursor stays on screen.
pub fn first_row(cursor: usize, height: u16) -> usize {
    let h = height.max(1) as usize;
    cursor.saturating_sub(h - 1)
}

/// `used` then `add` of `total` as a bar `width` wide; over capacity ends in `!`.
fn capacity_bar(
    used: i64,
    add: i64,
    total: i64,
    width: usize,
    theme: &Theme,
) -> Vec<Span<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let total = total.max(1);
    let cells =
        |v: i64| ((v.max(0) as i128 * width as i128 + total as i128 - 1) / total as i128) as usize;
    let u = cells(used).min(width);
    let over = used + add > total;
    let a = if over {
        width - u
    } else {
        cells(used + add).min(width) - u
    };
    let f = width - u - a;
    let mut out = vec![
        Span::styled("█".repeat(u), theme.bar_used),
        Span::styled("▒".repeat(a), theme.bar_pod),
        Span::styled("░".repeat(f), theme.bar_free),
    ];
    if over {
        out.push(Span::styled("!", theme.error));
    } else {
        out.push(Span::raw(" "));
    }
    out
}

/// Plugin `j`'s running total for score index `si`, as segments alternating per plugin.
fn score_bar(m: &Model, si: usize, j: usize, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let plugins = &m.trace.score[si].plugins;
    let max: i64 = plugins.iter().map(|p| p.weight * 100).sum::<i64>().max(1);
    let mut out = Vec::new();
    let mut acc = 0i64;
    let mut drawn = 0usize;
    for (i, p) in plugins.iter().enumerate().take(j + 1) {
        acc += p.weighted;
        let upto = ((acc.max(0) as i128 * width as i128) / max as i128) as usize;
        let n = upto.saturating_sub(drawn);
        drawn += n;
        let (glyph, style) = if i % 2 == 0 {
            ("█", theme.score_a)
        } else {
            ("▓", theme.score_b)
        };
        out.push(Span::styled(glyph.repeat(n), style));
    }
    out.push(Span::raw(" ".repeat(width.saturating_sub(drawn))));
    out
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    state: &AppState,
    m: &Model,
    step: &Step,
    theme: &Theme,
) {
    let s = &state.sched;
    let width = inner_width(area);
    let rows = area.height.saturating_sub(3) as usize;
    let first = first_row(s.cursor, rows as u16);
    let name_w = m
        .snapshot
        .nodes
        .iter()
        .take(200)
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(6, 18);
    let mut lines = vec![header(step, m, name_w, width, theme)];
    let (pc, pm) = m.pod_request();
    for (pos, &k) in s.order.iter().enumerate().skip(first).take(rows) {
        let node = &m.snapshot.nodes[k];
        let selected = pos == s.cursor;
        let winner =
            m.trace.selected.as_deref() == Some(node.name.as_str()) && matches!(step, Step::Result);
        let mut spans: Vec<Span> = Vec::new();
        let mark = if winner {
            "★"
        } else if selected {
            "▶"
        } else {
            " "
        };
        let mut name_style = if selected {
            theme.selection
        } else {
            theme.text
        };
        let rest = width.saturating_sub(name_w + 3);
        let body: Vec<Span> = match step {
            // Bars of a capacity the node never reported would draw a made-up 0.
            Step::Nodes | Step::Predict if node.allocatable_note().is_some() => {
                let note = node.allocatable_note().unwrap_or_default();
                let words = note.split_once(": ").map_or(note.as_str(), |(_, w)| w);
                vec![Span::styled(ellipsize(words, rest), theme.warn)]
            }
            Step::Nodes | Step::Predict => {
                // Two bars share what the numbers leave (about 46 columns).
                let bw = (rest.saturating_sub(46) / 2).clamp(4, 30);
                let mut v = vec![Span::styled("cpu ", theme.label)];
                v.extend(capacity_bar(
                    node.requested.milli_cpu,
                    pc,
                    node.allocatable.milli_cpu,
                    bw,
                    theme,
                ));
                v.push(Span::raw(format!(
                    "{:>9} ",
                    format!(
                        "{}/{}",
                        cpu_text(node.requested.milli_cpu + pc),
                        cpu_text(node.allocatable.milli_cpu)
                    )
                )));
                v.push(Span::styled("mem ", theme.label));
                v.extend(capacity_bar(
                    node.requested.memory,
                    pm,
                    node.allocatable.memory,
                    bw,
                    theme,
                ));
                v.push(Span::raw(format!(
                    "{:>12} ",
                    format!(
                        "{}/{}",
                        memory_text(node.requested.memory + pm),
                        memory_text(node.allocatable.memory)
                    )
                )));
                v.push(Span::styled(
                    format!("pods {}/{}", node.pods.len() + 1, node.allowed_pod_number),
                    theme.muted,
                ));
                v
            }
            Step::Filter(here) => {
                let upto = here.last().copied().unwrap_or(0);
                match steps::node_state(m, k, here, upto) {
                    NodeState::NotEvaluated => {
                        name_style = theme.greyed;
                        vec![Span::styled(
                            "· not evaluated (sampling found enough feasible nodes)",
                            theme.greyed,
                        )]
                    }
                    NodeState::Passing => vec![Span::styled("✓ passes", theme.ok)],
                    NodeState::FailsHere(p, reasons) => {
                        // Decided at PreFilter: Filter never ran here; say so with the code.
                        let how = m.verdict_of[k]
                            .map(|i| &m.trace.filter[i])
                            .filter(|v| v.pre_filter)
                            .map_or(String::new(), |v| {
                                format!(" ({}, at PreFilter)", v.code.as_str())
                            });
                        vec![Span::styled(
                            ellipsize(&format!("✗ {p}: {}{how}", reasons.join(", ")), rest),
                            theme.error,
                        )]
                    }
                    NodeState::Out(p) => {
                        name_style = theme.greyed;
                        vec![Span::styled(format!("– out at {p}"), theme.greyed)]
                    }
                }
            }
            Step::Score(j) => score_cells(m, k, *j, rest, theme, &mut name_style),
            Step::Result => {
                let last = steps::score_plugins(m).len();
                if shows_totals(m) {
                    total_cells(m, k, last - 1, rest, theme, &mut name_style)
                } else {
                    result_cells(m, k, rest, theme, &mut name_style)
                }
            }
        };
        if winner {
            name_style = theme.winner;
        }
        spans.push(Span::styled(format!("{mark} "), theme.accent));
        spans.push(Span::styled(
            format!("{:<name_w$} ", ellipsize(&node.name, name_w)),
            name_style,
        ));
        spans.extend(body);
        lines.push(Line::from(spans));
    }
    let mut title = format!("Nodes ({}) · sort: {} (o)", s.order.len(), s.sort.label());
    if !s.filter.is_empty() || state.typing {
        title.push_str(&format!(
            " · filter: {}{}",
            s.filter,
            if state.typing { "▏" } else { "" }
        ));
    }
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, true)), area);
}

/// Whether the result step's rows show each total with its breakdown (more than one node
/// was scored), so the result panel need not repeat them.
pub fn shows_totals(m: &Model) -> bool {
    !steps::score_plugins(m).is_empty() && m.trace.score.len() > 1
}

fn header(step: &Step, m: &Model, name_w: usize, width: usize, theme: &Theme) -> Line<'static> {
    let text = match step {
        Step::Score(j) => {
            let (name, w) = steps::score_plugins(m).get(*j).copied().unwrap_or(("?", 1));
            let columns = format!("raw → normalized × {w} = weighted   running total");
            let full = format!("  {:<name_w$} {name}: {columns}", "node");
            // The summary above names the plugin: a narrow table drops the name, not a column.
            if full.chars().count() <= width {
                full
            } else {
                format!("  {:<name_w$} {columns}", "node")
            }
        }
        Step::Result if shows_totals(m) => {
            format!("  {:<name_w$} total   all plugins, weighted", "node")
        }
        _ => format!("  {:<name_w$} ", "node"),
    };
    Line::styled(text, theme.label)
}

fn score_cells(
    m: &Model,
    k: usize,
    j: usize,
    rest: usize,
    theme: &Theme,
    name_style: &mut Style,
) -> Vec<Span<'static>> {
    let Some(si) = m.score_of[k] else {
        *name_style = theme.greyed;
        return vec![Span::styled("– not scored (filtered out)", theme.greyed)];
    };
    let Some(p) = m.trace.score[si].plugins.get(j) else {
        return Vec::new();
    };
    let total = steps::running_total(m, si, j);
    let nums = format!(
        "{:>4} → {:>3} × {} = {:>4}  ",
        p.raw, p.normalized, p.weight, p.weighted
    );
    let bw = rest.saturating_sub(nums.chars().count() + 7).min(40);
    let mut v = vec![Span::raw(nums)];
    v.extend(score_bar(m, si, j, bw, theme));
    v.push(Span::styled(format!(" {total:>5}"), theme.accent));
    v
}

/// The final total with every plugin's weighted share, for the result step.
fn total_cells(
    m: &Model,
    k: usize,
    last: usize,
    rest: usize,
    theme: &Theme,
    name_style: &mut Style,
) -> Vec<Span<'static>> {
    let Some(si) = m.score_of[k] else {
        *name_style = theme.greyed;
        return vec![Span::styled("– not scored (filtered out)", theme.greyed)];
    };
    let sc = &m.trace.score[si];
    let parts: Vec<String> = sc
        .plugins
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                crate::scheduler::plugins::short(p.name),
                p.weighted
            )
        })
        .collect();
    let parts = parts.join(" + ");
    // The breakdown is the row's reason to be; the bar gets what it leaves, or goes.
    let room = rest.saturating_sub(parts.chars().count() + 9);
    let bw = if room < 4 { 0 } else { room.min(40) };
    let mut v = vec![Span::styled(format!("{:>5}  ", sc.total), theme.accent)];
    v.extend(score_bar(m, si, last, bw, theme));
    v.push(Span::styled(
        format!(" {}", ellipsize(&parts, rest.saturating_sub(bw + 9))),
        theme.muted,
    ));
    v
}

fn result_cells(
    m: &Model,
    k: usize,
    rest: usize,
    theme: &Theme,
    name_style: &mut Style,
) -> Vec<Span<'static>> {
    match m.verdict_of[k].map(|i| &m.trace.filter[i]) {
        Some(v) if v.passed => vec![Span::styled("✓ feasible", theme.ok)],
        Some(v) => {
            *name_style = theme.greyed;
            let text = crate::tui::sched::formula::inverted(m, k, v.reasons());
            let text = text
                .split_once(": ")
                .map_or(text.clone(), |(_, r)| r.to_string());
            vec![Span::styled(
                ellipsize(&format!("✗ {}: {text}", v.plugin.unwrap_or("?")), rest),
                theme.error,
            )]
        }
        None => vec![Span::styled("· not evaluated", theme.greyed)],
    }
}

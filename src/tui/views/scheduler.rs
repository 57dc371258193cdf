//! View 5: one pod's scheduling cycle, step by step. On top the pod (with any what-if) and the
//! step's summary for all nodes at once (so 5,000 nodes still read as a few lines); below, the
//! nodes as rows; at the bottom the result, the FitError turned around per node, or (`f`) the
//! formula behind the score under the cursor. Only the rows on screen are drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{ellipsize, inner_width, pane};
use super::{scheduler_compare, scheduler_pods, scheduler_rows};
use crate::scheduler::plugins;
use crate::scheduler::release::Basis;
use crate::scheduler::why::BoundPod;
use crate::tui::sched::LiveState;
use crate::tui::sched::formula;
use crate::tui::sched::model::{Model, Resource, cpu_text, memory_text};
use crate::tui::sched::steps::{self, Step};
use crate::tui::sched::versus::{Versus, versus};
use crate::tui::sched::watch::Phase;
use crate::tui::state::AppState;
use crate::tui::stepped::predict;
use crate::tui::theme::Theme;
use crate::tui::widgets::{field, flow};

/// Rows under the node list for the result / formula panel.
const PANEL: u16 = 8;

/// Header, summary, list, panel.
fn areas(body: Rect, state: &AppState) -> [Rect; 4] {
    let step = state.sched.current(predict(state));
    let formula = state.sched.formula && !matches!(step, Some(Step::Result));
    // Header and summary wrap rather than cut: their rows are counted, not assumed. Row
    // counts do not depend on colours, so the default theme measures them.
    let (head, summary) = state.sched.model().map_or((3, 3), |m| {
        let all = state.sched.steps(predict(state));
        let idx = state.sched.step.min(all.len().saturating_sub(1));
        let step = all.get(idx).cloned().unwrap_or(Step::Nodes);
        let theme = Theme::default();
        (
            head_lines(state, m, body.width, &theme).len() as u16,
            summary_lines(
                m,
                state.sched.guess.as_deref(),
                &step,
                idx,
                all.len(),
                body.width,
                &theme,
            )
            .len() as u16,
        )
    });
    let panel = match step {
        // A formula gets the rows it needs, up to half the view.
        _ if formula => {
            let rows = state
                .sched
                .model()
                .and_then(|m| formula_text(state, m, step.as_ref()?))
                .map_or(0, |l| {
                    wrapped(&l, body.width.saturating_sub(2) as usize).len() as u16 + 2
                });
            // Up to half the view, or more on a short screen: what is left after the head, the
            // summary and the list's row under the cursor.
            let left = body.height.saturating_sub(head + summary + 3);
            rows.max(PANEL).min((body.height / 2).max(left))
        }
        // The result says what it has to and leaves the rest to the node list.
        Some(Step::Result) => {
            let theme = Theme::default();
            let rows = state.sched.model().map_or(1, |m| {
                result_lines(state, m, body.width.saturating_sub(2) as usize, &theme).len()
            }) as u16;
            // The node list keeps a row for every node (up to ten); the panel gets the rest.
            let list = state.sched.order.len().min(10) as u16 + 3;
            let left = body.height.saturating_sub(head + summary + list);
            (rows + 2).min(PANEL.min(body.height / 3).max(left)).max(3)
        }
        _ if state.sched.formula => PANEL.min(body.height / 3),
        _ => 0,
    };
    Layout::vertical([
        Constraint::Length(head),
        Constraint::Length(summary),
        Constraint::Min(3),
        Constraint::Length(panel),
    ])
    .areas(body)
}

/// What a click in view 5 landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// An index into the display order of the nodes.
    Node(usize),
    /// An index into the live cluster's pods list.
    Pod(usize),
}

/// What is at (x, y), for mouse clicks: a node row, or a pod row while the pods list is open.
pub fn hit(body: Rect, state: &AppState, x: u16, y: u16) -> Option<Hit> {
    // Nothing is clickable before a cluster was loaded.
    state.sched.model.as_ref()?;
    if state.sched.pods_open {
        let list = areas(body, state)[2];
        return scheduler_pods::pod_at(list, state, x, y).map(Hit::Pod);
    }
    if state.sched.compare {
        // The columns are no list to choose from.
        return None;
    }
    node_at(body, state, x, y).map(Hit::Node)
}

/// The index into the display order of the row at (x, y), for mouse clicks.
pub fn node_at(body: Rect, state: &AppState, x: u16, y: u16) -> Option<usize> {
    let list = areas(body, state)[2];
    let inner_top = list.y + 2;
    if x <= list.x || x >= list.x + list.width || y < inner_top || y >= list.y + list.height - 1 {
        return None;
    }
    let first = scheduler_rows::first_row(state.sched.cursor, list.height.saturating_sub(3));
    let i = first + (y - inner_top) as usize;
    (i < state.sched.order.len()).then_some(i)
}

pub fn draw(frame: &mut Frame, body: Rect, state: &AppState, theme: &Theme) {
    let s = &state.sched;
    let m = match &s.model {
        Some(Ok(m)) => m,
        Some(Err(e)) => {
            frame.render_widget(
                Paragraph::new(vec![
                    Line::styled(format!("✗ {e}"), theme.error),
                    Line::styled("r lists the cluster again", theme.muted),
                ])
                .wrap(Wrap { trim: true })
                .block(pane("5 Scheduler", theme, false)),
                body,
            );
            return;
        }
        None => {
            let text = if s.loading {
                super::scheduler_loading::lines(state, theme)
            } else {
                vec![Line::styled(
                    "Press r to list the cluster's nodes and pods.",
                    theme.muted,
                )]
            };
            frame.render_widget(
                Paragraph::new(text).block(pane("5 Scheduler", theme, false)),
                body,
            );
            return;
        }
    };
    let all = s.steps(predict(state));
    let idx = s.step.min(all.len().saturating_sub(1));
    let step = all.get(idx).cloned().unwrap_or(Step::Nodes);
    let [head, summary, list, panel] = areas(body, state);
    frame.render_widget(
        Paragraph::new(head_lines(state, m, head.width, theme)),
        head,
    );
    frame.render_widget(
        Paragraph::new(summary_lines(
            m,
            s.guess.as_deref(),
            &step,
            idx,
            all.len(),
            summary.width,
            theme,
        )),
        summary,
    );
    if s.pods_open && s.listing.is_some() {
        scheduler_pods::draw(frame, list, state, theme);
    } else if s.compare {
        scheduler_compare::draw(frame, list, m, theme);
    } else {
        scheduler_rows::draw(frame, list, state, m, &step, theme);
    }
    if panel.height > 0 {
        draw_panel(frame, panel, state, m, &step, theme);
    }
}

/// The pod with its what-if, the scheduler release and the cluster, and the live lines: each
/// wrapped to `width` so nothing is cut at 80 columns.
fn head_lines(state: &AppState, m: &Model, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let (cpu, mem) = m.pod_request();
    let w = &m.whatif;
    let mut whatif = Vec::new();
    let each = match m.containers() {
        n if n > 1 => format!(" on each of {n} containers"),
        _ => String::new(),
    };
    if w.cpu_milli != 0 {
        whatif.push(format!("cpu {:+}m{each}", w.cpu_milli));
    }
    if w.memory_bytes != 0 {
        whatif.push(format!(
            "memory {}{}{each}",
            if w.memory_bytes > 0 { "+" } else { "-" },
            memory_text(w.memory_bytes.abs())
        ));
    }
    if w.tolerate_all {
        whatif.push("tolerates every taint".into());
    }
    if let Some((k, v)) = w.selector.and_then(|i| m.labels.get(i)) {
        whatif.push(format!("nodeSelector {k}={v}"));
    }
    let which = match w.resource {
        Resource::Cpu => "cpu",
        Resource::Memory => "memory",
    };
    let mut line1 = vec![
        Span::styled(format!("pod {} ", m.trace.pod), theme.accent),
        Span::styled(
            format!(
                " requests cpu {} · memory {}",
                cpu_text(cpu),
                memory_text(mem)
            ),
            theme.text,
        ),
        if whatif.is_empty() {
            Span::styled(
                format!("   (+/- change {which}, c switches, t tolerations, s nodeSelector)"),
                theme.muted,
            )
        } else {
            Span::styled(format!("   what-if: {}", whatif.join(", ")), theme.warn)
        },
    ];
    // Against a server, the release and how it relates to the server's, in the words
    // `kexplore schedule` prints for the same cluster.
    let r = &m.data.release;
    let release = match (r.basis, &r.server) {
        (Basis::Asked | Basis::Default, None) => format!(
            "kube-scheduler {} (simulated; = kexplore schedule --kube-version {})",
            m.trace.kube_version,
            m.trace.kube_version.trim_start_matches('v'),
        ),
        _ => r.summary.clone(),
    };
    let line2 = vec![
        Span::styled(release, theme.muted),
        Span::styled(format!(" · {} nodes", m.snapshot.nodes.len()), theme.muted),
        Span::styled(format!(" · {}", m.data.source), theme.muted),
    ];
    let w = width as usize;
    if state.present {
        // The room needs the pod and what it asks for; the release, the source and the
        // watch's counters are the operator's (outside presenter mode), and rows are scarce.
        if whatif.is_empty() {
            line1.pop();
        }
        let mut lines = flow::rows(line1, w);
        lines.extend(refused_lines(state, w, theme));
        if let Some(e) = &m.error {
            lines.extend(flow::sentence(&format!("✗ {e}"), theme.error, w));
        } else if let Some(v) = shown_versus(state, m) {
            let style = if v.agrees { theme.ok } else { theme.warn };
            lines.extend(
                versus_rows(&v, width)
                    .into_iter()
                    .map(|r| Line::styled(r, style)),
            );
        }
        return lines;
    }
    // The key hint is optional: it shares the pod's row or gives way (the help lists the keys).
    let fits = line1.iter().map(|p| p.width()).sum::<usize>() < w;
    if whatif.is_empty() && !fits {
        line1.pop();
    }
    let mut lines = flow::rows(line1, w);
    lines.extend(refused_lines(state, w, theme));
    lines.extend(flow::rows(line2, w));
    if let Some(e) = &m.error {
        lines.extend(flow::sentence(&format!("✗ {e}"), theme.error, w));
    } else if let Some(l) = &state.sched.listing {
        lines.extend(live_lines(state, l, m, width, theme));
    } else if width >= 100 {
        // A spacer only on a wide terminal: a narrow one already spends rows on wrapping.
        lines.push(Line::raw(""));
    }
    if let Some(live) = &state.sched.live {
        lines.push(watch_line(state, live, width, theme));
    }
    lines
}

/// When view 5 places view 4's manifest (no pod of the cluster in focus) and the API server
/// refused that manifest, the head says so: the placement is of an object the cluster does not
/// hold, whatever the rest of the view shows.
fn refused_lines(state: &AppState, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    if state.sched.focus_pod.is_some() {
        return Vec::new();
    }
    let Some(r) = state.journey.refusal() else {
        return Vec::new();
    };
    let answer = format!("HTTP {} {}", r.code, r.reason);
    let (answer, kind) = (answer.trim_end(), &r.kind);
    let text = if r.dry_run {
        format!(
            "✗ the API server would refuse this {kind} (dry run, {answer}): what follows places the manifest as written (4 shows why)"
        )
    } else {
        format!(
            "✗ the API server refused this {kind} ({answer}): the cluster never stored this manifest; what follows places it as written (4 shows why)"
        )
    };
    flow::sentence(&text, theme.error, width)
}

/// The bound pod in focus, as the cluster placed it.
fn bound_pod(state: &AppState, m: &Model) -> Option<BoundPod> {
    let focus = state.sched.focus_pod.as_deref()?;
    if focus != m.trace.pod.as_str() {
        return None;
    }
    state.sched.listing.as_ref()?.bound(focus)
}

/// The bound pod's comparison, once the result step may show it (before, a room may still be
/// guessing which node wins).
fn shown_versus(state: &AppState, m: &Model) -> Option<Versus> {
    let bound = bound_pod(state, m)?;
    matches!(state.sched.current(predict(state)), Some(Step::Result)).then(|| versus(m, &bound))
}

/// The comparison's head line, wrapped to the view's width under a one-column margin.
fn versus_rows(v: &Versus, width: u16) -> Vec<String> {
    field::wrap(&v.head, (width as usize).saturating_sub(1))
        .into_iter()
        .map(|l| format!(" {l}"))
        .collect()
}

/// The head's third line on a live cluster: for a bound pod the cluster's choice beside the
/// simulation's (`sched::versus`; the result panel has the reasons), else what `w` offers,
/// else what RBAC hid.
fn live_lines(
    state: &AppState,
    l: &crate::tui::sched::live::Listing,
    m: &Model,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if let Some(v) = shown_versus(state, m) {
        let style = if v.agrees { theme.ok } else { theme.warn };
        return versus_rows(&v, width)
            .into_iter()
            .map(|r| Line::styled(r, style))
            .collect();
    }
    if let Some(bound) = bound_pod(state, m) {
        // In presenter mode the node would answer "which node wins?" before it is asked.
        let text = if state.present {
            "already scheduled by the cluster; the last step compares its node with the simulation"
                .to_string()
        } else {
            format!(
                "scheduled by the cluster to {}; the last step compares it with the simulation",
                bound.node
            )
        };
        return muted_rows(&text, width, theme);
    }
    if let Some(h) = l.hidden.first() {
        return vec![Line::styled(format!(" ! {h}"), theme.warn)];
    }
    // A finished pod is bound too; counted apart, so "bound" is not read as all of them.
    let text = match l.finished {
        0 => format!(
            "live cluster: {} Pending pod(s), {} bound — w lists them, Enter simulates one",
            l.pending(),
            l.pods.len() - l.pending()
        ),
        f => format!(
            "live cluster: {} Pending pod(s), {} bound, {f} finished — w lists all but the \
             finished, Enter simulates one",
            l.pending(),
            l.pods.len() - l.pending()
        ),
    };
    muted_rows(&text, width, theme)
}

/// `text` wrapped to the view's width under a one-column margin, muted.
fn muted_rows(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    field::wrap(text, (width as usize).saturating_sub(1))
        .into_iter()
        .map(|r| Line::styled(format!(" {r}"), theme.muted))
        .collect()
}

/// The head's last line while a watch keeps the cluster current. Where the counts of a big
/// cluster make it longer than the view is wide, the rebuilds' count goes first, then the
/// events': one row, never cut.
fn watch_line(state: &AppState, live: &LiveState, width: u16, theme: &Theme) -> Line<'static> {
    let st = &live.status;
    let (phase, style) = match &st.phase {
        Phase::Watching => ("watching".to_string(), theme.ok),
        Phase::Relisting => ("re-listing…".to_string(), theme.warn),
        Phase::Ended(e) => (format!("watch ended: {e}; retrying"), theme.warn),
        Phase::Forbidden(m) => (format!("not kept current: {m}"), theme.warn),
    };
    let last = match st.last_event_unix {
        Some(t) => format!("last event {}s ago", (state.now_unix - t).max(0)),
        None => "no event yet".to_string(),
    };
    let mut parts = vec![
        format!("{} nodes", st.nodes),
        format!("{} pods", st.pods),
        format!("{} events", st.events),
        format!("{} updates ({} ms)", live.applied, st.build_ms),
        last,
    ];
    let room = (width as usize).saturating_sub(" live · ".len() + phase.chars().count());
    let long = |parts: &[String]| parts.iter().map(|p| p.chars().count() + 3).sum::<usize>();
    for drop in [3, 2] {
        if long(&parts) > room {
            parts.remove(drop);
        }
    }
    Line::from(vec![
        Span::styled(" live · ", theme.muted),
        Span::styled(phase, style),
        Span::styled(format!(" · {}", parts.join(" · ")), theme.muted),
    ])
}

/// The step, its title and what it did to all nodes at once, wrapped to `width`.
fn summary_lines(
    m: &Model,
    guess: Option<&str>,
    step: &Step,
    idx: usize,
    count: usize,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let t = &m.trace;
    let n = m.snapshot.nodes.len();
    let pos = format!(" step {}/{count} ", idx + 1);
    let (title, detail): (String, Vec<String>) = match step {
        Step::Nodes => (
            "The nodes with the pod: requested before (█), its share (▒), free (░)".into(),
            vec![if m.pod_request() == (0, 0) {
                "the pod requests no cpu or memory: every node fits it (for scoring it counts as 100m / 200Mi)".into()
            } else if t.skipped_by_sampling.is_empty() {
                format!("{n} nodes; the scheduler checks them in this order")
            } else {
                format!(
                    "{n} nodes; sampling: the scheduler stops after {} feasible nodes ({} never evaluated)",
                    t.num_feasible_nodes_to_find,
                    t.skipped_by_sampling.len()
                )
            }],
        ),
        Step::Filter(plugins) => {
            let names: Vec<&str> = plugins.iter().map(|&i| m.filters[i].as_str()).collect();
            let rej = steps::rejections(m, plugins);
            let skipped: Vec<&str> = names
                .iter()
                .copied()
                .filter(|p| {
                    t.prefilter
                        .iter()
                        .any(|r| r.plugin == *p && r.code == crate::scheduler::Code::Skip)
                })
                .collect();
            let mut d: Vec<String> = if rej.is_empty() {
                vec!["no node ruled out here".into()]
            } else {
                rej.iter()
                    .map(|(r, c)| format!("✗ {c} node(s): {r}"))
                    .collect()
            };
            if !skipped.is_empty() {
                d.push(format!(
                    "skipped for this pod (PreFilter: nothing to check): {}",
                    skipped.join(", ")
                ));
            }
            (format!("Filter: {}", names.join(", ")), d)
        }
        Step::Predict => {
            let c = steps::candidates(m);
            let ask = match guess {
                Some(g) => format!("Your guess: {g}. Space reveals the scores."),
                None => format!(
                    "Guess with 1–{}: {}; then Space reveals the scores.",
                    c.len(),
                    c.iter()
                        .enumerate()
                        .map(|(i, n)| format!("{} {n}", i + 1))
                        .collect::<Vec<_>>()
                        .join(" · ")
                ),
            };
            (
                "Which node wins?".into(),
                vec![
                    format!("{} feasible nodes will be scored.", t.score.len()),
                    ask,
                ],
            )
        }
        Step::Score(j) => {
            let (name, weight) = steps::score_plugins(m).get(*j).copied().unwrap_or(("?", 1));
            let raws: Vec<i64> = t
                .score
                .iter()
                .filter_map(|s| s.plugins.get(*j))
                .map(|p| p.raw)
                .collect();
            let norm: Vec<i64> = t
                .score
                .iter()
                .filter_map(|s| s.plugins.get(*j))
                .map(|p| p.normalized)
                .collect();
            let range = |v: &[i64]| match (v.iter().min(), v.iter().max()) {
                (Some(a), Some(b)) if a == b => format!("{a}"),
                (Some(a), Some(b)) => format!("{a}..{b}"),
                _ => "—".into(),
            };
            let skipped: Vec<&str> = t
                .prescore
                .iter()
                .filter(|r| r.code == crate::scheduler::Code::Skip)
                .map(|r| r.plugin)
                .collect();
            let mut d = vec![format!(
                "raw {} → normalized {} × weight {weight} · bars: running totals, one segment per plugin",
                range(&raws),
                range(&norm)
            )];
            if *j == 0 && !skipped.is_empty() {
                d.push(format!(
                    "not scored for this pod (PreScore Skip): {}",
                    skipped.join(", ")
                ));
            }
            (format!("Score: {name}"), d)
        }
        Step::Result => match (&t.selected, &t.message) {
            (Some(node), _) => {
                let mut d = vec![match (t.score.len(), &t.tie_break) {
                    (0 | 1, _) => {
                        "only one node passed the filters: it is chosen without scoring".into()
                    }
                    (_, Some(tb)) => tb.clone(),
                    _ => "the highest total wins".into(),
                }];
                match guess {
                    Some(g) if g == node => d.push(format!("your guess, {g}: ✓ right")),
                    Some(g) => d.push(format!("your guess, {g}: ✗ not this time")),
                    None => {}
                }
                (format!("Selected: {node}"), d)
            }
            (None, Some(msg)) => ("No node fits".into(), vec![msg.clone()]),
            (None, None) => ("Not scheduled".into(), t.notes.clone()),
        },
    };
    let w = width as usize;
    // The title breaks after a plugin's comma, never inside a name.
    let mut pieces = vec![Span::styled(pos, theme.key_hint)];
    let mut words = title.split_inclusive(", ");
    if let Some(first) = words.next() {
        pieces.push(Span::styled(first.to_string(), theme.title));
    }
    pieces.extend(words.map(|p| Span::styled(p.to_string(), theme.title)));
    let mut lines = flow::rows(pieces, w);
    for d in detail {
        lines.extend(flow::sentence(&d, theme.text, w));
    }
    lines
}

fn draw_panel(
    frame: &mut Frame,
    area: Rect,
    state: &AppState,
    m: &Model,
    step: &Step,
    theme: &Theme,
) {
    let width = inner_width(area);
    let s = &state.sched;
    let mut lines: Vec<Line> = Vec::new();
    let title;
    let scored = s.selected_node().and_then(|k| m.score_of[k]).is_some();
    if s.formula && (scored || !matches!(step, Step::Result)) {
        title = "Formula (f closes)".to_string();
        let node = s.selected_node();
        match (node, formula_text(state, m, step)) {
            (Some(_), Some(text)) => {
                for l in wrapped(&text, width) {
                    lines.push(Line::styled(l, theme.text));
                }
            }
            (Some(k), None) => lines.push(Line::styled(
                format!(
                    "{} was not scored (it did not pass the filters, or only one node did)",
                    m.snapshot.nodes[k].name
                ),
                theme.muted,
            )),
            (None, _) => lines.push(Line::styled("no node under the cursor", theme.muted)),
        }
    } else {
        title = if m.trace.selected.is_some() {
            "Result".to_string()
        } else {
            "Result: node by node".to_string()
        };
        lines = result_lines(state, m, width, theme);
    }
    frame.render_widget(Paragraph::new(lines).block(pane(title, theme, false)), area);
}

/// The result panel's lines: the winner, a tie, the scores when the rows above do not already
/// show each total's breakdown, each node's reason when none fits, and a bound pod's comparison.
fn result_lines(state: &AppState, m: &Model, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    let t = &m.trace;
    match &t.selected {
        Some(node) => {
            lines.push(Line::styled(
                format!("★ {node} — the scheduler binds the pod here (POST …/binding)"),
                theme.winner,
            ));
            if t.tied.len() > 1 {
                // Every tied name when they fit on two rows, else the count and the first few:
                // the sentence is whole either way.
                let names: Vec<&str> = t.tied.iter().map(|n| &**n).collect();
                let all = names.join(", ");
                let among = if all.chars().count() <= 2 * width {
                    all
                } else {
                    format!(
                        "{} nodes ({} and {} more)",
                        names.len(),
                        names[..3].join(", "),
                        names.len() - 3
                    )
                };
                let tie = format!(
                    "tie among {among}: chosen at random (seeded), as upstream's selectHost does"
                );
                for l in field::wrap(&tie, width) {
                    lines.push(Line::styled(l, theme.text));
                }
            }
            // When the rows above show every scored node with its total's breakdown, repeating
            // them here would only take rows the node list needs to show every node.
            let mut best: Vec<_> = t.score.iter().collect();
            best.sort_by_key(|s| std::cmp::Reverse(s.total));
            let listed = state
                .sched
                .order
                .iter()
                .filter(|&&k| m.score_of[k].is_some())
                .count();
            let repeat = if scheduler_rows::shows_totals(m) && listed == t.score.len() {
                0
            } else {
                3
            };
            for sc in best.into_iter().take(repeat) {
                let parts: Vec<String> = sc
                    .plugins
                    .iter()
                    .map(|p| format!("{} {}", plugins::short(p.name), p.weighted))
                    .collect();
                lines.push(Line::styled(
                    ellipsize(
                        &format!(
                            "{:<14} {:>4} = {}",
                            sc.node.to_string(),
                            sc.total,
                            parts.join(" + ")
                        ),
                        width,
                    ),
                    theme.text,
                ));
            }
            if t.score.is_empty() {
                lines.push(Line::styled(
                    "one feasible node: PreScore and Score do not run (upstream skips them)",
                    theme.muted,
                ));
            }
            why_lines(&mut lines, state, m, width, theme);
        }
        // The step's summary above already says upstream's FitError whole: here each node's
        // reason, turned around into numbers, wrapped rather than cut.
        None => {
            for v in t.filter.iter().filter(|v| !v.passed).take(40) {
                if let Some(&k) = m.snapshot.node_index.get(&*v.node) {
                    let text = format!("✗ {}", formula::inverted(m, k, v.reasons()));
                    for (i, l) in field::wrap(&text, width.saturating_sub(2))
                        .into_iter()
                        .enumerate()
                    {
                        let indent = if i == 0 { "" } else { "  " };
                        lines.push(Line::styled(format!("{indent}{l}"), theme.text));
                    }
                }
            }
        }
    }
    lines
}

/// For a bound pod the simulation disagrees with: how the cluster's node fared here and why
/// the two may differ, a line each, most specific first.
fn why_lines(
    lines: &mut Vec<Line<'static>>,
    state: &AppState,
    m: &Model,
    width: usize,
    theme: &Theme,
) {
    let Some(bound) = bound_pod(state, m) else {
        return;
    };
    for l in versus(m, &bound).panel {
        let style = if l.starts_with('!') {
            theme.warn
        } else {
            theme.text
        };
        // A reason is a sentence: it wraps under its bullet rather than being cut.
        for (i, piece) in field::wrap(&l, width.saturating_sub(4))
            .into_iter()
            .enumerate()
        {
            let indent = if i == 0 { "" } else { "    " };
            lines.push(Line::styled(format!("{indent}{piece}"), style));
        }
    }
}

/// Formula lines wrapped to `width`, continuations indented: a label such as
/// `kubernetes.io/hostname=node-1` is never cut.
fn wrapped(text: &[String], width: usize) -> Vec<String> {
    text.iter()
        .flat_map(|l| {
            field::wrap(l, width.saturating_sub(2))
                .into_iter()
                .enumerate()
                .map(|(i, p)| if i == 0 { p } else { format!("  {p}") })
        })
        .collect()
}

/// The formula `f` shows for the node under the cursor: the current score step's plugin, or
/// NodeResourcesFit before the scores; `None` when that node was not scored.
fn formula_text(state: &AppState, m: &Model, step: &Step) -> Option<Vec<String>> {
    let k = state.sched.selected_node()?;
    let plugins = &m.trace.score[m.score_of[k]?].plugins;
    let chosen: Vec<_> = match step {
        Step::Score(j) => plugins.get(*j).into_iter().collect(),
        _ => plugins
            .iter()
            .filter(|p| p.name == plugins::node_resources_fit::NAME)
            .collect(),
    };
    Some(
        chosen
            .into_iter()
            .flat_map(|p| formula::lines(m, k, p))
            .collect(),
    )
}

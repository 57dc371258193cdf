//! Rendering one frame of view 5 (the scheduler) with 5,000 nodes into ratatui's TestBackend at
//! 120×40, at the nodes step (capacity bars), a filter step (per-plugin summary over all nodes)
//! and a score step (stacked bars); and the cost of one what-if re-run. The target is one frame under 16 ms (60 frames a second);
//! the result is recorded in docs/BENCHMARKS.md ("TUI"). On a watched cluster: a frame with the
//! watch's status line, and the rebuild each coalesced update costs the publisher (off the UI
//! thread; at most one per `watch::COALESCE`), recorded in docs/RELIABILITY.md (5b).
//!
//! Run: cargo bench --bench tui_scheduler

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kexplore::scheduler::generate::{PendingKind, cluster, pending_pod};
use kexplore::tui::action::View;
use kexplore::tui::keymap::KeyMap;
use kexplore::tui::sched::LiveState;
use kexplore::tui::sched::model::{ClusterData, Model};
use kexplore::tui::sched::steps::Step;
use kexplore::tui::sched::watch::{Feed, LiveStatus};
use kexplore::tui::session::Source;
use kexplore::tui::state::AppState;
use kexplore::tui::theme::Theme;
use kexplore::tui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const NODES: usize = 5000;

fn state() -> AppState {
    let (nodes, running) = cluster(NODES, 8);
    let data = ClusterData {
        source: format!("{NODES} generated nodes"),
        nodes,
        running,
        pod: pending_pod(PendingKind::Plain, 0),
        release: Default::default(),
    };
    let mut s = AppState::new(
        Source::NotFound {
            looked: "bench".into(),
        },
        None,
        0,
    );
    s.view = View::Scheduler;
    s.size = (120, 40);
    s.sched.model = Some(Model::new(data).map_err(|e| e.to_string()));
    s
}

fn benches(c: &mut Criterion) {
    let mut s = state();
    let theme = Theme::default();
    let keymap = KeyMap::default();
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("test backend");
    let steps = s.sched.steps(false);
    let at = |want: fn(&Step) -> bool| steps.iter().position(want).unwrap_or(0);
    let mut g = c.benchmark_group(format!("tui_view5_{NODES}_nodes"));
    g.measurement_time(Duration::from_secs(5));
    for (name, step) in [
        ("frame_nodes", 0),
        ("frame_filter", at(|s| matches!(s, Step::Filter(_)))),
        ("frame_score", at(|s| matches!(s, Step::Score(_)))),
        ("frame_result", steps.len() - 1),
    ] {
        s.sched.step = step;
        s.sched.reorder(false);
        g.bench_function(name, |b| {
            b.iter(|| {
                term.draw(|f| views::draw(f, &s, &theme, &keymap))
                    .expect("draw");
            })
        });
    }
    // A watched cluster: the same frame with the watch's status line, and the publisher's
    // rebuild (snapshot and cycle from the changed objects) for one coalesced update.
    let (feed, _alive) = Feed::new();
    s.sched.step = 0;
    s.sched.live = Some(LiveState {
        feed,
        status: LiveStatus {
            nodes: NODES,
            pods: NODES * 8,
            events: 123_456,
            last_event_unix: Some(0),
            ..Default::default()
        },
        applied: 42,
    });
    g.bench_function("frame_nodes_watched", |b| {
        b.iter(|| {
            term.draw(|f| views::draw(f, &s, &theme, &keymap))
                .expect("draw");
        })
    });
    s.sched.live = None;
    let data = s.sched.model().map(|m| m.data.clone()).expect("model");
    g.bench_function("live_update_rebuild", |b| {
        b.iter(|| Model::new(data.clone()).expect("model"))
    });
    // What a what-if key costs: the whole cycle again on the kept snapshot, in `update`.
    g.bench_function("whatif_rerun", |b| {
        b.iter(|| {
            if let Some(m) = s.sched.model_mut() {
                m.whatif.cpu_milli = if m.whatif.cpu_milli == 0 { 500 } else { 0 };
                m.rerun();
            }
        })
    });
    g.finish();
}

criterion_group!(tui, benches);
criterion_main!(tui);

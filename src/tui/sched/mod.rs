//! View 5's state: the model (cluster, pod, what-if, trace), the step, the node list's cursor,
//! sort and filter. The displayed order is computed when something it depends on changes, not
//! on every frame, so a 5,000-node list costs only the rows on screen to draw.

pub mod compare;
pub mod fetch;
pub mod formula;
pub mod formula_node;
pub mod formula_pods;
pub mod kept;
pub mod live;
pub mod model;
pub mod steps;
pub mod versus;
pub mod watch;

use model::Model;
use steps::Step;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// The order the scheduler evaluates nodes in (its cache's order).
    #[default]
    Scheduler,
    Name,
    /// Best running total first (at a score step), feasible before rejected.
    Score,
}

impl Sort {
    pub fn next(self) -> Sort {
        match self {
            Sort::Scheduler => Sort::Name,
            Sort::Name => Sort::Score,
            Sort::Score => Sort::Scheduler,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Sort::Scheduler => "scheduler order",
            Sort::Name => "name",
            Sort::Score => "score",
        }
    }
}

#[derive(Debug, Default)]
pub struct SchedState {
    /// `None` until a cluster was loaded; `Err` says why it could not be.
    pub model: Option<Result<Model, String>>,
    pub loading: bool,
    /// How far each collection's list has got while loading, in the order first reported.
    pub progress: Vec<(String, crate::client::cluster::ListProgress)>,
    pub step: usize,
    /// Index into `order`.
    pub cursor: usize,
    pub sort: Sort,
    /// Only nodes whose name contains this (the `/` filter).
    pub filter: String,
    /// Whether `f` is showing the formula for the node under the cursor.
    pub formula: bool,
    /// Snapshot node indices in display order.
    pub order: Vec<usize>,
    /// The pod (`ns/name`) to show, when view 4 sent it here.
    pub focus_pod: Option<String>,
    /// A live cluster's pods to choose from (`None` for manifests).
    pub listing: Option<live::Listing>,
    /// Whether the pods list is shown in place of the nodes (`w`).
    pub pods_open: bool,
    /// Presenter mode's guess at "which node wins?" (keys 1–9 on that step).
    pub guess: Option<String>,
    /// `b`: the default and bin-packing profiles side by side in place of the nodes.
    pub compare: bool,
    /// `:ns NAME`: the pods list shows this namespace's pods only.
    pub namespace: Option<String>,
    /// Index into `listing.pods`.
    pub pod_cursor: usize,
    /// The watch keeping a live cluster current, and what it last said.
    pub live: Option<LiveState>,
}

/// A live cluster's watch as the view knows it.
#[derive(Debug)]
pub struct LiveState {
    /// Dropping it stops the watch.
    pub feed: watch::Feed,
    pub status: watch::LiveStatus,
    /// Updates applied to the view (each a new model and pods list).
    pub applied: u64,
}

impl SchedState {
    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref().and_then(|m| m.as_ref().ok())
    }

    pub fn model_mut(&mut self) -> Option<&mut Model> {
        self.model.as_mut().and_then(|m| m.as_mut().ok())
    }

    pub fn steps(&self, predict: bool) -> Vec<Step> {
        self.model()
            .map(|m| steps::steps(m, predict))
            .unwrap_or_default()
    }

    /// The current step (clamped: a what-if may have removed steps).
    pub fn current(&self, predict: bool) -> Option<Step> {
        let s = self.steps(predict);
        s.get(self.step.min(s.len().saturating_sub(1))).cloned()
    }

    /// Recomputes `order` after a change to the model, step, sort or filter.
    pub fn reorder(&mut self, predict: bool) {
        let step = self.current(predict);
        let Some(m) = self.model() else {
            self.order.clear();
            return;
        };
        let needle = self.filter.to_ascii_lowercase();
        let mut order: Vec<usize> = (0..m.snapshot.nodes.len())
            .filter(|&k| {
                needle.is_empty()
                    || m.snapshot.nodes[k]
                        .name
                        .to_ascii_lowercase()
                        .contains(&needle)
            })
            .collect();
        match self.sort {
            Sort::Scheduler => {}
            Sort::Name => {
                order.sort_by(|&a, &b| m.snapshot.nodes[a].name.cmp(&m.snapshot.nodes[b].name))
            }
            Sort::Score => {
                let j = match step {
                    Some(Step::Score(j)) => Some(j),
                    Some(Step::Result) => steps::score_plugins(m).len().checked_sub(1),
                    _ => None,
                };
                let key = |k: usize| -> i64 {
                    match (m.score_of[k], j) {
                        (Some(s), Some(j)) => steps::running_total(m, s, j),
                        (Some(_), None) => 0,
                        (None, _) if m.verdict_of[k].is_some_and(|v| m.trace.filter[v].passed) => {
                            -1
                        }
                        (None, _) => -2,
                    }
                };
                order.sort_by_key(|&k| std::cmp::Reverse(key(k)));
            }
        }
        self.order = order;
        self.cursor = self.cursor.min(self.order.len().saturating_sub(1));
    }

    /// At a score or result step, a cursor on a node that was not scored moves to the winner
    /// (or the first scored node), so `f` has a formula to show.
    pub fn cursor_to_scored(&mut self, predict: bool) {
        if !matches!(
            self.current(predict),
            Some(Step::Score(_)) | Some(Step::Result)
        ) {
            return;
        }
        let Some(m) = self.model() else { return };
        let scored = |k: usize| m.score_of[k].is_some();
        if self.selected_node().is_some_and(scored) {
            return;
        }
        let winner = m.trace.selected.as_deref();
        let pos = self
            .order
            .iter()
            .position(|&k| Some(m.snapshot.nodes[k].name.as_str()) == winner)
            .or_else(|| self.order.iter().position(|&k| scored(k)));
        if let Some(p) = pos {
            self.cursor = p;
        }
    }

    /// The snapshot index of the node under the cursor.
    pub fn selected_node(&self) -> Option<usize> {
        self.order.get(self.cursor).copied()
    }
}

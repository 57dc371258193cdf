//! `update` for the stepped views (3 Connection, 4 Pod journey, 5 Scheduler): stepping, what
//! entering a view starts, effect results arriving, view 5's what-if and list controls. Pure
//! like `update`: work on the network comes back as `Effect`s.

use k8s_openapi::api::core::v1::Pod;

use super::action::{Action, View};
use super::quiz::Phase;
use super::sched::LiveState;
use super::sched::model::{ClusterData, Model, Resource, WhatIf};
use super::sched::steps;
use super::sched::watch::{LiveStatus, LiveUpdate};
use super::state::AppState;
use super::update::Effect;
use crate::journey::run::WriteMode;

/// Rows a page key moves in view 5's node list.
const PAGE: usize = 10;

/// Whether the view-5 steps include "which node wins?" (presenter mode asks it).
pub fn predict(state: &AppState) -> bool {
    state.present
}

/// What to start when a view becomes the current one.
pub fn on_enter(state: &mut AppState) -> Vec<Effect> {
    match state.view {
        View::Connection if state.conn().report.is_none() && state.conn().running.is_none() => {
            connect(state)
        }
        View::Scheduler if state.sched.model.is_none() && !state.sched.loading => {
            load_cluster(state, None)
        }
        _ => Vec::new(),
    }
}

fn connect(state: &mut AppState) -> Vec<Effect> {
    if state.chain == super::etcd_chain::Chain::Etcd
        && let Some(e) = state.etcd.as_mut()
    {
        e.conn.running = Some(e.context.name.clone());
        return vec![Effect::ConnectEtcd(
            e.kubeconfig.clone(),
            e.context.name.clone(),
        )];
    }
    let Some(ctx) = state.context_name() else {
        return Vec::new();
    };
    state.conn.running = Some(ctx.clone());
    vec![Effect::Connect(ctx)]
}

/// The pod view 5 places when no journey pod is given: view 4's manifest, in the namespace
/// view 4 would create it in (the context's, when the manifest names none); for a workload,
/// a pod of its template, as its controller would make one.
fn fallback_pod(state: &AppState) -> Option<Pod> {
    let manifest = state.journey.sendable()?;
    // After a dry run, what the server would have stored: the pod (or workload) as the
    // mutating admission plugins left it — its priority, tolerations, a LimitRange's requests,
    // a RuntimeClass's overhead and node selector — which is what the scheduler is given.
    let journey = state.journey.journey();
    let admitted = journey.as_ref().and_then(|j| {
        j.stages
            .iter()
            .find(|s| {
                s.stage == crate::journey::Stage::Response && s.status == crate::journey::Status::Ok
            })
            .and_then(|s| s.detail.get("object"))
            .filter(|o| o.get("kind") == manifest.get("kind"))
    });
    let source = admitted.unwrap_or(manifest);
    let mut v = template_pod(source).unwrap_or_else(|| source.clone());
    let ctx_ns = state
        .active
        .as_ref()
        .and_then(|a| a.resolved.as_ref().ok())
        .map_or("", |f| f.namespace.as_str());
    v["metadata"]["namespace"] =
        serde_json::json!(crate::journey::run::namespace_of(manifest, ctx_ns));
    serde_json::from_value(v).ok()
}

/// A pod of a workload's template (`spec.template`: its labels, annotations and spec), named
/// `<workload>-template` since its controller has not named one yet. None for a pod.
fn template_pod(manifest: &serde_json::Value) -> Option<serde_json::Value> {
    crate::journey::workload::kind_of(manifest)?;
    let template = manifest.pointer("/spec/template")?;
    let name = manifest.pointer("/metadata/name")?.as_str()?;
    let mut meta = serde_json::json!({"name": format!("{name}-template")});
    for field in ["labels", "annotations"] {
        if let Some(v) = template.pointer(&format!("/metadata/{field}")) {
            meta[field] = v.clone();
        }
    }
    Some(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_default(),
    }))
}

fn load_cluster(state: &mut AppState, focus: Option<String>) -> Vec<Effect> {
    let Some(ctx) = state.context_name() else {
        state.sched.model = Some(Err("no context to list nodes from".into()));
        return Vec::new();
    };
    let Some(pod) = fallback_pod(state) else {
        // The manifest's own fault when it has one (two objects, bad YAML), as view 4 says it.
        let why = match &state.journey.manifest {
            Some(Err(e)) => format!("view 4's manifest: {e}"),
            _ => "view 4's manifest is neither a valid pod nor a workload with a pod template"
                .to_string(),
        };
        state.sched.model = Some(Err(format!("no pod to place: {why} (press 4, then e)")));
        return Vec::new();
    };
    state.sched.loading = true;
    state.sched.progress.clear();
    state.sched.focus_pod = focus.clone();
    // The old watch stops: its updates would show the cluster around the previous pod.
    state.sched.live = None;
    vec![Effect::LoadCluster {
        context: ctx,
        focus,
        fallback: Box::new(pod),
    }]
}

/// View 5 on pod `key` of the cluster: placed by the watch when one keeps the cluster (at
/// 150,000 pods a new list takes seconds; a bound pod costs one GET), else listed.
fn place(state: &mut AppState, key: String) -> Vec<Effect> {
    let s = &mut state.sched;
    // The old cycle no longer applies: show progress until the new one arrives.
    s.model = None;
    let Some(live) = &s.live else {
        return load_cluster(state, Some(key));
    };
    live.feed.refocus(&key);
    s.focus_pod = Some(key);
    s.loading = true;
    s.progress.clear();
    Vec::new()
}

/// Sends view 4's pod, written as `write`.
pub fn start_journey(state: &mut AppState, write: WriteMode) -> Vec<Effect> {
    let (Some(ctx), Some(pod)) = (state.context_name(), state.journey.sendable().cloned()) else {
        return Vec::new();
    };
    state.journey.running = true;
    state.journey.collected = None;
    state.journey.workload = None;
    state.journey.pod_open = false;
    state.journey.pod_cursor = 0;
    state.journey.sent = Some(write);
    vec![Effect::RunJourney {
        context: ctx,
        pod,
        replace: state.journey.embedded,
        write,
    }]
}

/// Space / Backspace (and autoplay) in views 3-5.
pub fn step(state: &mut AppState, forward: bool) -> Vec<Effect> {
    let mut effects = Vec::new();
    match state.view {
        View::Connection => {
            // The ladder counts revealed rungs: never fewer than one once there is a ladder.
            let conn = state.conn_mut();
            let len = conn.rungs.len();
            let s = &mut conn.step;
            *s = if forward {
                (*s + 1).min(len)
            } else {
                s.saturating_sub(1).max(len.min(1))
            };
        }
        View::PodJourney => {
            let before = state.journey.step;
            let in_pod = state.journey.pod_open;
            if forward && before == 0 && !state.journey.can_leave_request() {
                return effects;
            }
            state.journey.advance(forward);
            // Leaving the request step sends it (once per run).
            if forward
                && before == 0
                && !in_pod
                && let Some(write) = state.journey.space_sends()
            {
                effects.extend(start_journey(state, write));
            }
        }
        View::Scheduler => {
            let predict = predict(state);
            let count = state.sched.steps(predict).len();
            let s = &mut state.sched;
            s.step = if forward {
                (s.step + 1).min(count.saturating_sub(1))
            } else {
                s.step.min(count.saturating_sub(1)).saturating_sub(1)
            };
            s.formula = false;
            s.reorder(predict);
            s.cursor_to_scored(predict);
        }
        _ => return effects,
    }
    state.last_step_ms = state.now_ms;
    state.detail_scroll = 0;
    effects
}

/// A click on a rung (view 3) or a stage (view 4): straight to that step, as if Space had
/// been pressed until there — leaving view 4's request step sends the pod.
pub fn jump(state: &mut AppState, to: usize) -> Vec<Effect> {
    let mut effects = Vec::new();
    match state.view {
        View::Connection => {
            let conn = state.conn_mut();
            let len = conn.rungs.len();
            conn.step = to.min(len).max(len.min(1));
        }
        View::PodJourney if !state.journey.can_leave_request() => {}
        View::PodJourney => {
            state.journey.step = to.min(state.journey.last_step());
            if to > 0
                && let Some(write) = state.journey.space_sends()
            {
                effects.extend(start_journey(state, write));
            }
        }
        _ => return effects,
    }
    state.last_step_ms = state.now_ms;
    state.detail_scroll = 0;
    effects
}

/// Results and view-specific keys; `None` when the action is not one of these.
pub fn handle(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let effects = match action {
        Action::ConnectionDone(r) => {
            // The API server's own connection to etcd, or the context's.
            match state
                .etcd
                .as_mut()
                .filter(|e| e.conn.running.as_deref() == Some(&r.0.context))
            {
                Some(e) => {
                    let creds = e.context.report().cloned();
                    e.conn.set((*r.0).clone(), creds.as_ref());
                }
                None => {
                    let creds = state.active.as_ref().and_then(|a| a.report()).cloned();
                    state.conn.set((*r.0).clone(), creds.as_ref());
                }
            }
            Vec::new()
        }
        Action::JourneyProgress(c, done) => {
            state.journey.collected = Some((*c.0).clone());
            state.journey.running = !done;
            Vec::new()
        }
        Action::WorkloadProgress(w, done) => {
            let n = w.0.pods.len();
            state.journey.workload = Some((*w.0).clone());
            state.journey.running = !done;
            state.journey.pod_cursor = state.journey.pod_cursor.min(n.saturating_sub(1));
            Vec::new()
        }
        Action::ClusterLoaded(r) => {
            state.sched.listing = None;
            cluster_loaded(state, r.0.as_ref().as_ref().map_err(String::clone));
            Vec::new()
        }
        Action::LiveClusterLoaded(r) => {
            state.sched.progress.clear();
            match &*r.0 {
                Ok(live) => {
                    // Built where it was fetched, off this thread; else (tests) built here.
                    match live.take_built() {
                        Some((model, listing)) => {
                            state.sched.listing = Some(listing);
                            set_model(state, model);
                        }
                        None => {
                            state.sched.listing = Some(live.listing.clone());
                            cluster_loaded(state, Ok(&live.data));
                        }
                    }
                    let nodes = state.sched.model().map_or(0, |m| m.snapshot.num_nodes());
                    let pods = state.sched.listing.as_ref().map_or(0, |l| l.pods.len());
                    state.sched.live = live.feed.clone().map(|feed| LiveState {
                        feed,
                        status: LiveStatus {
                            nodes,
                            pods,
                            ..Default::default()
                        },
                        applied: 0,
                    });
                }
                Err(e) => {
                    state.sched.listing = None;
                    cluster_loaded(state, Err(e.clone()));
                }
            }
            // The cursor stays on the pod being simulated.
            let focus = state.sched.focus_pod.clone();
            let s = &mut state.sched;
            s.pod_cursor = match (&s.listing, focus) {
                (Some(l), Some(f)) => l.pods.iter().position(|p| p.key == f).unwrap_or(0),
                _ => 0,
            };
            Vec::new()
        }
        Action::ClusterProgress(p) => {
            // A late report of a list already shown would put the progress back on screen.
            if state.sched.loading {
                state.sched.progress = (*p.0).clone();
            }
            Vec::new()
        }
        Action::LiveChanged(u) => {
            live_changed(state, &u.0);
            Vec::new()
        }
        Action::ManifestEdited(r) => {
            match r {
                Ok(text) => state.journey.set_manifest(text),
                Err(e) => state.journey.manifest = Some(Err(e.clone())),
            }
            // The pod view 5 places follows the manifest.
            state.sched.model = None;
            Vec::new()
        }
        Action::Refresh => match state.view {
            View::Connection => {
                *state.conn_mut() = Default::default();
                connect(state)
            }
            View::PodJourney if !state.journey.running => {
                state.journey.step = 1;
                let write = state.journey.write_mode();
                start_journey(state, write)
            }
            View::Scheduler => {
                let focus = state.sched.focus_pod.clone();
                load_cluster(state, focus)
            }
            _ => Vec::new(),
        },
        Action::EditPod if state.view == View::PodJourney && !state.journey.running => {
            vec![Effect::Edit(state.journey.path.clone())]
        }
        Action::NextPod if state.view == View::PodJourney && !state.journey.running => {
            state.journey.next_choice();
            state.sched.model = None;
            Vec::new()
        }
        Action::OpenInScheduler if state.view == View::PodJourney => {
            let created = state.journey.journey().is_some_and(|j| {
                j.stages.iter().any(|s| {
                    s.stage == crate::journey::Stage::Response
                        && s.status == crate::journey::Status::Ok
                })
            });
            // A workload's overview: the pod under the cursor, once its controllers made it.
            let cursor_pod = state
                .journey
                .workload
                .as_ref()
                .filter(|_| !state.journey.pod_open)
                .and_then(|w| w.pods.get(state.journey.pod_cursor))
                .map(|c| c.pod.clone());
            let focus = cursor_pod.or_else(|| {
                created
                    .then(|| state.journey.journey().map(|j| j.pod))
                    .flatten()
            });
            state.view = View::Scheduler;
            match focus {
                Some(key) => place(state, key),
                None => {
                    state.sched.model = None;
                    load_cluster(state, None)
                }
            }
        }
        // Arrows, the wheel and the page keys scroll the details of views 3 and 4.
        // On a workload's pod list the arrows choose the pod.
        Action::MoveUp | Action::MoveDown
            if state.view == View::PodJourney
                && state.journey.move_pod_cursor(*action == Action::MoveDown) =>
        {
            state.detail_scroll = 0;
            Vec::new()
        }
        Action::PageUp | Action::PageDown | Action::MoveUp | Action::MoveDown
            if matches!(state.view, View::Connection | View::PodJourney) =>
        {
            let by = match action {
                Action::PageUp | Action::PageDown => PAGE as u16,
                _ => 1,
            };
            state.detail_scroll = if matches!(action, Action::PageUp | Action::MoveUp) {
                state.detail_scroll.saturating_sub(by)
            } else {
                state
                    .detail_scroll
                    .saturating_add(by)
                    .min(state.detail_scroll_max.get())
            };
            Vec::new()
        }
        Action::TogglePresent => {
            super::story::set_present(state, !state.present);
            state.sched.reorder(predict(state));
            Vec::new()
        }
        _ if state.view == View::Scheduler => return scheduler_keys(state, action),
        _ => return None,
    };
    Some(effects)
}

fn scheduler_keys(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    if *action == Action::TogglePods {
        if state.sched.pods_open || state.sched.listing.is_none() {
            state.sched.pods_open = false;
        } else {
            open_pods(state);
        }
        return Some(Vec::new());
    }
    if state.sched.pods_open
        && let Some(effects) = pods_list_keys(state, action)
    {
        return Some(effects);
    }
    let predict = predict(state);
    let s = &mut state.sched;
    match action {
        Action::MoveUp => s.cursor = s.cursor.saturating_sub(1),
        Action::MoveDown => s.cursor = (s.cursor + 1).min(s.order.len().saturating_sub(1)),
        Action::PageUp => s.cursor = s.cursor.saturating_sub(PAGE),
        Action::PageDown => s.cursor = (s.cursor + PAGE).min(s.order.len().saturating_sub(1)),
        Action::ToggleFormula => s.formula = !s.formula,
        Action::CycleSort => {
            s.sort = s.sort.next();
            s.reorder(predict);
        }
        Action::StartFilter => state.typing = true,
        Action::FilterInput(c) => {
            s.filter.push(*c);
            s.cursor = 0;
            s.reorder(predict);
        }
        Action::FilterBack => {
            s.filter.pop();
            s.reorder(predict);
        }
        Action::FilterEnd(keep) => {
            state.typing = false;
            if !keep {
                s.filter.clear();
                s.reorder(predict);
            }
        }
        Action::ClearFilter => {
            s.filter.clear();
            s.reorder(predict);
        }
        Action::Guess(n) => {
            let pick = s
                .model()
                .and_then(|m| steps::candidates(m).get(n.wrapping_sub(1)).cloned());
            if pick.is_some() {
                s.guess = pick;
            }
        }
        Action::CompareProfiles => {
            s.compare = !s.compare;
            let on = s.compare;
            if let Some(m) = s.model_mut() {
                m.compare(on);
            }
        }
        Action::ResetWhatIf => {
            if let Some(m) = s.model_mut()
                && !m.whatif.is_empty()
            {
                // The resource `+`/`-` acts on stays as chosen: it changes no request.
                m.whatif = WhatIf {
                    resource: m.whatif.resource,
                    ..WhatIf::default()
                };
                m.rerun();
                s.formula = false;
                s.reorder(predict);
            }
        }
        Action::More
        | Action::Less
        | Action::SwitchResource
        | Action::ToggleTolerations
        | Action::NextSelector => {
            let Some(m) = s.model_mut() else {
                return Some(Vec::new());
            };
            match action {
                Action::SwitchResource => {
                    m.whatif.resource = match m.whatif.resource {
                        Resource::Cpu => Resource::Memory,
                        Resource::Memory => Resource::Cpu,
                    };
                    return Some(Vec::new());
                }
                Action::ToggleTolerations => m.whatif.tolerate_all = !m.whatif.tolerate_all,
                Action::NextSelector => {
                    m.whatif.selector = match m.whatif.selector {
                        None if !m.labels.is_empty() => Some(0),
                        Some(i) if i + 1 < m.labels.len() => Some(i + 1),
                        _ => None,
                    }
                }
                _ => m.bump(*action == Action::More),
            }
            m.rerun();
            s.formula = false;
            s.reorder(predict);
        }
        _ => return None,
    }
    Some(Vec::new())
}

fn cluster_loaded(state: &mut AppState, data: Result<&ClusterData, String>) {
    set_model(state, data.and_then(|d| Model::new(d.clone())));
}

fn set_model(state: &mut AppState, model: Result<Model, String>) {
    state.sched.loading = false;
    state.sched.progress.clear();
    let mut model = model;
    if state.sched.compare
        && let Ok(m) = model.as_mut()
    {
        m.compare(true);
    }
    state.sched.model = Some(model);
    state.sched.guess = None;
    state.sched.step = 0;
    state.sched.cursor = 0;
    state.sched.reorder(predict(state));
}

/// The watch's coalesced update: the new cluster replaces the old one, keeping what the user
/// set (what-if, step, sort, filter, the node and pod under the cursors).
fn live_changed(state: &mut AppState, u: &LiveUpdate) {
    let predict = predict(state);
    let changed = u.take();
    let s = &mut state.sched;
    let Some(live) = s.live.as_mut().filter(|l| l.feed.id == u.feed) else {
        return;
    };
    live.status = u.status.clone();
    let Some((model, listing)) = changed else {
        return;
    };
    // Built for the pod placed before the last Enter in the pods list: the next one follows.
    if u.focus != s.focus_pod {
        return;
    }
    live.applied += 1;
    if s.loading {
        // The first model for the pod just chosen: shown from its first step.
        s.pod_cursor = s
            .focus_pod
            .as_ref()
            .and_then(|k| listing.pods.iter().position(|p| &p.key == k))
            .unwrap_or(0);
        s.listing = Some(listing);
        set_model(state, model);
        return;
    }
    let node = s
        .model()
        .zip(s.selected_node())
        .map(|(m, k)| m.snapshot.nodes[k].name.clone());
    let pod = s
        .listing
        .as_ref()
        .and_then(|l| l.pods.get(s.pod_cursor))
        .map(|p| p.key.clone());
    let model = model.map(|mut new| {
        if let Some(old) = s.model() {
            let mut w = old.whatif.clone();
            w.selector = w
                .selector
                .and_then(|i| old.labels.get(i))
                .and_then(|l| new.labels.iter().position(|x| x == l));
            let rerun = !w.is_empty();
            new.whatif = w;
            if rerun {
                new.rerun();
            }
        }
        if s.compare && new.bin_packing.is_none() {
            new.compare(true);
        }
        new
    });
    s.pod_cursor = pod
        .and_then(|k| listing.pods.iter().position(|p| p.key == k))
        .unwrap_or(s.pod_cursor)
        .min(listing.pods.len().saturating_sub(1));
    s.listing = Some(listing);
    s.model = Some(model);
    s.reorder(predict);
    if let Some(name) = node
        && let Some(m) = s.model()
        && let Some(i) = s
            .order
            .iter()
            .position(|&k| m.snapshot.nodes[k].name == name)
    {
        s.cursor = i;
    }
}

/// Keys while view 5 shows the live cluster's pods (`w`): move, Enter simulates the pod.
fn pods_list_keys(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    let s = &mut state.sched;
    let shown = s
        .listing
        .as_ref()
        .map(|l| l.shown(s.namespace.as_deref()))
        .unwrap_or_default();
    let mut move_by = |delta: isize| {
        let Some(last) = shown.len().checked_sub(1) else {
            return;
        };
        let at = shown
            .iter()
            .position(|&i| i >= s.pod_cursor)
            .unwrap_or(last) as isize;
        s.pod_cursor = shown[(at + delta).clamp(0, last as isize) as usize];
    };
    match action {
        Action::MoveUp => move_by(-1),
        Action::MoveDown => move_by(1),
        Action::PageUp => move_by(-(PAGE as isize)),
        Action::PageDown => move_by(PAGE as isize),
        Action::Select if !shown.contains(&s.pod_cursor) => return Some(Vec::new()),
        Action::Select => {
            let key = s
                .listing
                .as_ref()
                .and_then(|l| l.pods.get(s.pod_cursor))
                .map(|p| p.key.clone())?;
            s.pods_open = false;
            return Some(place(state, key));
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// Opens view 5's pods list on its first Pending pod (in the namespace shown), else on the
/// pod being simulated.
pub fn open_pods(state: &mut AppState) {
    let s = &mut state.sched;
    s.pods_open = true;
    let Some(l) = &s.listing else {
        return;
    };
    let shown = l.shown(s.namespace.as_deref());
    let pending = shown.iter().copied().find(|&i| l.pods[i].node.is_none());
    let focus = s
        .focus_pod
        .as_deref()
        .and_then(|k| shown.iter().copied().find(|&i| l.pods[i].key == k));
    if let Some(i) = pending.or(focus).or(shown.first().copied()) {
        s.pod_cursor = i;
    }
}

/// Autoplay: the story's next step when the interval has passed (three intervals at a
/// question, so the room can answer first).
pub fn autoplay(state: &mut AppState) -> Vec<Effect> {
    let Some(secs) = state.autoplay else {
        return Vec::new();
    };
    let question = super::story::asking(state).is_some_and(|a| a.phase == Phase::Ask)
        || state.view == View::Scheduler
            && matches!(
                state.sched.current(predict(state)),
                Some(super::sched::steps::Step::Predict)
            );
    let wait = (secs * 1000.0 * if question { 3.0 } else { 1.0 }) as i64;
    if state.overlay.is_some() || state.now_ms - state.last_step_ms < wait {
        return Vec::new();
    }
    super::story::next(state)
}

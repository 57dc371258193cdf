//! Issue 14 §1: every screen fits. For every view and every step, at 80×24 and 120×40, the
//! sentences the model produced (collected from the state, never from the screen) must be on
//! screen whole: in one row, or wrapped over the rows of one pane and read in order.

use super::fixtures;
use super::journey_data;
use super::render::render;
use super::sequences_finish::view5_live;
use super::stepped_fixtures as fx;
use crate::tui::action::View;
use crate::tui::journey::{JourneyState, STEP_COUNT};
use crate::tui::sched::model::Model;
use crate::tui::sched::steps::{self, Step};
use crate::tui::state::AppState;
use crate::tui::views::journey::{source_word, title as stage_title};

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The text of each pane column: every row's run between `│` borders, grouped by the column
/// it starts at and joined in row order, so a sentence wrapped inside a pane reads whole.
fn columns(screen: &str) -> Vec<String> {
    let mut by_start: std::collections::BTreeMap<usize, String> = Default::default();
    for line in screen.lines() {
        let mut x = 0;
        for seg in line.split('│') {
            by_start.entry(x).or_default().push_str(seg);
            by_start.entry(x).or_default().push(' ');
            x += seg.chars().count() + 1;
        }
    }
    by_start.into_values().collect()
}

/// Whether `needle` is on `screen` whole (whitespace and wrapping ignored, never an ellipsis).
fn whole(screen: &str, needle: &str) -> bool {
    let n = squeeze(needle);
    n.is_empty()
        || screen.lines().any(|l| squeeze(l).contains(&n))
        || columns(screen).iter().any(|c| squeeze(c).contains(&n))
}

/// The sizes under test and every needle found cut so far, with where.
struct Checker {
    sizes: &'static [(u16, u16)],
    missing: Vec<String>,
    /// The screen of each miss, the first shown to say where.
    screens: Vec<String>,
}

impl Checker {
    /// As `check`, for a view whose detail pane scrolls (PgUp/PgDn): a needle counts when some
    /// scroll position shows it whole.
    fn check_scrolled(&mut self, s: &mut AppState, case: &str, needles: &[String]) {
        for &(w, h) in self.sizes {
            let screens: Vec<String> = (0..60)
                .map(|scroll| {
                    s.detail_scroll = scroll;
                    render(s, w, h)
                })
                .collect();
            s.detail_scroll = 0;
            for n in needles {
                if !screens.iter().any(|screen| whole(screen, n)) {
                    self.missing.push(format!("{case} {w}x{h}: {n:?}"));
                    self.screens.push(screens[0].clone());
                }
            }
        }
    }

    /// Renders `s` at each size and records every needle that is not on screen whole.
    fn check(&mut self, s: &AppState, case: &str, needles: &[String]) {
        for &(w, h) in self.sizes {
            let screen = render(s, w, h);
            for n in needles {
                if !whole(&screen, n) {
                    self.missing.push(format!("{case} {w}x{h}: {n:?}"));
                    self.screens.push(screen.clone());
                }
            }
        }
    }
}

fn at(sizes: &'static [(u16, u16)], run: impl FnOnce(&mut Checker)) {
    let mut c = Checker {
        sizes,
        missing: Vec::new(),
        screens: Vec::new(),
    };
    run(&mut c);
    assert!(
        c.missing.is_empty(),
        "cut or missing:\n{}\nfirst screen:\n{}",
        c.missing.join("\n"),
        c.screens[0]
    );
}

fn view1(c: &mut Checker) {
    let s = fixtures::state();
    let kc = s.kubeconfig().expect("kubeconfig").clone();
    let mut needles: Vec<String> = kc
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    needles.extend(kc.contexts.iter().map(|c| c.value.name.clone()));
    needles.extend(kc.clusters.iter().map(|c| c.value.name.clone()));
    needles.extend(kc.users.iter().map(|u| u.value.name.clone()));
    // The tables' values: a server and an auth kind are never cut (a less important column
    // gives way first).
    needles.extend(
        kc.clusters
            .iter()
            .filter_map(|c| c.value.cluster.server.clone()),
    );
    needles.extend(
        kc.users
            .iter()
            .map(|u| crate::tui::views::kubeconfig_lists::auth_kind(&u.value.user)),
    );
    c.check(&s, "view 1", &needles);
}

fn view2(c: &mut Checker) {
    let mut s = fixtures::state();
    s.view = View::Certificates;
    let r = fixtures::report();
    let mut needles: Vec<String> = r
        .cluster
        .certificate_authority
        .iter()
        .chain(&r.user.client_certificate)
        .filter_map(|c| c.extra.common_name.as_ref().map(|cn| format!("CN={cn}")))
        .collect();
    needles.extend(r.checks.iter().map(|c| c.message.clone()));
    needles.push(crate::tui::views::certificates::TREE_TITLE.into());
    c.check(&s, "view 2", &needles);
}

fn view3(c: &mut Checker) {
    let mut s = fixtures::state();
    s.view = View::Connection;
    s.conn.set(fx::connection(None), Some(&fx::alibaba_creds()));
    for step in 1..=s.conn.rungs.len() {
        s.conn.step = step;
        let r = &s.conn.rungs[step - 1];
        let needles = vec![r.title.clone(), r.summary.clone()];
        let details: Vec<String> = r.details.iter().map(|(_, v)| v.clone()).collect();
        c.check(&s, &format!("view 3 step {step}"), &needles);
        c.check_scrolled(&mut s, &format!("view 3 step {step} details"), &details);
    }
}

fn view4(c: &mut Checker) {
    view4_of(c, None);
    // A Deployment's pod in a longer namespace: the title must not cut the step count.
    view4_of(c, Some("workshop-team-a/web-7c79c4bf97-x2b4k"));
}

fn view4_of(c: &mut Checker, pod: Option<&str>) {
    let mut s = fixtures::state();
    s.view = View::PodJourney;
    s.journey = JourneyState::new(
        "app.json".into(),
        Some(include_str!("../../../scenarios/app.json")),
        true,
    );
    let mut collected = journey_data::collected();
    if let Some(p) = pod {
        collected.pod = p.into();
    }
    s.journey.collected = Some(collected);
    let journey = s.journey.journey().expect("a journey");
    for step in 0..STEP_COUNT {
        s.journey.step = step;
        // The step count and the pod's name, each whole.
        let mut needles = vec![
            format!("4 Pod journey · {step}/{}", STEP_COUNT - 1),
            journey.pod.clone(),
        ];
        // The current stage stays in the list, and the detail pane says which it is and how
        // it was learned.
        if let Some(st) = step.checked_sub(1).and_then(|i| journey.stages.get(i)) {
            needles.push(format!(
                "{} · {}",
                stage_title(st.stage),
                source_word(st.source)
            ));
            needles.push(format!(
                "{}[{}]",
                stage_title(st.stage),
                source_word(st.source)
            ));
        }
        c.check(&s, &format!("view 4 step {step}"), &needles);
    }
}

/// A Deployment in view 4: every step of its stages and its pod list, then each pod opened.
fn view4_workload(c: &mut Checker) {
    let mut s = fixtures::state();
    s.view = View::PodJourney;
    s.journey = super::workload_fixture::state();
    let wj = s.journey.workload_journey().expect("a workload journey");
    let last = s.journey.pods_step();
    for step in 0..=last {
        s.journey.step = step;
        let mut needles = vec![format!("4 Workload journey · {step}/{last}")];
        if let Some(st) = step.checked_sub(1).and_then(|i| wj.workload.stages.get(i)) {
            let t = if st.stage.is_controller() {
                st.stage.as_str()
            } else {
                stage_title(st.stage)
            };
            needles.push(format!("{t} · {}", source_word(st.source)));
            if st.stage.is_controller() {
                needles.extend(crate::journey::workload_text::controller_lines(&st.detail));
            }
        }
        if step == last {
            for p in &wj.pods {
                let name = p.pod.rsplit('/').next().unwrap_or_default().to_string();
                needles.push(name);
            }
        }
        c.check_scrolled(&mut s, &format!("view 4 workload step {step}"), &needles);
    }
    for i in 0..wj.pods.len() {
        s.journey.pod_cursor = i;
        s.journey.pod_open = true;
        s.journey.step = 1;
        let needles = vec![
            format!("4 Pod journey · 1/{}", STEP_COUNT - 1),
            wj.pods[i].pod.clone(),
            "the Deployment's pods (Backspace)".to_string(),
        ];
        c.check(&s, &format!("view 4 workload pod {i}"), &needles);
    }
}

fn demo5() -> AppState {
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(fx::demo_cluster()));
    s.sched.reorder(false);
    s
}

fn view5(c: &mut Checker) {
    view5_steps(c, demo5(), "view 5");
    // Requests raised until no node fits: upstream's FitError and each node's reason.
    let mut s = demo5();
    for _ in 0..12 {
        crate::tui::update::update(&mut s, crate::tui::action::Action::More);
    }
    view5_steps(c, s, "view 5 FitError");
}

/// 5,000 nodes: the list scrolls and the row under the cursor stays on screen at every step.
fn view5_big(c: &mut Checker) {
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(fx::big_cluster(5000)));
    s.sched.reorder(false);
    for _ in 0..3 {
        crate::tui::update::update(&mut s, crate::tui::action::Action::PageDown);
    }
    let n = s.sched.steps(false).len();
    for i in 0..n {
        s.sched.step = i;
        let m = s.sched.model().expect("a model");
        let k = s.sched.order[s.sched.cursor];
        let needles = vec![format!("▶ {}", m.snapshot.nodes[k].name)];
        c.check(&s, &format!("view 5 5000 nodes step {}", i + 1), &needles);
    }
}

fn view5_live_cluster(c: &mut Checker) {
    // On a live cluster the header has the watch and the cluster's own choice: more rows, and
    // still every node in the final reveal.
    view5_steps(c, view5_live(None), "view 5 live");
    view5_steps(
        c,
        view5_live(Some("demo/workload-node-2")),
        "view 5 bound pod",
    );
}

fn view5_steps(c: &mut Checker, mut s: AppState, case: &str) {
    let present = crate::tui::stepped::predict(&s);
    let all = s.sched.steps(present);
    for (i, step) in all.iter().enumerate() {
        s.sched.step = i;
        s.sched.reorder(present);
        let m = s.sched.model().expect("a model");
        let t = &m.trace;
        let mut needles = vec![format!("pod {}", t.pod)];
        // Presenter mode leaves the operator's facts (release, source, node count) out.
        if !s.present {
            needles.extend([
                format!("{} nodes", m.snapshot.nodes.len()),
                m.data.source.clone(),
                format!("kube-scheduler {}", t.kube_version),
            ]);
        }
        match step {
            Step::Filter(plugins) => {
                needles.extend(steps::rejections(m, plugins).into_keys());
                let here: Vec<&str> = plugins.iter().map(|&p| m.filters[p].as_str()).collect();
                needles.extend(
                    t.prefilter
                        .iter()
                        .filter(|r| r.code == crate::scheduler::Code::Skip)
                        .filter(|r| here.contains(&r.plugin))
                        .map(|r| r.plugin.to_string()),
                );
            }
            Step::Score(j) => {
                if let Some((name, _)) = steps::score_plugins(m).get(*j) {
                    needles.push(format!("Score: {name}"));
                }
                needles.extend(
                    (0..t.score.len()).map(|si| steps::running_total(m, si, *j).to_string()),
                );
                needles.push("running total".into());
            }
            Step::Result => {
                // The final reveal: every node, the winner and every score.
                needles.extend(m.snapshot.nodes.iter().map(|n| n.name.clone()));
                if let Some(w) = &t.selected {
                    needles.push(format!("Selected: {w}"));
                }
                needles.extend(t.score.iter().map(|sc| format!("{} {}", sc.node, sc.total)));
                // No node fits: upstream's FitError, and each node's reason turned around.
                needles.extend(t.message.clone());
                let failed = t
                    .filter
                    .iter()
                    .filter(|v| t.selected.is_none() && !v.passed);
                needles.extend(failed.filter_map(|v| {
                    let k = *m.snapshot.node_index.get(&*v.node)?;
                    Some(crate::tui::sched::formula::inverted(m, k, v.reasons()))
                }));
                // Each total's breakdown, whole.
                needles.extend(t.score.iter().map(|sc| {
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
                    parts.join(" + ")
                }));
            }
            _ => needles.extend(m.snapshot.nodes.iter().map(|n| n.name.clone())),
        }
        c.check(&s, &format!("{case} step {} ({step:?})", i + 1), &needles);
    }
}

const SMALL: &[(u16, u16)] = &[(80, 24)];
const LARGE: &[(u16, u16)] = &[(120, 40)];

#[test]
fn view1_fits_80x24() {
    at(SMALL, view1)
}
#[test]
fn view1_fits_120x40() {
    at(LARGE, view1)
}
#[test]
fn view2_fits_80x24() {
    at(SMALL, view2)
}
#[test]
fn view2_fits_120x40() {
    at(LARGE, view2)
}
#[test]
fn view3_fits_80x24() {
    at(SMALL, view3)
}
#[test]
fn view3_fits_120x40() {
    at(LARGE, view3)
}
#[test]
fn view4_fits_80x24() {
    at(SMALL, view4)
}
#[test]
fn view4_workload_fits_80x24() {
    at(SMALL, view4_workload)
}
#[test]
fn view4_workload_fits_120x40() {
    at(LARGE, view4_workload)
}
#[test]
fn view4_fits_120x40() {
    at(LARGE, view4)
}
#[test]
fn view5_fits_80x24() {
    at(SMALL, view5)
}
#[test]
fn view5_fits_120x40() {
    at(LARGE, view5)
}
#[test]
fn view5_live_fits_80x24() {
    at(SMALL, view5_live_cluster)
}
#[test]
fn view5_live_fits_120x40() {
    at(LARGE, view5_live_cluster)
}
/// A watched cluster of 150,001 pods: the head's sentence about them and the watch's line,
/// with counts six digits long, still whole.
fn view5_live_counts(c: &mut Checker) {
    use crate::tui::sched::LiveState;
    use crate::tui::sched::watch::{Feed, LiveStatus};
    let mut s = view5_live(None);
    let l = s.sched.listing.as_mut().expect("a pods list");
    let bound = l.pods.iter().find(|p| p.node.is_some()).cloned();
    l.pods.extend(std::iter::repeat_n(
        bound.expect("a bound pod"),
        150_001 - l.pods.len() + 1,
    ));
    l.finished = 12_345;
    let pending = l.pending();
    s.sched.live = Some(LiveState {
        feed: Feed::new().0,
        status: LiveStatus {
            nodes: 5000,
            pods: 150_001,
            events: 123_456,
            last_event_unix: Some(s.now_unix - 3),
            resimulations: 9_999,
            build_ms: 1_234,
            ..Default::default()
        },
        applied: 9_999,
    });
    let needles = vec![
        format!(
            "live cluster: {pending} Pending pod(s), {} bound, 12345 finished — w lists all but \
             the finished, Enter simulates one",
            150_001 + 1 - pending
        ),
        "live · watching · 5000 nodes · 150001 pods".to_string(),
        "last event 3s ago".to_string(),
    ];
    c.check(&s, "view 5 live, 150,001 pods", &needles);
}

#[test]
fn view5_live_counts_fit_80x24() {
    at(SMALL, view5_live_counts)
}
#[test]
fn view5_live_counts_fit_120x40() {
    at(LARGE, view5_live_counts)
}
#[test]
fn view5_5000_nodes_keep_the_cursor_row_80x24() {
    at(SMALL, view5_big)
}
#[test]
fn view5_5000_nodes_keep_the_cursor_row_120x40() {
    at(LARGE, view5_big)
}

/// Presenter mode: the same sentences, whole, in the larger layout.
fn view5_presenter(c: &mut Checker) {
    let mut s = demo5();
    s.present = true;
    view5_steps(c, s, "view 5 presenter");
}

/// Presenter mode's questions, asked (no guess, then a guess) and revealed: the question, its
/// facts, every choice, the verdict and the answer's lines, whole.
fn questions(c: &mut Checker) {
    use crate::tui::quiz::{self, Phase, Question};
    let mut base = fixtures::state();
    base.conn
        .set(fx::connection(None), Some(&fx::alibaba_creds()));
    let mut sched = demo5();
    for (q, view) in [
        (Question::Identity, View::Kubeconfig),
        (Question::Signer, View::Certificates),
        (Question::Handshake, View::Connection),
        (Question::Filter, View::Scheduler),
    ] {
        let s = if q == Question::Filter {
            &mut sched
        } else {
            &mut base
        };
        s.present = true;
        s.view = view;
        if q == Question::Filter {
            s.sched.step = 1;
        }
        let mut a = quiz::ask(s, q).expect("a question");
        s.quiz.asking = Some(a.clone());
        let case = format!("{q:?}");
        let mut needles = vec![a.question.ask().to_string()];
        needles.extend(a.facts.iter().cloned());
        needles.extend(
            a.choices
                .iter()
                .enumerate()
                .map(|(i, ch)| format!("{} [ ] {ch}", i + 1)),
        );
        c.check(s, &format!("{case} asked"), &needles);
        s.quiz.pick(a.choices.len());
        a.phase = Phase::Reveal;
        s.quiz.asking = Some(a.clone());
        let answer = quiz::answer(s, &a).expect("an answer");
        let mut needles = answer.lines.clone();
        needles.extend(quiz::verdict(&a, &answer, s.quiz.guess(q)));
        needles.push(format!("{}  (your pick)", a.choices[a.choices.len() - 1]));
        c.check(s, &format!("{case} revealed"), &needles);
        s.quiz.asking = None;
    }
}

#[test]
fn questions_fit_80x24() {
    at(SMALL, questions)
}
#[test]
fn questions_fit_120x40() {
    at(LARGE, questions)
}

#[test]
fn view5_presenter_fits_80x24() {
    at(SMALL, view5_presenter)
}
#[test]
fn view5_presenter_fits_120x40() {
    at(LARGE, view5_presenter)
}

/// With the pod's name on rows of its own above the stages, a click still lands on the stage
/// drawn under it.
#[test]
fn view4_click_lands_on_the_stage_below_a_long_pod_name() {
    let mut s = fixtures::state();
    s.view = View::PodJourney;
    s.journey = JourneyState::new(
        "app.json".into(),
        Some(include_str!("../../../scenarios/app.json")),
        true,
    );
    let mut collected = journey_data::collected();
    collected.pod = "workshop-team-a/web-7c79c4bf97-x2b4k".into();
    s.journey.collected = Some(collected);
    s.journey.step = 12;
    let screen = render(&s, 120, 40);
    let y = screen
        .lines()
        .position(|l| l.contains("Authorization"))
        .expect("the stage is drawn") as u16;
    let body = crate::tui::views::body_area((120, 40));
    assert_eq!(
        crate::tui::views::journey::step_at(body, &s, 5, y),
        Some(3),
        "{screen}"
    );
}

/// `f` at every score step, on every scored node: the formula's lines whole, with PodTopologySpread's
/// per-domain counts (`kubernetes.io/hostname=node-1: …`) among them.
fn view5_formulas(c: &mut Checker) {
    formulas_on(c, demo5());
    // The cluster where every score plugin differs (render_finish's), app.json's neighbour.
    let data = crate::tui::sched::fetch::from_files(
        &[(
            "every.yaml".into(),
            include_str!("data/every_score_plugin.yaml").into(),
        )],
        Some("default/web"),
        fx::app_pod(),
        crate::scheduler::KubeVersion::parse("1.33").expect("version"),
    )
    .expect("cluster");
    let mut s = fixtures::state();
    s.view = View::Scheduler;
    s.sched.model = Some(Model::new(data));
    formulas_on(c, s);
}

fn formulas_on(c: &mut Checker, mut s: AppState) {
    crate::tui::update::update(&mut s, crate::tui::action::Action::ToggleFormula);
    let all = s.sched.steps(false);
    for (i, step) in all.iter().enumerate() {
        let Step::Score(j) = step else { continue };
        s.sched.step = i;
        s.sched.reorder(false);
        for cursor in 0..s.sched.order.len() {
            s.sched.cursor = cursor;
            let m = s.sched.model().expect("a model");
            let k = s.sched.order[cursor];
            let Some(si) = m.score_of[k] else { continue };
            let Some(p) = m.trace.score[si].plugins.get(*j) else {
                continue;
            };
            let needles = crate::tui::sched::formula::lines(m, k, p);
            c.check(
                &s,
                &format!("view 5 formula step {} node {k}", i + 1),
                &needles,
            );
        }
    }
}

#[test]
fn view5_formulas_fit_80x24() {
    at(SMALL, view5_formulas)
}
#[test]
fn view5_formulas_fit_120x40() {
    at(LARGE, view5_formulas)
}

/// The keys row at 80 columns: every hint on it is whole — one that does not fit is left out,
/// never cut (view 4's ended "Enter → schedule").
#[test]
fn the_footer_hints_are_whole_at_80_columns_in_every_view() {
    let keymap = crate::tui::keymap::KeyMap::default();
    for view in [
        View::Kubeconfig,
        View::Certificates,
        View::Connection,
        View::PodJourney,
        View::Scheduler,
    ] {
        let mut s = fixtures::state();
        s.view = view;
        let screen = render(&s, 80, 24);
        let footer = screen.lines().last().unwrap_or_default().trim_end();
        let hints = keymap.hints(view, false);
        assert!(
            hints
                .iter()
                .any(|(k, w)| footer.ends_with(&format!("{k} {w}"))),
            "{view:?}: {footer:?}"
        );
        assert!(footer.contains("q quit"), "{view:?}: {footer:?}");
    }
}

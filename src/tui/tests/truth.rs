//! Issue 12 §D: every sentence on screen is true. Each test draws the view at 120×40 and 80×24
//! and looks for the whole sentence inside one pane (wrapped lines joined), so a sentence cut,
//! split across panes or replaced by another fails.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

use super::fixtures::{self, press};
use crate::journey::run::WriteMode;
use crate::tui::keymap::KeyMap;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::update::Effect;
use crate::tui::views;

use KeyCode::Char;

pub(super) const SIZES: [(u16, u16); 2] = [(120, 40), (80, 24)];

fn screen(state: &AppState, w: u16, h: u16) -> Vec<Vec<String>> {
    let theme = Theme::default();
    let km = KeyMap::default();
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    term.draw(|f| views::draw(f, state, &theme, &km))
        .expect("draw");
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect())
        .collect()
}

/// The text inside the pane whose top border shows `title`, rows joined by spaces; `None`
/// when no such pane is drawn.
pub(super) fn pane_text(state: &AppState, w: u16, h: u16, title: &str) -> Option<String> {
    let rows = screen(state, w, h);
    for (y, row) in rows.iter().enumerate() {
        let line: String = row.concat();
        let Some(byte) = line.find(title) else {
            continue;
        };
        let at = line[..byte].chars().count();
        let left = (0..=at).rev().find(|&x| row[x] == "╭")?;
        let right = (at..row.len()).find(|&x| row[x] == "╮")?;
        let mut out = Vec::new();
        for r in rows.iter().skip(y + 1) {
            if r[left] == "╰" {
                break;
            }
            out.push(r[left + 1..right].concat().trim().to_string());
        }
        return Some(out.join(" "));
    }
    None
}

/// The status bar and footer: the last two rows.
pub(super) fn bottom_text(state: &AppState, w: u16, h: u16) -> String {
    let rows = screen(state, w, h);
    rows[rows.len() - 2..]
        .iter()
        .map(|r| r.concat())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whitespace removed: a sentence wrapped anywhere (even inside a URL) still matches.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Asserts `sentence` appears whole in the pane titled `title` at both sizes.
#[track_caller]
pub(super) fn assert_in_pane(state: &AppState, title: &str, sentence: &str) {
    for (w, h) in SIZES {
        let text =
            pane_text(state, w, h, title).unwrap_or_else(|| panic!("no pane {title:?} at {w}×{h}"));
        assert!(
            squash(&text).contains(&squash(sentence)),
            "{w}×{h}: {sentence:?} not whole in pane {title:?}:\n{text}"
        );
    }
}

#[track_caller]
pub(super) fn assert_not_in_pane(state: &AppState, title: &str, words: &str) {
    for (w, h) in SIZES {
        let text = pane_text(state, w, h, title).unwrap_or_default();
        assert!(
            !squash(&text).contains(&squash(words)),
            "{w}×{h}: {words:?} must not be in pane {title:?}:\n{text}"
        );
    }
}

fn write_of(effects: &[Effect]) -> Option<WriteMode> {
    match effects {
        [Effect::RunJourney { write, .. }] => Some(*write),
        _ => None,
    }
}

/// D14: a remote server without --for-real: the words say dry run, and Space sends one.
#[test]
fn view4_on_a_remote_server_says_space_sends_a_dry_run_and_it_does() {
    let mut s = fixtures::with_app_json(false);
    press(&mut s, &[Char('4')]);
    assert_in_pane(
        &s,
        "The request",
        "Space sends this to https://10.0.0.1:6443 as a dry run (dryRun=All): every check runs, nothing is stored · W creates it for real (asks first) · e edits it",
    );
    assert_not_in_pane(&s, "The request", "for real: it creates the pod there");
    for (w, h) in SIZES {
        assert!(bottom_text(&s, w, h).contains("READ-ONLY"), "{w}×{h}");
    }
    assert_eq!(
        write_of(&press(&mut s, &[Char(' ')])),
        Some(WriteMode::DryRun)
    );
}

/// D14: `--for-real` and the embedded sandbox create, and say so; after a run Space only
/// steps, and the request step says that instead of promising another send.
#[test]
fn view4_says_what_space_does_in_every_write_mode() {
    let mut s = fixtures::with_app_json(false);
    s.journey.for_real = true;
    press(&mut s, &[Char('4')]);
    assert_in_pane(
        &s,
        "The request",
        "! Space sends this to https://10.0.0.1:6443 for real (--for-real): it creates the pod there · e edits it",
    );
    assert_eq!(
        write_of(&press(&mut s, &[Char(' ')])),
        Some(WriteMode::ForReal)
    );

    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('4')]);
    assert_in_pane(
        &s,
        "The request",
        "Space sends this to the embedded cluster kexplore started: it creates the pod there · e edits it",
    );
    assert_eq!(
        write_of(&press(&mut s, &[Char(' ')])),
        Some(WriteMode::ForReal)
    );

    // A dry run made: back on the request step, Space sends nothing more.
    let mut s = fixtures::with_app_json(false);
    press(&mut s, &[Char('4'), Char(' ')]);
    let mut c = super::journey_data::collected();
    c.dry_run = true;
    s.journey.collected = Some(c);
    s.journey.running = false;
    press(&mut s, &[KeyCode::Backspace]);
    assert_eq!(s.journey.step, 0);
    assert_in_pane(
        &s,
        "The request",
        "Sent as a dry run (dryRun=All): Space shows what happened · r sends it again as a dry run (dryRun=All) · e edits it",
    );
    assert!(press(&mut s, &[Char(' ')]).is_empty(), "Space only steps");
}

/// D14's sibling: `W`'s question says what Space and r do, in the mode they do it.
#[test]
fn w_question_says_what_space_and_r_do() {
    let mut s = fixtures::with_app_json(false);
    press(&mut s, &[Char('4'), Char('W')]);
    assert_in_pane(
        &s,
        "Create for real?",
        "Any other key: no. Space and r send dry runs (dryRun=All): nothing stored.",
    );
    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('4'), Char('W')]);
    assert_in_pane(
        &s,
        "Create for real?",
        "Any other key: no. Space and r create it for real too.",
    );
}

/// D14's sibling: presenter captions of a dry run do not say the pod was stored or runs.
#[test]
fn presenter_captions_of_a_dry_run_say_nothing_was_stored() {
    let mut s = fixtures::with_app_json(false);
    press(&mut s, &[Char('4'), Char(' ')]);
    let mut c = super::journey_data::collected();
    c.dry_run = true;
    s.journey.collected = Some(c);
    s.journey.running = false;
    s.present = true;
    s.journey.step = 6;
    let caption = crate::tui::views::presenter::caption(&s);
    assert_eq!(
        caption,
        "Storage: a dry run stops here. Every check ran, but nothing was stored."
    );
    s.journey.step = 12;
    let caption = crate::tui::views::presenter::caption(&s);
    assert_eq!(
        caption,
        "No kubelet runs a dry-run pod: nothing was stored, nothing starts."
    );
    for (w, h) in SIZES {
        let all: String = screen(&s, w, h)
            .iter()
            .map(|r| r.concat())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(squash(&all).contains(&squash(&caption)), "{w}×{h}:\n{all}");
    }
}

/// The demo cluster after view 4's journey: app bound to node-3, where the server's scheduler
/// scored it 361 (the total `render_stepped::view5_every_step` shows for the pending pod).
fn demo_after_journey() -> Vec<(String, String)> {
    let mut app = serde_json::to_value(super::stepped_fixtures::app_pod()).expect("json");
    app["spec"]["nodeName"] = serde_json::json!("node-3");
    app["status"] = serde_json::json!({"phase": "Running"});
    vec![
        ("demo.yaml".into(), super::stepped_fixtures::DEMO.into()),
        ("pods".into(), app.to_string()),
    ]
}

/// Answers view 5's LoadCluster effect from `files`, as the runner does from the server.
fn load(s: &mut AppState, effects: Vec<Effect>, files: &[(String, String)]) {
    use crate::tui::action::{Action, Payload};
    let [
        Effect::LoadCluster {
            focus, fallback, ..
        },
    ] = &effects[..]
    else {
        panic!("expected one LoadCluster: {effects:?}");
    };
    let version = crate::scheduler::KubeVersion::parse("1.33").expect("version");
    let data = crate::tui::sched::fetch::from_files(
        files,
        focus.as_deref(),
        (**fallback).clone(),
        version,
    );
    crate::tui::update::update(s, Action::ClusterLoaded(Payload::new(data)));
    let last = s.sched.steps(false).len() - 1;
    s.sched.step = last;
    s.sched.reorder(false);
}

/// D16: the bound pod is simulated without itself on its node, whether view 5 is opened with
/// `5` (view 4's manifest) or with Enter from view 4 (the created pod): 361 both ways.
#[test]
fn the_bound_pod_scores_the_same_from_5_and_from_view_4() {
    let files = demo_after_journey();
    // The winner's row carries its total and the total's breakdown.
    let want = |s: &AppState| {
        assert_in_pane(s, "Nodes", "★ node-3 361");
        assert_in_pane(s, "Nodes", "Taint 300 + Fit 61 + Image 0");
    };

    let mut s = fixtures::with_app_json(true);
    let effects = press(&mut s, &[Char('5')]);
    load(&mut s, effects, &files);
    want(&s);

    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('4'), Char(' ')]);
    s.journey.collected = Some(super::journey_data::collected());
    s.journey.running = false;
    let effects = press(&mut s, &[KeyCode::Enter]);
    load(&mut s, effects, &files);
    want(&s);
}

/// The whole screen, rows joined: for lines drawn across the full width (view 5's head).
fn screen_text(state: &AppState, w: u16, h: u16) -> String {
    screen(state, w, h)
        .iter()
        .map(|r| r.concat())
        .collect::<Vec<_>>()
        .join(" ")
}

#[track_caller]
fn assert_on_screen(state: &AppState, sentence: &str) {
    for (w, h) in SIZES {
        let text = screen_text(state, w, h);
        assert!(
            squash(&text).contains(&squash(sentence)),
            "{w}×{h}: {sentence:?} not whole on screen:\n{}",
            screen(state, w, h)
                .iter()
                .map(|r| r.concat())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// View 5 on the live demo cluster after the journey, app (bound to node-3) in focus, at the
/// result step.
fn view5_bound_app() -> AppState {
    let files = demo_after_journey();
    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('4'), Char(' ')]);
    s.journey.collected = Some(super::journey_data::collected());
    s.journey.running = false;
    let effects = press(&mut s, &[KeyCode::Enter]);
    load(&mut s, effects, &files);
    let mut m = crate::scheduler::manifests::Manifests::default();
    for (name, text) in &files {
        m.add_text(name, text).expect("manifests");
    }
    let pods: Vec<_> = m.pods.into_iter().map(|(p, _)| p).collect();
    s.sched.listing = Some(crate::tui::sched::live::Listing::new(&pods, vec![]));
    s
}

fn to_result(s: &mut AppState) {
    s.sched.step = s.sched.steps(false).len() - 1;
    s.sched.reorder(false);
}

/// D15: with a what-if on, the cluster's choice is compared with the pod as it is, and the
/// change of pick is put on the what-if, not on the cluster.
#[test]
fn view5_what_if_is_not_blamed_on_the_cluster() {
    let mut s = view5_bound_app();
    assert_on_screen(
        &s,
        "✓ scheduled by the cluster to node-3; the simulation picks node-3 too",
    );
    // Tolerate every taint and select the control-plane's hostname: only it fits now.
    press(&mut s, &[Char('t'), Char('s')]);
    to_result(&mut s);
    assert_eq!(
        s.sched.model().and_then(|m| m.trace.selected.as_deref()),
        Some("control-plane")
    );
    assert_on_screen(
        &s,
        "✓ scheduled by the cluster to node-3; the simulation of the pod as it is picks node-3 too — the what-if changes the pick to control-plane",
    );
    for (w, h) in SIZES {
        let text = screen_text(&s, w, h);
        assert!(
            !text.contains("the state changed since the pod was bound"),
            "{w}×{h}: {text}"
        );
    }
    // nodeSelector hostname=node-3 (the labels go control-plane, node-1, node-2, node-3): a
    // what-if that keeps the pick says so.
    press(&mut s, &[Char('s'), Char('s'), Char('s')]);
    to_result(&mut s);
    let m = s.sched.model().expect("model");
    assert_eq!(m.trace.selected.as_deref(), Some("node-3"));
    assert!(!m.whatif.is_empty());
    assert_on_screen(
        &s,
        "✓ scheduled by the cluster to node-3; the simulation picks node-3 too, with or without the what-if",
    );
}

/// A TUI started on a sample kubeconfig, its current context resolved and inspected for real.
fn on_sample(file: &str) -> AppState {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kubeconfigs")
        .join(file);
    let source = crate::tui::session::open(Some(&path), None).expect("sample loads");
    let kc = match &source {
        crate::tui::session::Source::Loaded { kubeconfig, .. } => kubeconfig.clone(),
        crate::tui::session::Source::NotFound { .. } => panic!("{file} not found"),
    };
    let active = crate::tui::session::load_context(&kc, None);
    AppState::new(source, Some(active), crate::tui::app::now_unix())
}

/// D17: a context whose credentials the server refuses is not "✓ resolves": view 1 shows the
/// worst check's mark and words, and view 2 opens on the certificate it is about.
#[test]
fn view1_shows_the_worst_check_and_view2_opens_on_its_certificate() {
    for (file, id, subject) in [
        ("expired-client.yaml", "client-cert-expired", "CN=old-admin"),
        (
            "wrong-ca.yaml",
            "client-cert-signature-mismatch",
            "CN=kubernetes-admin",
        ),
    ] {
        let mut s = on_sample(file);
        let report = s
            .active
            .as_ref()
            .and_then(|a| a.report())
            .expect("report")
            .clone();
        let worst = report.worst_check().expect("a failing check").clone();
        assert_eq!(worst.id, id, "{file}");
        assert_in_pane(&s, "Context ", &format!("✗ {}", worst.message));
        assert_not_in_pane(&s, "Context ", "✓ resolves");
        assert_in_pane(
            &s,
            "Context ",
            "view 2 opens on the certificate this is about",
        );
        press(&mut s, &[Char('2')]);
        let rows = crate::tui::trust_tree::build(&report);
        let at = crate::tui::trust_tree::cert(&report, &rows[s.cert_cursor].fingerprint)
            .expect("the cursor's certificate");
        assert!(
            at.subject.contains(subject) && !at.is_ca,
            "{file}: view 2 opens on {}",
            at.subject
        );
        for (w, h) in SIZES {
            let text = screen_text(&s, w, h);
            assert!(text.contains(subject), "{file} {w}×{h}: {text}");
        }
    }
}

/// The TUI on the embedded cluster as `kexplore` starts it: its private kubeconfig loaded the
/// way `--kubeconfig` would, `instead_of` saying why (None with `--embedded`).
fn embedded_state(instead_of: Option<String>) -> AppState {
    use crate::tui::session::Source;
    let path = std::path::PathBuf::from("/tmp/kexplore-tui-Ab12/kubeconfig");
    let text = r#"
apiVersion: v1
kind: Config
current-context: kexplore-admin@kexplore
clusters:
- name: kexplore
  cluster: {server: "https://127.0.0.1:41234", certificate-authority-data: "AAAA"}
users:
- name: kexplore-admin
  user: {client-certificate-data: "AAAA", client-key-data: "AAAA"}
contexts:
- name: kexplore-admin@kexplore
  context: {cluster: kexplore, user: kexplore-admin}
"#;
    let kc = crate::kubeconfig::Kubeconfig::merge(vec![(
        path.clone(),
        crate::kubeconfig::load::parse(&path, text.as_bytes()).ok(),
    )]);
    let source = Source::Loaded {
        kubeconfig: std::sync::Arc::new(kc),
        selection: format!("--kubeconfig {}", path.display()),
    };
    let mut s = AppState::new(source, None, fixtures::NOW);
    s.embedded = Some(crate::tui::embedded::EmbeddedFacts {
        url: "https://127.0.0.1:41234".into(),
        kubeconfig: path,
        instead_of,
        etcd_kubeconfig: None,
    });
    s
}

/// D18: the embedded cluster's kubeconfig is not presented as a `--kubeconfig` the user gave:
/// view 1 says what it is and how to use it with kubectl.
#[test]
fn view1_says_the_embedded_kubeconfig_is_kexplores_and_how_to_use_it() {
    let s = embedded_state(None);
    let title = "Files: the embedded cluster's kubeconfig";
    assert_in_pane(
        &s,
        title,
        "kexplore wrote it and removes it when it exits. While it runs: kubectl --kubeconfig /tmp/kexplore-tui-Ab12/kubeconfig get pods",
    );
    for (w, h) in SIZES {
        let text = screen_text(&s, w, h);
        assert!(
            !text.contains("precedence order: --kubeconfig"),
            "{w}×{h}: {text}"
        );
    }
}

/// D18: a KUBECONFIG naming a missing file is said, with what kubectl would do and that
/// kexplore started its embedded cluster instead.
#[test]
fn view1_says_a_missing_kubeconfig_fell_back_to_the_embedded_cluster() {
    let looked = "none of the files in KUBECONFIG=/home/ann/nope.yaml exists";
    let s = embedded_state(Some(crate::tui::embedded::fallback_note(looked)));
    assert_in_pane(
        &s,
        "Files: the embedded cluster's kubeconfig",
        "! none of the files in KUBECONFIG=/home/ann/nope.yaml exists: kubectl would run with no contexts and try http://localhost:8080. kexplore started its embedded cluster instead.",
    );
}

/// Enter after a dry run places the pod the server would have stored, not the manifest as
/// written: a RuntimeClass's overhead and node selector (set by admission) decide its node.
#[test]
fn enter_after_a_dry_run_places_the_admitted_pod() {
    let mut s = fixtures::with_app_json(false);
    press(&mut s, &[Char('4'), Char(' ')]);
    let mut c = super::journey_data::collected();
    c.dry_run = true;
    if let Some((_, body)) = c.create.as_mut() {
        body["spec"]["nodeSelector"] = serde_json::json!({"sandbox": "gvisor"});
        body["spec"]["overhead"] = serde_json::json!({"cpu": "250m"});
    }
    s.journey.collected = Some(c);
    s.journey.running = false;
    let effects = crate::tui::update::update(&mut s, crate::tui::action::Action::OpenInScheduler);
    let [Effect::LoadCluster { fallback, .. }] = &effects[..] else {
        panic!("expected one LoadCluster: {effects:?}");
    };
    let spec = fallback.spec.clone().unwrap_or_default();
    assert_eq!(
        spec.node_selector
            .unwrap_or_default()
            .get("sandbox")
            .map(String::as_str),
        Some("gvisor")
    );
    assert!(spec.overhead.is_some_and(|o| o.contains_key("cpu")));
}

/// Presenter captions of a refused create say where it ended, not what a create usually does
/// ("the pod is written… 201 Created… the scheduler learns of it").
#[test]
fn presenter_captions_of_a_refused_create_say_where_it_ended() {
    let mut s = fixtures::with_app_json(true);
    press(&mut s, &[Char('4'), Char(' ')]);
    s.journey.collected = Some(super::journey_data::already_exists());
    s.journey.running = false;
    s.present = true;
    let caption_at = |s: &mut AppState, step: usize| {
        s.journey.step = step;
        crate::tui::views::presenter::caption(s)
    };
    assert!(
        caption_at(&mut s, 2).starts_with("Authentication: who is asking?"),
        "the stages before the refusal keep their words"
    );
    assert_eq!(
        caption_at(&mut s, 6),
        "Storage: this is where the API server refused the pod. The reason is on screen."
    );
    assert_eq!(
        caption_at(&mut s, 7),
        "The answer: an error Status with its code and reason, which kubectl prints. Nothing was created."
    );
    for step in 8..=12 {
        assert_eq!(
            caption_at(&mut s, step),
            "This never happened: the journey ended at Storage."
        );
    }
}

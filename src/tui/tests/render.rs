//! Every view drawn into a TestBackend at 120×40 and 80×24. Snapshots show the whole screen;
//! the assertions name what must be there whatever the layout.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::fixtures::{self, NOW};
use crate::pki::CheckStatus;
use crate::tui::action::{Action, View};
use crate::tui::keymap::KeyMap;
use crate::tui::session::Source;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::update::update;
use crate::tui::views;

/// The screen as plain text, one line per row, trailing spaces trimmed.
pub(super) fn render(state: &AppState, w: u16, h: u16) -> String {
    let theme = Theme::default();
    let km = KeyMap::default();
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| views::draw(f, state, &theme, &km)).unwrap();
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn with_view(view: View) -> AppState {
    let mut s = fixtures::state();
    update(&mut s, Action::ShowView(view));
    s
}

#[test]
fn view1_kubeconfig() {
    let screen = render(&fixtures::state(), 120, 40);
    for needle in [
        "1 ✓ loaded  /home/ann/.kube/config",
        "2 ! missing /home/ann/.kube/gone.yaml",
        "3 ✓ loaded  /home/ann/.kube/ci.yaml",
        "*● admin@prod",
        "ci@prod",
        "ci.yaml",
        "→ prod",
        "exec: aws",
        "! client certificate expires in 10 days",
        "client-certificate-data: DATA+OMITTED",
        "token: REDACTED",
        "ctx admin@prod",
        "user ann  groups system:users,dev",
        "! 1 warn",
        "Enter use context",
    ] {
        assert!(screen.contains(needle), "missing {needle:?} in\n{screen}");
    }
    assert!(
        !screen.contains("secret-token"),
        "secrets never reach the screen"
    );
    insta::assert_snapshot!("view1_120x40", screen);
    insta::assert_snapshot!("view1_80x24", render(&fixtures::state(), 80, 24));
}

#[test]
fn view1_shows_a_resolve_error_in_place() {
    let mut s = fixtures::state();
    update(&mut s, Action::MoveDown);
    update(
        &mut s,
        Action::ContextLoaded(Box::new(crate::tui::session::LoadedContext {
            name: "dev@lab".into(),
            resolved: Err("cluster 'lab' in /home/ann/.kube/config: certificate-authority /home/ann/.kube/missing.crt: no such file".into()),
            report: None,
        })),
    );
    let screen = render(&s, 120, 40);
    assert!(screen.contains("✗ cluster 'lab'"), "{screen}");
    assert!(screen.contains("✗ does not resolve"), "{screen}");
    update(&mut s, Action::ShowView(View::Certificates));
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("✗ Context 'dev@lab' does not resolve"),
        "{screen}"
    );
}

#[test]
fn view1_without_kubeconfig_says_where_it_looked() {
    let source = Source::NotFound {
        looked: "/home/ann/.kube/config does not exist, KUBECONFIG is not set and --kubeconfig was not given".into(),
    };
    let s = AppState::new(source, None, NOW);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("! No kubeconfig found."), "{screen}");
    assert!(
        screen.contains("/home/ann/.kube/config does not exist"),
        "{screen}"
    );
    insta::assert_snapshot!("view1_no_kubeconfig", screen);
    let mut s = s;
    update(&mut s, Action::ShowView(View::Certificates));
    assert!(render(&s, 120, 40).contains("No kubeconfig found, so there are no certificates"));
}

#[test]
fn view2_certificates() {
    let s = with_view(View::Certificates);
    let screen = render(&s, 120, 40);
    for needle in [
        "✓ CN=root-ca",
        "CA trusted for the server",
        "self-signed root",
        "└─ ✓ CN=cluster-ca",
        "└─ ✓ CN=ann",
        "client certificate",
        "expires in 364d 5h",
        "Role           the client trusts servers whose chain leads here",
        "! client certificate expires in 10 days  [client-cert-expiring]",
        "✓ client certificate is signed by a CA in the kubeconfig  [client-cert-chain]",
        "│        ! expires in 10d",
    ] {
        assert!(screen.contains(needle), "missing {needle:?} in\n{screen}");
    }
    insta::assert_snapshot!("view2_120x40", screen);
    insta::assert_snapshot!("view2_80x24", render(&s, 80, 24));
}

#[test]
fn view2_selected_leaf_counts_down_and_shows_the_identity() {
    let mut s = with_view(View::Certificates);
    update(&mut s, Action::MoveDown);
    update(&mut s, Action::MoveDown);
    let screen = render(&s, 120, 40);
    assert!(screen.contains("! expires in 10d"), "{screen}");
    assert!(screen.contains("CN → user      ann"), "{screen}");
    assert!(
        screen.contains("Key pair       ✓ the key matches this certificate"),
        "{screen}"
    );
    insta::assert_snapshot!("view2_leaf_selected", screen);
    update(&mut s, Action::Tick(NOW + 13 * 86_400));
    assert!(render(&s, 120, 40).contains("✗ EXPIRED 3d ago"));
}

#[test]
fn view2_marks_a_broken_link_and_a_missing_issuer() {
    let mut report = fixtures::report();
    report.issuance[2].verified = false;
    report.issuance.remove(1);
    let mut s = fixtures::state();
    s.active = Some(fixtures::loaded(Ok(report)));
    update(&mut s, Action::ShowView(View::Certificates));
    let screen = render(&s, 120, 40);
    assert!(screen.contains("! CN=cluster-ca"), "{screen}");
    assert!(screen.contains("issuer not in the kubeconfig"), "{screen}");
    assert!(screen.contains("✗ CN=ann"), "{screen}");
    assert!(screen.contains("signature does not verify"), "{screen}");
}

#[test]
fn view2_error_state_when_inspection_fails() {
    let mut s = fixtures::state();
    s.active = Some(fixtures::loaded(Err(
        "user 'admin': client-certificate-data is not a PEM certificate".into(),
    )));
    update(&mut s, Action::ShowView(View::Certificates));
    let screen = render(&s, 120, 40);
    assert!(
        screen.contains("✗ Cannot inspect the credentials of context 'admin@prod'"),
        "{screen}"
    );
    assert!(screen.contains("✗ credentials not inspected"), "{screen}");
    insta::assert_snapshot!("view2_error", screen);
}

#[test]
fn help_lists_every_binding_of_the_keymap() {
    let mut s = fixtures::state();
    update(&mut s, Action::ToggleHelp);
    let screen = render(&s, 120, 40);
    // Taller than 40 rows: what is below is reached with ↓, as the footer says.
    assert!(screen.contains("↑↓ scroll"), "{screen}");
    let mut seen = screen.clone();
    for _ in 0..20 {
        update(&mut s, Action::MoveDown);
        seen.push_str(&render(&s, 120, 40));
    }
    for b in KeyMap::default().bindings {
        assert!(seen.contains(b.label), "{} missing from help", b.label);
        assert!(
            seen.contains(b.help),
            "{} missing from help:\n{seen}",
            b.help
        );
    }
    for c in crate::tui::command::COMMANDS {
        assert!(seen.contains(c.usage), "{} missing from help", c.usage);
    }
    update(&mut s, Action::ToggleHelp);
    update(&mut s, Action::ToggleHelp);
    insta::assert_snapshot!("help_120x40", screen);
    insta::assert_snapshot!("help_80x24", render(&s, 80, 24));
}

#[test]
fn a_tiny_terminal_gets_a_message_not_a_panic() {
    let screen = render(&fixtures::state(), 30, 6);
    assert!(screen.contains("Terminal too small"), "{screen}");
    for (w, h) in [(1, 1), (40, 10), (60, 12), (200, 60)] {
        for v in View::ALL {
            render(&with_view(v), w, h);
        }
    }
}

#[test]
fn statuses_are_symbols_in_every_theme_and_without_colour() {
    let _ = CheckStatus::Ok;
    for (name, _) in crate::tui::theme::BUILTIN {
        let theme = Theme::builtin(name).unwrap().without_color();
        let km = KeyMap::default();
        let s = with_view(View::Certificates);
        let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
        term.draw(|f| views::draw(f, &s, &theme, &km)).unwrap();
        let buf = term.backend().buffer();
        let has = |sym: &str| buf.content.iter().any(|c| c.symbol() == sym);
        assert!(has("✓") && has("!"), "{name}");
        assert!(
            buf.content
                .iter()
                .all(|c| c.fg == ratatui::style::Color::Reset
                    && c.bg == ratatui::style::Color::Reset),
            "NO_COLOR leaves no colour ({name})"
        );
    }
}

#[test]
fn view2_fields_scroll_on_a_small_screen() {
    let mut s = with_view(View::Certificates);
    update(&mut s, Action::MoveDown);
    update(&mut s, Action::MoveDown);
    let before = render(&s, 80, 24);
    assert!(
        before.contains("CN → user"),
        "the identity comes first: {before}"
    );
    assert!(!before.contains("SHA-256"), "{before}");
    assert!(before.contains("PgUp/PgDn scroll"), "{before}");
    update(&mut s, Action::PageDown);
    let after = render(&s, 80, 24);
    assert!(after.contains("SHA-256"), "{after}");
    update(&mut s, Action::MoveUp);
    assert_eq!(s.fields_scroll, 0, "another certificate starts at its top");
}

#[test]
fn merged_overlay_fits_a_small_screen_and_scrolls() {
    let mut s = fixtures::state();
    update(&mut s, Action::ShowMerged);
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("Merged kubeconfig (kubectl config view)"),
        "{screen}"
    );
    assert!(
        screen.contains("certificate-authority-data: DATA+OMITTED"),
        "{screen}"
    );
    assert!(!screen.contains("secret-token"));
    insta::assert_snapshot!("merged_overlay_80x24", screen);
    for _ in 0..100 {
        update(&mut s, Action::MoveDown);
    }
    let screen = render(&s, 80, 24);
    assert!(
        screen.contains("current-context: admin@prod"),
        "scrolls to the end: {screen}"
    );
}

/// The screen row and column where `needle` is drawn.
fn find(screen: &str, needle: &str) -> (u16, u16) {
    screen
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            l.find(needle)
                .map(|byte| (l[..byte].chars().count() as u16, y as u16))
        })
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{screen}"))
}

#[test]
fn clicks_land_on_the_row_drawn_there() {
    let mut s = fixtures::state();
    let (x, y) = find(&render(&s, 120, 40), "dev@lab  ");
    assert!(update(&mut s, Action::Click(x, y)).is_empty());
    assert_eq!(s.context_cursor, 1, "a click moves the cursor");
    let effects = update(&mut s, Action::Click(x, y));
    assert_eq!(
        effects,
        vec![crate::tui::update::Effect::LoadContext("dev@lab".into())],
        "a second click switches, as Enter does"
    );

    let mut s = with_view(View::Certificates);
    for (needle, row) in [("✓ CN=ann", 2), ("✓ CN=cluster-ca", 1), ("✓ CN=root-ca", 0)] {
        let (x, y) = find(&render(&s, 120, 40), needle);
        update(&mut s, Action::Click(x, y));
        assert_eq!(s.cert_cursor, row, "{needle}");
    }
    let (x, y) = find(&render(&s, 120, 40), "client certificate");
    update(&mut s, Action::Click(x, y));
    assert_eq!(s.cert_cursor, 2, "any line of a row selects it");
}

/// The screen's text with the pane borders gone and wrapped rows joined, so a sentence a pane
/// or the caption box wrapped still reads whole.
pub fn flat(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect::<Vec<_>>()
        .join(" ")
}

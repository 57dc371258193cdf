//! The TUI's start-up errors: each is one plain line on stderr and exit 2, printed before the
//! terminal is touched (so stdout stays empty: no escape sequences, no alternate screen).

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:6443'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n";

fn assert_input_error(args: &[&str], words: &[&str]) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "exit code for {args:?}; stderr: {stderr}");
    assert!(
        stdout.is_empty(),
        "nothing on stdout for {args:?}: {stdout:?}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    for w in words {
        assert!(stderr.contains(w), "{args:?}: {stderr:?} lacks {w:?}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn unknown_theme_name() {
    assert_input_error(
        &["--theme", "no-such-theme"],
        &["--theme no-such-theme", "not a built-in theme"],
    );
}

#[test]
fn malformed_themes_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let builtin = include_str!("../themes/default.yaml");
    let bad_colour = write(
        &dir,
        "colour.yaml",
        &builtin.replace("fg: green", "fg: chartreuse"),
    );
    assert_input_error(
        &["--theme", &bad_colour],
        &["colour.yaml", "unknown colour", "chartreuse"],
    );
    let missing = write(
        &dir,
        "missing.yaml",
        &builtin.replace("  error:", "  # error:"),
    );
    assert_input_error(
        &["--theme", &missing],
        &["missing.yaml", "missing field `error`"],
    );
    let not_yaml = write(&dir, "broken.yaml", "roles: [unclosed\n");
    assert_input_error(&["--theme", &not_yaml], &["broken.yaml"]);
}

#[test]
fn unknown_context_lists_the_known_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = write(&dir, "kc.yaml", KUBECONFIG);
    assert_input_error(
        &["--kubeconfig", &kc, "--context", "nope"],
        &["\"nope\" does not exist", "known contexts: a"],
    );
}

#[test]
fn malformed_or_missing_explicit_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = write(&dir, "bad.yaml", "clusters: [unclosed\n");
    assert_input_error(&["--kubeconfig", &kc], &["bad.yaml", "not valid YAML"]);
    let gone = dir.path().join("gone.yaml").display().to_string();
    assert_input_error(&["--kubeconfig", &gone], &["gone.yaml"]);
}

#[test]
fn builtin_themes_are_accepted() {
    // With a valid theme the next problem (an unknown context) is reported instead, which
    // shows the theme passed without ever starting the UI.
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = write(&dir, "kc.yaml", KUBECONFIG);
    for theme in ["default", "light", "high-contrast"] {
        assert_input_error(
            &["--theme", theme, "--kubeconfig", &kc, "--context", "nope"],
            &["does not exist"],
        );
    }
}

#[test]
fn without_a_terminal_it_says_so_and_writes_nothing_to_stdout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = write(&dir, "kc.yaml", KUBECONFIG);
    // stdout is a pipe here, as in `kexplore | less` or a script.
    assert_input_error(
        &["--kubeconfig", &kc],
        &["needs a terminal", "kexplore certs"],
    );
}

//! End to end: the real binary in a detached tmux session at 120×40 (and 80×24) on
//! `sample-kubeconfigs/kubeadm.yaml` (self-signed `CN=kubernetes` CA, admin
//! `CN=kubernetes-admin,O=system:masters`). Views 1 and 2 must render, `?` must list the keys,
//! and `q` must exit 0 with the terminal given back (alternate screen left, mouse reporting
//! off, cursor shown, cooked mode). Every wait is a bounded poll. Skipped, with a note, where
//! tmux is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);

/// A private tmux server (its own socket), killed when the test ends however it ends.
struct Tmux {
    socket: String,
    config: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn text(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.cmd(args).stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.text(&["capture-pane", "-p", "-t", "kx"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "kx"];
        args.extend_from_slice(keys);
        let out = self.cmd(&args);
        assert!(out.status.success(), "send-keys {keys:?} failed");
    }

    /// Polls until `pred` holds for the pane's text (or a format), or fails with the last text.
    fn wait_for(
        &self,
        what: &str,
        read: impl Fn(&Tmux) -> String,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let text = read(self);
            if pred(&text) {
                return text;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; last seen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for(what, Tmux::screen, pred)
    }

    /// Waits until every needle is on screen; on timeout names the ones still missing.
    fn wait_all(&self, what: &str, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            let missing: Vec<&&str> = needles.iter().filter(|n| !screen.contains(**n)).collect();
            if missing.is_empty() {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}: missing {missing:?} in\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kubeconfigs")
        .join(name)
}

/// Starts kexplore under a shell in a private tmux server of `cols`×`rows`. The shell prints
/// kexplore's exit status on the normal screen, then waits for a line: that leaves time to
/// read the terminal's modes after kexplore is gone, and the `read` only completes if the
/// tty is back in cooked mode.
fn start(tag: &str, dir: &Path, kubeconfig: &Path, size: (u16, u16), env: &str) -> Tmux {
    start_with(
        tag,
        dir,
        &format!("--kubeconfig '{}'", kubeconfig.display()),
        size,
        env,
    )
}

/// As `start`, with any kexplore arguments (already quoted for sh).
fn start_with(tag: &str, dir: &Path, args: &str, size: (u16, u16), env: &str) -> Tmux {
    // Keep the pane after the shell exits so its exit status can be read.
    let config = dir.join("tmux.conf");
    std::fs::write(&config, "set -g remain-on-exit on\nset -g status off\n").expect("tmux.conf");
    let tmux = Tmux {
        socket: format!("kexplore-test-{tag}-{}", std::process::id()),
        config,
    };
    let bin = env!("CARGO_BIN_EXE_kexplore");
    let command = format!(
        "{env} sh -c '\"$0\" \"$@\"; s=$?; echo \"kexplore exited with status $s\"; read _; exit $s' '{bin}' {args}"
    );
    let (cols, rows) = (size.0.to_string(), size.1.to_string());
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "kx",
        "-x",
        &cols,
        "-y",
        &rows,
        &command,
    ]);
    assert!(
        out.status.success(),
        "tmux new-session: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux
}

/// Presses q and checks that everything the UI changed in the terminal is undone.
fn quit_and_check_restored(tmux: &Tmux) {
    tmux.keys(&["q"]);
    let screen = tmux.wait_screen("kexplore to exit", |s| s.contains("kexplore exited"));
    assert!(screen.contains("kexplore exited with status 0"), "{screen}");
    assert!(
        !screen.contains("Chain of trust")
            && !screen.contains("Contexts (")
            && !screen.contains("Nodes ("),
        "the alternate screen is gone:\n{screen}"
    );
    let modes = tmux.text(&[
        "display-message",
        "-p",
        "-t",
        "kx",
        "#{alternate_on} #{mouse_any_flag} #{mouse_button_flag} #{mouse_sgr_flag} #{cursor_flag}",
    ]);
    // While the UI runs these read "1 1 0 1 0": alternate screen, mouse capture (SGR), no cursor.
    assert_eq!(
        modes.trim(),
        "0 0 0 0 1",
        "alternate screen, mouse modes and cursor after exit"
    );
    // In raw mode Enter sends a bare CR and `read` would wait forever: the pane ending shows
    // the tty is cooked again.
    tmux.keys(&["Enter"]);
    let dead = tmux.wait_for(
        "the pane to end",
        |t| {
            t.text(&[
                "display-message",
                "-p",
                "-t",
                "kx",
                "#{pane_dead} #{pane_dead_status}",
            ])
        },
        |s| s.trim().starts_with('1'),
    );
    // tmux can mark a pane dead before it has reaped the process; the status, when known, is 0.
    assert!(matches!(dead.trim(), "1" | "1 0"), "pane: {dead}");
}

#[test]
fn views_render_help_lists_keys_and_q_restores_the_terminal() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start("120x40", dir.path(), &sample("kubeadm.yaml"), (120, 40), "");

    // View 1: files, contexts, users, where each came from, the merged result.
    // A capture can catch a frame half written, so each step waits for everything it needs.
    tmux.wait_all(
        "view 1",
        &[
            "Contexts (1)",
            "✓ loaded",
            "kubeadm.yaml",
            "*● kubernetes-admin@kubernetes",
            "✓ resolves",
            "client-certificate-data: DATA+OMITTED",
            "user kubernetes-admin  groups system:masters",
        ],
    );

    // View 2: the chain of trust with the admin certificate under the self-signed CA.
    tmux.keys(&["2"]);
    tmux.wait_all(
        "view 2",
        &[
            "Chain of trust",
            "✓ CN=kubernetes",
            "self-signed root",
            "└─ ✓ CN=kubernetes-admin",
            "client certificate",
            "expires in",
            "Checks (",
        ],
    );
    tmux.keys(&["j"]);
    tmux.wait_all(
        "the admin certificate's fields",
        &[
            "CN → user      kubernetes-admin",
            "O → groups     system:masters",
        ],
    );

    // Help: every key of the contract.
    tmux.keys(&["?"]);
    tmux.wait_all(
        "help",
        &[
            "Keys — Esc or ? closes",
            "q / Ctrl-C",
            "Tab",
            "Shift-Tab",
            "↑/k",
            "↓/j",
            "Enter",
            "Space/n",
            "Backspace/p",
            "Esc",
        ],
    );
    tmux.keys(&["Escape"]);
    tmux.wait_screen("help closed", |s| !s.contains("Keys — Esc"));

    // View 3 connects to the kubeconfig's server (nothing may listen there: either way it says so).
    tmux.keys(&["3"]);
    tmux.wait_screen("view 3", |s| s.contains("Connection"));

    quit_and_check_restored(&tmux);
}

#[test]
fn small_terminal_still_shows_views_1_and_2() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start(
        "80x24",
        dir.path(),
        &sample("multi-context.yaml"),
        (80, 24),
        "NO_COLOR=1",
    );
    tmux.wait_all("view 1", &["Contexts (3)", "Enter use context"]);
    tmux.keys(&["2"]);
    tmux.wait_all("view 2", &["Chain of trust", "Checks ("]);
    // NO_COLOR: the pane holds bold and reverse video but not one colour.
    let styled = tmux.text(&["capture-pane", "-p", "-e", "-t", "kx"]);
    let colours = colour_codes(&styled);
    assert!(colours.is_empty(), "colours under NO_COLOR: {colours:?}");
    assert!(
        styled.contains("\u{1b}[1m") || styled.contains(";1m") || styled.contains("[1;"),
        "bold is kept"
    );
    quit_and_check_restored(&tmux);
}

/// The SGR parameters in `text` that set a foreground or background colour.
fn colour_codes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for seq in text.split("\u{1b}[").skip(1) {
        let Some(end) = seq.find('m') else { continue };
        let params = &seq[..end];
        if !params.chars().all(|c| c.is_ascii_digit() || c == ';') {
            continue;
        }
        let colour = params
            .split(';')
            .filter_map(|p| p.parse::<u16>().ok())
            .any(|p| matches!(p, 30..=38 | 40..=48 | 90..=97 | 100..=107));
        if colour {
            found.push(params.to_string());
        }
    }
    found
}

/// Presses `key` `n` times, one send-keys each (a burst can be coalesced by tmux).
fn press_n(tmux: &Tmux, key: &str, n: usize) {
    for _ in 0..n {
        tmux.keys(&[key]);
    }
}

/// The workshop path on `kexplore --embedded`: views 1 and 2 show the freshly minted PKI,
/// view 3's ladder ends with the identity from SelfSubjectReview, view 4 follows app.json to
/// Running, Enter opens its cycle in view 5 (node-3 wins, as the server decided), `+` on cpu
/// until nothing fits gives upstream's FitError, and q gives the terminal back.
fn walk_embedded(tag: &str, size: (u16, u16), env: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start_with(tag, dir.path(), "--embedded", size, env);
    tmux.wait_all(
        "view 1 on the embedded cluster",
        &["kexplore-admin", "✓ resolves"],
    );
    tmux.keys(&["2"]);
    tmux.wait_all("view 2", &["Chain of trust", "CN=kexplore-ca"]);
    tmux.keys(&["3"]);
    tmux.wait_all("view 3's first rung", &["TCP connect", "step 1/10"]);
    press_n(&tmux, "Space", 9);
    tmux.wait_all(
        "view 3's last rung",
        &[
            "step 10/10",
            "connected, and the server knows who you are",
            "kexplore-admin",
        ],
    );
    tmux.keys(&["4"]);
    tmux.wait_all("view 4's request", &["curl -X POST", "Request"]);
    press_n(&tmux, "Space", 12);
    tmux.wait_all("view 4's last stage", &["12/12", "Kubelet", "Running"]);
    tmux.keys(&["Enter"]);
    tmux.wait_all(
        "view 5 on the journey's pod",
        &["pod default/app", "Nodes (4)", "step 1/"],
    );
    press_n(&tmux, "Space", 8);
    tmux.wait_all("view 5's result", &["Selected: node-3", "★"]);
    if env.contains("NO_COLOR") {
        // Bars, the winner and greyed nodes keep their glyphs and lose every colour.
        let styled = tmux.text(&["capture-pane", "-p", "-e", "-t", "kx"]);
        let colours = colour_codes(&styled);
        assert!(colours.is_empty(), "colours under NO_COLOR: {colours:?}");
    }
    press_n(&tmux, "+", 12);
    tmux.wait_all("the FitError", &["No node fits", "0/4 nodes are available"]);
    quit_and_check_restored(&tmux);
}

#[test]
fn embedded_walks_views_1_to_5_and_the_journey_to_the_end() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    walk_embedded("embedded-120x40", (120, 40), "");
}

#[test]
fn embedded_walk_fits_80x24_without_colour() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    walk_embedded("embedded-80x24", (80, 24), "NO_COLOR=1");
}

/// Finishing touches on `kexplore --embedded`: `/` narrows view 1's contexts and Esc brings
/// them back; once view 4 has created app.json, view 5 lists the live cluster's pods (`w`) and
/// choosing the bound pod sets the cluster's choice beside the simulation's.
#[test]
fn embedded_filter_and_live_pods_list() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start_with("embedded-finish", dir.path(), "--embedded", (120, 40), "");
    tmux.wait_all("view 1", &["kexplore-admin", "✓ resolves"]);
    tmux.keys(&["/"]);
    for c in ["j", "a", "n", "e"] {
        tmux.keys(&[c]);
    }
    tmux.wait_all("the filter narrowing the contexts", &["/jane▏", "(1 of 2)"]);
    tmux.keys(&["Escape"]);
    tmux.wait_screen("the filter cleared", |s| {
        !s.contains("/jane") && s.contains("Contexts (2)")
    });
    tmux.keys(&["4"]);
    tmux.wait_all("view 4's request", &["curl -X POST", "Request"]);
    press_n(&tmux, "Space", 12);
    tmux.wait_all("view 4's last stage", &["12/12", "Running"]);
    tmux.keys(&["5"]);
    tmux.wait_all(
        "view 5 on the live cluster",
        &["live cluster:", "w lists them"],
    );
    tmux.keys(&["w"]);
    tmux.wait_all(
        "the pods list",
        &["Pods: ", "default/app", "on node-3", "Enter simulates"],
    );
    tmux.keys(&["Enter"]);
    tmux.wait_all(
        "the bound pod in focus",
        &["pod default/app", "scheduled by the cluster to node-3"],
    );
    press_n(&tmux, "Space", 8);
    tmux.wait_all(
        "the bound pod's comparison",
        &["scheduled by the cluster to node-3; the simulation picks node-3 too"],
    );
    quit_and_check_restored(&tmux);
}

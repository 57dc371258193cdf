//! End to end: the real binary in a detached tmux session at 120×40 (and 80×24) on
//! `sample-kubeconfigs/kubeadm.yaml` (self-signed `CN=kubernetes` CA, admin
//! `CN=kubernetes-admin,O=system:masters`). Views 1 and 2 must render, `?` must list the keys,
//! and `q` must exit 0 with the terminal given back (alternate screen left, mouse reporting
//! off, cursor shown, cooked mode). Every wait is a bounded poll. Skipped, with a note, where
//! tmux is not installed.

mod tmux_support;

use std::path::{Path, PathBuf};

use tmux_support::{Tmux, quit_and_check_restored, start_with, tmux_available};

/// kexplore on `kubeconfig` (see `tmux_support::start_with`).
fn start(tag: &str, dir: &Path, kubeconfig: &Path, size: (u16, u16), env: &str) -> Tmux {
    start_with(
        tag,
        dir,
        &format!("--kubeconfig '{}'", kubeconfig.display()),
        size,
        env,
    )
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kubeconfigs")
        .join(name)
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
            // The worst check, with its mark: kubeadm's admin bypasses RBAC.
            "! user 'kubernetes-admin' is in group system:masters",
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
        &[
            "kexplore-admin",
            "! user 'kexplore-admin' is in group system:masters",
        ],
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
    // Issue 14 §1: the header is whole at every width (it wraps), not cut at the edge.
    wait_sentence(
        &tmux,
        "view 5's header, whole",
        "the server's release (v1.33.1-kexplore) · 4 nodes · https://127.0.0.1:",
    );
    press_n(&tmux, "Space", 8);
    tmux.wait_all("view 5's result", &["Selected: node-3", "★"]);
    // The final reveal shows every node, each total with its whole breakdown.
    tmux.wait_all(
        "every node in the final reveal",
        &[
            "control-plane",
            "node-1",
            "node-2",
            "node-3",
            "+ Fit 61 + Image 0",
        ],
    );
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
    tmux.wait_all(
        "view 1",
        &[
            "kexplore-admin",
            "! user 'kexplore-admin' is in group system:masters",
        ],
    );
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

/// The screen without borders or whitespace: a sentence wrapped in a pane still reads whole.
fn squashed(screen: &str) -> String {
    screen
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '│' | '╭' | '╮' | '╰' | '╯' | '─'))
        .collect()
}

fn wait_sentence(tmux: &Tmux, what: &str, sentence: &str) -> String {
    let want = squashed(sentence);
    tmux.wait_screen(what, |s| squashed(s).contains(&want))
}

/// Issue 12 D18: a KUBECONFIG naming a missing file is not a silent fallback. kexplore says on
/// stderr (left on the terminal after the UI) and in view 1 what kubectl would do and that it
/// started its embedded cluster instead; the embedded kubeconfig is shown as kexplore's, with
/// the kubectl line to use it.
#[test]
fn a_missing_kubeconfig_says_the_embedded_cluster_runs_instead() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let missing = dir.path().join("nope.yaml");
    let tmux = start_with(
        "missing-kubeconfig",
        dir.path(),
        "",
        (80, 24),
        &format!(
            "HOME='{}' KUBECONFIG='{}'",
            home.display(),
            missing.display()
        ),
    );
    let note = format!(
        "none of the files in KUBECONFIG={} exists: kubectl would run with no contexts and try http://localhost:8080. kexplore started its embedded cluster instead.",
        missing.display()
    );
    wait_sentence(&tmux, "view 1's note", &format!("! {note}"));
    let screen = wait_sentence(
        &tmux,
        "the embedded kubeconfig's kubectl line",
        "kexplore wrote it and removes it when it exits. While it runs: kubectl --kubeconfig",
    );
    assert!(
        !screen.contains("precedence order: --kubeconfig"),
        "{screen}"
    );
    quit_and_check_restored(&tmux);
    // With the lines scrolled above the pane's top.
    let after = tmux.text(&["capture-pane", "-p", "-S", "-100", "-t", "kx"]);
    assert!(
        squashed(&after).contains(&squashed(&format!("kexplore: {note}"))),
        "the note stays on the terminal:\n{after}"
    );
}

/// Issue 12 D14: on a kubeconfig's server (no --for-real) view 4 says Space sends a dry run,
/// beside the READ-ONLY badge, and W's question says what Space and r do meanwhile.
#[test]
fn view4_on_a_remote_server_says_dry_run() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start(
        "remote-dry-run",
        dir.path(),
        &sample("kubeadm.yaml"),
        (80, 24),
        "",
    );
    tmux.wait_all("view 1", &["kubernetes-admin@kubernetes"]);
    tmux.keys(&["4"]);
    let screen = wait_sentence(
        &tmux,
        "view 4's request step",
        "Space sends this to https://127.0.0.1:6443 as a dry run (dryRun=All): every check runs, nothing is stored · W creates it for real (asks first) · e edits it",
    );
    assert!(screen.contains("READ-ONLY"), "{screen}");
    assert!(
        !screen.contains("for real: it creates the pod there"),
        "{screen}"
    );
    tmux.keys(&["W"]);
    wait_sentence(
        &tmux,
        "W's question",
        "Any other key: no. Space and r send dry runs (dryRun=All): nothing stored.",
    );
    tmux.keys(&["n"]);
    quit_and_check_restored(&tmux);
}

/// Issue 14 §2: `--present --autoplay 0.5` at 80×24 tells the whole story unattended, view
/// after view in the seeds' order — view 4 up to the scheduler's watch, view 5's filter and
/// score, then view 4's binding and kubelet — counting "step N" and, once every view's length
/// is known, "of M", one M to the end; a key takes over and Backspace goes back.
#[test]
fn presenter_autoplay_tells_the_story_across_views_to_the_end() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start_with(
        "present-auto",
        dir.path(),
        "--embedded --present --autoplay 0.5",
        (80, 24),
        "",
    );
    let title = |s: &str| s.lines().nth(1).unwrap_or_default().trim().to_string();
    let step_of = |t: &str| -> Option<(usize, usize)> {
        let rest = t.split("step ").nth(1)?;
        let mut words = rest.split_whitespace();
        let n = words.next()?.parse().ok()?;
        let _of = words.next()?;
        let m = words.next()?.parse().ok()?;
        Some((n, m))
    };
    let started = std::time::Instant::now();
    let mut views: Vec<char> = Vec::new();
    let questions = [
        "Which user will the API server see you as?",
        "Which CA signed the client certificate?",
        "Will the handshake pass?",
        "Which nodes pass the filter?",
        "Which node wins?",
    ];
    let mut asked: std::collections::BTreeSet<&str> = Default::default();
    // Every "of M" the room was shown: one number, never a total that grows as views load.
    let mut totals: std::collections::BTreeSet<usize> = Default::default();
    let end = loop {
        let s = tmux.screen();
        let t = title(&s);
        asked.extend(questions.iter().copied().filter(|q| s.contains(q)));
        totals.extend(step_of(&t).map(|(_, m)| m));
        if let Some(v) = t.chars().next().filter(char::is_ascii_digit)
            && views.last() != Some(&v)
        {
            views.push(v);
        }
        if let Some((n, m)) = step_of(&t)
            && n == m
            && t.starts_with("4 Pod journey")
            && s.contains("Running")
        {
            break s;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "the story did not end; views so far {views:?}:\n{s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(
        views,
        ['1', '2', '3', '4', '5', '4'],
        "the seeds' order:\n{end}"
    );
    assert_eq!(
        asked.len(),
        questions.len(),
        "every question asked: {asked:?}"
    );
    assert!(title(&end).contains("autoplay every 0.5s"), "{end}");
    let (_, total) = step_of(&title(&end)).expect("step N of M");
    assert_eq!(
        totals,
        [total].into(),
        "the title's total once shown never changed"
    );
    tmux.keys(&["BSpace"]);
    let back = tmux.wait_screen("a key takes over and goes back", |s| {
        let t = title(s);
        t.contains("Space next") && step_of(&t) == Some((total - 1, total))
    });
    assert!(title(&back).starts_with("4 Pod journey"), "{back}");
    quit_and_check_restored(&tmux);
}

/// Issue 14 §4: `:lesson NAME` in the TUI hands the terminal to the lesson player on a fresh
/// embedded cluster; q there comes back to the views, which say the lesson ended.
#[test]
fn colon_lesson_plays_a_lesson_and_comes_back() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start_with("colon-lesson", dir.path(), "--embedded", (80, 24), "");
    tmux.wait_all("view 1", &["kexplore-admin"]);
    tmux.keys(&[":"]);
    for c in "lesson seeds-experiment".chars() {
        let key = if c == ' ' {
            "Space".to_string()
        } else {
            c.to_string()
        };
        tmux.keys(&[key.as_str()]);
    }
    tmux.wait_all("the command typed", &[":lesson seeds-experiment▏"]);
    tmux.keys(&["Enter"]);
    tmux.wait_all(
        "the lesson's first screen",
        &[
            "step 1 of 7 · 1 Kubeconfig",
            "From a kubeconfig to a running pod",
        ],
    );
    tmux.keys(&["q"]);
    tmux.wait_all(
        "back in the views",
        &[
            "Contexts (2)",
            "lesson 'From a kubeconfig to a running pod' ended",
        ],
    );
    quit_and_check_restored(&tmux);
}

/// Issue 16 §2: with `--embedded --etcd`, `E` in views 2 and 3 shows the API server's own
/// chain to etcd — its etcd client certificate under the etcd CA, decoded and checked — and the
/// handshake with the real etcd, which answers its release and health.
#[test]
fn etcd_chain_is_the_third_chain_in_views_2_and_3() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    if !std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("etcd").is_file()))
    {
        println!("note: etcd is not on PATH; skipping (Debian: apt install etcd-server)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = start_with("etcd-chain", dir.path(), "--embedded --etcd", (120, 40), "");
    tmux.wait_screen("the TUI", |s| s.contains("Contexts ("));
    tmux.keys(&["2"]);
    tmux.wait_screen("view 2", |s| s.contains("client ↔ API server"));
    tmux.keys(&["E"]);
    let chain = tmux.wait_screen("the etcd chain", |s| {
        s.contains("CN=kube-apiserver-etcd-client")
    });
    assert!(chain.contains("✓ CN=etcd-ca"), "{chain}");
    assert!(chain.contains("API server → etcd"), "{chain}");
    tmux.keys(&["3"]);
    tmux.wait_screen("the handshake with etcd", |s| s.contains("TCP connect"));
    for _ in 0..12 {
        tmux.keys(&["Space"]);
    }
    let done = tmux.wait_screen("etcd's answers", |s| {
        s.contains("etcd accepted the API server's certificate")
    });
    assert!(
        done.contains("sends CN=kube-apiserver-etcd-client"),
        "{done}"
    );
    assert!(done.contains("etcd 3."), "{done}");
    assert!(done.contains("healthy"), "{done}");
    // Back on the kubeconfig's chain: the API server's own handshake.
    tmux.keys(&["E"]);
    tmux.wait_screen("the kubeconfig's chain", |s| s.contains("3 Connection ·"));
    quit_and_check_restored(&tmux);
}

//! Every built-in lesson runs unattended on a fresh embedded cluster (stdout is not a terminal,
//! so each screen is printed) and exits 0 with every reveal matching one of its choices; a
//! broken lesson exits 2 naming its file and line.

use std::process::Command;

fn kexplore() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kexplore"))
}

#[test]
fn every_built_in_lesson_runs_unattended_and_every_answer_is_a_choice() {
    let lessons: Vec<std::path::PathBuf> = std::fs::read_dir("lessons")
        .expect("lessons/")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().and_then(|e| e.to_str()) == Some("yaml"))
        .collect();
    // Each lesson runs on an embedded cluster of its own, mostly waiting on its pods: all at
    // once.
    let runs: Vec<_> = lessons
        .iter()
        .map(|path| {
            kexplore()
                .args(["lesson", path.to_str().expect("path"), "--autoplay", "0"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run kexplore")
        })
        .collect();
    for (path, run) in lessons.iter().zip(runs) {
        let out = run.wait_with_output().expect("kexplore lesson");
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {err}\n{text}",
            path.display()
        );
        assert!(
            !text.contains("the action failed"),
            "{}:\n{text}",
            path.display()
        );
        assert!(
            !text.contains("(none of the choices)"),
            "{}:\n{text}",
            path.display()
        );
        // A screen that asks about the filter or the phase does not show the filter's verdict.
        for screen in text.split("── ") {
            let asks = screen.contains("? Which nodes pass the filter?")
                || screen.contains("? What phase");
            assert!(
                !(asks && (screen.contains("✓ Filter") || screen.contains("✗ Filter"))),
                "{}: the answer shows before its reveal:\n{screen}",
                path.display()
            );
            // Nor one that asks whether the pod gets in, admission's verdict.
            let asks_admission = screen.contains("let it in");
            assert!(
                !(asks_admission
                    && (screen.contains("✓ Admission") || screen.contains("✗ Admission"))),
                "{}: the answer shows before its reveal:\n{screen}",
                path.display()
            );
        }
        for screen in text.split("── ") {
            // A node's taint or cordon changes no pod: an earlier step's journey under it
            // would read as this one's.
            let node_action = [
                "✓ tainted node",
                "✓ removed the taint",
                "✓ cordoned",
                "✓ uncordoned",
            ]
            .iter()
            .any(|d| screen.contains(d));
            assert!(
                !(node_action && screen.contains("✓ TLS handshake")),
                "{}: an earlier pod's journey under a node action:\n{screen}",
                path.display()
            );
            // "Which node wins?" with one node through the filter asks what the screen says.
            if screen.contains("? Which node wins?") {
                let passed = screen
                    .lines()
                    .find_map(|l| l.strip_prefix("passed the filter: "))
                    .unwrap_or_default();
                assert!(
                    passed.contains(", "),
                    "{}: a question its own screen answers:\n{screen}",
                    path.display()
                );
            }
        }
        // The winner is named when revealed, scored or not (one feasible node is not scored).
        let screens: Vec<&str> = text.split("── ").collect();
        for pair in screens.windows(2) {
            if pair[0].contains("? Which node wins?") {
                assert!(
                    pair[1].contains("★ winner"),
                    "{}: the reveal names no winner:\n{}",
                    path.display(),
                    pair[1]
                );
            }
        }
        let steps = text.matches("answer: ").count();
        assert!(steps > 0, "{}: no reveal\n{text}", path.display());
    }
    assert!(
        lessons.len() >= 4,
        "built-in lessons found: {}",
        lessons.len()
    );
}

#[test]
fn the_seeds_experiment_names_no_winner_before_it_asks_and_every_node_after() {
    let out = kexplore()
        .args(["lesson", "lessons/seeds-experiment.yaml", "--autoplay", "0"])
        .output()
        .expect("run kexplore");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let ask = text.find("? Which node wins?").expect("the question");
    let before = &text[..ask];
    let screen_start = before.rfind("── ").unwrap_or(0);
    let screen = &before[screen_start..];
    assert!(
        !screen.contains("winner") && !screen.contains("Binding"),
        "{screen}"
    );
    let after = &text[ask..];
    let reveal = &after[after.find("answer: ").expect("reveal")..];
    for node in ["node-1", "node-2", "node-3", "control-plane"] {
        assert!(reveal.contains(node), "{node} missing from\n{reveal}");
    }
}

/// `kexplore lesson FILE` on a broken lesson: it exits 2; its stderr.
fn refused(file: &std::path::Path) -> String {
    let out = kexplore()
        .args(["lesson", file.to_str().expect("path")])
        .output()
        .expect("run kexplore");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

#[test]
fn a_broken_lesson_exits_2_naming_its_line() {
    let dir = std::env::temp_dir().join(format!("kexplore-lesson-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("broken.yaml");
    std::fs::write(
        &file,
        "title: t\nsteps:\n  - caption: c\n    view: scheduler\n    action:\n      cordn: node-1\n",
    )
    .expect("write");
    let err = refused(&file);
    assert!(
        err.contains("broken.yaml:6: steps[0].action: unknown field `cordn`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lesson_whose_scheduler_config_is_broken_exits_2_naming_both_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("profiles.yaml");
    std::fs::write(
        &file,
        "title: t\nscheduler_config: sched.yaml\nsteps:\n  - caption: c\n    view: scheduler\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("sched.yaml"),
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: 7\n",
    )
    .expect("write");
    let err = refused(&file);
    assert!(
        err.contains("profiles.yaml: scheduler_config:")
            && err.contains("sched.yaml: profiles[0].schedulerName"),
        "{err}"
    );
}

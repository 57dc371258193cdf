//! The workshop's one command, as an instructor runs it: `kexplore lesson
//! lessons/seeds-experiment.yaml --autoplay 0.5` in an 80×24 tmux pane, no key pressed. It must
//! reach its last step and exit 0; the screen that asks "Which node wins?" names no winner; the
//! reveal after it names every node. Skipped, with a note, where tmux is missing.

mod tmux_support;

use std::path::Path;
use std::time::{Duration, Instant};

use tmux_support::{start_with, tmux_available};

#[test]
fn the_seeds_experiment_runs_unattended_at_80x24_and_exits_0() {
    if !tmux_available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kexplore-lesson-tmux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let lesson = Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons/seeds-experiment.yaml");
    let args = format!("lesson '{}' --autoplay 0.5", lesson.display());
    let tmux = start_with("lesson", &dir, &args, (80, 24), "");
    // Every distinct screen, in order, until the process says how it ended (bounded poll).
    let mut screens: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let s = tmux.screen();
        if screens.last() != Some(&s) {
            screens.push(s.clone());
        }
        if s.contains("kexplore exited with status") || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = tmux.cmd(&["kill-server"]);
    let _ = std::fs::remove_dir_all(&dir);
    let last = screens.last().cloned().unwrap_or_default();
    assert!(last.contains("kexplore exited with status 0"), "{last}");
    assert!(
        screens.iter().any(|s| s.contains("step 7 of 7")),
        "never reached the last step"
    );
    let ask = screens
        .iter()
        .position(|s| s.contains("? Which node wins?"))
        .expect("the question was asked");
    assert!(
        !screens[ask].contains("winner") && !screens[ask].contains("★"),
        "{}",
        screens[ask]
    );
    let reveal = screens[ask..]
        .iter()
        .find(|s| s.contains("★ winner"))
        .expect("the winner was revealed");
    for node in ["node-1", "node-2", "node-3", "control-plane"] {
        assert!(reveal.contains(node), "{node} missing from\n{reveal}");
    }
}

/// An instructor at 80×24 answers, then presses Space twice while the next step's pod is still
/// being followed: the step says it is working at once, the second Space does not reveal an
/// answer the room never saw asked, and every choice of the question fits on screen.
#[test]
fn a_second_space_while_a_step_works_does_not_skip_its_question() {
    if !tmux_available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("kexplore-lesson-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let lesson = Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons/why-pending.yaml");
    let args = format!("lesson '{}'", lesson.display());
    let tmux = start_with("lesson-keys", &dir, &args, (80, 24), "");
    tmux.wait_all("the first question", &["? What phase", "2  Pending"]);
    tmux.keys(&["2"]);
    tmux.wait_all("the first reveal", &["answer: 2 Pending"]);
    tmux.keys(&["Space"]);
    let working = tmux.wait_screen("the next step, at once", |s| s.contains("step 2 of 8"));
    tmux.keys(&["Space"]);
    let asked = tmux.wait_all("the second question", &["? Which node wins?", "4  node-3"]);
    std::thread::sleep(Duration::from_millis(500));
    let still = tmux.screen();
    let _ = tmux.cmd(&["kill-server"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        working.contains("… sending app.json") || working.contains("? Which node wins?"),
        "{working}"
    );
    assert!(!asked.contains("answer:"), "{asked}");
    assert!(
        still.contains("? Which node wins?") && !still.contains("answer:"),
        "{still}"
    );
}

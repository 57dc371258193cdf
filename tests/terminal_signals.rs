//! Terminal safety (issue 7): the TUI in a private tmux server receives SIGTERM, SIGHUP, or
//! loses its terminal (`tmux kill-session`); no kexplore process may be left behind, and after
//! a signal the terminal must be given back (alternate screen left, mouse reporting off, cursor
//! shown, cooked mode). A panic inside the taken-over terminal (forced by re-running this test
//! binary as the child, which enters kexplore's `TerminalGuard` and panics) must restore the
//! terminal and print a short report. Every wait is bounded; tmux servers are killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);
const CHILD_ENV: &str = "KEXPLORE_TERMINAL_PANIC_CHILD";

struct Tmux {
    socket: String,
    config: PathBuf,
}

impl Tmux {
    fn start(tag: &str, dir: &Path, command: &str) -> Tmux {
        let config = dir.join("tmux.conf");
        std::fs::write(&config, "set -g remain-on-exit on\nset -g status off\n")
            .expect("tmux.conf");
        let t = Tmux {
            socket: format!("kexplore-term-{tag}-{}", std::process::id()),
            config,
        };
        let out = t.cmd(&[
            "new-session",
            "-d",
            "-s",
            "kx",
            "-x",
            "120",
            "-y",
            "40",
            command,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

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

    fn fmt(&self, f: &str) -> String {
        self.text(&["display-message", "-p", "-t", "kx", f])
            .trim()
            .to_string()
    }

    fn wait(&self, what: &str, pred: impl Fn(&Tmux) -> bool) {
        let start = Instant::now();
        while !pred(self) {
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// After the program under test is gone: modes back, and the shell's `read` completes on
    /// Enter only in cooked mode.
    fn check_restored(&self) {
        let modes = self.fmt(
            "#{alternate_on} #{mouse_any_flag} #{mouse_button_flag} #{mouse_sgr_flag} #{cursor_flag}",
        );
        assert_eq!(
            modes,
            "0 0 0 0 1",
            "alternate screen, mouse modes, cursor; screen:\n{}",
            self.screen()
        );
        let _ = self.cmd(&["send-keys", "-t", "kx", "Enter"]);
        self.wait("the pane to end (cooked mode)", |t| {
            t.fmt("#{pane_dead}") == "1"
        });
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

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kubeconfigs/kubeadm.yaml")
}

/// The shell wrapper: run, print the status on the normal screen, wait for a line.
fn wrapped(program: &str) -> String {
    format!("sh -c '{program}; s=$?; echo \"exited with status $s\"; read _; exit $s'")
}

fn children(ppid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // pid (comm) state ppid ...
        let after = stat.rsplit(')').next().unwrap_or("");
        if after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) == Some(ppid) {
            out.push(pid);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Starts the TUI, waits for view 1, returns the tmux and kexplore's pid.
fn start_tui(tag: &str, dir: &Path) -> (Tmux, u32) {
    let bin = env!("CARGO_BIN_EXE_kexplore");
    let t = Tmux::start(
        tag,
        dir,
        &wrapped(&format!("{bin} --kubeconfig {}", sample().display())),
    );
    t.wait("view 1", |t| t.screen().contains("Contexts ("));
    let sh: u32 = t.fmt("#{pane_pid}").parse().expect("pane pid");
    // pane_pid is the outer sh -c; kexplore is its child.
    let pid = children(sh)
        .into_iter()
        .find(|p| {
            std::fs::read_link(format!("/proc/{p}/exe"))
                .map(|e| e.ends_with("kexplore"))
                .unwrap_or(false)
        })
        .expect("kexplore under the pane's shell");
    (t, pid)
}

fn signal_leaves_no_process_and_restores(sig: &str) {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (t, pid) = start_tui(sig, dir.path());
    let start = Instant::now();
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(ok.success());
    t.wait("kexplore to exit", |t| {
        t.screen().contains("exited with status")
    });
    let took = start.elapsed();
    let screen = t.screen();
    println!(
        "TERMINAL | SIG{sig} | {} | {} ms",
        screen
            .lines()
            .find(|l| l.contains("exited with status"))
            .unwrap_or("")
            .trim(),
        took.as_millis()
    );
    assert!(!alive(pid), "kexplore {pid} still running after SIG{sig}");
    t.check_restored();
}

#[test]
fn sigterm_exits_and_restores_the_terminal() {
    signal_leaves_no_process_and_restores("TERM");
}

#[test]
fn sighup_exits_and_restores_the_terminal() {
    signal_leaves_no_process_and_restores("HUP");
}

#[test]
fn kill_session_leaves_no_process() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (t, pid) = start_tui("killsession", dir.path());
    let start = Instant::now();
    let _ = t.cmd(&["kill-session", "-t", "kx"]);
    while alive(pid) && start.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "TERMINAL | tmux kill-session | kexplore alive afterwards: {} | {} ms",
        alive(pid),
        start.elapsed().as_millis()
    );
    assert!(
        !alive(pid),
        "kexplore {pid} survived the loss of its terminal"
    );
}

/// The child half of `forced_panic_restores_the_terminal`: a no-op unless run by it.
#[test]
fn panic_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let guard = kexplore::tui::terminal::TerminalGuard::enter().expect("terminal");
    std::thread::sleep(Duration::from_millis(300));
    let _keep = &guard;
    panic!("forced panic for the terminal safety test");
}

#[test]
fn forced_panic_restores_the_terminal() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let t = Tmux::start(
        "panic",
        dir.path(),
        &wrapped(&format!(
            "{CHILD_ENV}=1 {} --exact panic_child --nocapture --test-threads 1",
            exe.display()
        )),
    );
    t.wait("the child to exit", |t| {
        t.screen().contains("exited with status")
    });
    let screen = t.screen();
    println!(
        "TERMINAL | forced panic | {}",
        screen
            .lines()
            .find(|l| l.contains("panicked at"))
            .unwrap_or("(no panic line)")
            .trim()
    );
    assert!(
        screen.contains("forced panic for the terminal safety test"),
        "the panic report is on the normal screen:\n{screen}"
    );
    t.check_restored();
}

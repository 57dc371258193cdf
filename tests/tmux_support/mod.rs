//! The TUI binary in a private tmux server, for the end-to-end tests (`tui_tmux`, `tui_soak`):
//! start it, read the pane, send keys, and check that `q` gives the terminal back. Every wait
//! is a bounded poll.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(15);

/// A private tmux server (its own socket), killed when the test ends however it ends.
pub struct Tmux {
    socket: String,
    config: PathBuf,
}

impl Tmux {
    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    pub fn text(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.cmd(args).stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.text(&["capture-pane", "-p", "-t", "kx"])
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "kx"];
        args.extend_from_slice(keys);
        let out = self.cmd(&args);
        assert!(out.status.success(), "send-keys {keys:?} failed");
    }

    /// Polls until `pred` holds for the pane's text (or a format), or fails with the last text.
    pub fn wait_for(
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

    pub fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for(what, Tmux::screen, pred)
    }

    /// Waits until every needle is on screen; on timeout names the ones still missing.
    pub fn wait_all(&self, what: &str, needles: &[&str]) -> String {
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

impl Tmux {
    /// The kexplore process under the pane's shell, once it runs.
    pub fn kexplore_pid(&self) -> Option<u32> {
        let shell: u32 = self
            .text(&["display-message", "-p", "-t", "kx", "#{pane_pid}"])
            .trim()
            .parse()
            .ok()?;
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
            let (comm, rest) = stat.rsplit_once(')')?;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == shell && comm.ends_with("(kexplore")).then_some(pid)
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Starts kexplore with `args` (already quoted for sh) under a shell in a private tmux server
/// of `cols`×`rows`, with `env` (`NAME=value ...`) before it. The shell prints kexplore's exit
/// status on the normal screen, then waits for a line: that leaves time to read the terminal's
/// modes after kexplore is gone, and the `read` only completes if the tty is back in cooked mode.
pub fn start_with(tag: &str, dir: &Path, args: &str, size: (u16, u16), env: &str) -> Tmux {
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
pub fn quit_and_check_restored(tmux: &Tmux) {
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

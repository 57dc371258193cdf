//! Taking over the terminal and always giving it back: raw mode, the alternate screen and
//! mouse capture on the way in; the reverse on every way out — normal return, error (the
//! guard's `Drop`) and panic (the hook restores before the message is printed, so the
//! message lands on the normal screen instead of vanishing with the alternate one).

use std::io::{self, Stdout, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// Whether the terminal is currently taken over, so restoring twice is harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Owns the taken-over terminal; dropping it restores the terminal.
pub struct TerminalGuard {
    pub terminal: Tui,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        // Nothing has changed until raw mode is on: if that fails there is nothing to undo,
        // and restoring would only print escape sequences to wherever stdout goes.
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let setup = || -> io::Result<Tui> {
            execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
            let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
            terminal.clear()?;
            Ok(terminal)
        };
        match setup() {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl TerminalGuard {
    /// Gives the terminal back for a while (to $EDITOR); `resume` takes it again.
    pub fn suspend(&mut self) {
        restore();
    }

    /// Takes the terminal again after `suspend` and forces a full redraw.
    pub fn resume(&mut self) -> io::Result<()> {
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        self.terminal.clear()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back. Safe to call any number of times, from any path.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    // Best effort: each step is tried even if an earlier one failed.
    let _ = disable_raw_mode();
    let mut out = io::stdout();
    let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, Show);
    let _ = out.flush();
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// The TUI owns the terminal (raw mode, alternate screen, mouse capture). SIGTERM, SIGHUP (the
/// terminal went away) and SIGINT would otherwise kill the process with all of that still set:
/// give the terminal back first, then exit with 128 + the signal's number as the default action
/// would. Only for the TUI: `serve` and `journey` shut down gracefully on their own signals.
pub fn exit_on_signals_restoring_terminal() {
    // The handlers are registered here, before the caller enters raw mode: registered on the
    // thread instead, a signal arriving on a loaded machine before that thread ran would still
    // take the default action and leave the terminal raw.
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return;
    };
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        let _entered = rt.enter();
        (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        )
    };
    let (Ok(mut term), Ok(mut hup), Ok(mut int)) = signals else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            rt.block_on(async {
                let code = tokio::select! {
                    _ = term.recv() => 128 + 15,
                    _ = hup.recv() => 128 + 1,
                    _ = int.recv() => 128 + 2,
                };
                restore();
                crate::tui::embedded::remove_private_files();
                std::process::exit(code);
            });
        });
    // Without the thread the default actions stay: the process still ends, only less tidily.
    drop(spawned);
}

//! The loop: terminal events and effect results arrive on one channel; each batch becomes
//! actions (through the keymap), `update` applies them and returns effects for the runner,
//! and the screen is drawn once per batch.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, MouseButton, MouseEventKind};

use super::action::Action;
use super::effects::EffectRunner;
use super::keymap::KeyMap;
use super::quiz::Phase;
use super::state::AppState;
use super::terminal::TerminalGuard;
use super::theme::Themes;
use super::update::{Effect, update};
use super::views;

/// What arrives on the loop's channel.
#[derive(Debug)]
pub enum AppEvent {
    /// A terminal event: key, mouse, resize.
    Input(Event),
    /// An action produced elsewhere: a clock tick, an effect's result.
    Action(Action),
}

/// How often the clock ticks (expiry countdowns) and the input thread checks for shutdown.
const TICK: Duration = Duration::from_secs(1);
/// How often autoplay's clock beats while it runs: fractions of a second (`--autoplay 0.5`)
/// need finer steps than the clock's tick.
const BEAT: Duration = Duration::from_millis(100);
const POLL: Duration = Duration::from_millis(100);
/// At most one frame per this: whatever arrives meanwhile joins the next batch, so a flood of
/// results (or a held key) costs one draw per frame, not one per message.
pub const FRAME: Duration = Duration::from_millis(33);

/// What the loop did, written as JSON to `$KEXPLORE_TUI_STATS` on exit (the soak test reads it).
#[derive(Debug, Default, serde::Serialize)]
struct LoopStats {
    redraws: u64,
    messages: u64,
    largest_batch: usize,
    live_updates_applied: u64,
    watch_events: u64,
    resimulations: u64,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Runs the UI until the user quits. The terminal is restored however this returns.
/// `rt` runs the network effects (and, with `--embedded`, the server itself).
pub fn run(mut state: AppState, themes: &Themes, rt: tokio::runtime::Handle) -> io::Result<()> {
    let keymap = KeyMap::default();
    let (tx, rx) = mpsc::channel();
    let runner = EffectRunner::new(tx.clone(), state.kubeconfig_arc(), rt);
    let mut guard = TerminalGuard::enter()?;
    // Beats are sent only while autoplay runs (an idle screen is not redrawn for nothing).
    let beats = Arc::new(AtomicBool::new(state.autoplay.is_some()));
    let mut input = Input::start(tx.clone(), beats.clone());
    let mut stats = LoopStats::default();
    let result = (|| -> io::Result<()> {
        let size = guard.terminal.size()?;
        state.size = (size.width, size.height);
        for effect in super::stepped::on_enter(&mut state) {
            runner.run(effect);
        }
        guard
            .terminal
            .draw(|f| views::draw(f, &state, themes.pick(state.present), &keymap))?;
        let mut drawn_at = Instant::now();
        while !state.quit {
            let batch = next_batch(&rx, drawn_at + FRAME)?;
            stats.messages += batch.len() as u64;
            stats.largest_batch = stats.largest_batch.max(batch.len());
            for ev in batch {
                // Autoplay runs until a key is pressed: then the presenter drives.
                if matches!(&ev, AppEvent::Input(Event::Key(k)) if k.kind == event::KeyEventKind::Press)
                {
                    state.autoplay = None;
                    beats.store(false, Ordering::Relaxed);
                }
                let Some(action) = to_action(ev, &state, &keymap) else {
                    continue;
                };
                for effect in update(&mut state, action) {
                    match effect {
                        Effect::Edit(path) => {
                            // $EDITOR needs the terminal as it was: stop reading keys, give
                            // the terminal back, and take it again afterwards.
                            input.stop();
                            guard.suspend();
                            let edited = super::editor::edit(&path);
                            guard.resume()?;
                            input = Input::start(tx.clone(), beats.clone());
                            let _ = tx.send(AppEvent::Action(Action::ManifestEdited(edited)));
                        }
                        Effect::Lesson(path) => {
                            // The lesson player draws on the terminal itself, as $EDITOR does.
                            input.stop();
                            guard.suspend();
                            let done = super::lesson::from_file(&path, themes.pick(state.present));
                            guard.resume()?;
                            input = Input::start(tx.clone(), beats.clone());
                            // The clock stood still while the lesson had the terminal.
                            let _ = tx.send(AppEvent::Action(Action::Tick(now_unix())));
                            let _ = tx.send(AppEvent::Action(Action::LessonDone(done)));
                        }
                        other => runner.run(other),
                    }
                }
                if state.quit {
                    break;
                }
            }
            if !state.quit {
                guard
                    .terminal
                    .draw(|f| views::draw(f, &state, themes.pick(state.present), &keymap))?;
                drawn_at = Instant::now();
                stats.redraws += 1;
            }
        }
        Ok(())
    })();
    input.stop();
    drop(guard);
    if let Some(live) = &state.sched.live {
        stats.live_updates_applied = live.applied;
        stats.watch_events = live.status.events;
        stats.resimulations = live.status.resimulations;
    }
    write_stats(&stats);
    result
}

/// Best effort: the stats are a diagnostic, never a reason to fail the exit.
fn write_stats(stats: &LoopStats) {
    if let Some(path) = std::env::var_os("KEXPLORE_TUI_STATS")
        && let Ok(text) = serde_json::to_string(stats)
    {
        let _ = std::fs::write(path, text + "\n");
    }
}

/// The input thread and the flag that stops it.
struct Input {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Input {
    fn start(tx: Sender<AppEvent>, beats: Arc<AtomicBool>) -> Input {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = Some(spawn_input(tx, stop.clone(), beats));
        Input { stop, thread }
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Blocks for the first event, then takes whatever else arrives before `not_before` (the
/// next frame may not be drawn earlier) and whatever is already waiting.
fn next_batch(rx: &Receiver<AppEvent>, not_before: Instant) -> io::Result<Vec<AppEvent>> {
    let stopped = || io::Error::other("the input thread stopped");
    let first = rx.recv().map_err(|_| stopped())?;
    let mut batch = vec![first];
    loop {
        let now = Instant::now();
        if now >= not_before {
            break;
        }
        match rx.recv_timeout(not_before - now) {
            Ok(ev) => batch.push(ev),
            Err(mpsc::RecvTimeoutError::Timeout) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(stopped()),
        }
    }
    batch.extend(rx.try_iter());
    Ok(batch)
}

/// Reads terminal events (and ticks the clock) until `stop` is set. Polling with a timeout
/// rather than blocking lets the loop stop it, e.g. before handing the terminal to $EDITOR.
fn spawn_input(
    tx: Sender<AppEvent>,
    stop: Arc<AtomicBool>,
    beats: Arc<AtomicBool>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut last_tick = Instant::now();
        let mut last_beat = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let wait = if beats.load(Ordering::Relaxed) {
                BEAT
            } else {
                POLL
            };
            match event::poll(wait) {
                Ok(true) => match event::read() {
                    Ok(ev) => {
                        if tx.send(AppEvent::Input(ev)).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                },
                Ok(false) => {}
                Err(_) => return,
            }
            if beats.load(Ordering::Relaxed) && last_beat.elapsed() >= BEAT {
                last_beat = Instant::now();
                if tx.send(AppEvent::Action(Action::Beat(now_ms()))).is_err() {
                    return;
                }
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                if tx.send(AppEvent::Action(Action::Tick(now_unix()))).is_err() {
                    return;
                }
            }
        }
    })
}

/// Turns one event into an action: keys through the keymap, the mouse by position.
pub fn to_action(ev: AppEvent, state: &AppState, keymap: &KeyMap) -> Option<Action> {
    if let AppEvent::Input(Event::Key(k)) = &ev {
        if state.command.is_some() {
            return line_action(k, COMMAND_KEYS);
        }
        if state.typing {
            return line_action(k, FILTER_KEYS);
        }
    }
    if let AppEvent::Input(Event::Key(k)) = &ev
        && let Some(d) = guess_digit(k, state)
    {
        return Some(Action::Guess(d));
    }
    match ev {
        AppEvent::Action(a) => Some(a),
        AppEvent::Input(Event::Key(k)) => keymap.action_for(&k, state.view, state.overlay_open()),
        AppEvent::Input(Event::Resize(w, h)) => Some(Action::Resize(w, h)),
        AppEvent::Input(Event::Mouse(m)) => match m.kind {
            MouseEventKind::ScrollUp => Some(Action::MoveUp),
            MouseEventKind::ScrollDown => Some(Action::MoveDown),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
            _ => None,
        },
        AppEvent::Input(_) => None,
    }
}

/// At a presenter question (and view 5's "which node wins?") the digits are the room's guess,
/// not views.
fn guess_digit(k: &ratatui::crossterm::event::KeyEvent, state: &AppState) -> Option<usize> {
    use ratatui::crossterm::event::{KeyCode, KeyEventKind};
    let KeyCode::Char(c @ '1'..='9') = k.code else {
        return None;
    };
    let question = super::story::asking(state).is_some_and(|a| a.phase == Phase::Ask);
    let winner = state.view == super::action::View::Scheduler
        && matches!(
            state.sched.current(super::stepped::predict(state)),
            Some(super::sched::steps::Step::Predict)
        );
    let asking = k.kind != KeyEventKind::Release && !state.overlay_open() && (question || winner);
    asking.then(|| c as usize - '0' as usize)
}

/// The actions of a line being typed (the `/` filter, the `:` command line).
struct LineKeys {
    input: fn(char) -> Action,
    back: Action,
    end: fn(bool) -> Action,
}

const FILTER_KEYS: LineKeys = LineKeys {
    input: Action::FilterInput,
    back: Action::FilterBack,
    end: Action::FilterEnd,
};

const COMMAND_KEYS: LineKeys = LineKeys {
    input: Action::CommandInput,
    back: Action::CommandBack,
    end: Action::CommandEnd,
};

/// While a line is typed every key is text, except the ones that end it (Enter keeps or
/// runs it, Esc drops it) and Ctrl-C.
fn line_action(k: &ratatui::crossterm::event::KeyEvent, keys: LineKeys) -> Option<Action> {
    use ratatui::crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};
    if k.kind == KeyEventKind::Release {
        return None;
    }
    match k.code {
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Some(Action::Quit),
        KeyCode::Char(c) => Some((keys.input)(c)),
        KeyCode::Backspace => Some(keys.back),
        KeyCode::Enter => Some((keys.end)(true)),
        KeyCode::Esc => Some((keys.end)(false)),
        _ => None,
    }
}

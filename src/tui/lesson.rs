//! The lesson player: one screen per step (caption, facts, question), then the step's reveal
//! computed by `lesson::run`. Space/Enter moves on, 1-9 guess, q quits; `--autoplay SECS` moves
//! on by itself (three times as long at a question) until any key takes over. Without a
//! terminal on stdout each screen is printed as text, so a script (or a test) can run it.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::widgets::big;
use crate::lesson::run::Session;
use crate::lesson::screen::{Screen, facts, key_fact, reveal};
use crate::lesson::{Choices, Lesson};

/// What a wait ended with.
enum Input {
    Next,
    /// Backspace: the screen before (screens already shown are kept; nothing is redone).
    Back,
    Guess(usize),
    Quit,
}

enum Out {
    Terminal(TerminalGuard),
    Text,
}

/// Why a lesson could not be played: the lesson's own input (exit 2), or the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    Input(String),
    Failed(String),
}

/// Plays `lesson` (read from `file`) on a fresh embedded cluster (with the lesson's scheduler
/// profiles), then stops the cluster. The TUI's `:lesson` runs it with the terminal handed
/// over, as `kexplore lesson` does.
pub fn on_embedded(
    lesson: &Lesson,
    file: &std::path::Path,
    autoplay: Option<f64>,
    scenario: &[std::path::PathBuf],
    theme: &Theme,
) -> Result<(), RunError> {
    crate::client::exec::forbid_terminal();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Failed(format!("cannot start the runtime: {e}")))?;
    let base = file
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let profiles = match &lesson.scheduler_config {
        Some(c) => Some(
            crate::apiserver::controllers::placement::KubeScheduler::profiles_from_file(
                &base.join(c),
            )
            .map_err(|e| RunError::Input(format!("{}: scheduler_config: {e}", file.display())))?,
        ),
        None => None,
    };
    let embedded = super::embedded::Embedded::start(&rt, scenario, false, profiles)
        .map_err(RunError::Failed)?;
    let result = (|| {
        let scratch = crate::scratch::private_dir("lesson").map_err(RunError::Failed)?;
        super::embedded::remember_private(&scratch);
        let signer = crate::lesson::run::Signer {
            ca_cert_pem: embedded.ca().cert_pem.clone(),
            ca_key_pem: embedded.ca().key_pem.clone(),
        };
        let mut session = Session::new(&base, embedded.kubeconfig_path(), signer, scratch.clone())
            .map_err(RunError::Failed)?;
        let played = play(lesson, &mut session, rt.handle(), theme, autoplay);
        let _ = std::fs::remove_dir_all(&scratch);
        played.map_err(|e| RunError::Failed(format!("cannot use the terminal: {e}")))
    })();
    embedded.stop(&rt);
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// `:lesson` in the TUI: loads `path` and plays it on a fresh embedded cluster; the lesson's
/// title when it ends, or why it could not run.
pub fn from_file(path: &std::path::Path, theme: &Theme) -> Result<String, String> {
    let lesson = crate::lesson::load(path).map_err(|e| e.to_string())?;
    on_embedded(&lesson, path, None, &[], theme).map_err(|e| match e {
        RunError::Input(m) | RunError::Failed(m) => m,
    })?;
    Ok(lesson.title)
}

/// Plays `lesson` on `session`; returns when the last step was shown (or q was pressed).
pub fn play(
    lesson: &Lesson,
    session: &mut Session,
    rt: &tokio::runtime::Handle,
    theme: &Theme,
    mut autoplay: Option<f64>,
) -> io::Result<()> {
    let mut out = if io::stdout().is_terminal() {
        Out::Terminal(TerminalGuard::enter()?)
    } else {
        Out::Text
    };
    let n = lesson.steps.len();
    let mut shown: Vec<Screen> = Vec::new();
    for (i, step) in lesson.steps.iter().enumerate() {
        let title = match step.stage {
            Some(s) => format!("{} · {}", step.view.title(), s.title()),
            None => step.view.title().to_string(),
        };
        let progress = format!("step {} of {n}", i + 1);
        // A create follows its pod for seconds: the room sees the step begin at once.
        if let Some(a) = &step.action {
            working(
                &mut out,
                &Screen {
                    progress: progress.clone(),
                    title: title.clone(),
                    caption: step.caption.clone(),
                    done: Some(format!("… {}", a.doing())),
                    busy: true,
                    ..Default::default()
                },
                &lesson.title,
                theme,
            )?;
        }
        let done = step
            .action
            .as_ref()
            .map(|a| match rt.block_on(session.act(a)) {
                Ok(line) => format!("✓ {line}"),
                Err(e) => format!("✗ the action failed: {e}"),
            });
        let hide = step.question.as_ref().map(|q| q.reveal);
        let choices = match step.question.as_ref().map(|q| &q.choices) {
            Some(Choices::Nodes) => rt.block_on(session.nodes()),
            Some(Choices::List(l)) => l.clone(),
            None => Vec::new(),
        };
        // Keys pressed while it ran were meant for the screen before: a second Space must not
        // reveal an answer the room never saw asked.
        if let Input::Quit = typed_ahead(&out)? {
            return Ok(());
        }
        let mut screen = Screen {
            progress,
            title,
            caption: step.caption.clone(),
            done,
            facts: facts(session, step, hide),
            question: step.question.as_ref().map(|q| q.ask.clone()),
            choices: choices.clone(),
            key_fact: None,
            reveal: None,
            busy: false,
        };
        let factor = if step.question.is_some() { 3.0 } else { 1.0 };
        let input = live(
            &mut out,
            &mut shown,
            &screen,
            &lesson.title,
            theme,
            &mut autoplay,
            factor,
        )?;
        let guess = match input {
            Input::Quit => return Ok(()),
            Input::Guess(g) if g < choices.len() => Some(g),
            _ => None,
        };
        if let Some(q) = &step.question {
            let answer = rt.block_on(session.answer(q));
            screen.reveal = Some(reveal(&answer, &choices, guess));
            screen.key_fact = key_fact(&answer, &choices);
            screen.facts = facts(session, step, None);
            let input = live(
                &mut out,
                &mut shown,
                &screen,
                &lesson.title,
                theme,
                &mut autoplay,
                2.0,
            )?;
            if let Input::Quit = input {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Shows a new screen; Backspace walks back through the ones before it and Space forward
/// again, until the new screen is current once more.
fn live(
    out: &mut Out,
    shown: &mut Vec<Screen>,
    screen: &Screen,
    lesson: &str,
    theme: &Theme,
    autoplay: &mut Option<f64>,
    factor: f64,
) -> io::Result<Input> {
    shown.push(screen.clone());
    let last = shown.len() - 1;
    let mut at = last;
    loop {
        let input = show(out, &shown[at], lesson, theme, autoplay, factor, at == last)?;
        match input {
            Input::Back => at = at.saturating_sub(1),
            Input::Quit => return Ok(Input::Quit),
            other if at == last => return Ok(other),
            _ => at += 1,
        }
    }
}

fn show(
    out: &mut Out,
    screen: &Screen,
    lesson: &str,
    theme: &Theme,
    autoplay: &mut Option<f64>,
    factor: f64,
    current: bool,
) -> io::Result<Input> {
    match out {
        Out::Text => {
            let mut o = io::stdout().lock();
            writeln!(o, "── {lesson} · {} ──", screen.progress)?;
            for l in text_lines(screen) {
                writeln!(o, "{l}")?;
            }
            writeln!(o)?;
            if let Some(s) = autoplay {
                std::thread::sleep(Duration::from_secs_f64(*s * factor));
            }
            Ok(Input::Next)
        }
        Out::Terminal(g) => {
            g.terminal
                .draw(|f| draw(f, screen, lesson, theme, autoplay.is_some(), current))?;
            wait(
                autoplay,
                factor,
                current && screen.question.is_some() && screen.reveal.is_none(),
            )
        }
    }
}

/// Draws the screen of a step whose action is running (on a terminal; text prints only what
/// each step ends with).
fn working(out: &mut Out, screen: &Screen, lesson: &str, theme: &Theme) -> io::Result<()> {
    if let Out::Terminal(g) = out {
        g.terminal
            .draw(|f| draw(f, screen, lesson, theme, false, true))?;
    }
    Ok(())
}

/// Drops the keys pressed while an action ran; Quit if q or Esc was among them.
fn typed_ahead(out: &Out) -> io::Result<Input> {
    if let Out::Text = out {
        return Ok(Input::Next);
    }
    let mut input = Input::Next;
    while event::poll(Duration::ZERO)? {
        if let Event::Key(k) = event::read()?
            && k.kind != KeyEventKind::Release
            && matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
        {
            input = Input::Quit;
        }
    }
    Ok(input)
}

/// Waits for a key, or for autoplay's time; any key ends autoplay (the presenter takes over).
fn wait(autoplay: &mut Option<f64>, factor: f64, asking: bool) -> io::Result<Input> {
    let deadline = autoplay.map(|s| Instant::now() + Duration::from_secs_f64(s * factor));
    loop {
        let left = match deadline {
            Some(d) if autoplay.is_some() => match d.checked_duration_since(Instant::now()) {
                Some(l) => l,
                None => return Ok(Input::Next),
            },
            _ => Duration::from_millis(250),
        };
        if !event::poll(left.min(Duration::from_millis(250)))? {
            continue;
        }
        let Event::Key(k) = event::read()? else {
            continue;
        };
        if k.kind == KeyEventKind::Release {
            continue;
        }
        *autoplay = None;
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return Ok(Input::Quit),
            KeyCode::Char(c @ '1'..='9') if asking => {
                return Ok(Input::Guess(c as usize - '1' as usize));
            }
            KeyCode::Char(' ') | KeyCode::Enter | KeyCode::Right => return Ok(Input::Next),
            KeyCode::Backspace | KeyCode::Left => return Ok(Input::Back),
            _ => {}
        }
    }
}

/// The screen as lines of text, in the order they are drawn.
pub fn text_lines(s: &Screen) -> Vec<String> {
    let mut out = vec![s.title.to_uppercase(), s.caption.clone()];
    out.extend(s.done.clone());
    if let Some(r) = &s.reveal {
        out.extend(r.iter().cloned());
    } else {
        out.extend(s.facts.iter().cloned());
        if let Some(q) = &s.question {
            out.push(format!("? {q}"));
            for (i, c) in s.choices.iter().enumerate() {
                out.push(format!("  {} {c}", i + 1));
            }
        }
    }
    out
}

/// The one thing the room reads from the back: the answer once revealed (the screen's key
/// fact), else the step's stage (or view, without its number).
fn big_word(s: &Screen) -> String {
    let word = s.key_fact.clone().unwrap_or_else(|| {
        let last = s.title.rsplit(" · ").next().unwrap_or(&s.title);
        last.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ')
            .to_string()
    });
    word.to_uppercase()
}

/// Large only in ASCII (the big font's glyphs), within the width, with rows to spare.
fn big_fits(text: &str, area: Rect) -> bool {
    area.height >= 24 && big::fits(text, area.width)
}

fn draw(f: &mut Frame, s: &Screen, lesson: &str, theme: &Theme, auto: bool, current: bool) {
    let word = big_word(s);
    let big = big_fits(&word, f.area());
    let [head, title, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(if big { big::CELL.1 } else { 3 }),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    // Large text leaves the step's full title to the head line, before the lesson's.
    let mut spans = vec![Span::styled(format!("{} ", s.progress), theme.title)];
    if big {
        spans.push(Span::styled(format!("· {} ", s.title), theme.title));
    }
    let used: usize = spans.iter().map(|x| x.width()).sum();
    if used + lesson.chars().count() <= head.width as usize {
        spans.push(Span::styled(lesson.to_string(), theme.muted));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), head);
    if big {
        big::draw(f, title, &word, theme.title);
    } else {
        f.render_widget(
            Paragraph::new(Line::styled(
                s.key_fact
                    .clone()
                    .unwrap_or_else(|| s.title.clone())
                    .to_uppercase(),
                theme.title.add_modifier(Modifier::BOLD),
            ))
            .block(Block::default().borders(Borders::ALL)),
            title,
        );
    }
    let mut lines = vec![Line::raw(s.caption.clone()), Line::raw("")];
    if let Some(d) = &s.done {
        lines.push(Line::raw(d.clone()));
    }
    match &s.reveal {
        Some(r) => {
            for (i, l) in r.iter().enumerate() {
                let style = if i == 0 {
                    Style::default().add_modifier(Modifier::BOLD)
                } else {
                    Style::default()
                };
                lines.push(Line::styled(l.clone(), style));
            }
        }
        None => {
            // What must fit: the question and every choice below the facts.
            let asked = s.question.as_ref().map_or(0, |_| 2 + s.choices.len());
            let facts = if rows(&lines, body.width) + rows_of(&s.facts, body.width) + asked
                > usize::from(body.height)
            {
                compact(&s.facts)
            } else {
                s.facts.clone()
            };
            lines.extend(facts.into_iter().map(|l| Line::styled(l, theme.muted)));
            if let Some(q) = &s.question {
                lines.push(Line::raw(""));
                lines.push(Line::styled(
                    format!("? {q}"),
                    theme.title.add_modifier(Modifier::BOLD),
                ));
                for (i, c) in s.choices.iter().enumerate() {
                    lines.push(Line::raw(format!("  {}  {c}", i + 1)));
                }
            }
        }
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    let hint = match (auto, current && s.question.is_some() && s.reveal.is_none()) {
        _ if s.busy => "working… keys are ignored until the step is shown · q quits",
        (true, _) => "autoplay · any key takes over",
        (false, true) => "1-9 guess · Space reveal · Backspace back · q quit",
        (false, false) => "Space next · Backspace back · q quit",
    };
    f.render_widget(Paragraph::new(Line::styled(hint, theme.muted)), foot);
}

/// The rows `lines` take wrapped at `width`.
fn rows(lines: &[Line], width: u16) -> usize {
    lines.iter().map(|l| wrapped(l.width(), width)).sum()
}

fn rows_of(lines: &[String], width: u16) -> usize {
    lines
        .iter()
        .map(|l| wrapped(Span::raw(l.as_str()).width(), width))
        .sum()
}

fn wrapped(chars: usize, width: u16) -> usize {
    chars.div_ceil(usize::from(width).max(1)).max(1)
}

/// The stages' one-word verdicts (`✓ Admission`) side by side on one line, for a screen whose
/// question would not fit below them one per line.
fn compact(facts: &[String]) -> Vec<String> {
    let verdict =
        |l: &str| l.chars().count() <= 24 && ["✓ ", "✗ ", "· "].iter().any(|m| l.starts_with(m));
    // Non-breaking within a verdict: a line breaks between two stages, not inside one.
    let whole = |l: &str| l.replace(' ', "\u{a0}");
    let mut out: Vec<String> = Vec::new();
    let mut run = false;
    for l in facts {
        match out.last_mut() {
            Some(last) if run && verdict(l) => {
                last.push_str("  ");
                last.push_str(&whole(l));
            }
            _ if verdict(l) => out.push(whole(l)),
            _ => out.push(l.clone()),
        }
        run = verdict(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn screen(key_fact: Option<&str>) -> Screen {
        Screen {
            progress: "step 5 of 7".into(),
            title: "5 Scheduler · Score".into(),
            caption: "Which node wins?".into(),
            key_fact: key_fact.map(String::from),
            reveal: key_fact.map(|k| vec![format!("answer: 3 {k}")]),
            ..Default::default()
        }
    }

    fn render(s: &Screen, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        t.draw(|f| draw(f, s, "A lesson", &Theme::default(), false, true))
            .expect("draw");
        let buf = t.backend().buffer();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_question_and_all_its_choices_fit_at_80x24_below_the_stages() {
        let stages = [
            "TLS handshake",
            "Authentication",
            "Authorization",
            "Admission",
            "Validation",
            "Storage",
            "Response",
            "Filter",
        ];
        let mut facts = vec![
            "✓ sent pod default/big".to_string(),
            "pod default/big".into(),
        ];
        facts.extend(stages.iter().map(|s| format!("✓ {s}")));
        facts.push("passed the filter: node-3".into());
        let s = Screen {
            progress: "step 2 of 8".into(),
            title: "5 Scheduler · Score".into(),
            caption: "Asking for less fixes it.".into(),
            facts,
            question: Some("Which node wins?".into()),
            choices: ["control-plane", "node-1", "node-2", "node-3"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        };
        let text = render(&s, 80, 24);
        assert!(text.contains("4  node-3"), "{text}");
        // Every stage still named, none cut in two by the wrap.
        for st in stages {
            let whole = format!("✓\u{a0}{}", st.replace(' ', "\u{a0}"));
            assert!(text.contains(&whole), "{st}:\n{text}");
        }
        // With room, one stage a line, as before.
        let tall = render(&s, 80, 40);
        assert!(tall.contains("✓ Authentication    "), "{tall}");
    }

    #[test]
    fn the_stage_then_the_answer_are_large_and_the_full_title_stays_in_the_head() {
        let before = screen(None);
        assert_eq!(big_word(&before), "SCORE");
        let text = render(&before, 80, 24);
        let head = text.lines().next().unwrap_or_default();
        assert!(head.contains("step 5 of 7 · 5 Scheduler · Score"), "{text}");
        assert!(
            !text.contains("SCORE"),
            "drawn in blocks, not letters:\n{text}"
        );
        let after = screen(Some("node-3"));
        assert_eq!(big_word(&after), "NODE-3");
        assert!(render(&after, 80, 24).contains("answer: 3 node-3"));
        // Too narrow or too short for the big font: the title in a box, whole.
        let small = render(&after, 60, 20);
        assert!(small.contains("NODE-3"), "{small}");
        assert!(!big_fits("kexplore-admin·", Rect::new(0, 0, 80, 24)));
        assert!(!big_fits(&"X".repeat(21), Rect::new(0, 0, 80, 24)));
    }
}

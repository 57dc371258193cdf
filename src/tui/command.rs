//! The `:` command line, as k9s users type it: `:pods`, `:nodes`, `:ns NAME`, `:ctx NAME`, a
//! view by its name, `:q`. It is typed like the `/` filter (Enter runs it, Esc drops it), and
//! what a command cannot do is said in the footer, never ignored in silence.

use super::action::{Action, View};
use super::state::AppState;
use super::stepped;
use super::update::Effect;

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    View(View),
    /// View 5's list of the cluster's pods.
    Pods,
    /// View 5's nodes (the pods list closed).
    Nodes,
    /// Switch to this context (none: view 1's list of them).
    Context(Option<String>),
    /// Show only the pods of this namespace (none: every namespace).
    Namespace(Option<String>),
    /// Play a lesson (`lessons/NAME.yaml`, or a file) on a fresh embedded cluster.
    Lesson(String),
    Quit,
    Help,
}

/// One command: the words that name it, and how the help writes it.
pub struct CommandDef {
    pub names: &'static [&'static str],
    pub usage: &'static str,
}

/// Every command, the single source of the parser, the help overlay and the error message.
pub const COMMANDS: &[CommandDef] = &[
    CommandDef {
        names: &["pods", "pod", "po"],
        usage: ":pods",
    },
    CommandDef {
        names: &["nodes", "node", "no"],
        usage: ":nodes",
    },
    CommandDef {
        names: &["ns", "namespace"],
        usage: ":ns NAME",
    },
    CommandDef {
        names: &["ctx", "context"],
        usage: ":ctx NAME",
    },
    CommandDef {
        names: &["lesson"],
        usage: ":lesson NAME",
    },
    CommandDef {
        names: &[
            "kubeconfig",
            "certs",
            "certificates",
            "connection",
            "journey",
            "scheduler",
        ],
        usage: ":certs (a view's name)",
    },
    CommandDef {
        names: &["help", "?"],
        usage: ":help",
    },
    CommandDef {
        names: &["q", "quit", "q!"],
        usage: ":q",
    },
];

fn view_named(word: &str) -> Option<View> {
    Some(match word {
        "kubeconfig" | "1" => View::Kubeconfig,
        "certs" | "certificates" | "2" => View::Certificates,
        "connection" | "3" => View::Connection,
        "journey" | "4" => View::PodJourney,
        "scheduler" | "5" => View::Scheduler,
        _ => return None,
    })
}

/// A namespace name as the API server accepts it (an RFC 1123 label).
fn valid_namespace(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 63
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !n.starts_with('-')
        && !n.ends_with('-')
}

/// The command a line names, or the sentence saying why it names none.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else {
        return Err("no command typed".into());
    };
    let arg = words.next().map(str::to_string);
    if let Some(extra) = words.next() {
        return Err(format!(
            ":{first} takes one word at most, not also '{extra}'"
        ));
    }
    let word = first.to_lowercase();
    if let Some(v) = view_named(&word) {
        return Ok(Command::View(v));
    }
    let def = COMMANDS.iter().find(|d| d.names.contains(&word.as_str()));
    let Some(def) = def else {
        // The footer is one row: the commands are in the help.
        return Err(format!(
            "unknown command :{first} (:pods :nodes :ns :ctx :q; :help lists all)"
        ));
    };
    let takes_arg = matches!(def.names[0], "ns" | "ctx" | "lesson");
    if !takes_arg && let Some(a) = &arg {
        return Err(format!("{} takes no argument, not '{a}'", def.usage));
    }
    Ok(match def.names[0] {
        "pods" => Command::Pods,
        "nodes" => Command::Nodes,
        "ns" => match arg.as_deref() {
            None | Some("all" | "-A") => Command::Namespace(None),
            Some(n) if valid_namespace(n) => Command::Namespace(Some(n.to_string())),
            Some(n) => {
                return Err(format!(
                    "'{n}' is not a namespace name (lower-case letters, digits and '-')"
                ));
            }
        },
        "ctx" => Command::Context(arg),
        "lesson" => match arg {
            Some(a) => Command::Lesson(a),
            None => return Err(":lesson needs a name (lessons/NAME.yaml) or a file".into()),
        },
        "help" => Command::Help,
        _ => Command::Quit,
    })
}

/// The command line's keys; `None` when the action is not one of them.
pub fn handle(state: &mut AppState, action: &Action) -> Option<Vec<Effect>> {
    match action {
        Action::StartCommand if state.overlay.is_none() => {
            state.command = Some(String::new());
            state.flash = None;
        }
        Action::CommandInput(c) => state.command.get_or_insert_default().push(*c),
        Action::CommandBack => {
            if let Some(line) = state.command.as_mut()
                && line.pop().is_none()
            {
                // Backspace on an empty line leaves it, as in k9s and vi.
                state.command = None;
            }
        }
        Action::CommandEnd(run_it) => {
            let line = state.command.take().unwrap_or_default();
            if !run_it || line.trim().is_empty() {
                return Some(Vec::new());
            }
            return Some(match parse(&line) {
                Ok(cmd) => run(state, cmd),
                Err(e) => {
                    flash(state, e, false);
                    Vec::new()
                }
            });
        }
        _ => return None,
    }
    Some(Vec::new())
}

fn flash(state: &mut AppState, text: String, ok: bool) {
    state.flash(text, ok);
}

fn show(state: &mut AppState, view: View) -> Vec<Effect> {
    state.view = view;
    stepped::on_enter(state)
}

/// The lesson `name` names: a file, or `lessons/NAME.yaml` under the current directory;
/// loaded (and so checked) before the terminal is handed over.
fn lesson_file(name: &str) -> Result<std::path::PathBuf, String> {
    let given = std::path::PathBuf::from(name);
    let path = if given.is_file() {
        given
    } else {
        let built_in = std::path::Path::new("lessons").join(format!("{name}.yaml"));
        if !built_in.is_file() {
            return Err(format!(
                "no lesson '{name}': no such file, nor {}",
                built_in.display()
            ));
        }
        built_in
    };
    crate::lesson::load(&path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// View 5's pods list, now or (while the live cluster loads) when it arrives.
fn open_pods(state: &mut AppState, effects: Vec<Effect>) -> Vec<Effect> {
    if state.sched.listing.is_some() {
        stepped::open_pods(state);
    } else if state.sched.loading || !effects.is_empty() {
        state.sched.pods_open = true;
    } else {
        flash(
            state,
            "no pods list: view 5 places a manifest here, not a live cluster's pods".into(),
            false,
        );
    }
    effects
}

/// Does what `cmd` asks; what it cannot do is flashed in the footer.
pub fn run(state: &mut AppState, cmd: Command) -> Vec<Effect> {
    match cmd {
        Command::Quit => {
            state.quit = true;
            Vec::new()
        }
        Command::Help => {
            state.overlay = Some(super::state::Overlay::Help { scroll: 0 });
            Vec::new()
        }
        Command::View(v) => show(state, v),
        Command::Nodes => {
            state.sched.pods_open = false;
            show(state, View::Scheduler)
        }
        Command::Pods => {
            let effects = show(state, View::Scheduler);
            open_pods(state, effects)
        }
        Command::Namespace(ns) => {
            let text = match &ns {
                Some(n) => format!("pods of namespace {n} only (:ns alone shows all)"),
                None => "pods of every namespace".to_string(),
            };
            state.sched.namespace = ns;
            let effects = show(state, View::Scheduler);
            let effects = open_pods(state, effects);
            if state.flash.is_none() {
                flash(state, text, true);
            }
            effects
        }
        Command::Lesson(name) => match lesson_file(&name) {
            Ok(path) => vec![Effect::Lesson(path)],
            Err(e) => {
                flash(state, e, false);
                Vec::new()
            }
        },
        Command::Context(None) => show(state, View::Kubeconfig),
        Command::Context(Some(name)) => {
            let Some(i) = state
                .kubeconfig()
                .and_then(|k| k.contexts.iter().position(|c| c.value.name == name))
            else {
                let text = match state.context_count() {
                    0 => format!("no context '{name}': the kubeconfig has none"),
                    n => format!("no context '{name}' (view 1 lists the {n})"),
                };
                flash(state, text, false);
                return Vec::new();
            };
            state.context_cursor = i;
            state.pending = Some(name.clone());
            let mut effects = vec![Effect::LoadContext(name)];
            effects.extend(show(state, View::Kubeconfig));
            effects
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_k9s_users_type() {
        assert_eq!(parse("pods"), Ok(Command::Pods));
        assert_eq!(parse(" po "), Ok(Command::Pods));
        assert_eq!(parse("no"), Ok(Command::Nodes));
        assert_eq!(
            parse("ns kube-system"),
            Ok(Command::Namespace(Some("kube-system".into())))
        );
        assert_eq!(parse("ns"), Ok(Command::Namespace(None)));
        assert_eq!(parse("ns all"), Ok(Command::Namespace(None)));
        assert_eq!(
            parse("ctx admin@prod"),
            Ok(Command::Context(Some("admin@prod".into())))
        );
        assert_eq!(parse("q"), Ok(Command::Quit));
        assert_eq!(parse("certs"), Ok(Command::View(View::Certificates)));
        assert_eq!(parse("4"), Ok(Command::View(View::PodJourney)));
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let e = parse("deploy").unwrap_err();
        assert!(
            e.contains("unknown command :deploy") && e.contains(":pods"),
            "{e}"
        );
        assert!(parse("ns Bad_Name").unwrap_err().contains("'Bad_Name'"));
        assert!(parse("pods x").unwrap_err().contains("takes no argument"));
        assert!(parse("ctx a b").unwrap_err().contains("'b'"));
    }

    #[test]
    fn every_command_name_parses() {
        for d in COMMANDS {
            for n in d.names {
                let line = if matches!(d.names[0], "ns" | "ctx" | "lesson") {
                    format!("{n} x")
                } else {
                    n.to_string()
                };
                assert!(parse(&line).is_ok(), "{line}");
            }
        }
    }
}

//! The keymap: the single source of what each key does, the help overlay and the footer hints.
//! Adding a binding here is all it takes for the key to work, be listed under `?` and, when
//! it has a hint, appear in the status bar.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::{Action, View};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everywhere, overlays included.
    Always,
    /// In every view while no overlay is open.
    Views,
    /// Only in these views (no overlay open).
    Only(&'static [View]),
    /// While an overlay (help) is open.
    Overlay,
}

#[derive(Debug, Clone)]
pub struct Binding {
    /// Every key that triggers it, as (code, modifiers).
    pub keys: Vec<(KeyCode, KeyModifiers)>,
    /// How the help overlay and the footer name the keys, e.g. `↑/k`.
    pub label: &'static str,
    pub action: Action,
    /// The line in the help overlay.
    pub help: &'static str,
    /// The short word in the footer; `None` keeps it out of the footer.
    pub hint: Option<&'static str>,
    pub scope: Scope,
}

const STEPPED: &[View] = &[View::Connection, View::PodJourney, View::Scheduler];
/// The views without steps, where Space and Backspace only move the presenter's story.
const FIRST: &[View] = &[View::Kubeconfig, View::Certificates];
const LISTS: &[View] = &[View::Kubeconfig, View::Certificates, View::Scheduler];
const JOURNEY: &[View] = &[View::PodJourney];
const SCHEDULER: &[View] = &[View::Scheduler];

pub struct KeyMap {
    pub bindings: Vec<Binding>,
}

fn key(c: char) -> (KeyCode, KeyModifiers) {
    (KeyCode::Char(c), KeyModifiers::NONE)
}

fn code(c: KeyCode) -> (KeyCode, KeyModifiers) {
    (c, KeyModifiers::NONE)
}

impl Default for KeyMap {
    fn default() -> Self {
        let b = |keys, label, action, help, hint, scope| Binding {
            keys,
            label,
            action,
            help,
            hint,
            scope,
        };
        let mut bindings = vec![
            b(
                vec![key('q'), (KeyCode::Char('c'), KeyModifiers::CONTROL)],
                "q / Ctrl-C",
                Action::Quit,
                "quit (the terminal is restored)",
                Some("quit"),
                Scope::Always,
            ),
            b(
                vec![key('?')],
                "?",
                Action::ToggleHelp,
                "show / hide this help",
                Some("help"),
                Scope::Always,
            ),
            b(
                vec![code(KeyCode::Esc)],
                "Esc",
                Action::CloseOverlay,
                "close the help or the merged kubeconfig",
                Some("close"),
                Scope::Overlay,
            ),
        ];
        let view_help = [
            "view 1: Kubeconfig (files, contexts, clusters, users)",
            "view 2: Certificates (chain of trust, fields, checks)",
            "view 3: Connection (the mTLS handshake)",
            "view 4: Pod journey (through the API server)",
            "view 5: Scheduler (filter and score)",
        ];
        let digits = ["1", "2", "3", "4", "5"];
        for (i, view) in View::ALL.into_iter().enumerate() {
            let c = char::from(b'1' + i as u8);
            bindings.push(b(
                vec![key(c)],
                digits[i],
                Action::ShowView(view),
                view_help[i],
                None,
                Scope::Views,
            ));
        }
        bindings.extend([
            b(
                vec![code(KeyCode::Tab)],
                "Tab",
                Action::NextView,
                "next view",
                Some("views"),
                Scope::Views,
            ),
            b(
                vec![
                    code(KeyCode::BackTab),
                    (KeyCode::BackTab, KeyModifiers::SHIFT),
                ],
                "Shift-Tab",
                Action::PreviousView,
                "previous view",
                None,
                Scope::Views,
            ),
            b(
                vec![code(KeyCode::Up), key('k')],
                "↑/k",
                Action::MoveUp,
                "move up (3-4: scroll the details)",
                None,
                Scope::Always,
            ),
            b(
                vec![code(KeyCode::Down), key('j')],
                "↓/j",
                Action::MoveDown,
                "move down (3-4: scroll the details)",
                Some("move"),
                Scope::Always,
            ),
            b(
                vec![code(KeyCode::PageUp)],
                "PgUp",
                Action::PageUp,
                "page up (2: certificate fields; 3-4: details; 5: nodes)",
                None,
                Scope::Always,
            ),
            b(
                vec![code(KeyCode::PageDown)],
                "PgDn",
                Action::PageDown,
                "page down (2: certificate fields; 3-4: details; 5: nodes)",
                None,
                Scope::Always,
            ),
            b(
                vec![code(KeyCode::Enter)],
                "Enter",
                Action::Select,
                "select (view 1: switch to the context under the cursor)",
                Some("use context"),
                Scope::Only(&[View::Kubeconfig]),
            ),
            b(
                vec![key('m')],
                "m",
                Action::ShowMerged,
                "view 1: the merged kubeconfig, full size (kubectl config view)",
                Some("merged"),
                Scope::Only(&[View::Kubeconfig]),
            ),
            b(
                vec![key(' '), key('n')],
                "Space/n",
                Action::NextStep,
                "next step (views 3-5)",
                Some("step"),
                Scope::Only(STEPPED),
            ),
            b(
                vec![code(KeyCode::Backspace), key('p')],
                "Backspace/p",
                Action::PreviousStep,
                "previous step (views 3-5)",
                None,
                Scope::Only(STEPPED),
            ),
            b(
                vec![key(' ')],
                "Space",
                Action::NextStep,
                "presenter mode: on through the story, view after view (1, 2)",
                None,
                Scope::Only(FIRST),
            ),
            b(
                vec![code(KeyCode::Backspace)],
                "Backspace",
                Action::PreviousStep,
                "presenter mode: back through the story (1, 2)",
                None,
                Scope::Only(FIRST),
            ),
            b(
                vec![key('r')],
                "r",
                Action::Refresh,
                "run again: reconnect (3), resend the pod (4), re-list the cluster (5)",
                None,
                Scope::Only(STEPPED),
            ),
            b(
                vec![key('e')],
                "e",
                Action::EditPod,
                "view 4: edit the pod manifest in $EDITOR",
                Some("edit pod"),
                Scope::Only(JOURNEY),
            ),
            b(
                vec![key('l')],
                "l",
                Action::NextPod,
                "view 4: the next pod manifest (the seed's app.json, then scenarios/*.yaml pods)",
                None,
                Scope::Only(JOURNEY),
            ),
            b(
                vec![key('W')],
                "W",
                Action::AskForReal,
                "view 4: create the pod for real on a remote server (asks first; else a dry run)",
                None,
                Scope::Only(JOURNEY),
            ),
            b(
                vec![key('y')],
                "y",
                Action::ConfirmForReal,
                "view 4: yes, create it for real (any other key says no)",
                None,
                Scope::Only(JOURNEY),
            ),
            b(
                vec![code(KeyCode::Enter)],
                "Enter",
                Action::OpenInScheduler,
                "view 4: this pod's filter and score, node by node, in view 5",
                Some("→ scheduler"),
                Scope::Only(JOURNEY),
            ),
            b(
                vec![key('f')],
                "f",
                Action::ToggleFormula,
                "view 5: the formula behind the score, with the pod's numbers",
                Some("formula"),
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('+'), key('=')],
                "+",
                Action::More,
                "view 5: what-if — raise every container's cpu (or memory) request; the cycle re-runs",
                Some("what-if"),
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('-')],
                "-",
                Action::Less,
                "view 5: what-if — lower the request",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('c')],
                "c",
                Action::SwitchResource,
                "view 5: + and - change cpu / memory",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('t')],
                "t",
                Action::ToggleTolerations,
                "view 5: what-if — tolerate every taint, or not",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('s')],
                "s",
                Action::NextSelector,
                "view 5: what-if — nodeSelector: the next label found on the nodes, then none",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('o')],
                "o",
                Action::CycleSort,
                "view 5: sort nodes by scheduler order, name, score",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('/')],
                "/",
                Action::StartFilter,
                "filter the list by name (1, 2, 5); Enter keeps, Esc clears",
                Some("filter"),
                Scope::Only(LISTS),
            ),
            b(
                vec![key('w')],
                "w",
                Action::TogglePods,
                "view 5, live cluster: its Pending and bound pods",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![code(KeyCode::Enter)],
                "Enter",
                Action::Select,
                "view 5: simulate the pod under the cursor (pods list)",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('b')],
                "b",
                Action::CompareProfiles,
                "view 5: the default profile beside bin-packing (MostAllocated), each one's winner",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('d')],
                "d",
                Action::Describe,
                "view 5, pods list: describe the pod (kubectl describe, with its events)",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![key('E')],
                "E",
                Action::ToggleChain,
                "views 2, 3 with --etcd: the API server's own chain to etcd (its client certificate, etcd's CA), or back",
                None,
                Scope::Only(&[View::Certificates, View::Connection]),
            ),
            b(
                vec![key('x')],
                "x",
                Action::ResetWhatIf,
                "view 5: undo every what-if (+/-, t, s): the pod as it was",
                None,
                Scope::Only(SCHEDULER),
            ),
            b(
                vec![code(KeyCode::Esc)],
                "Esc",
                Action::ClearFilter,
                "clear the / filter kept with Enter",
                None,
                Scope::Views,
            ),
            b(
                vec![key(':')],
                ":",
                Action::StartCommand,
                "command line, as in k9s (its commands below)",
                None,
                Scope::Views,
            ),
            b(
                vec![key('P')],
                "P",
                Action::TogglePresent,
                "presenter mode: chrome hidden, a caption per step, \"which node wins?\"",
                None,
                Scope::Views,
            ),
        ]);
        KeyMap { bindings }
    }
}

impl KeyMap {
    fn applies(scope: Scope, view: View, overlay: bool) -> bool {
        match scope {
            Scope::Always => true,
            Scope::Overlay => overlay,
            Scope::Views => !overlay,
            Scope::Only(views) => !overlay && views.contains(&view),
        }
    }

    /// The action for a key press in this situation, if any.
    pub fn action_for(&self, ev: &KeyEvent, view: View, overlay: bool) -> Option<Action> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        // Terminals report `?` and `Shift-Tab` with or without SHIFT; compare without it for
        // characters, where the character itself already says it.
        let mods = match ev.code {
            KeyCode::Char(_) => ev.modifiers - KeyModifiers::SHIFT,
            _ => ev.modifiers,
        };
        self.bindings
            .iter()
            .filter(|b| Self::applies(b.scope, view, overlay))
            .find(|b| b.keys.iter().any(|(c, m)| *c == ev.code && *m == mods))
            .map(|b| b.action.clone())
    }

    /// The footer's hints for this situation: (keys, word).
    pub fn hints(&self, view: View, overlay: bool) -> Vec<(&'static str, &'static str)> {
        let mut out: Vec<(&'static str, &'static str)> = Vec::new();
        if !overlay {
            out.push(("1-5", "view"));
        }
        for b in &self.bindings {
            if let Some(hint) = b.hint
                && Self::applies(b.scope, view, overlay)
            {
                // The footer is one row: the shortest key names (help lists them all).
                match b.action {
                    Action::MoveDown if overlay => out.push(("↑↓", "scroll")),
                    Action::MoveDown => out.push(("↑↓", hint)),
                    Action::Quit => out.push(("q", hint)),
                    Action::More => out.push(("+/-", hint)),
                    _ => out.push((b.label, hint)),
                }
            }
        }
        if view == View::Kubeconfig {
            // View 1's footer is full at 80 columns; its pane titles show a filter in use.
            out.retain(|(_, h)| *h != "filter");
        }
        if view == View::Scheduler {
            // The footer is one row: view 5 has many keys, help lists them all.
            out.retain(|(_, h)| !matches!(*h, "views" | "help"));
        }
        if LISTS.contains(&view) || overlay {
            return out;
        }
        out.retain(|(_, h)| *h != "move");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn contract_keys_map_to_actions() {
        let km = KeyMap::default();
        let v = View::Kubeconfig;
        let cases = [
            (KeyCode::Char('q'), KeyModifiers::NONE, Action::Quit),
            (KeyCode::Char('c'), KeyModifiers::CONTROL, Action::Quit),
            (KeyCode::Char('?'), KeyModifiers::SHIFT, Action::ToggleHelp),
            (
                KeyCode::Char('3'),
                KeyModifiers::NONE,
                Action::ShowView(View::Connection),
            ),
            (KeyCode::Tab, KeyModifiers::NONE, Action::NextView),
            (KeyCode::BackTab, KeyModifiers::SHIFT, Action::PreviousView),
            (KeyCode::Char('j'), KeyModifiers::NONE, Action::MoveDown),
            (KeyCode::Up, KeyModifiers::NONE, Action::MoveUp),
            (KeyCode::Enter, KeyModifiers::NONE, Action::Select),
        ];
        for (c, m, want) in cases {
            assert_eq!(km.action_for(&press(c, m), v, false), Some(want), "{c:?}");
        }
    }

    #[test]
    fn step_keys_step_in_views_3_to_5_and_move_the_story_in_1_and_2() {
        let km = KeyMap::default();
        let space = press(KeyCode::Char(' '), KeyModifiers::NONE);
        let bs = press(KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!(
            km.action_for(&space, View::Scheduler, false),
            Some(Action::NextStep)
        );
        assert_eq!(
            km.action_for(&bs, View::Connection, false),
            Some(Action::PreviousStep)
        );
        // In views 1 and 2 they only move presenter mode's story (update ignores them else).
        assert_eq!(
            km.action_for(&space, View::Kubeconfig, false),
            Some(Action::NextStep)
        );
        assert_eq!(
            km.action_for(&bs, View::Certificates, false),
            Some(Action::PreviousStep)
        );
        let n = press(KeyCode::Char('n'), KeyModifiers::NONE);
        assert_eq!(km.action_for(&n, View::Kubeconfig, false), None);
    }

    #[test]
    fn overlay_takes_esc_and_blocks_view_keys() {
        let km = KeyMap::default();
        let esc = press(KeyCode::Esc, KeyModifiers::NONE);
        let one = press(KeyCode::Char('1'), KeyModifiers::NONE);
        assert_eq!(
            km.action_for(&esc, View::Kubeconfig, true),
            Some(Action::CloseOverlay)
        );
        assert_eq!(km.action_for(&one, View::Kubeconfig, true), None);
        assert_eq!(
            km.action_for(&esc, View::Kubeconfig, false),
            Some(Action::ClearFilter),
            "outside an overlay Esc clears a kept filter"
        );
    }

    #[test]
    fn hints_follow_the_view() {
        let km = KeyMap::default();
        let words = |v, o| {
            km.hints(v, o)
                .into_iter()
                .map(|(_, w)| w)
                .collect::<Vec<_>>()
        };
        assert!(words(View::Kubeconfig, false).contains(&"use context"));
        assert!(!words(View::Certificates, false).contains(&"use context"));
        assert!(words(View::Scheduler, false).contains(&"step"));
        assert!(words(View::Kubeconfig, true).contains(&"close"));
    }
}

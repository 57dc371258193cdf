//! The `/` filter of views 1 and 2 (view 5 keeps its own over the nodes): typing narrows the
//! contexts, clusters and users (view 1) or the certificates of the chain of trust (view 2) to
//! those whose names contain the text, ignoring case; Enter keeps it, Esc clears it. The
//! cursors stay indices into the full lists, so Enter and the details are unchanged; only the
//! rows drawn, the arrows and the clicks follow the filter.

use super::action::{Action, View};
use super::state::AppState;
use super::trust_tree;

/// The text typed after `/` in each list view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilters {
    pub kubeconfig: String,
    pub certs: String,
}

/// Whether any of `fields` contains `needle`, ignoring case; everything matches no needle.
pub fn matches<'a>(needle: &str, fields: impl IntoIterator<Item = &'a str>) -> bool {
    if needle.is_empty() {
        return true;
    }
    let needle = needle.to_lowercase();
    fields
        .into_iter()
        .any(|f| f.to_lowercase().contains(&needle))
}

/// Indices into the kubeconfig's contexts that the view-1 filter lets through: by the
/// context's own name, its cluster or its user.
pub fn visible_contexts(state: &AppState) -> Vec<usize> {
    let Some(kc) = state.kubeconfig() else {
        return Vec::new();
    };
    let f = &state.list_filter.kubeconfig;
    kc.contexts
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let v = &c.value;
            matches(f, [&*v.name, &*v.context.cluster, &*v.context.user])
        })
        .map(|(i, _)| i)
        .collect()
}

/// Indices into the trust tree's rows that the view-2 filter lets through: by subject or
/// issuer.
pub fn visible_certs(state: &AppState) -> Vec<usize> {
    let Some(report) = state.chain_context().and_then(|a| a.report()) else {
        return Vec::new();
    };
    let f = &state.list_filter.certs;
    trust_tree::build(report)
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            trust_tree::cert(report, &r.fingerprint)
                .is_some_and(|c| matches(f, [c.subject.as_str(), c.issuer.as_str()]))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The cursor moved `delta` rows among `visible` (it may sit on a hidden row after typing).
fn step_among(visible: &[usize], cursor: usize, delta: isize) -> usize {
    let Some(last) = visible.len().checked_sub(1) else {
        return cursor;
    };
    let pos = visible.iter().position(|&i| i >= cursor).unwrap_or(last) as isize;
    visible[(pos + delta).clamp(0, last as isize) as usize]
}

fn text(state: &mut AppState) -> Option<&mut String> {
    match state.view {
        View::Kubeconfig => Some(&mut state.list_filter.kubeconfig),
        View::Certificates => Some(&mut state.list_filter.certs),
        _ => None,
    }
}

/// Puts the cursor on the first row that matches when the row it was on is filtered out.
fn follow(state: &mut AppState) {
    match state.view {
        View::Kubeconfig => {
            let v = visible_contexts(state);
            if !v.contains(&state.context_cursor)
                && let Some(&first) = v.first()
            {
                state.context_cursor = first;
            }
        }
        View::Certificates => {
            let v = visible_certs(state);
            if !v.contains(&state.cert_cursor)
                && let Some(&first) = v.first()
            {
                state.cert_cursor = first;
                state.fields_scroll = 0;
            }
        }
        _ => {}
    }
}

/// The filter's keys, and the arrows while a filter narrows the list; `false` when the
/// action is not one of these here.
pub fn handle(state: &mut AppState, action: &Action) -> bool {
    if state.overlay.is_some() || text(state).is_none() {
        return false;
    }
    match action {
        Action::StartFilter => state.typing = true,
        Action::FilterInput(c) => {
            if let Some(t) = text(state) {
                t.push(*c);
            }
            follow(state);
        }
        Action::FilterBack => {
            if let Some(t) = text(state) {
                t.pop();
            }
            follow(state);
        }
        Action::FilterEnd(keep) => {
            state.typing = false;
            if !keep && let Some(t) = text(state) {
                t.clear();
            }
        }
        Action::ClearFilter => {
            if let Some(t) = text(state) {
                t.clear();
            }
        }
        Action::MoveUp | Action::MoveDown | Action::PageUp | Action::PageDown
            if text(state).is_some_and(|t| !t.is_empty()) =>
        {
            let delta: isize = match action {
                Action::MoveUp => -1,
                Action::MoveDown => 1,
                Action::PageUp => -10,
                _ => 10,
            };
            match state.view {
                // Pages scroll the certificate's fields, as without a filter.
                View::Certificates if matches!(action, Action::PageUp | Action::PageDown) => {
                    return false;
                }
                View::Certificates => {
                    let next = step_among(&visible_certs(state), state.cert_cursor, delta);
                    if next != state.cert_cursor {
                        state.fields_scroll = 0;
                    }
                    state.cert_cursor = next;
                }
                _ => {
                    state.context_cursor =
                        step_among(&visible_contexts(state), state.context_cursor, delta)
                }
            }
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_ignores_case_and_empty_matches_all() {
        assert!(matches("", ["x"]));
        assert!(matches("PROD", ["admin@prod"]));
        assert!(!matches("dev", ["admin@prod", "prod"]));
    }

    #[test]
    fn steps_skip_hidden_rows() {
        let v = [1, 4, 7];
        assert_eq!(step_among(&v, 4, 1), 7);
        assert_eq!(step_among(&v, 4, -1), 1);
        assert_eq!(step_among(&v, 7, 1), 7);
        assert_eq!(
            step_among(&v, 0, 0),
            1,
            "a hidden cursor lands on a shown row"
        );
        assert_eq!(step_among(&[], 3, 1), 3);
    }
}

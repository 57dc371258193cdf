//! What an admission plugin changed in a pod: JSON paths, each with its value before and after.
//! `diff_values` compares two trees; `typed_diff` finds the same places by walking the typed
//! pod against the tree before, and this file turns them into the trace's records.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::apiserver::util::At;
use serde::Serialize;
use serde_json::Value;

/// One field a plugin set or changed: its value before (`None`: unset) and after (`None`:
/// removed), each written compactly and cut at `VALUE_CHARS` so a trace stays small whatever
/// the pod holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// Longest value text a record keeps, in characters (an ellipsis marks the cut).
pub const VALUE_CHARS: usize = 160;

/// A value as one short line: strings bare, objects and lists in flow style
/// (`{key: node.kubernetes.io/not-ready, operator: Exists}`), cut at `VALUE_CHARS`.
pub fn value_text(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        // Stop descending once the text is long enough to be cut anyway: past four bytes a
        // character it has more characters than are kept (counting them at every step was a
        // walk over the text per value).
        if out.len() > 4 * VALUE_CHARS {
            return;
        }
        match v {
            Value::String(s) => out.push_str(s),
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(x, out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                out.push('{');
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    write(x, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    if out.chars().count() > VALUE_CHARS {
        out = out.chars().take(VALUE_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The before/after values at each changed path. A list that did not exist before is given
/// element by element (`/spec/tolerations/0`, `/1`), as appended elements are.
pub fn field_changes(before: &Value, after: &Value, paths: &[String]) -> Vec<FieldChange> {
    let mut out = Vec::new();
    for p in paths {
        change_at(p, before.at(p), after.at(p), &mut out);
    }
    out
}

fn change_at(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (old, new) {
        (None, Some(Value::Array(items))) if !items.is_empty() => {
            out.extend(items.iter().enumerate().map(|(i, v)| FieldChange {
                path: format!("{path}/{i}"),
                old: None,
                new: Some(value_text(v)),
            }))
        }
        (old, new) => out.push(FieldChange {
            path: path.to_string(),
            old: old.map(value_text),
            new: new.map(value_text),
        }),
    }
}

/// One place where a tree differs from the one before: the new value there, or `None` where
/// a key was removed. `path` is a JSON pointer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Patch {
    pub path: String,
    pub new: Option<Value>,
}

/// Where `new` differs from `seen`, in the order found (keys of `new`, then removed keys).
/// Objects are compared key by key, removed keys included. Lists of the same length are
/// compared element by element. A list that only grew gives its new elements. Anything else
/// is given whole.
pub(crate) fn diff_values(seen: &Value, new: &Value, path: &mut String, out: &mut Vec<Patch>) {
    let len = path.len();
    match (seen, new) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, vb) in y {
                push_key(path, k);
                match x.get(k) {
                    Some(va) => diff_values(va, vb, path, out),
                    None => out.push(Patch {
                        path: path.clone(),
                        new: Some(vb.clone()),
                    }),
                }
                path.truncate(len);
            }
            for k in x.keys().filter(|k| !y.contains_key(*k)) {
                push_key(path, k);
                out.push(Patch {
                    path: path.clone(),
                    new: None,
                });
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                push_index(path, i);
                diff_values(va, vb, path, out);
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) if y.len() > x.len() && y.starts_with(x) => {
            for (i, vb) in y.iter().enumerate().skip(x.len()) {
                push_index(path, i);
                out.push(Patch {
                    path: path.clone(),
                    new: Some(vb.clone()),
                });
                path.truncate(len);
            }
        }
        _ if seen != new => out.push(Patch {
            path: path.clone(),
            new: Some(new.clone()),
        }),
        _ => {}
    }
}

/// The changed paths and each one's values before and after, as a plugin's record tells them.
pub(crate) fn describe(seen: &Value, patches: &[Patch]) -> (Vec<String>, Vec<FieldChange>) {
    let mut changes = Vec::new();
    for p in patches {
        change_at(&p.path, seen.at(&p.path), p.new.as_ref(), &mut changes);
    }
    (patches.iter().map(|p| p.path.clone()).collect(), changes)
}

/// Make `seen` the tree the patches were found against, given in `path_order`
/// (so the elements a list grew by arrive one after the other).
pub(crate) fn apply(seen: &mut Value, patches: Vec<Patch>) {
    for Patch { path, new } in patches {
        let Some((parent, last)) = path.rsplit_once('/') else {
            *seen = new.unwrap_or(Value::Null);
            continue;
        };
        let key = unescape(last);
        match (seen.at_mut(parent), new) {
            (Some(Value::Object(m)), Some(v)) => {
                m.insert(key.into_owned(), v);
            }
            (Some(Value::Object(m)), None) => {
                m.remove(key.as_ref());
            }
            (Some(Value::Array(a)), Some(v)) => match key.parse::<usize>() {
                Ok(i) if i < a.len() => a[i] = v,
                Ok(i) if i == a.len() => a.push(v),
                _ => {}
            },
            _ => {}
        }
    }
}

/// The order of a depth-first walk over sorted keys (serde_json's maps), which is the order
/// the records have always listed changes in: list indices by number, keys by their text.
pub(super) fn path_order(a: &str, b: &str) -> Ordering {
    let mut xs = a.split('/');
    let mut ys = b.split('/');
    loop {
        match (xs.next(), ys.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let o = match (x.parse::<usize>(), y.parse::<usize>()) {
                    (Ok(i), Ok(j)) => i.cmp(&j),
                    _ => unescape(x).cmp(&unescape(y)),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

/// JSON pointer escaping, so a label key like `app.kubernetes.io/name` stays one segment.
pub(super) fn push_key(path: &mut String, k: &str) {
    path.push('/');
    if !k.bytes().any(|b| b == b'~' || b == b'/') {
        path.push_str(k);
        return;
    }
    for c in k.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

pub(super) fn push_index(path: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(path, "/{i}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value_diff(a: &Value, b: &Value) -> Vec<Patch> {
        let mut out = Vec::new();
        diff_values(a, b, &mut String::new(), &mut out);
        out.sort_by(|x, y| path_order(&x.path, &y.path));
        out
    }

    #[test]
    fn described_changes_are_what_lookups_by_path_find() {
        let a = json!({"spec": {"dnsPolicy": "Default", "tolerations": [{"key": "a"}],
            "labels": {"x/y": "1"}}});
        let b = json!({"spec": {"dnsPolicy": "ClusterFirst", "priority": 0,
            "tolerations": [{"key": "a"}, {"key": "b"}], "volumes": [{"name": "v"}, {"name": "w"}],
            "labels": {"x/y": "2"}}});
        let (paths, changes) = describe(&a, &value_diff(&a, &b));
        assert_eq!(
            paths,
            [
                "/spec/dnsPolicy",
                "/spec/labels/x~1y",
                "/spec/priority",
                "/spec/tolerations/1",
                "/spec/volumes"
            ]
        );
        assert_eq!(changes, field_changes(&a, &b, &paths));
        assert_eq!(changes.len(), 6, "{changes:?}");
    }

    #[test]
    fn diff_paths_are_escaped_and_name_new_elements() {
        let a = json!({"metadata": {"labels": {"a/b": "1"}}, "list": [1]});
        let b = json!({"metadata": {"labels": {"a/b": "2", "c~d": "3"}}, "list": [1, 2]});
        let paths: Vec<String> = value_diff(&a, &b).into_iter().map(|p| p.path).collect();
        assert_eq!(
            paths,
            ["/list/1", "/metadata/labels/a~1b", "/metadata/labels/c~0d"]
        );
    }

    #[test]
    fn paths_sort_as_a_walk_over_sorted_keys() {
        let mut paths = vec![
            "/spec/x/10",
            "/spec/x/2",
            "/spec-b",
            "/spec/a~1b",
            "/spec/a",
        ];
        paths.sort_by(|a, b| path_order(a, b));
        assert_eq!(
            paths,
            [
                "/spec/a",
                "/spec/a~1b",
                "/spec/x/2",
                "/spec/x/10",
                "/spec-b"
            ]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = Value::String("x".repeat(10_000));
        let t = value_text(&json!({"a": [long.clone(), long]}));
        assert_eq!(t.chars().count(), VALUE_CHARS);
        assert!(t.ends_with('…'));
        assert_eq!(value_text(&json!({"n": 3, "b": true})), "{b: true, n: 3}");
    }
}

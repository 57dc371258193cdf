//! Finalizers at the storage boundary, as upstream's generic registry store keeps them for
//! every kind (`registry/generic/registry/store.go`): a delete of an object that still has
//! finalizers only marks it deleted (`deletionTimestamp`, `deletionGracePeriodSeconds: 0`), and
//! the update that takes the last finalizer off an object so marked removes it
//! (`shouldDeleteDuringUpdate`). Every writer — a handler, a control loop, the kubelet — goes
//! through `Storage::delete` and `Storage::update`, so none can remove what a finalizer holds.

use serde_json::{Value, json};

use crate::apiserver::util::{self, At};

/// Whether a finalizer holds `o` back from removal.
pub(crate) fn held(o: &Value) -> bool {
    o.at("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

fn marked(o: &Value) -> bool {
    o.at("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Whether `o` is marked for immediate deletion (grace 0).
fn due(o: &Value) -> bool {
    marked(o)
        && o.at("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            == Some(0)
}

/// `o`, as a delete that finds finalizers leaves it: marked deleted with no grace left. None when
/// it already is. A pod in its grace period has it cut to 0, its deletionTimestamp moved back by
/// the grace it had (upstream's `BeforeDelete`): the time of the first delete.
pub(crate) fn mark(o: &Value) -> Option<Value> {
    if due(o) {
        return None;
    }
    let mut next = o.clone();
    let at = if marked(o) {
        let grace = o
            .at("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        o.at("/metadata/deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(util::parse_time)
            .map(|t| util::rfc3339(t - time::Duration::seconds(grace)))
    } else {
        None
    };
    match at {
        Some(at) => {
            next["metadata"]["deletionTimestamp"] = json!(at);
            next["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        }
        None => mark_now(&mut next),
    }
    Some(next)
}

/// Marks `o` deleted now with no grace, unless it already is. The first mark bumps a set
/// `metadata.generation`, as upstream's `markAsDeleting` and `BeforeDelete` do: what the
/// object asks of its controllers has changed (they must not act on it any more), and a client
/// that waits on observedGeneration sees that.
pub(crate) fn mark_now(o: &mut Value) {
    if marked(o) {
        return;
    }
    o["metadata"]["deletionTimestamp"] = json!(util::now());
    o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    if let Some(g) = o
        .at("/metadata/generation")
        .and_then(Value::as_i64)
        .filter(|g| *g > 0)
    {
        o["metadata"]["generation"] = json!(g + 1);
    }
}

/// Whether an update left the object at `key` marked for immediate deletion with no finalizer:
/// its deletion completes. A namespace is left to the namespace controller, which removes it
/// once its contents and `spec.finalizers` are gone.
pub(crate) fn complete(key: &str, o: &Value) -> bool {
    due(o) && !held(o) && !key.starts_with("/registry/namespaces/")
}

/// An update that took the last finalizer or owner reference off stores no empty list: Go's
/// `omitempty` drops it upstream, so `-o json` shows no `finalizers: []`.
pub(crate) fn omit_empty_lists(o: &mut Value) {
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["finalizers", "ownerReferences"] {
            if meta
                .get(field)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                meta.remove(field);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_list_is_not_stored() {
        let mut o = json!({"metadata": {"finalizers": [], "ownerReferences": [], "labels": {}}});
        omit_empty_lists(&mut o);
        assert_eq!(o, json!({"metadata": {"labels": {}}}));
    }

    #[test]
    fn a_delete_marks_what_a_finalizer_holds_once() {
        let o = json!({"metadata": {"name": "a", "finalizers": ["example.com/hold"]}});
        assert!(held(&o));
        let m = mark(&o).expect("marked");
        assert!(m["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(m["metadata"]["deletionGracePeriodSeconds"], 0);
        assert_eq!(mark(&m), None, "marking twice writes again");
    }

    #[test]
    fn a_graceful_pod_is_marked_at_its_first_delete() {
        let o = json!({"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z",
            "deletionGracePeriodSeconds": 30, "finalizers": ["f"]}});
        let m = mark(&o).expect("grace taken away");
        assert_eq!(m["metadata"]["deletionTimestamp"], "2029-12-31T23:59:30Z");
        assert_eq!(m["metadata"]["deletionGracePeriodSeconds"], 0);
    }

    #[test]
    fn the_last_finalizer_off_a_marked_object_completes_its_deletion() {
        let due = json!({"metadata": {"deletionTimestamp": "t", "deletionGracePeriodSeconds": 0}});
        assert!(complete("/registry/configmaps/default/a", &due));
        assert!(!complete("/registry/namespaces/a", &due));
        let mut held = due.clone();
        held["metadata"]["finalizers"] = json!(["f"]);
        assert!(!complete("/registry/configmaps/default/a", &held));
        // A pod in its grace period is the kubelet's to remove.
        let graceful =
            json!({"metadata": {"deletionTimestamp": "t", "deletionGracePeriodSeconds": 30}});
        assert!(!complete("/registry/pods/default/a", &graceful));
        assert!(!complete(
            "/registry/pods/default/a",
            &json!({"metadata": {}})
        ));
    }
}

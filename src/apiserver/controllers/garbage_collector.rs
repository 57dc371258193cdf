//! The garbage collector (upstream `pkg/controller/garbagecollector`): the one place dependents
//! follow their owners. An object whose every owner (`metadata.ownerReferences`, by uid) is gone
//! is deleted (Background propagation); an owner being deleted with the `foregroundDeletion`
//! finalizer first has its dependents deleted and loses the finalizer once none that blocks it
//! is left; one with the `orphan` finalizer has its dependents' references to it removed, then
//! loses the finalizer. An object being deleted whose last finalizer goes is removed.
//!
//! Upstream keeps a graph fed by informers; here each pass rebuilds the dependents index from
//! the store, woken by changes and at most every [`PACE`], and asks the store whether an owner
//! is gone before acting on it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, s, terminating};
use crate::apiserver::registry::resources::{self, RESOURCES, ResourceDef};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::deletion;
use crate::apiserver::storage::interface::{EventType, Storage};
use crate::apiserver::storage::store::Write;
use crate::apiserver::util::{At, KeySearch};

pub(crate) const FOREGROUND: &str = "foregroundDeletion";
pub(crate) const ORPHAN: &str = "orphan";
const COMPONENT: &str = "garbage-collector-controller";
/// The shortest time between two passes while changes keep coming.
const PACE: Duration = Duration::from_millis(300);
/// A pass without a change, for objects whose owners went while the collector was not leading.
const RESYNC: Duration = Duration::from_secs(5);

/// One stored object with what the collector reads of it.
struct Node {
    def: &'static ResourceDef,
    obj: Arc<Value>,
}

impl Node {
    fn ns(&self) -> &str {
        s(&self.obj, "/metadata/namespace")
    }
    fn name(&self) -> &str {
        s(&self.obj, "/metadata/name")
    }
    fn uid(&self) -> &str {
        s(&self.obj, "/metadata/uid")
    }
}

fn owner_refs(o: &Value) -> &[Value] {
    o.at("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(crate) fn finalizers(o: &Value) -> Vec<&str> {
    o.at("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn has_finalizer(o: &Value, f: &str) -> bool {
    finalizers(o).contains(&f)
}

/// Give `o` the finalizer `f` unless it has it.
pub(crate) fn add_finalizer(o: &mut Value, f: &str) {
    if has_finalizer(o, f) {
        return;
    }
    match o
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        Some(list) => list.push(json!(f)),
        None => o["metadata"]["finalizers"] = json!([f]),
    }
}

/// Run until `stop` flips.
pub(crate) async fn run(api: Arc<Api>, mut stop: watch::Receiver<bool>) {
    let mut changes = api.store.changes();
    let mut seen = 0;
    let mut last_pass = std::time::Instant::now();
    loop {
        changes.borrow_and_update();
        let rv = api.store.current_rv();
        let mut pace = PACE;
        if rv != seen {
            let started = std::time::Instant::now();
            // A pass reads every object: only when a change since the last one can give it
            // work, or a resync is due even while unrelated changes keep coming.
            if seen == 0 || last_pass.elapsed() >= RESYNC || may_matter(&*api.store, seen) {
                pass(&api);
                last_pass = std::time::Instant::now();
            }
            seen = rv;
            // A pass reads every dependent: on a big cluster it takes long, and the collector
            // then rests twice as long, so it never holds more than a third of a core.
            pace = pace.max(started.elapsed() * 2);
        }
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(RESYNC) => seen = 0,
            r = changes.changed() => {
                if r.is_err() { return }
                tokio::time::sleep(pace).await;
            }
        }
    }
}

/// The fields that make an object the collector's business.
const COLLECTED: [&str; 3] = ["ownerReferences", "finalizers", "deletionTimestamp"];

/// Whether a change after revision `after` can give the collector work, as upstream's graph
/// builder judges each change rather than every object: a deletion (an owner may be gone), or
/// an object written with ownerReferences, finalizers or a deletionTimestamp. A pod created
/// with none of them (a bare pod, a benchmark's thousands) starts no pass. When the history no
/// longer reaches back: yes.
fn may_matter(store: &dyn Storage, mut after: u64) -> bool {
    let fields = KeySearch::new(&COLLECTED);
    loop {
        let Ok(page) = store.history_after("/registry/", after, 4096, usize::MAX) else {
            return true;
        };
        if page
            .events
            .iter()
            .any(|ev| ev.kind == EventType::Deleted || fields.may_hold(&ev.object))
        {
            return true;
        }
        if !page.more {
            return false;
        }
        after = page.through;
    }
}

/// One look at every object.
pub(crate) fn pass(api: &Api) {
    let mut nodes: Vec<Node> = Vec::new();
    for def in RESOURCES.iter().filter(|r| r.stored()) {
        // A kind served in two versions is stored once.
        if nodes.iter().any(|n| n.def.key == def.key) {
            continue;
        }
        // Only what the collector can act on: dependents, and objects held by a finalizer.
        for obj in api
            .store
            .list_with_metadata(&def.prefix_for(""), &COLLECTED)
        {
            nodes.push(Node { def, obj });
        }
    }
    // Dependents of each owner uid.
    let mut dependents: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        for r in owner_refs(&n.obj) {
            dependents.entry(s(r, "/uid")).or_default().push(i);
        }
    }
    let mut deleted: HashSet<usize> = HashSet::new();
    for (i, n) in nodes.iter().enumerate() {
        if terminating(&n.obj) {
            if has_finalizer(&n.obj, ORPHAN) {
                orphan_dependents(api, n, dependents.get(n.uid()), &nodes);
                continue;
            }
            if has_finalizer(&n.obj, FOREGROUND) {
                foreground(api, n, dependents.get(n.uid()), &nodes, &mut deleted);
                continue;
            }
            if finalizers(&n.obj).is_empty() && n.def.kind != "Pod" && n.def.kind != "Namespace" {
                // Its last finalizer went: the deletion completes.
                remove(api, n);
                continue;
            }
        }
        if owner_refs(&n.obj).is_empty() || deleted.contains(&i) {
            continue;
        }
        // As it is now: this pass may have orphaned it already.
        let Some(current) = api.store.get_view(&n.def.key_for(n.ns(), n.name())) else {
            continue;
        };
        let refs = owner_refs(&current);
        let present = |r: &Value| owner_exists(api, r, n.ns());
        let gone: Vec<&Value> = refs.iter().filter(|r| !present(r)).collect();
        if gone.is_empty() {
            continue;
        }
        if gone.len() == refs.len() {
            if !terminating(&current) {
                delete_dependent(api, n, None);
                deleted.insert(i);
            }
        } else {
            // Some owners remain: only the references to the missing ones go.
            let gone_uids: Vec<String> = gone.iter().map(|r| s(r, "/uid").to_string()).collect();
            let _ = client::update(api, n.def, n.ns(), n.name(), |o| {
                if let Some(refs) = o
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| !gone_uids.iter().any(|u| u == s(r, "/uid")));
                }
            });
        }
    }
}

/// Whether the owner a reference names is there, read from the store at this moment (the
/// pass's own listing may predate an owner created since, as upstream's `isDangling` asks the
/// API server rather than its graph). An owner of a kind this server does not serve is
/// assumed there: nothing is deleted on a guess.
fn owner_exists(api: &Api, r: &Value, ns: &str) -> bool {
    let group = s(r, "/apiVersion").rsplit_once('/').map_or("", |(g, _)| g);
    let Some(def) = resources::by_kind(group, s(r, "/kind")) else {
        return true;
    };
    let key = def.key_for(if def.namespaced { ns } else { "" }, s(r, "/name"));
    api.store
        .get(&key)
        .is_some_and(|o| s(&o, "/metadata/uid") == s(r, "/uid"))
}

/// Delete a dependent: with `Foreground` when its owner waits for it (upstream deletes
/// blocking dependents of a foreground deletion in the foreground too), else in the background.
fn delete_dependent(api: &Api, n: &Node, policy: Option<&str>) {
    let result = match policy {
        Some(FOREGROUND) if n.def.kind != "Pod" => {
            delete_in_foreground(api, n.def, n.ns(), n.name(), n.uid()).map(|_| ())
        }
        _ => client::delete(api, n.def, n.ns(), n.name()),
    };
    if let Err(e) = result {
        let msg = format!("error deleting dependent {}: {}", n.name(), e.message);
        workload::event(api, COMPONENT, &n.obj, "Warning", "FailedDelete", &msg);
    }
}

/// What a DELETE with `propagationPolicy: Foreground` and a uid precondition does: the object
/// is marked deleted with the `foregroundDeletion` finalizer, and this collector deletes its
/// dependents before it. False when the object is gone or another object now has its name.
pub(crate) fn delete_in_foreground(
    api: &Api,
    def: &'static ResourceDef,
    ns: &str,
    name: &str,
    uid: &str,
) -> Result<bool, crate::apiserver::request::status::ApiError> {
    let mut marked = false;
    let res = client::update(api, def, ns, name, |o| {
        marked = s(o, "/metadata/uid") == uid;
        if !marked {
            return;
        }
        deletion::mark_now(o);
        add_finalizer(o, FOREGROUND);
    });
    match res {
        Ok(_) => Ok(marked),
        Err(e) if e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

fn drop_finalizer(api: &Api, n: &Node, finalizer: &str) {
    release_finalizer(api, n.def, n.ns(), n.name(), finalizer);
}

/// A finalizer's owner lets go of an object: the finalizer is dropped and, when it was the last
/// of an object being deleted, the deletion completes. False when the write failed.
pub(crate) fn release_finalizer(
    api: &Api,
    def: &'static ResourceDef,
    ns: &str,
    name: &str,
    finalizer: &str,
) -> bool {
    let written = client::update(api, def, ns, name, |o| {
        if let Some(f) = o
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|x| x.as_str() != Some(finalizer));
        }
    });
    if let Some(now) = api.store.get_view(&def.key_for(ns, name))
        && terminating(&now)
        && finalizers(&now).is_empty()
    {
        remove(api, &Node { def, obj: now });
    }
    written.is_ok()
}

/// The store removes an object whose deletion is complete, guarded by its uid.
fn remove(api: &Api, n: &Node) {
    let uid = n.uid().to_string();
    let _ = api
        .store
        .delete(&n.def.key_for(n.ns(), n.name()), Write::Commit, |cur| {
            if s(cur, "/metadata/uid") == uid && finalizers(cur).is_empty() {
                Ok(())
            } else {
                Err(crate::apiserver::storage::store::StoreError::Rejected(
                    "changed".into(),
                ))
            }
        });
}

fn orphan_dependents(api: &Api, owner: &Node, deps: Option<&Vec<usize>>, nodes: &[Node]) {
    let uid = owner.uid().to_string();
    for &d in deps.map_or(&[][..], Vec::as_slice) {
        let dep = &nodes[d];
        let _ = client::update(api, dep.def, dep.ns(), dep.name(), |o| {
            if let Some(refs) = o
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| s(r, "/uid") != uid);
            }
            if o.at("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
                && let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut)
            {
                m.remove("ownerReferences");
            }
        });
    }
    drop_finalizer(api, owner, ORPHAN);
}

fn foreground(
    api: &Api,
    owner: &Node,
    deps: Option<&Vec<usize>>,
    nodes: &[Node],
    deleted: &mut HashSet<usize>,
) {
    let uid = owner.uid();
    let mut blocking = 0;
    for &d in deps.map_or(&[][..], Vec::as_slice) {
        let dep = &nodes[d];
        let blocks = owner_refs(&dep.obj)
            .iter()
            .any(|r| s(r, "/uid") == uid && r.get("blockOwnerDeletion") == Some(&json!(true)));
        if blocks {
            blocking += 1;
        }
        if !terminating(&dep.obj) && deleted.insert(d) {
            delete_dependent(api, dep, blocks.then_some(FOREGROUND));
        }
    }
    if blocking == 0 {
        drop_finalizer(api, owner, FOREGROUND);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::Store;

    #[test]
    fn only_changes_that_can_give_the_collector_work_start_a_pass() {
        let store = Store::default();
        store
            .create(
                "/registry/namespaces/default",
                json!({"metadata": {"name": "default"}}),
                Write::Commit,
            )
            .expect("create");
        let seen = store.current_rv();
        let bare = json!({"metadata": {"name": "a", "namespace": "default"}});
        store
            .create("/registry/pods/default/a", bare, Write::Commit)
            .expect("create");
        assert!(!may_matter(&store, seen), "a bare pod");
        let seen = store.current_rv();
        let owned = json!({"metadata": {"name": "b", "namespace": "default",
            "ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "rs", "apiVersion": "apps/v1"}]}});
        store
            .create("/registry/pods/default/b", owned, Write::Commit)
            .expect("create");
        assert!(may_matter(&store, seen), "a dependent");
        let seen = store.current_rv();
        assert!(!may_matter(&store, seen), "nothing since");
        store
            .delete("/registry/pods/default/a", Write::Commit, |_| Ok(()))
            .expect("delete");
        assert!(may_matter(&store, seen), "a deletion");
    }
}

//! What the workload controllers share (upstream `pkg/controller/controller_utils.go`,
//! `controller_ref_manager.go`, `podutil`): controller references, adoption, pod readiness,
//! pods from a template, and the loop that wakes each controller on the changes it watches.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::registry::apps::workload::{label_selector, selector_matches};
use crate::apiserver::registry::resources::{self, ResourceDef};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;
use crate::apiserver::util::{At, KeySearch};

pub(crate) fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

pub(crate) fn def(group: &str, plural: &str) -> &'static ResourceDef {
    match resources::lookup(group, "v1", plural) {
        Some(d) => d,
        None => unreachable!("{group}/{plural} is in RESOURCES"),
    }
}

/// `metav1.NewControllerRef`: controller and blockOwnerDeletion both true.
pub(crate) fn controller_ref(owner: &Value) -> Value {
    json!({
        "apiVersion": owner.get("apiVersion").cloned().unwrap_or(json!("apps/v1")),
        "kind": owner.get("kind").cloned().unwrap_or(Value::Null),
        "name": s(owner, "/metadata/name"),
        "uid": s(owner, "/metadata/uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The uid of the object's controlling owner, if any (`metav1.GetControllerOf`).
pub(crate) fn controller_uid(o: &Value) -> Option<&str> {
    o.at("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller") == Some(&json!(true)))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// The (kind, name) of the object's controlling owner, if any.
pub(crate) fn controller_of(o: &Value) -> Option<(&str, &str)> {
    o.at("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller") == Some(&json!(true)))
        .map(|r| (s(r, "/kind"), s(r, "/name")))
}

/// What `controllers_of` reads of a stored object; serde skips the rest without building it.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    metadata: HeadMeta,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct HeadMeta {
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    owner_references: Vec<OwnerRef>,
}

#[derive(serde::Deserialize)]
struct OwnerRef {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    controller: Option<bool>,
}

/// The (namespace, kind, name) of the controlling owner of the object after the change and
/// of the one before it. Every workload controller asks this of every pod change: reading
/// only the metadata it needs costs a fraction of parsing each pod whole, several times over.
pub(crate) fn controllers_of(ev: &StoreEvent) -> Vec<(String, String, String)> {
    [Some(&ev.object), ev.prev.as_ref()]
        .into_iter()
        .flatten()
        .filter(|json| may_name_an_owner(json))
        .filter_map(|json| {
            let head: Head = serde_json::from_slice(json).ok()?;
            let HeadMeta {
                namespace,
                owner_references,
            } = head.metadata;
            let owner = owner_references
                .into_iter()
                .find(|r| r.controller == Some(true))?;
            Some((namespace, owner.kind, owner.name))
        })
        .collect()
}

/// Whether a pod's JSON can name an owner. Most pods name none, and finding that out by
/// parsing their 2 KB once per workload controller was ~90 k instructions a pod create.
fn may_name_an_owner(json: &[u8]) -> bool {
    static OWNERS: std::sync::LazyLock<KeySearch> =
        std::sync::LazyLock::new(|| KeySearch::new(&["ownerReferences"]));
    OWNERS.may_hold(json)
}

pub(crate) fn terminating(o: &Value) -> bool {
    o.at("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// `controller.IsPodActive`: not finished and not being deleted.
pub(crate) fn pod_active(p: &Value) -> bool {
    !terminating(p) && !matches!(s(p, "/status/phase"), "Succeeded" | "Failed")
}

fn ready_condition(p: &Value) -> Option<&Value> {
    p.at("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| s(c, "/type") == "Ready")
}

pub(crate) fn pod_ready(p: &Value) -> bool {
    ready_condition(p).is_some_and(|c| s(c, "/status") == "True")
}

/// `podutil.IsPodAvailable`: Ready for at least `min_ready` seconds.
pub(crate) fn pod_available(p: &Value, min_ready: i64) -> bool {
    if !pod_ready(p) {
        return false;
    }
    if min_ready <= 0 {
        return true;
    }
    let since = ready_condition(p)
        .and_then(|c| util::parse_time(s(c, "/lastTransitionTime")))
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    since + time::Duration::seconds(min_ready) <= time::OffsetDateTime::now_utc()
}

/// The workload objects (`owner_def`) and pods of one namespace that an owner controls or may
/// claim (upstream `ClaimPods`): its own that still match, orphans that match (adopted: an
/// owner reference is added), and its own that no longer match (released).
pub(crate) fn claim(
    api: &Api,
    owner: &Value,
    candidates_def: &ResourceDef,
    candidates: Vec<Arc<Value>>,
) -> Vec<Arc<Value>> {
    claim_members(api, owner, candidates_def, candidates, |_| true)
}

/// `claim` where only the candidates `member` accepts may be the owner's (upstream
/// `ClaimPods`' filters: a StatefulSet's pods are `<set>-<ordinal>`).
pub(crate) fn claim_members(
    api: &Api,
    owner: &Value,
    candidates_def: &ResourceDef,
    candidates: Vec<Arc<Value>>,
    member: impl Fn(&Value) -> bool,
) -> Vec<Arc<Value>> {
    let uid = s(owner, "/metadata/uid");
    let sel = label_selector(owner);
    let ns = s(owner, "/metadata/namespace");
    let mut out = Vec::new();
    for c in candidates {
        let matches = selector_matches(sel.as_deref(), c.at("/metadata/labels")) && member(&c);
        let name = s(&c, "/metadata/name");
        match controller_uid(&c) {
            Some(u) if u == uid && matches => out.push(c),
            Some(u) if u == uid => {
                // Released: the selector no longer picks it.
                let _ = client::update(api, candidates_def, ns, name, |o| {
                    if let Some(refs) = o
                        .pointer_mut("/metadata/ownerReferences")
                        .and_then(Value::as_array_mut)
                    {
                        refs.retain(|r| s(r, "/uid") != uid);
                    }
                });
            }
            None if matches && !terminating(&c) && !terminating(owner) => {
                let r = controller_ref(owner);
                if let Ok(adopted) = client::update(api, candidates_def, ns, name, |o| {
                    if controller_uid(o).is_none() {
                        match o
                            .pointer_mut("/metadata/ownerReferences")
                            .and_then(Value::as_array_mut)
                        {
                            Some(refs) => refs.push(r.clone()),
                            None => o["metadata"]["ownerReferences"] = json!([r.clone()]),
                        }
                    }
                }) && controller_uid(&adopted) == Some(uid)
                {
                    out.push(adopted);
                }
            }
            _ => {}
        }
    }
    out
}

/// A pod for `owner` from its template: labels and annotations from the template, the owner's
/// controller reference, and either a fixed name or `generateName` `<prefix>-` (upstream
/// `GetPodFromTemplate` / `getPodsPrefix`).
pub(crate) fn pod_from_template(owner: &Value, template: &Value, name: Option<&str>) -> Value {
    let ns = s(owner, "/metadata/namespace");
    let mut meta = json!({"namespace": ns, "ownerReferences": [controller_ref(owner)]});
    for k in ["labels", "annotations"] {
        if let Some(m) = template.at(&format!("/metadata/{k}")) {
            meta[k] = m.clone();
        }
    }
    match name {
        Some(n) => meta["name"] = json!(n),
        None => {
            let owner_name = s(owner, "/metadata/name");
            let prefix = format!("{owner_name}-");
            // getPodsPrefix: drop the dash when the prefix would not be a valid name.
            let prefix = if crate::apiserver::registry::validation::is_dns1123_subdomain(&format!(
                "{prefix}a"
            )) {
                prefix
            } else {
                owner_name.to_string()
            };
            // names.SimpleNameGenerator: the base is cut so that base + 5 fits 63.
            let cut: String = prefix.chars().take(58).collect();
            meta["generateName"] = json!(cut);
        }
    }
    json!({"metadata": meta, "spec": template.get("spec").cloned().unwrap_or(json!({}))})
}

/// Record an event from `component` about `obj`.
pub(crate) fn event(api: &Api, component: &str, obj: &Value, ty: &str, reason: &str, msg: &str) {
    events::record(
        api,
        obj,
        Reporter::Controller { component },
        ty,
        reason,
        "",
        msg,
        "",
    );
}

/// The position of one watched prefix in the store's history.
pub(crate) struct Cursor {
    prefix: &'static str,
    pos: Option<u64>,
}

impl Cursor {
    pub(crate) fn new(prefix: &'static str) -> Self {
        Cursor { prefix, pos: None }
    }

    /// The changes since the last call; `None` the first time (and after falling out of the
    /// history): the caller then resyncs everything.
    pub(crate) fn changes(&mut self, api: &Api) -> Option<Vec<Arc<StoreEvent>>> {
        let Some(mut pos) = self.pos else {
            self.pos = Some(api.store.current_rv());
            return None;
        };
        let mut out = Vec::new();
        loop {
            match api.store.history_after(self.prefix, pos, 4096, usize::MAX) {
                Ok(page) => {
                    out.extend(page.events);
                    pos = page.through;
                    if !page.more {
                        break;
                    }
                }
                Err(_) => {
                    self.pos = Some(api.store.current_rv());
                    return None;
                }
            }
        }
        self.pos = Some(pos);
        Some(out)
    }
}

/// `/registry/<key>/<ns>/<name>` → (ns, name).
pub(crate) fn ns_name(key: &str) -> Option<(String, String)> {
    let mut parts = key.rsplitn(3, '/');
    let name = parts.next()?;
    let ns = parts.next()?;
    Some((ns.to_string(), name.to_string()))
}

/// A controller: which objects the changes since the last pass make dirty, and the sync of one.
pub(crate) trait Controller: Send {
    /// The store prefixes it watches.
    fn prefixes(&self) -> &'static [&'static str];
    /// The (namespace, name) of its own objects a change concerns.
    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>);
    /// Every object of its own (for a resync).
    fn all(&self, api: &Api) -> BTreeSet<(String, String)>;
    /// Bring one object's world to its spec; false when a write failed (the resync then
    /// backs off from that object, as upstream's rate-limited work queue does).
    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool;
}

/// How often every object is looked at again without a change (deadlines, minReadySeconds).
/// `Controller::dirty` of a controller of one owner kind: the owner itself when it changed,
/// or the owner a changed dependent names as its controller (before or after the change).
pub(crate) fn owner_dirty(
    ev: &StoreEvent,
    owner_prefix: &str,
    owner_kind: &str,
    out: &mut BTreeSet<(String, String)>,
) {
    if ev.key.starts_with(owner_prefix) {
        out.extend(ns_name(&ev.key));
        return;
    }
    for (ns, kind, name) in controllers_of(ev) {
        if kind == owner_kind {
            out.insert((ns, name));
        }
    }
}

/// `Controller::all`: the (namespace, name) of every object of a kind.
pub(crate) fn keys(api: &Api, def: &ResourceDef) -> BTreeSet<(String, String)> {
    client::list(api, def, "")
        .iter()
        .map(|d| {
            (
                s(d, "/metadata/namespace").to_string(),
                s(d, "/metadata/name").to_string(),
            )
        })
        .collect()
}

const RESYNC: Duration = Duration::from_secs(2);
/// The shortest time from one pass to the next: a burst of writes (a thousand pods, each
/// bound, then started in steps by its kubelet) wakes a controller per write, and a pass that
/// reads a whole namespace per owner then ran hundreds of times a second. Upstream's work
/// queue folds a burst the same way while a worker is busy; 50 ms is not seen by a person.
pub(crate) const MIN_PASS: Duration = Duration::from_millis(50);
/// The longest a failing object waits for its next resync.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Run a controller until `stop` flips: woken by changes under its prefixes (informer
/// style), each dirty object synced once per wake-up, everything again every [`RESYNC`].
pub(crate) async fn run(api: Arc<Api>, mut stop: watch::Receiver<bool>, mut c: impl Controller) {
    let mut changes = api.store.changes();
    let mut cursors: Vec<Cursor> = c.prefixes().iter().map(|p| Cursor::new(p)).collect();
    let mut tick = tokio::time::interval(RESYNC);
    let mut resync = true;
    let mut backoff: HashMap<(String, String), (Instant, Duration)> = HashMap::new();
    loop {
        let pass = tokio::time::Instant::now();
        changes.borrow_and_update();
        let mut dirty = BTreeSet::new();
        for cur in &mut cursors {
            match cur.changes(&api) {
                None => resync = true,
                Some(evs) => {
                    for ev in &evs {
                        c.dirty(&api, ev, &mut dirty);
                    }
                }
            }
        }
        if resync {
            let now = Instant::now();
            dirty.extend(
                c.all(&api)
                    .into_iter()
                    .filter(|k| backoff.get(k).is_none_or(|(at, _)| *at <= now)),
            );
            resync = false;
        }
        let synced = tokio::time::Instant::now();
        for key in dirty {
            if c.sync(&api, &key.0, &key.1) {
                backoff.remove(&key);
            } else {
                let delay = backoff
                    .get(&key)
                    .map_or(RESYNC, |(_, d)| (*d * 2).min(MAX_BACKOFF));
                backoff.insert(key, (Instant::now() + delay, delay));
            }
        }
        let pass_took = synced.elapsed();
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => resync = true,
            r = changes.changed() => if r.is_err() { return },
        }
        // A pass that read a whole big namespace is followed by as long a rest: a busy
        // controller holds at most half a core.
        tokio::time::sleep_until(pass + MIN_PASS.max(pass_took)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::interface::EventType;

    #[test]
    fn an_owner_is_found_however_its_key_is_written() {
        let ev = |object: &str| StoreEvent {
            rv: 7,
            kind: EventType::Added,
            key: "/registry/pods/shop/p".into(),
            object: hyper::body::Bytes::from(object.to_string()),
            prev: None,
        };
        let owner = r#"[{"kind":"ReplicaSet","name":"web-1","controller":true}]"#;
        let plain = format!(r#"{{"metadata":{{"namespace":"shop","ownerReferences":{owner}}}}}"#);
        let escaped =
            format!(r#"{{"metadata":{{"namespace":"shop","owner\u0052eferences":{owner}}}}}"#);
        for json in [plain, escaped] {
            assert_eq!(controllers_of(&ev(&json)).len(), 1, "{json}");
        }
        let none = r#"{"metadata":{"namespace":"shop","labels":{"a":"ownerReferences"}}}"#;
        assert!(controllers_of(&ev(none)).is_empty());
        assert!(!may_name_an_owner(br#"{"metadata":{"namespace":"shop"}}"#));
    }

    #[test]
    fn controllers_of_reads_both_states_of_a_change() {
        let pod = |owner: Value| {
            hyper::body::Bytes::from(
                serde_json::to_vec(&json!({
                    "metadata": {"name": "p", "namespace": "shop", "ownerReferences": owner,
                        "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}
                }))
                .expect("json"),
            )
        };
        let rs = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
            "uid": "u1", "controller": true}]);
        let not_controller =
            json!([{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u2"}]);
        let ev = StoreEvent {
            rv: 7,
            kind: EventType::Modified,
            key: "/registry/pods/shop/p".into(),
            object: pod(not_controller),
            prev: Some(pod(rs)),
        };
        assert_eq!(
            controllers_of(&ev),
            [(
                "shop".to_string(),
                "ReplicaSet".to_string(),
                "web-1".to_string()
            )],
            "released: the ReplicaSet before the change still hears of it"
        );
    }
}

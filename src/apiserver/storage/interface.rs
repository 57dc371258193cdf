//! The storage interface between the endpoints and a backend (upstream `storage.Interface`):
//! handlers, admission, the control loops and the filters see only this trait, so the in-memory
//! MVCC store and a real etcd can each sit behind it without touching them.
//!
//! It is synchronous on purpose: handlers are synchronous functions, and a networked backend
//! answers from its own runtime (a watch-fed cache for reads, a blocking round trip for writes).

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch as signal;

use hyper::body::Bytes;

use crate::apiserver::storage::deletion;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) enum EventType {
    #[serde(rename = "ADDED")]
    Added,
    #[serde(rename = "MODIFIED")]
    Modified,
    #[serde(rename = "DELETED")]
    Deleted,
}

impl EventType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as a watcher sees it: the object at the change's revision as JSON (what the
/// history keeps: about a tenth of the parsed `Value`'s memory), decoded only by watchers that
/// need to look inside (selectors, Table rows, other API versions).
#[derive(Debug, Clone)]
pub(crate) struct StoreEvent {
    pub(crate) rv: u64,
    pub(crate) kind: EventType,
    pub(crate) key: String,
    pub(crate) object: Bytes,
    /// The state before a MODIFIED, so selector watchers can see objects leave their view.
    pub(crate) prev: Option<Bytes>,
}

impl StoreEvent {
    /// What keeping this event in the history costs. `prev` is the same buffer as the event
    /// before it (or the live object's), so it is not counted again.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of::<StoreEvent>() + self.key.len() + self.object.len()
    }

    pub(crate) fn value(&self) -> Value {
        serde_json::from_slice(&self.object).unwrap_or(Value::Null)
    }

    pub(crate) fn prev_value(&self) -> Option<Value> {
        self.prev
            .as_ref()
            .map(|p| serde_json::from_slice(p).unwrap_or(Value::Null))
    }
}

/// Whether a write is kept or only tried. Every writer names one, so no path can forget a
/// client's `dryRun=All`: a dry run makes every check the write would make (existence,
/// optimistic concurrency, preconditions, the update function) and returns what would be
/// stored, but moves no revision, records no history and wakes no watcher or control loop,
/// as upstream's `DryRunnableStorage` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    Commit,
    DryRun,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StoreError {
    #[error("key exists")]
    Exists,
    #[error("key not found")]
    NotFound,
    #[error("resourceVersion conflict")]
    Conflict,
    /// The watch or list start is older than the history kept: (asked, oldest available - 1).
    #[error("too old resource version: {0} ({1})")]
    TooOld(u64, u64),
    /// A precondition or update function refused the change.
    #[error("{0}")]
    Rejected(String),
    /// The backend could not be asked (etcd down, refused, failed): its own words.
    #[error("{0}")]
    Unavailable(String),
    /// The backend did not answer in time.
    #[error("request did not complete within requested timeout - context deadline exceeded")]
    Timeout,
}

/// An object as a read found it: encoded, parsed, or both. A list answered in JSON sends the
/// encoding as it is; only selectors, Table rows and other formats need the tree.
#[derive(Clone)]
pub(crate) struct Item {
    json: Option<Bytes>,
    parsed: Option<Arc<Value>>,
    /// The control loops' view of it (`controller_view`), when the store had one cached.
    view: Option<Arc<Value>>,
}

impl Item {
    pub(crate) fn encoded(json: Bytes) -> Item {
        Item {
            json: Some(json),
            parsed: None,
            view: None,
        }
    }

    pub(crate) fn parsed(value: Arc<Value>) -> Item {
        Item {
            json: None,
            parsed: Some(value),
            view: None,
        }
    }

    pub(crate) fn both(json: Bytes, parsed: Option<Arc<Value>>) -> Item {
        Item {
            json: Some(json),
            parsed,
            view: None,
        }
    }

    /// The encoding with the control loops' view the store had cached.
    pub(crate) fn with_view(json: Bytes, view: Option<Arc<Value>>) -> Item {
        Item {
            json: Some(json),
            parsed: None,
            view,
        }
    }

    /// What a control loop reads (`Storage::get_view`): the cached view, else the whole object
    /// (which answers everything a view does), parsed now and not kept.
    pub(crate) fn view(&self) -> Arc<Value> {
        match &self.view {
            Some(v) => v.clone(),
            None => self.value(),
        }
    }

    pub(crate) fn value(&self) -> Arc<Value> {
        match (&self.parsed, &self.json) {
            (Some(v), _) => v.clone(),
            (None, Some(b)) => Arc::new(serde_json::from_slice(b).unwrap_or(Value::Null)),
            (None, None) => Arc::new(Value::Null),
        }
    }

    /// The object decoded as `T` (a typed k8s-openapi object), from its encoding when it has
    /// one: no tree in between.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        match (&self.json, &self.parsed) {
            (Some(b), _) => serde_json::from_slice(b).ok(),
            (None, Some(v)) => T::deserialize(v.as_ref()).ok(),
            (None, None) => None,
        }
    }

    /// The bytes of its encoding, when it has one (for sizing a buffer).
    pub(crate) fn encoded_len(&self) -> usize {
        self.json.as_ref().map_or(0, Bytes::len)
    }

    /// The object's JSON appended to `out`, as `serde_json` writes the tree.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match (&self.json, &self.parsed) {
            (Some(b), _) => {
                out.extend_from_slice(b);
                Ok(())
            }
            (None, Some(v)) => serde_json::to_writer(out, v.as_ref()),
            (None, None) => {
                out.extend_from_slice(b"null");
                Ok(())
            }
        }
    }
}

/// One page of a read at a past revision (`Store::list_keys_at`).
pub(crate) struct PastPage {
    pub(crate) items: Vec<(String, Item)>,
    pub(crate) more: bool,
    pub(crate) remaining_from_start: Option<usize>,
}

/// A watcher's start: the current objects as ADDED events (a watch without a revision), the
/// revision after which it reads the history, and the signal that wakes it on changes.
pub(crate) struct WatchStart {
    pub(crate) snapshot: Vec<Arc<StoreEvent>>,
    pub(crate) rv: u64,
    pub(crate) changes: signal::Receiver<u64>,
}

/// One read of the history: the matching events, and the revision the read got through (every
/// revision up to it was looked at, matching or not).
pub(crate) struct HistoryPage {
    pub(crate) events: Vec<Arc<StoreEvent>>,
    pub(crate) through: u64,
    /// More history after `through` was already there but beyond the page's limits.
    pub(crate) more: bool,
}

/// A change function of a guaranteed update: sees the current object, returns the next one or
/// refuses. It may be called more than once when a backend retries on a concurrent write.
pub(crate) type UpdateFn<'a> = dyn FnMut(&Value) -> Result<Value, StoreError> + 'a;
/// A delete's precondition check, called on the object about to be deleted.
pub(crate) type CheckFn<'a> = dyn FnMut(&Value) -> Result<(), StoreError> + 'a;

/// A storage call answered later, for a handler that awaits it.
pub(crate) type Pending<T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, StoreError>> + Send>>;

pub(crate) trait Storage: Send + Sync + std::fmt::Debug {
    /// The latest revision written (the resourceVersion of a list).
    fn current_rv(&self) -> u64;
    fn get(&self, key: &str) -> Option<Arc<Value>>;
    /// All objects under `prefix`, in key order, and the revision the list is consistent at.
    fn list(&self, prefix: &str) -> (Vec<Arc<Value>>, u64);
    /// Like `list`, but each object as the store holds it, parsed by the reader one at a time
    /// (`Item::value`, `Item::decode`): a pass over 150,000 pods that holds every tree at once
    /// is 2.4 GB, one that parses each in turn a few kilobytes.
    fn list_items(&self, prefix: &str) -> (Vec<(String, Item)>, u64);
    /// What a control loop reads of the object at `key` (`controller_view`: its metadata whole,
    /// a pod trimmed to what the control loops read). Never a base for a write.
    fn get_view(&self, key: &str) -> Option<Arc<Value>> {
        self.get(key)
    }
    /// The encoding of the object at `key` as watchers get it, with its revision: what a write
    /// answers when the client asked for JSON, instead of encoding the object again.
    fn encoded(&self, _key: &str) -> Option<(u64, Bytes)> {
        None
    }
    /// `list`, as the control loops read it: each object's view (`get_view`).
    fn list_views(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        self.list(prefix)
    }
    /// The objects under `prefix` whose `metadata` has one of `fields` set: what the garbage
    /// collector acts on (ownerReferences, finalizers, deletionTimestamp), read without
    /// decoding objects kept only encoded that have none of them. Views (`get_view`).
    fn list_with_metadata(&self, prefix: &str, fields: &[&str]) -> Vec<Arc<Value>> {
        self.list(prefix)
            .0
            .into_iter()
            .filter(|o| has_metadata(o, fields))
            .collect()
    }
    /// One page of the objects under `prefix` from key `start` on, as they were at revision `at`
    /// (TooOld when that revision is compacted); `count` asks for remainingItemCount.
    fn list_keys_at(
        &self,
        prefix: &str,
        start: &str,
        at: u64,
        limit: usize,
        count: bool,
    ) -> Result<PastPage, StoreError>;
    /// Wakes on every new revision, for loops that re-read the store.
    fn changes(&self) -> signal::Receiver<u64>;
    /// The changes under `prefix` after revision `after`, in revision order, bounded.
    fn history_after(
        &self,
        prefix: &str,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> Result<HistoryPage, StoreError>;
    /// Create `key` unless it exists; the stored object carries the new revision.
    fn create(&self, key: &str, value: Value, write: Write) -> Result<Arc<Value>, StoreError>;
    /// `create`, answered to a future: a backend whose write is a round trip (etcd) lets the
    /// awaiting handler's thread serve other requests meanwhile. In memory it is `create`.
    fn create_later(&self, key: &str, value: Value, write: Write) -> Pending<Arc<Value>> {
        Box::pin(std::future::ready(self.create(key, value, write)))
    }
    /// Guaranteed update; with `expected_rv`, a different stored revision is a Conflict.
    fn update_with(
        &self,
        key: &str,
        expected_rv: Option<u64>,
        write: Write,
        f: &mut UpdateFn<'_>,
    ) -> Result<Arc<Value>, StoreError>;
    /// Delete after `check` accepts the current object; answers its last state.
    fn delete_with(
        &self,
        key: &str,
        write: Write,
        check: &mut CheckFn<'_>,
    ) -> Result<Arc<Value>, StoreError>;
    /// Start a watch on `prefix`: from now (current objects as ADDED) or after a revision.
    fn watch(&self, prefix: &str, from: Option<u64>) -> Result<WatchStart, StoreError>;
    /// Before a read the client asked to be current (no resourceVersion): kube-apiserver then
    /// reads etcd itself (a get), or asks it for its revision before answering from its watch
    /// cache (a list), so without a quorum such reads fail as writes do. In memory there is
    /// nothing to ask.
    fn confirm_current(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// The backend's own health check, by the name kube-apiserver gives it (`etcd`), or None
    /// when there is nothing outside the process to check.
    fn health(&self) -> Option<(&'static str, Result<(), String>)> {
        None
    }
    /// Where `key` really lives when that is outside the process (etcd's key and the etcdctl
    /// command that prints it), for the journey's storage stage.
    fn locate(&self, _key: &str) -> Option<Value> {
        None
    }
}

impl dyn Storage + '_ {
    /// [`Storage::update_with`] with a closure.
    pub(crate) fn update<F>(
        &self,
        key: &str,
        expected_rv: Option<u64>,
        write: Write,
        mut f: F,
    ) -> Result<Arc<Value>, StoreError>
    where
        F: FnMut(&Value) -> Result<Value, StoreError>,
    {
        let next = self.update_with(key, expected_rv, write, &mut |cur| {
            let mut next = f(cur)?;
            deletion::omit_empty_lists(&mut next);
            Ok(next)
        })?;
        if write == Write::Commit && deletion::complete(key, &next) {
            // Its last finalizer went: removed, unless it changed meanwhile.
            let was = uid(&next).to_owned();
            let _ = self.delete_with(key, write, &mut |cur| {
                if uid(cur) == was && deletion::complete(key, cur) {
                    Ok(())
                } else {
                    Err(StoreError::Rejected("changed since".into()))
                }
            });
        }
        Ok(next)
    }

    /// [`Storage::delete_with`] with a closure. An object a finalizer holds is not removed but
    /// marked deleted (`deletion::mark`), and returned with its finalizers: a caller tells the
    /// two outcomes apart by `deletion::held` on what it gets back.
    pub(crate) fn delete<F>(
        &self,
        key: &str,
        write: Write,
        mut check: F,
    ) -> Result<Arc<Value>, StoreError>
    where
        F: FnMut(&Value) -> Result<(), StoreError>,
    {
        let mut held = false;
        let removed = self.delete_with(key, write, &mut |cur| {
            check(cur)?;
            held = deletion::held(cur);
            if held {
                Err(StoreError::Rejected("held by finalizers".into()))
            } else {
                Ok(())
            }
        });
        if !held {
            return removed;
        }
        let mut unchanged = None;
        let marked = self.update(key, None, write, |cur| {
            check(cur)?;
            match deletion::mark(cur) {
                Some(next) => Ok(next),
                None => {
                    unchanged = Some(Arc::new(cur.clone()));
                    Err(StoreError::Rejected("already marked".into()))
                }
            }
        });
        match unchanged {
            Some(cur) => Ok(cur),
            None => marked,
        }
    }
}

fn uid(o: &Value) -> &str {
    o.get("metadata")
        .and_then(|m| m.get("uid"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether one of `fields` of the object's metadata is set (not null).
pub(crate) fn has_metadata(o: &Value, fields: &[&str]) -> bool {
    let meta = o.get("metadata");
    fields
        .iter()
        .any(|f| meta.and_then(|m| m.get(*f)).is_some_and(|v| !v.is_null()))
}

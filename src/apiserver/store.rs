//! An etcd-like store: keys such as `/registry/pods/default/app`, one global monotonically
//! increasing revision (the resourceVersion of every write), optimistic concurrency, and a
//! bounded history that watchers resume from (older than the history → 410 Expired).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tokio::sync::broadcast;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum EventType {
    #[serde(rename = "ADDED")]
    Added,
    #[serde(rename = "MODIFIED")]
    Modified,
    #[serde(rename = "DELETED")]
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as a watcher sees it. `object` carries the revision of the change.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    pub rv: u64,
    pub kind: EventType,
    pub key: String,
    pub object: Arc<Value>,
    /// The state before a MODIFIED, so selector watchers can see objects leave their view.
    pub prev: Option<Arc<Value>>,
    /// The object as JSON, encoded once for all watchers that want plain JSON.
    pub encoded: std::sync::OnceLock<hyper::body::Bytes>,
}

impl StoreEvent {
    pub fn new(
        rv: u64,
        kind: EventType,
        key: &str,
        object: Arc<Value>,
        prev: Option<Arc<Value>>,
    ) -> Self {
        StoreEvent {
            rv,
            kind,
            key: key.to_string(),
            object,
            prev,
            encoded: std::sync::OnceLock::new(),
        }
    }

    /// The object's JSON bytes (shared by every watcher of this event).
    pub fn object_json(&self) -> &hyper::body::Bytes {
        self.encoded.get_or_init(|| {
            hyper::body::Bytes::from(serde_json::to_vec(&*self.object).unwrap_or_default())
        })
    }
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
}

struct Inner {
    rv: u64,
    objects: BTreeMap<String, Arc<Value>>,
    history: VecDeque<Arc<StoreEvent>>,
}

pub struct Store {
    inner: RwLock<Inner>,
    tx: broadcast::Sender<Arc<StoreEvent>>,
    history_cap: usize,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store(rv={})", self.current_rv())
    }
}

pub fn object_rv(v: &Value) -> Option<u64> {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

fn set_rv(v: &mut Value, rv: u64) {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

/// A watcher's start: what it missed (from history) and the live feed after it.
pub struct WatchStart {
    pub backlog: Vec<Arc<StoreEvent>>,
    pub rx: broadcast::Receiver<Arc<StoreEvent>>,
    pub rv: u64,
}

impl Store {
    pub fn new(history_cap: usize) -> Self {
        // A lagging watcher loses events and must be told so (410), as a slow etcd watcher is.
        let (tx, _) = broadcast::channel(16384);
        Store {
            inner: RwLock::new(Inner {
                rv: 1,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
            }),
            tx,
            history_cap,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    pub fn current_rv(&self) -> u64 {
        self.read().rv
    }

    pub fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.read().objects.get(key).cloned()
    }

    /// All objects under `prefix` (key order) and the revision the list is consistent at.
    pub fn list(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        let g = self.read();
        let items = g
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v.clone())
            .collect();
        (items, g.rv)
    }

    /// Like `list` but with keys, for chunking (`continue` tokens carry the next key).
    pub fn list_keys_from(
        &self,
        prefix: &str,
        start: &str,
        limit: usize,
    ) -> (Vec<(String, Arc<Value>)>, bool, u64) {
        let g = self.read();
        let from = if start.is_empty() {
            prefix.to_string()
        } else {
            start.to_string()
        };
        let mut it = g
            .objects
            .range(from..)
            .take_while(|(k, _)| k.starts_with(prefix));
        let mut out = Vec::new();
        for (k, v) in it.by_ref() {
            if out.len() == limit {
                return (out, true, g.rv);
            }
            out.push((k.clone(), v.clone()));
        }
        (out, false, g.rv)
    }

    fn commit(
        &self,
        g: &mut Inner,
        kind: EventType,
        key: &str,
        object: Arc<Value>,
        prev: Option<Arc<Value>>,
    ) {
        let ev = Arc::new(StoreEvent::new(g.rv, kind, key, object, prev));
        g.history.push_back(ev.clone());
        while g.history.len() > self.history_cap {
            g.history.pop_front();
        }
        // Sent under the write lock so watchers see events in revision order.
        let _ = self.tx.send(ev);
    }

    /// Create; the object gets the new revision as its resourceVersion.
    pub fn create(&self, key: &str, mut value: Value) -> Result<Arc<Value>, StoreError> {
        let mut g = self.write();
        if g.objects.contains_key(key) {
            return Err(StoreError::Exists);
        }
        g.rv += 1;
        set_rv(&mut value, g.rv);
        let obj = Arc::new(value);
        g.objects.insert(key.to_string(), obj.clone());
        self.commit(&mut g, EventType::Added, key, obj.clone(), None);
        Ok(obj)
    }

    /// Guaranteed update: `f` sees the current object and returns the new one (or refuses).
    /// With `expected_rv`, a different stored revision is a Conflict (optimistic concurrency).
    pub fn update<F>(
        &self,
        key: &str,
        expected_rv: Option<u64>,
        f: F,
    ) -> Result<Arc<Value>, StoreError>
    where
        F: FnOnce(&Value) -> Result<Value, StoreError>,
    {
        let mut g = self.write();
        let cur = g.objects.get(key).cloned().ok_or(StoreError::NotFound)?;
        if let Some(exp) = expected_rv
            && object_rv(&cur) != Some(exp)
        {
            return Err(StoreError::Conflict);
        }
        let mut next = f(&cur)?;
        if next == *cur {
            return Ok(cur); // no-op updates do not bump the revision, as upstream
        }
        g.rv += 1;
        set_rv(&mut next, g.rv);
        let obj = Arc::new(next);
        g.objects.insert(key.to_string(), obj.clone());
        self.commit(&mut g, EventType::Modified, key, obj.clone(), Some(cur));
        Ok(obj)
    }

    /// Delete; `check` may refuse (preconditions). Watchers get the last state at the new revision.
    pub fn delete<F>(&self, key: &str, check: F) -> Result<Arc<Value>, StoreError>
    where
        F: FnOnce(&Value) -> Result<(), StoreError>,
    {
        let mut g = self.write();
        let cur = g.objects.get(key).cloned().ok_or(StoreError::NotFound)?;
        check(&cur)?;
        g.objects.remove(key);
        g.rv += 1;
        let mut last = (*cur).clone();
        set_rv(&mut last, g.rv);
        let obj = Arc::new(last);
        self.commit(&mut g, EventType::Deleted, key, obj.clone(), None);
        Ok(obj)
    }

    /// Start a watch on `prefix`. `from`: None = current objects as ADDED then changes;
    /// Some(n) = changes after revision n, or TooOld when the history no longer reaches back.
    pub fn watch(&self, prefix: &str, from: Option<u64>) -> Result<WatchStart, StoreError> {
        let g = self.read();
        let rx = self.tx.subscribe();
        let backlog = match from {
            None | Some(0) => g
                .objects
                .range(prefix.to_string()..)
                .take_while(|(k, _)| k.starts_with(prefix))
                .map(|(k, v)| {
                    Arc::new(StoreEvent::new(
                        object_rv(v).unwrap_or(g.rv),
                        EventType::Added,
                        k,
                        v.clone(),
                        None,
                    ))
                })
                .collect(),
            Some(n) => {
                let oldest = g.history.front().map(|e| e.rv).unwrap_or(g.rv + 1);
                if n + 1 < oldest && n < g.rv {
                    return Err(StoreError::TooOld(n, oldest.saturating_sub(1)));
                }
                g.history
                    .iter()
                    .filter(|e| e.rv > n && e.key.starts_with(prefix))
                    .cloned()
                    .collect()
            }
        };
        Ok(WatchStart {
            backlog,
            rx,
            rv: g.rv,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(name: &str) -> Value {
        json!({"metadata": {"name": name}})
    }

    #[test]
    fn revisions_and_conflicts() {
        let s = Store::new(100);
        let a = s
            .create("/registry/pods/default/a", obj("a"))
            .ok()
            .and_then(|v| object_rv(&v));
        let b = s
            .create("/registry/pods/default/b", obj("b"))
            .ok()
            .and_then(|v| object_rv(&v));
        assert!(a < b);
        assert_eq!(
            s.create("/registry/pods/default/a", obj("a")).err(),
            Some(StoreError::Exists)
        );
        let stale = s.update("/registry/pods/default/a", Some(1), |v| Ok(v.clone()));
        assert_eq!(stale.err(), Some(StoreError::Conflict));
        let (items, _) = s.list("/registry/pods/default/");
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn watch_from_history_and_too_old() {
        let s = Store::new(2);
        for n in ["a", "b", "c", "d"] {
            let _ = s.create(&format!("/registry/pods/default/{n}"), obj(n));
        }
        let w = s.watch("/registry/pods/", Some(4));
        assert_eq!(w.map(|w| w.backlog.len()).ok(), Some(1));
        assert!(matches!(
            s.watch("/registry/pods/", Some(1)),
            Err(StoreError::TooOld(1, _))
        ));
    }
}

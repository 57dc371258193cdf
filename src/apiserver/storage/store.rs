//! An etcd-like store: keys such as `/registry/pods/default/app`, one global monotonically
//! increasing revision (the resourceVersion of every write), optimistic concurrency, and a
//! history of changes bounded by count and by bytes, like etcd's compaction window. Watchers
//! read that history at their own pace (a slow watcher costs nothing until it falls out of the
//! window; then it gets 410 Expired and relists), woken by a revision signal.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};

use hyper::body::Bytes;
use serde_json::Value;
use tokio::sync::watch as signal;

use crate::apiserver::storage::controller_view::{self, Kept, kept};
use crate::apiserver::storage::interface::{CheckFn, Item, Storage, UpdateFn, has_metadata};
pub(crate) use crate::apiserver::storage::interface::{
    EventType, HistoryPage, PastPage, StoreError, StoreEvent, WatchStart, Write,
};
use crate::apiserver::storage::parsed_cache::{self, Budget, Parsed};
use crate::apiserver::util::{At, KeySearch};

fn encode(v: &Value) -> Bytes {
    // Not shrunk to size: trimming each long-lived buffer in place leaves a small free
    // fragment beside it, and under the soak glibc's arenas then grew (+18–31 % RSS after
    // warm-up in release runs, heap in use flat) where whole power-of-two buffers stay
    // reusable (+3 %).
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

/// How much change history the store keeps. Upstream, etcd keeps every revision until the
/// apiserver compacts (every 5 minutes) and the watch cache keeps up to 102,400 events; here
/// memory is the bound that matters, so both a count and the events' encoded bytes cap it.
/// 32 MiB is ~17,000 changes of a small pod: tens of seconds of 200 clients writing flat out
/// on two cores, far more than a workshop writes in an hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    pub max_events: usize,
    pub max_bytes: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            max_events: 100_000,
            max_bytes: 32 << 20,
        }
    }
}

/// A key's state in a past read: from the history (encoded) or still the live object.
enum Either<'a> {
    Past(&'a Bytes),
    Live(&'a Stored),
}

fn decode(b: &Bytes) -> Arc<Value> {
    Arc::new(serde_json::from_slice(b).unwrap_or(Value::Null))
}

/// What the history holds now: events, their bytes as `HistoryLimits` counts them, and the
/// oldest revision in it.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HistoryStats {
    pub(crate) events: usize,
    pub(crate) bytes: usize,
    pub(crate) oldest: Option<u64>,
}

/// A live object: encoded (for watchers, the history and lists), its revision, and its parsed
/// tree while the cache of trees keeps it (`parsed_cache`): the whole object, or for the keys
/// `controller_view::kept` says so, the control loops' view of it.
struct Stored {
    json: Bytes,
    /// The object's resourceVersion (0: it has none), so a watch from now needs no parse.
    rv: u64,
    parsed: Parsed,
}

/// How a read turns a stored object into a tree: whole (`Store::value_of`) or as the control
/// loops read it (`Store::view_of`).
type TreeOf = fn(&Store, &Inner, &str, &Stored) -> Arc<Value>;

struct Inner {
    rv: u64,
    /// Every change after this revision is in the history (older ones were compacted away).
    /// Revisions need not be contiguous: a mirror of etcd skips those of other keys.
    floor: u64,
    objects: BTreeMap<String, Stored>,
    history: VecDeque<Arc<StoreEvent>>,
    history_bytes: usize,
}

pub struct Store {
    inner: RwLock<Inner>,
    /// The latest revision, for whoever waits for changes (watchers, control loops).
    revision: signal::Sender<u64>,
    limits: HistoryLimits,
    /// The keys changed since the revision of a list being read page by page (see
    /// `PastKeys`), kept for its next pages.
    past_keys: Mutex<VecDeque<PastKeys>>,
    /// What the cached parsed trees may take.
    parsed: Budget,
}

/// Under `prefix`, each key changed after revision `at`, with its state at `at` (None: absent
/// then), from the history up to `through`. Every page of a list is read at the first page's
/// revision; without this each page scanned the whole history since then again, and with
/// kubelets writing, a 150,000-pod list's 300 pages each went through ~100,000 events.
struct PastKeys {
    prefix: String,
    at: u64,
    through: u64,
    keys: BTreeMap<String, Option<Bytes>>,
    /// The keys at `at` from a page's next key on, as the page before it counted them: the
    /// next page's remainingItemCount without walking to the end again (each page of a
    /// 150,000-pod list did, 300 × 75,000 keys on average).
    counted: HashMap<String, usize>,
}

/// How many lists read page by page keep their `PastKeys` (the most recent ones).
const PAST_KEYS_KEPT: usize = 4;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store(rv={})", self.current_rv())
    }
}

pub(crate) fn object_rv(v: &Value) -> Option<u64> {
    v.at("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
}

pub(crate) fn set_rv(v: &mut Value, rv: u64) {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
}

impl Default for Store {
    fn default() -> Self {
        Store::new(HistoryLimits::default())
    }
}

impl Store {
    pub fn new(limits: HistoryLimits) -> Self {
        let (revision, _) = signal::channel(1);
        Store {
            inner: RwLock::new(Inner {
                rv: 1,
                floor: 1,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                history_bytes: 0,
            }),
            revision,
            limits,
            past_keys: Mutex::new(VecDeque::new()),
            parsed: Budget::new(parsed_cache::DEFAULT_BUDGET),
        }
    }

    #[cfg(test)]
    fn with_parsed_budget(limit: usize) -> Self {
        Store {
            parsed: Budget::new(limit),
            ..Store::default()
        }
    }

    /// A live object at revision `rv` to keep, with `tree` cached when the write has it: the
    /// tree `kept(key)` keeps (the whole object, or a pod's view), likely read next.
    fn stored(&self, key: &str, tree: Option<Arc<Value>>, json: Bytes, rv: u64) -> Stored {
        let parsed = Parsed::empty();
        match (kept(key), tree) {
            (Kept::Whole, Some(t)) => {
                parsed.fill(t, &self.parsed, parsed_cache::cost(json.len(), false))
            }
            (Kept::View, Some(t)) => {
                parsed.fill(t, &self.parsed, parsed_cache::cost(json.len(), true))
            }
            _ => {}
        }
        Stored { json, rv, parsed }
    }

    /// What a create keeps parsed: a whole object, not a pod's view. Loading a scenario
    /// creates 150,000 pods no control loop reads one by one (their first pass lists them), and
    /// keeping each one's view took serve from 342 MiB to 955 MiB; a pod created through the
    /// API gets its view when the first control loop catches up with it.
    fn kept_at_create(key: &str, obj: &Arc<Value>) -> Option<Arc<Value>> {
        (kept(key) == Kept::Whole).then(|| obj.clone())
    }

    /// The object as a list hands it out: its encoding and the tree cached for it, as a whole
    /// object or as a view (not marked used: a list sent as JSON never looks at it).
    fn item(key: &str, o: &Stored) -> Item {
        match kept(key) {
            Kept::View => Item::with_view(o.json.clone(), o.parsed.peek()),
            Kept::Whole | Kept::Nothing => Item::both(o.json.clone(), o.parsed.peek()),
        }
    }

    /// The tree `key` keeps (the whole object or its view): the cached one, or parsed now and
    /// cached within the budget.
    fn cached_tree(&self, g: &Inner, key: &str, o: &Stored) -> Arc<Value> {
        if let Some(v) = o.parsed.get() {
            return v;
        }
        let whole = Arc::new(serde_json::from_slice(&o.json).unwrap_or(Value::Null));
        let v = controller_view::view(key, &whole);
        let cost = parsed_cache::cost(o.json.len(), kept(key) == Kept::View);
        o.parsed.fill(v.clone(), &self.parsed, cost);
        self.sweep(g);
        v
    }

    /// The whole object: cached when the key keeps it whole, else parsed now and not kept.
    fn value_of(&self, g: &Inner, key: &str, o: &Stored) -> Arc<Value> {
        match kept(key) {
            Kept::Whole => self.cached_tree(g, key, o),
            Kept::View | Kept::Nothing => decode(&o.json),
        }
    }

    /// The control loops' view (`controller_view`; the whole object for most kinds).
    fn view_of(&self, g: &Inner, key: &str, o: &Stored) -> Arc<Value> {
        match kept(key) {
            Kept::Whole | Kept::View => self.cached_tree(g, key, o),
            Kept::Nothing => decode(&o.json),
        }
    }

    /// Over the budget: the clock hand goes on from where it stopped, dropping the trees not
    /// used since it last passed, until an eighth under. Two turns at most: the first may
    /// only clear marks. A sweep already going (another reader's) is left to finish.
    fn sweep(&self, g: &Inner) {
        if !self.parsed.over() {
            return;
        }
        let Ok(mut hand) = self.parsed.hand.try_lock() else {
            return;
        };
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let start = std::mem::take(&mut *hand);
        for _ in 0..2 {
            let after = g
                .objects
                .range::<str, _>((Included(start.as_str()), Unbounded));
            let before = g
                .objects
                .range::<str, _>((Unbounded, Excluded(start.as_str())));
            for (k, o) in after.chain(before) {
                o.parsed.sweep(&self.parsed);
                if self.parsed.swept() {
                    *hand = k.clone();
                    return;
                }
            }
        }
    }

    /// `o` leaves the store (replaced or deleted): its tree leaves the budget.
    fn release(&self, o: Option<Stored>) {
        if let Some(o) = o {
            o.parsed.release(&self.parsed);
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

    /// The object at `key` as `read` gives it (`value_of` or `view_of`).
    fn get_as(&self, key: &str, read: TreeOf) -> Option<Arc<Value>> {
        let g = self.read();
        let (k, o) = g.objects.get_key_value(key)?;
        Some(read(self, &g, k, o))
    }

    /// The objects under `prefix` (key order) as `read` gives them, and the revision the list
    /// is consistent at.
    fn list_as(&self, prefix: &str, read: TreeOf) -> (Vec<Arc<Value>>, u64) {
        let g = self.read();
        let items = g
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, o)| read(self, &g, k, o))
            .collect();
        (items, g.rv)
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.get_as(key, Store::value_of)
    }

    /// All objects under `prefix` (key order) and the revision the list is consistent at.
    pub(crate) fn list(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        self.list_as(prefix, Store::value_of)
    }

    /// `Storage::encoded`.
    pub(crate) fn encoded(&self, key: &str) -> Option<(u64, Bytes)> {
        let g = self.read();
        g.objects.get(key).map(|o| (o.rv, o.json.clone()))
    }

    /// `Storage::get_view`.
    pub(crate) fn get_view(&self, key: &str) -> Option<Arc<Value>> {
        self.get_as(key, Store::view_of)
    }

    /// `Storage::list_views`.
    pub(crate) fn list_views(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        self.list_as(prefix, Store::view_of)
    }

    /// `Storage::list_items`: encodings and cached trees only, so the lock is held for a walk
    /// of the keys and nothing is parsed under it.
    pub(crate) fn list_items(&self, prefix: &str) -> (Vec<(String, Item)>, u64) {
        let g = self.read();
        let items = g
            .objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, o)| (k.clone(), Self::item(k, o)))
            .collect();
        (items, g.rv)
    }

    /// `Storage::list_with_metadata`: an object without a cached tree is parsed only when its
    /// text names one of the fields (the garbage collector looks at every object a few times a
    /// second; parsing 150,000 pods each time kept a core busy). A whole tree parsed here is not
    /// cached; a view is, as the pods a controller owns are read again on its next pass.
    pub(crate) fn list_with_metadata(&self, prefix: &str, fields: &[&str]) -> Vec<Arc<Value>> {
        let search = KeySearch::new(fields);
        let g = self.read();
        g.objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter_map(|(k, o)| {
                let v = match o.parsed.peek() {
                    Some(v) => v,
                    None => {
                        if !search.may_hold(&o.json) {
                            return None;
                        }
                        match kept(k) {
                            Kept::View => self.view_of(&g, k, o),
                            Kept::Whole | Kept::Nothing => decode(&o.json),
                        }
                    }
                };
                has_metadata(&v, fields).then_some(v)
            })
            .collect()
    }

    /// The objects under `prefix` from key `start` on (at most `limit`), as they were at
    /// revision `at`: the live objects with every later change undone from the history, which
    /// is what etcd's read at a revision gives. Returns them, whether more follow, and how
    /// many keys there are from `start` on at `at` when `count` is asked (remainingItemCount).
    /// TooOld when the history no longer reaches back to `at`.
    pub(crate) fn list_keys_at(
        &self,
        prefix: &str,
        start: &str,
        at: u64,
        limit: usize,
        count: bool,
    ) -> Result<PastPage, StoreError> {
        let g = self.read();
        let at = at.min(g.rv);
        Self::check_not_compacted(&g, at)?;
        let from = if start.is_empty() { prefix } else { start };
        let mut kept = self.past_keys.lock().unwrap_or_else(|e| e.into_inner());
        let found = kept.iter().position(|p| p.prefix == prefix && p.at == at);
        let entry = match found {
            Some(e) => e,
            None => {
                if kept.len() == PAST_KEYS_KEPT {
                    kept.pop_front();
                }
                kept.push_back(PastKeys {
                    prefix: prefix.to_string(),
                    at,
                    through: at,
                    keys: BTreeMap::new(),
                    counted: HashMap::new(),
                });
                kept.len() - 1
            }
        };
        let past = &mut kept[entry];
        // Each key changed after `at` has its state at `at` in its earliest later event: absent
        // before an ADDED, the `prev` of a MODIFIED or DELETED. Only events after those already
        // read are looked at.
        let first = g.history.partition_point(|e| e.rv <= past.through);
        for ev in g.history.range(first..) {
            if ev.key.starts_with(prefix) && !past.keys.contains_key(ev.key.as_str()) {
                past.keys.insert(
                    ev.key.clone(),
                    match ev.kind {
                        EventType::Added => None,
                        EventType::Modified | EventType::Deleted => {
                            Some(ev.prev.clone().unwrap_or_else(|| ev.object.clone()))
                        }
                    },
                );
            }
        }
        past.through = past.through.max(g.rv);
        let known = if count {
            past.counted.remove(from)
        } else {
            None
        };
        let count = count && known.is_none();
        let past = &kept[entry];
        let mut live = g
            .objects
            .range::<str, _>((std::ops::Bound::Included(from), std::ops::Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .peekable();
        let mut old = past
            .keys
            .range::<str, _>((std::ops::Bound::Included(from), std::ops::Bound::Unbounded))
            .map(|(k, b)| (k.as_str(), b.as_ref()))
            .peekable();
        let mut page = PastPage {
            items: Vec::new(),
            more: false,
            remaining_from_start: count.then_some(0),
        };
        loop {
            // The next key in order, from whichever side holds it; a key on both sides takes
            // its state at `at` from the history.
            let (key, state): (&str, Option<Either<'_>>) = match (live.peek(), old.peek()) {
                (None, None) => break,
                (Some((lk, _)), Some((ok, _))) if lk.as_str() == *ok => {
                    let _ = live.next();
                    let (k, b) = old.next().unwrap_or_default();
                    (k, b.map(Either::Past))
                }
                (Some((lk, _)), Some((ok, _))) if *ok < lk.as_str() => {
                    let (k, b) = old.next().unwrap_or_default();
                    (k, b.map(Either::Past))
                }
                (Some(_), _) => match live.next() {
                    Some((k, o)) => (k.as_str(), Some(Either::Live(o))),
                    None => break,
                },
                (None, Some(_)) => {
                    let (k, b) = old.next().unwrap_or_default();
                    (k, b.map(Either::Past))
                }
            };
            let Some(state) = state else { continue };
            if let Some(n) = page.remaining_from_start.as_mut() {
                *n += 1;
            }
            if page.items.len() == limit {
                page.more = true;
                if !count {
                    break;
                }
                continue;
            }
            let value = match state {
                Either::Past(b) => Item::encoded(b.clone()),
                Either::Live(o) => Self::item(key, o),
            };
            page.items.push((key.to_string(), value));
        }
        if let Some(n) = known {
            page.remaining_from_start = Some(n);
        }
        if let (Some(n), Some((last, _)), true) =
            (page.remaining_from_start, page.items.last(), page.more)
        {
            // Either the page's last key (a reader that asked for one more item than it
            // returns starts its next page there) or the key right after it.
            let counted = &mut kept[entry].counted;
            if counted.len() >= 64 {
                counted.clear();
            }
            counted.insert(format!("{last}\u{0}"), n - page.items.len());
            counted.insert(last.clone(), n + 1 - page.items.len());
        }
        // A list read whole leaves nothing for a next page: it does not push out the
        // entries of lists still being paged.
        if found.is_none() && !page.more {
            kept.remove(entry);
        }
        Ok(page)
    }

    /// Make the object encoded as `json` the state of `key` at the current revision (for
    /// `Deleted`, its last state, and the key goes), and record the change in the history.
    /// `tree`, when the write has it, is what `kept(key)` keeps: the whole object, or a pod's
    /// view (`controller_view::view`).
    fn commit(
        &self,
        g: &mut Inner,
        kind: EventType,
        key: &str,
        tree: Option<Arc<Value>>,
        json: Bytes,
    ) {
        // The state before the change: selector watchers see objects leave their view by it,
        // and a list at an older revision undoes the change with it.
        let prev = match kind {
            EventType::Modified | EventType::Deleted => g.objects.get(key).map(|o| o.json.clone()),
            EventType::Added => None,
        };
        match kind {
            EventType::Added | EventType::Modified => {
                let stored = self.stored(key, tree, json.clone(), g.rv);
                let old = g.objects.insert(key.to_string(), stored);
                self.release(old);
                self.sweep(g);
            }
            EventType::Deleted => {
                let old = g.objects.remove(key);
                self.release(old);
            }
        }
        let ev = Arc::new(StoreEvent {
            rv: g.rv,
            kind,
            key: key.to_string(),
            object: json,
            prev,
        });
        g.history_bytes += ev.bytes();
        g.history.push_back(ev);
        // Compaction: the oldest revisions go first; the newest always stays.
        while g.history.len() > 1
            && (g.history.len() > self.limits.max_events || g.history_bytes > self.limits.max_bytes)
        {
            if let Some(old) = g.history.pop_front() {
                g.history_bytes -= old.bytes();
                g.floor = old.rv;
            }
        }
        // Under the write lock, so a woken reader finds the event in the history.
        self.revision.send_replace(g.rv);
    }

    #[cfg(test)]
    pub(crate) fn history_stats(&self) -> HistoryStats {
        let g = self.read();
        HistoryStats {
            events: g.history.len(),
            bytes: g.history_bytes,
            oldest: g.history.front().map(|e| e.rv),
        }
    }

    /// Wakes on every revision (`changed().await`), for loops that re-read the store.
    pub fn changes(&self) -> signal::Receiver<u64> {
        self.revision.subscribe()
    }

    /// TooOld when revisions after `after` are no longer all in the history.
    fn check_not_compacted(g: &Inner, after: u64) -> Result<(), StoreError> {
        if after < g.floor && after < g.rv {
            return Err(StoreError::TooOld(after, g.floor));
        }
        Ok(())
    }

    /// The changes under `prefix` after revision `after`, in revision order, at most
    /// `max_events` looked at and about `max_bytes` of matching events (at least one).
    pub(crate) fn history_after(
        &self,
        prefix: &str,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> Result<HistoryPage, StoreError> {
        let g = self.read();
        Self::check_not_compacted(&g, after)?;
        let start = g.history.partition_point(|e| e.rv <= after);
        let mut page = HistoryPage {
            events: Vec::new(),
            through: after,
            more: false,
        };
        let mut bytes = 0;
        for (n, ev) in g.history.range(start..).enumerate() {
            if n == max_events || (bytes >= max_bytes && !page.events.is_empty()) {
                page.more = true;
                return Ok(page);
            }
            page.through = ev.rv;
            if ev.key.starts_with(prefix) {
                bytes += ev.bytes();
                page.events.push(ev.clone());
            }
        }
        // Everything written so far was looked at (the history holds every revision since its
        // oldest, and `check_not_compacted` said that reaches back to `after`).
        page.through = after.max(g.rv);
        Ok(page)
    }

    /// Create; the object gets the new revision as its resourceVersion. A dry run answers the
    /// object without one, as kube-apiserver's dry-run create does.
    pub(crate) fn create(
        &self,
        key: &str,
        mut value: Value,
        write: Write,
    ) -> Result<Arc<Value>, StoreError> {
        if write == Write::DryRun {
            return match self.read().objects.contains_key(key) {
                true => Err(StoreError::Exists),
                false => Ok(Arc::new(value)),
            };
        }
        let mut g = self.write();
        if g.objects.contains_key(key) {
            return Err(StoreError::Exists);
        }
        g.rv += 1;
        set_rv(&mut value, g.rv);
        let obj = Arc::new(value);
        let json = encode(&obj);
        let tree = Self::kept_at_create(key, &obj);
        self.commit(&mut g, EventType::Added, key, tree, json);
        Ok(obj)
    }

    /// Guaranteed update: `f` sees the current object and returns the new one (or refuses).
    /// With `expected_rv`, a different stored revision is a Conflict (optimistic concurrency).
    /// A dry run answers the new object at the current object's resourceVersion.
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
        if write == Write::DryRun {
            let cur = self.get(key).ok_or(StoreError::NotFound)?;
            let rv = object_rv(&cur);
            if expected_rv.is_some_and(|exp| rv != Some(exp)) {
                return Err(StoreError::Conflict);
            }
            let mut next = f(&cur)?;
            if let Some(rv) = rv {
                set_rv(&mut next, rv);
            }
            return Ok(Arc::new(next));
        }
        let mut g = self.write();
        let cur = g
            .objects
            .get_key_value(key)
            .map(|(k, o)| self.value_of(&g, k, o))
            .ok_or(StoreError::NotFound)?;
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
        let json = encode(&obj);
        let tree = controller_view::view(key, &obj);
        self.commit(&mut g, EventType::Modified, key, Some(tree), json);
        Ok(obj)
    }

    /// Delete; `check` may refuse (preconditions). Watchers get the last state at the new revision.
    /// A dry run answers the current object, unchanged.
    pub(crate) fn delete<F>(
        &self,
        key: &str,
        write: Write,
        mut check: F,
    ) -> Result<Arc<Value>, StoreError>
    where
        F: FnMut(&Value) -> Result<(), StoreError>,
    {
        if write == Write::DryRun {
            let cur = self.get(key).ok_or(StoreError::NotFound)?;
            check(&cur)?;
            return Ok(cur);
        }
        let mut g = self.write();
        let cur = g
            .objects
            .get_key_value(key)
            .map(|(k, o)| self.value_of(&g, k, o))
            .ok_or(StoreError::NotFound)?;
        check(&cur)?;
        g.rv += 1;
        let mut last = (*cur).clone();
        set_rv(&mut last, g.rv);
        self.commit(&mut g, EventType::Deleted, key, None, encode(&last));
        Ok(Arc::new(last))
    }

    /// Start a watch on `prefix`. `from`: None = current objects as ADDED then changes;
    /// Some(n) = changes after revision n, or TooOld when the history no longer reaches back.
    pub(crate) fn watch(&self, prefix: &str, from: Option<u64>) -> Result<WatchStart, StoreError> {
        let g = self.read();
        let changes = self.revision.subscribe();
        let (snapshot, rv) = match from {
            None | Some(0) => (
                g.objects
                    .range(prefix.to_string()..)
                    .take_while(|(k, _)| k.starts_with(prefix))
                    .map(|(k, o)| {
                        Arc::new(StoreEvent {
                            rv: if o.rv == 0 { g.rv } else { o.rv },
                            kind: EventType::Added,
                            key: k.clone(),
                            object: o.json.clone(),
                            prev: None,
                        })
                    })
                    .collect(),
                g.rv,
            ),
            Some(n) => {
                Self::check_not_compacted(&g, n)?;
                (Vec::new(), n)
            }
        };
        Ok(WatchStart {
            snapshot,
            rv,
            changes,
        })
    }
}

/// The store as a mirror of a keyspace kept elsewhere (etcd): changes arrive with the revision
/// the owner gave them, in order, and the mirror's revision is the last one seen.
impl Store {
    /// Replace everything with `objects` as they are at revision `rev`, history included:
    /// watchers behind `rev` get TooOld and start over, as after a compaction.
    pub(crate) fn reset(&self, objects: Vec<(String, Value)>, rev: u64) {
        let mut g = self.write();
        for (_, old) in std::mem::take(&mut g.objects) {
            self.release(Some(old));
        }
        g.objects = objects
            .into_iter()
            .map(|(k, v)| {
                let json = encode(&v);
                let rv = object_rv(&v).unwrap_or(0);
                let stored = self.stored(&k, Self::kept_at_create(&k, &Arc::new(v)), json, rv);
                (k, stored)
            })
            .collect();
        self.sweep(&g);
        g.history.clear();
        g.history_bytes = 0;
        g.rv = rev;
        g.floor = rev;
        self.revision.send_replace(rev);
    }

    /// Apply a change made at revision `rev` (not older than the mirror's): `Some` puts the
    /// object (ADDED when the key was absent), `None` deletes it (the deleted object, as the
    /// owner last had it, goes to watchers with `rev`).
    pub(crate) fn observe(&self, rev: u64, key: &str, object: Option<Value>) {
        match object {
            // Encoded, and a pod's view made, before the write lock: readers and the other
            // writers wait only for the insert.
            Some(mut v) => {
                set_rv(&mut v, rev);
                let json = encode(&v);
                let tree = controller_view::view(key, &Arc::new(v));
                self.observe_put(rev, key, Some(tree), json);
            }
            None => {
                let mut g = self.write();
                g.rv = g.rv.max(rev);
                let Some(cur) = g
                    .objects
                    .get_key_value(key)
                    .map(|(k, o)| self.value_of(&g, k, o))
                else {
                    self.revision.send_replace(g.rv);
                    return;
                };
                let mut last = (*cur).clone();
                set_rv(&mut last, rev);
                self.commit(&mut g, EventType::Deleted, key, None, encode(&last));
            }
        }
    }

    /// Apply a put made at revision `rev` whose encoding (`json`, with its resourceVersion)
    /// and kept tree (`controller_view::view`; None for a key that keeps none) are made.
    pub(crate) fn observe_put(&self, rev: u64, key: &str, tree: Option<Arc<Value>>, json: Bytes) {
        let mut g = self.write();
        g.rv = g.rv.max(rev);
        let kind = match g.objects.contains_key(key) {
            true => EventType::Modified,
            false => EventType::Added,
        };
        self.commit(&mut g, kind, key, tree, json);
    }

    /// The owner compacted its history through `rev`: reads and watches from before it are
    /// too old here as well.
    pub(crate) fn compacted(&self, rev: u64) {
        let mut g = self.write();
        while g.history.front().is_some_and(|e| e.rv <= rev) {
            if let Some(old) = g.history.pop_front() {
                g.history_bytes -= old.bytes();
            }
        }
        g.floor = g.floor.max(rev.min(g.rv));
    }
}

impl Storage for Store {
    fn current_rv(&self) -> u64 {
        Store::current_rv(self)
    }
    fn get(&self, key: &str) -> Option<Arc<Value>> {
        Store::get(self, key)
    }
    fn list(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        Store::list(self, prefix)
    }
    fn list_with_metadata(&self, prefix: &str, fields: &[&str]) -> Vec<Arc<Value>> {
        Store::list_with_metadata(self, prefix, fields)
    }
    fn encoded(&self, key: &str) -> Option<(u64, Bytes)> {
        Store::encoded(self, key)
    }
    fn get_view(&self, key: &str) -> Option<Arc<Value>> {
        Store::get_view(self, key)
    }
    fn list_views(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        Store::list_views(self, prefix)
    }
    fn list_keys_at(
        &self,
        prefix: &str,
        start: &str,
        at: u64,
        limit: usize,
        count: bool,
    ) -> Result<PastPage, StoreError> {
        Store::list_keys_at(self, prefix, start, at, limit, count)
    }
    fn changes(&self) -> signal::Receiver<u64> {
        Store::changes(self)
    }
    fn history_after(
        &self,
        prefix: &str,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> Result<HistoryPage, StoreError> {
        Store::history_after(self, prefix, after, max_events, max_bytes)
    }
    fn list_items(&self, prefix: &str) -> (Vec<(String, Item)>, u64) {
        Store::list_items(self, prefix)
    }
    fn create(&self, key: &str, value: Value, write: Write) -> Result<Arc<Value>, StoreError> {
        Store::create(self, key, value, write)
    }
    fn update_with(
        &self,
        key: &str,
        expected_rv: Option<u64>,
        write: Write,
        f: &mut UpdateFn<'_>,
    ) -> Result<Arc<Value>, StoreError> {
        Store::update(self, key, expected_rv, write, f)
    }
    fn delete_with(
        &self,
        key: &str,
        write: Write,
        check: &mut CheckFn<'_>,
    ) -> Result<Arc<Value>, StoreError> {
        Store::delete(self, key, write, check)
    }
    fn watch(&self, prefix: &str, from: Option<u64>) -> Result<WatchStart, StoreError> {
        Store::watch(self, prefix, from)
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
    fn trees_past_the_budget_are_dropped_and_parsed_again_when_read() {
        // Each object's JSON is ~60 bytes, counted as ~600 of tree: 10 fit in 6,000.
        let s = Store::with_parsed_budget(6_000);
        for n in 0..100 {
            let key = format!("/registry/pods/default/p{n:03}");
            s.create(&key, obj(&format!("p{n:03}")), Write::Commit)
                .expect("created");
            assert!(
                s.parsed.bytes() <= 6_000,
                "within the budget after each write"
            );
        }
        let (all, _) = s.list("/registry/pods/");
        assert_eq!(
            all.len(),
            100,
            "every object read, parsed again where dropped"
        );
        assert!(
            all.iter()
                .enumerate()
                .all(|(n, v)| v["metadata"]["name"] == format!("p{n:03}"))
        );
        assert!(
            s.parsed.bytes() <= 6_000,
            "reading all of them kept to the budget"
        );
        let updated = s
            .update("/registry/pods/default/p000", None, Write::Commit, |v| {
                let mut v = v.clone();
                v["metadata"]["labels"] = json!({"x": "1"});
                Ok(v)
            })
            .expect("an evicted object is updated from its encoding");
        assert_eq!(updated["metadata"]["name"], "p000");
        let page = s
            .list_keys_at("/registry/pods/", "", s.current_rv(), 100, true)
            .expect("listed");
        assert_eq!(page.items[0].1.value()["metadata"]["labels"]["x"], "1");
        let mut json = Vec::new();
        page.items[1].1.write_json(&mut json).expect("encoded");
        assert_eq!(
            serde_json::from_slice::<Value>(&json).ok(),
            Some((*all[1]).clone())
        );
        for n in 0..100 {
            s.delete(
                &format!("/registry/pods/default/p{n:03}"),
                Write::Commit,
                |_| Ok(()),
            )
            .expect("deleted");
        }
        assert_eq!(s.parsed.bytes(), 0, "nothing counted for objects gone");
    }

    #[test]
    fn revisions_and_conflicts() {
        let s = Store::default();
        let a = s
            .create("/registry/pods/default/a", obj("a"), Write::Commit)
            .ok()
            .and_then(|v| object_rv(&v));
        let b = s
            .create("/registry/pods/default/b", obj("b"), Write::Commit)
            .ok()
            .and_then(|v| object_rv(&v));
        assert!(a < b);
        assert_eq!(
            s.create("/registry/pods/default/a", obj("a"), Write::Commit)
                .err(),
            Some(StoreError::Exists)
        );
        let stale = s.update("/registry/pods/default/a", Some(1), Write::Commit, |v| {
            Ok(v.clone())
        });
        assert_eq!(stale.err(), Some(StoreError::Conflict));
        let (items, _) = s.list("/registry/pods/default/");
        assert_eq!(items.len(), 2);
    }

    fn limits(max_events: usize, max_bytes: usize) -> HistoryLimits {
        HistoryLimits {
            max_events,
            max_bytes,
        }
    }

    #[test]
    fn watch_from_history_and_too_old() {
        let s = Store::new(limits(2, usize::MAX));
        for n in ["a", "b", "c", "d"] {
            let _ = s.create(
                &format!("/registry/pods/default/{n}"),
                obj(n),
                Write::Commit,
            );
        }
        // Revisions 2..=5; the history keeps 4 and 5.
        let w = s.watch("/registry/pods/", Some(4));
        assert_eq!(w.as_ref().map(|w| w.rv).ok(), Some(4));
        let page = s.history_after("/registry/pods/", 4, 100, usize::MAX);
        assert_eq!(page.as_ref().map(|p| p.events.len()).ok(), Some(1));
        assert_eq!(page.as_ref().map(|p| p.through).ok(), Some(5));
        assert!(matches!(
            s.watch("/registry/pods/", Some(1)),
            Err(StoreError::TooOld(1, 3))
        ));
        assert!(matches!(
            s.history_after("/registry/pods/", 2, 100, usize::MAX),
            Err(StoreError::TooOld(2, 3))
        ));
    }

    #[test]
    fn history_is_bounded_by_bytes_and_pages_are_in_order() {
        let big =
            |n: usize| json!({"metadata": {"name": format!("p{n}")}, "data": "x".repeat(10_000)});
        let s = Store::new(limits(1_000, 100_000));
        for n in 0..50 {
            let _ = s.create(
                &format!("/registry/pods/default/p{n}"),
                big(n),
                Write::Commit,
            );
        }
        let st = s.history_stats();
        assert!(st.bytes <= 100_000, "{st:?}");
        assert!((8..=10).contains(&st.events), "{st:?}");
        // Paging from the oldest kept revision walks every later one, in order, once.
        let mut after = st.oldest.unwrap_or(0) - 1;
        let mut seen = Vec::new();
        loop {
            let p = s
                .history_after("/registry/pods/", after, 2, usize::MAX)
                .unwrap_or_else(|e| panic!("{e}"));
            seen.extend(p.events.iter().map(|e| e.rv));
            after = p.through;
            if !p.more {
                break;
            }
        }
        assert_eq!(after, s.current_rv());
        let want: Vec<u64> = (st.oldest.unwrap_or(0)..=s.current_rv()).collect();
        assert_eq!(seen, want);
        // Another prefix: nothing matches, but the read still gets through to the end.
        let p = s.history_after("/registry/events/", after - 3, 100, usize::MAX);
        assert_eq!(
            p.as_ref().map(|p| (p.events.len(), p.through)).ok(),
            Some((0, after))
        );
    }

    #[test]
    fn a_dry_run_checks_everything_and_changes_nothing() {
        let s = Store::default();
        let key = "/registry/pods/default/a";
        let _ = s.create(key, obj("a"), Write::Commit);
        let rv = s.current_rv();
        let before = s.history_stats();
        let mut c = s.changes();
        c.borrow_and_update();
        // Create: the name must be free; the answer carries no resourceVersion.
        assert_eq!(
            s.create(key, obj("a"), Write::DryRun).err(),
            Some(StoreError::Exists)
        );
        let b = s.create("/registry/pods/default/b", obj("b"), Write::DryRun);
        assert_eq!(b.map(|v| object_rv(&v)).ok(), Some(None));
        // Update: optimistic concurrency and the update function run; the answer is the new
        // object at the current resourceVersion.
        let stale = s.update(key, Some(rv + 7), Write::DryRun, |v| Ok(v.clone()));
        assert_eq!(stale.err(), Some(StoreError::Conflict));
        let labelled = s.update(key, Some(rv), Write::DryRun, |v| {
            let mut v = v.clone();
            v["metadata"]["labels"] = json!({"x": "1"});
            Ok(v)
        });
        let labelled = labelled.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(labelled["metadata"]["labels"]["x"], "1");
        assert_eq!(object_rv(&labelled), Some(rv));
        let refused = s.update(key, None, Write::DryRun, |_| {
            Err(StoreError::Rejected("no".into()))
        });
        assert_eq!(refused.err(), Some(StoreError::Rejected("no".into())));
        // Delete: the check runs; the answer is the object as it is.
        let refused = s.delete(key, Write::DryRun, |_| Err(StoreError::Conflict));
        assert_eq!(refused.err(), Some(StoreError::Conflict));
        let gone = s.delete(key, Write::DryRun, |_| Ok(()));
        assert_eq!(gone.ok().and_then(|v| object_rv(&v)), Some(rv));
        assert_eq!(
            s.delete("/registry/pods/default/b", Write::DryRun, |_| Ok(()))
                .err(),
            Some(StoreError::NotFound)
        );
        // Nothing moved: revision, history, live objects, the change signal.
        assert_eq!(s.current_rv(), rv);
        assert_eq!(s.history_stats(), before);
        assert!(s.get("/registry/pods/default/b").is_none());
        assert!(
            s.get(key)
                .is_some_and(|v| v.at("/metadata/labels").is_none())
        );
        assert_eq!(c.has_changed().ok(), Some(false));
    }

    #[test]
    fn a_commit_wakes_the_change_signal() {
        let s = Store::default();
        let mut c = s.changes();
        c.borrow_and_update();
        let _ = s.create("/registry/pods/default/a", obj("a"), Write::Commit);
        assert_eq!(c.has_changed().ok(), Some(true));
        assert_eq!(*c.borrow_and_update(), s.current_rv());
    }

    #[test]
    fn events_carry_the_object_and_its_previous_state() {
        let s = Store::default();
        let key = "/registry/pods/default/a";
        let _ = s.create(key, obj("a"), Write::Commit);
        let _ = s.update(key, None, Write::Commit, |v| {
            let mut v = v.clone();
            v["metadata"]["labels"] = json!({"x": "1"});
            Ok(v)
        });
        let _ = s.delete(key, Write::Commit, |_| Ok(()));
        let page = s
            .history_after("/registry/pods/", 1, 100, usize::MAX)
            .unwrap_or_else(|e| panic!("{e}"));
        let seen: Vec<(EventType, u64, Option<u64>)> = page
            .events
            .iter()
            .map(|e| (e.kind, e.rv, e.prev_value().as_ref().and_then(object_rv)))
            .collect();
        assert_eq!(
            seen,
            [
                (EventType::Added, 2, None),
                (EventType::Modified, 3, Some(2)),
                (EventType::Deleted, 4, Some(3))
            ]
        );
        assert_eq!(object_rv(&page.events[2].value()), Some(4));
        assert_eq!(page.events[1].value()["metadata"]["labels"]["x"], "1");
    }

    #[test]
    fn a_read_at_a_past_revision_undoes_later_changes() {
        let s = Store::default();
        let p = "/registry/pods/default/";
        for n in ["a", "b", "c"] {
            let _ = s.create(&format!("{p}{n}"), obj(n), Write::Commit);
        }
        let _ = s.create("/registry/pods/other/z", obj("z"), Write::Commit);
        let at = s.current_rv();
        let _ = s.update(&format!("{p}b"), None, Write::Commit, |v| {
            let mut v = v.clone();
            v["metadata"]["labels"] = json!({"changed": "yes"});
            Ok(v)
        });
        let _ = s.delete(&format!("{p}c"), Write::Commit, |_| Ok(()));
        let _ = s.create(&format!("{p}aa"), obj("aa"), Write::Commit);
        let _ = s.create(&format!("{p}d"), obj("d"), Write::Commit);
        let names = |page: &PastPage| -> Vec<String> {
            page.items
                .iter()
                .map(|(_, v)| {
                    v.value()["metadata"]["name"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                })
                .collect()
        };
        let then = s
            .list_keys_at(p, "", at, 10, true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&then), ["a", "b", "c"]);
        assert!(
            then.items[1].1.value()["metadata"].get("labels").is_none(),
            "b as it was"
        );
        assert_eq!(then.remaining_from_start, Some(3));
        // Paging at that revision: two, then the rest from the next key.
        let first = s
            .list_keys_at(p, "", at, 2, true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (names(&first), first.more, first.remaining_from_start),
            (vec!["a".to_string(), "b".into()], true, Some(3))
        );
        let rest = s
            .list_keys_at(p, &format!("{p}b\u{0}"), at, 2, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((names(&rest), rest.more), (vec!["c".to_string()], false));
        // Now: the live state.
        let now = s
            .list_keys_at(p, "", s.current_rv(), 10, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(names(&now), ["a", "aa", "b", "d"]);
        // Compacted past `at`: too old.
        let small = Store::new(limits(2, usize::MAX));
        for n in ["a", "b", "c", "d"] {
            let _ = small.create(&format!("{p}{n}"), obj(n), Write::Commit);
        }
        assert!(matches!(
            small.list_keys_at(p, "", 1, 10, false),
            Err(StoreError::TooOld(..))
        ));
        assert_eq!(
            small
                .list_keys_at(p, "", small.current_rv() - 1, 10, false)
                .map(|pg| pg.items.len())
                .ok(),
            Some(3)
        );
    }

    #[test]
    fn pages_of_one_list_see_its_revision_through_writes_between_them() {
        let s = Store::default();
        let p = "/registry/pods/default/";
        for n in ["a", "b", "c", "d"] {
            let _ = s.create(&format!("{p}{n}"), obj(n), Write::Commit);
        }
        let at = s.current_rv();
        let name = |v: &Value| v["metadata"]["name"].as_str().unwrap_or("").to_string();
        let label = |v: &Value| v["metadata"]["labels"]["changed"].clone();
        let change = |key: &str| {
            let _ = s.update(key, None, Write::Commit, |v| {
                let mut v = v.clone();
                v["metadata"]["labels"] = json!({"changed": "yes"});
                Ok(v)
            });
        };
        // Between the pages: a key before the cursor, one after it, one created, one deleted.
        change(&format!("{p}a"));
        let first = s
            .list_keys_at(p, "", at, 2, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            first
                .items
                .iter()
                .map(|(_, v)| name(&v.value()))
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(first.items.iter().all(|(_, v)| label(&v.value()).is_null()));
        change(&format!("{p}c"));
        let _ = s.delete(&format!("{p}d"), Write::Commit, |_| Ok(()));
        let _ = s.create(&format!("{p}bb"), obj("bb"), Write::Commit);
        let rest = s
            .list_keys_at(p, &format!("{p}b\u{0}"), at, 10, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            rest.items
                .iter()
                .map(|(_, v)| name(&v.value()))
                .collect::<Vec<_>>(),
            ["c", "d"]
        );
        assert!(
            rest.items.iter().all(|(_, v)| label(&v.value()).is_null()),
            "c and d as they were at {at}"
        );
        // The live state afterwards is untouched by what was kept for the list.
        let now = s
            .list_keys_at(p, "", s.current_rv(), 10, false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            now.items
                .iter()
                .map(|(_, v)| name(&v.value()))
                .collect::<Vec<_>>(),
            ["a", "b", "bb", "c"]
        );
    }
}

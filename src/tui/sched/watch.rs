//! View 5 kept current, as client-go's reflector keeps an informer's cache: after the paged
//! list, one watch per collection from the list's resourceVersion (bookmarks on); a 410 Gone or
//! a broken stream means list again and watch from there. Events change the kept cluster here
//! (`kept.rs`: the scheduler's snapshot updated by each event, not rebuilt), never the screen:
//! the first event wakes a publisher, which takes a copy of the snapshot, re-runs the
//! simulation off the UI thread, and sends it only when the UI has taken the previous one, at
//! most once per `COALESCE`. So at most one update is ever queued, a lone event shows at once,
//! and a burst costs one copy and one cycle per update, however many events it held.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use k8s_openapi::Metadata;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;

use super::fetch::Seed;
use super::kept::{Frame, Kept};
use super::live::Listing;
use super::model::Model;
use crate::client::cluster::{ListError, PAGE_SIZE, WatchEvent, list_paged, status_message, watch};
use crate::client::http::ApiClient;
use crate::client::snapshot::{trim_node, trim_pod};
use crate::kubeconfig::ResolvedContext;

/// How often the view may change while events arrive: ten times a second reads as live, and
/// bounds the re-simulations whatever the event rate.
pub const COALESCE: Duration = Duration::from_millis(100);
/// How often the status line (the watches' phases) is refreshed when no event wakes it.
const STATUS_EVERY: Duration = Duration::from_millis(300);
/// A watch is renewed (from the last resourceVersion seen) after a random 5–10 minutes, as
/// client-go's reflector does, so many viewers do not renew at once. (It was 10 s while the
/// embedded server's scheduler loop could stall a watch for tens of seconds; that loop now
/// runs on a thread of its own.)
fn renew_after() -> Duration {
    // Spread, not secrecy: the clock's nanoseconds are random enough.
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Duration::from_secs(300 + u64::from(jitter % 300))
}
/// How long a re-list may take before the connection is given up.
const RELIST: Duration = Duration::from_secs(20);
/// The first wait before watching again after an error; doubles up to `RETRY_MAX`.
const RETRY: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

static NEXT_FEED: AtomicU64 = AtomicU64::new(1);

/// A rebuilt view: the model (or why it could not be built) and the pods list.
pub type Built = (Result<Model, String>, Listing);

/// The UI's hold on one watch: the watch runs while a clone of this exists.
#[derive(Debug, Clone)]
pub struct Feed {
    pub id: u64,
    asks: Arc<Asks>,
}

/// What the view asks of the watch it holds: to place another pod of the kept cluster.
#[derive(Debug, Default)]
pub struct Asks {
    focus: Mutex<Option<String>>,
    wake: Arc<Notify>,
}

impl Feed {
    pub fn new() -> (Feed, Weak<Asks>) {
        let asks = Arc::new(Asks::default());
        let weak = Arc::downgrade(&asks);
        let id = NEXT_FEED.fetch_add(1, Ordering::Relaxed);
        (Feed { id, asks }, weak)
    }

    /// Places pod `key` (`namespace/name`) next, on the cluster the watch keeps current: at
    /// 150,000 pods a new list takes seconds, this one GET of a bound pod at most. The
    /// updates that follow say which pod they were built for (`LiveUpdate::focus`).
    pub fn refocus(&self, key: &str) {
        *lock(&self.asks.focus) = Some(key.to_string());
        self.asks.wake.notify_one();
    }
}

/// Where one collection's watch stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    #[default]
    Watching,
    Relisting,
    /// The stream failed; the reflector retries after a pause.
    Ended(String),
    /// RBAC allows the list but not the watch: the listed data stays, not kept current.
    Forbidden(String),
}

/// What the status line says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveStatus {
    /// The worst of the nodes', the pods' and the storage objects' phases.
    pub phase: Phase,
    pub nodes: usize,
    pub pods: usize,
    /// Watch events applied to the cache (bookmarks not counted).
    pub events: u64,
    /// When the last one arrived (seconds since the Unix epoch).
    pub last_event_unix: Option<i64>,
    /// Times the publisher re-ran the simulation on changed data.
    pub resimulations: u64,
    /// How long the last rebuild (view data, snapshot, cycle) took, in milliseconds.
    pub build_ms: u64,
}

/// One coalesced change for the UI. The model travels in a slot the UI empties, since actions
/// are shared, not moved; taking it tells the publisher the UI is ready for the next one.
#[derive(Debug, Clone)]
pub struct LiveUpdate {
    pub feed: u64,
    pub status: LiveStatus,
    /// The pod (`namespace/name`) the model places, as last asked; `None`: the fallback.
    pub focus: Option<String>,
    cluster: Arc<Mutex<Option<Built>>>,
    in_flight: Arc<AtomicBool>,
    /// The publisher's wake-up: the UI taking this update lets the next one go at once.
    wake: Arc<Notify>,
}

impl LiveUpdate {
    pub fn new(
        feed: u64,
        status: LiveStatus,
        focus: Option<String>,
        cluster: Option<Built>,
    ) -> LiveUpdate {
        LiveUpdate {
            feed,
            status,
            focus,
            cluster: Arc::new(Mutex::new(cluster)),
            in_flight: Arc::new(AtomicBool::new(true)),
            wake: Arc::new(Notify::new()),
        }
    }

    /// Whether the UI has taken it (the publisher's cue to send the next one).
    pub fn taken(&self) -> bool {
        !self.in_flight.load(Ordering::Acquire)
    }

    /// The new model and pods list, if the data changed; the publisher may send again.
    pub fn take(&self) -> Option<Built> {
        let c = lock(&self.cluster).take();
        self.in_flight.store(false, Ordering::Release);
        self.wake.notify_one();
        c
    }
}

/// The reflectors' cache: the cluster as last seen, and whether the view has seen it.
struct Cache {
    kept: Kept,
    /// Wakes the publisher when the cluster changed.
    wake: Arc<Notify>,
    node_phase: Phase,
    pod_phase: Phase,
    /// The claims', volumes' and classes' watches, the worst of the three.
    storage_phase: Phase,
    dirty: bool,
    events: u64,
    last_event_unix: Option<i64>,
    /// Notes of watches RBAC refused, added to what the listing says it hid.
    notes: Vec<String>,
}

impl Cache {
    /// The cluster changed: the view has not seen it yet.
    fn touch(&mut self) {
        self.dirty = true;
        self.wake.notify_one();
    }

    fn status(&self) -> LiveStatus {
        let rank = |p: &Phase| match p {
            Phase::Watching => 0,
            Phase::Forbidden(_) => 1,
            Phase::Relisting => 2,
            Phase::Ended(_) => 3,
        };
        let phase = [&self.node_phase, &self.pod_phase, &self.storage_phase]
            .into_iter()
            .max_by_key(|p| rank(p))
            .unwrap_or(&self.node_phase);
        LiveStatus {
            phase: phase.clone(),
            nodes: self.kept.nodes(),
            pods: self.kept.pods(),
            events: self.events,
            last_event_unix: self.last_event_unix,
            resimulations: 0,
            build_ms: 0,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere must not stop the view from updating: the data is still whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A collection the reflector keeps: how its objects change the kept cluster.
trait Cached: Metadata<Ty = ObjectMeta> + DeserializeOwned + Send + 'static {
    const WHAT: &'static str;
    fn resource_version(&self) -> Option<&str> {
        self.metadata().resource_version.as_deref()
    }
    fn phase(c: &mut Cache) -> &mut Phase;
    /// Added or modified (`deleted` false), or deleted.
    fn apply(k: &mut Kept, o: Self, deleted: bool);
    /// A fresh list replaces what was kept.
    fn relist(k: &mut Kept, items: Vec<Self>);
    /// Drops the fields the view never reads, as each object is decoded.
    fn trim(&mut self);
}

impl Cached for Node {
    const WHAT: &'static str = "nodes";
    fn phase(c: &mut Cache) -> &mut Phase {
        &mut c.node_phase
    }
    fn apply(k: &mut Kept, o: Node, deleted: bool) {
        k.apply_node(o, deleted)
    }
    fn relist(k: &mut Kept, items: Vec<Node>) {
        k.relist_nodes(items)
    }
    fn trim(&mut self) {
        trim_node(self)
    }
}

impl Cached for Pod {
    const WHAT: &'static str = "pods";
    fn phase(c: &mut Cache) -> &mut Phase {
        &mut c.pod_phase
    }
    fn apply(k: &mut Kept, o: Pod, deleted: bool) {
        k.apply_pod(o, deleted)
    }
    fn relist(k: &mut Kept, items: Vec<Pod>) {
        k.relist_pods(items)
    }
    fn trim(&mut self) {
        trim_pod(self)
    }
}

/// The claims, volumes and classes VolumeBinding judges with, kept like nodes and pods.
macro_rules! cached_storage {
    ($($t:ty => $what:literal),*) => {$(
        impl Cached for $t {
            const WHAT: &'static str = $what;
            fn phase(c: &mut Cache) -> &mut Phase {
                &mut c.storage_phase
            }
            fn apply(k: &mut Kept, o: Self, deleted: bool) {
                k.apply_storage(o, deleted)
            }
            fn relist(k: &mut Kept, items: Vec<Self>) {
                k.relist_storage(items)
            }
            fn trim(&mut self) {}
        }
    )*};
}

cached_storage!(
    PersistentVolumeClaim => "persistentvolumeclaims",
    PersistentVolume => "persistentvolumes",
    StorageClass => "storageclasses"
);

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Applies one event; false when it asks for a new list (an `ERROR` event, usually 410 Gone).
fn apply<T: Cached>(cache: &Mutex<Cache>, event: WatchEvent<T>) -> bool {
    let mut c = lock(cache);
    match event {
        WatchEvent::Added(mut o) | WatchEvent::Modified(mut o) => {
            o.trim();
            T::apply(&mut c.kept, o, false);
        }
        WatchEvent::Deleted(o) => T::apply(&mut c.kept, o, true),
        WatchEvent::Bookmark(_) => return true,
        WatchEvent::Error { code, message } => {
            *T::phase(&mut c) = Phase::Ended(format!("{code} {message}"));
            return false;
        }
    }
    c.events += 1;
    c.touch();
    c.last_event_unix = Some(now_unix());
    true
}

/// One collection's list-then-watch loop, until the feed is dropped or RBAC forbids the watch.
/// Each reflector has a client (and so a connection) of its own, replaced when a stream stayed
/// silent until its renewal or a list did not answer: a stuck connection is left behind.
async fn reflect<T: Cached>(
    ctx: ResolvedContext,
    mut api: ApiClient,
    path: String,
    mut rv: String,
    cache: Arc<Mutex<Cache>>,
    alive: Weak<Asks>,
) {
    let mut retry = RETRY;
    let mut reconnect = true;
    while alive.strong_count() > 0 {
        if std::mem::take(&mut reconnect) {
            match ApiClient::connect(&ctx).await {
                Ok(fresh) => api = fresh,
                Err(e) => {
                    *T::phase(&mut lock(&cache)) = Phase::Ended(e.to_string());
                    reconnect = true;
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MAX);
                    continue;
                }
            }
        }
        *T::phase(&mut lock(&cache)) = Phase::Watching;
        let started = Instant::now();
        let mut relist = false;
        let mut seen = rv.clone();
        let mut lines = 0u64;
        let watched = tokio::time::timeout(
            renew_after(),
            watch::<T>(&api, &path, &rv, |e| {
                if alive.strong_count() == 0 {
                    return false;
                }
                lines += 1;
                match &e {
                    WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                        if let Some(v) = o.resource_version() {
                            seen = v.to_string();
                        }
                    }
                    WatchEvent::Bookmark(v) if !v.is_empty() => seen = v.clone(),
                    _ => {}
                }
                relist |= !apply(&cache, e);
                true
            }),
        )
        .await
        // Renewal time: the events so far were applied; continue from the last one, on a new
        // connection if this one said nothing at all.
        .unwrap_or_else(|_| {
            reconnect = lines == 0;
            Ok(seen.clone())
        });
        match watched {
            // The server closed the stream (its timeout), or it was renewed: watch again from
            // where it got.
            Ok(last) if !relist => {
                rv = last;
                retry = RETRY;
                if started.elapsed() < RETRY {
                    tokio::time::sleep(RETRY).await;
                }
                continue;
            }
            Ok(_) => {}
            Err(ListError::Forbidden(m)) => {
                let mut c = lock(&cache);
                c.notes.push(format!(
                    "watch {}: forbidden ({m}) — shown as listed, not kept current",
                    T::WHAT
                ));
                *T::phase(&mut c) = Phase::Forbidden(m);
                c.touch();
                return;
            }
            Err(e) => {
                *T::phase(&mut lock(&cache)) = Phase::Ended(e.to_string());
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MAX);
            }
        }
        if alive.strong_count() == 0 {
            return;
        }
        *T::phase(&mut lock(&cache)) = Phase::Relisting;
        let listed = tokio::time::timeout(
            RELIST,
            list_paged(
                &api,
                &path,
                PAGE_SIZE,
                |_| {},
                |mut o: T| {
                    o.trim();
                    o
                },
            ),
        )
        .await
        .unwrap_or_else(|_| {
            reconnect = true;
            Err(ListError::Request(format!(
                "no answer to the list within {}s",
                RELIST.as_secs()
            )))
        });
        match listed {
            Ok(l) => {
                let mut c = lock(&cache);
                T::relist(&mut c.kept, l.items);
                c.touch();
                rv = l.resource_version;
            }
            Err(ListError::Forbidden(m)) => {
                *T::phase(&mut lock(&cache)) = Phase::Forbidden(m);
                return;
            }
            Err(e) => {
                *T::phase(&mut lock(&cache)) = Phase::Ended(e.to_string());
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MAX);
            }
        }
    }
}

/// Makes pod `key` the one the view places: the kept cluster holds it whole when it is
/// Pending (or was asked for before); a bound pod is kept only compiled, so it is fetched,
/// one GET.
async fn refocus(
    api: &ApiClient,
    cache: &Mutex<Cache>,
    key: &str,
    fallback: &str,
) -> Result<(), String> {
    if lock(cache).kept.refocus(key, fallback) {
        return Ok(());
    }
    let (ns, name) = key
        .split_once('/')
        .ok_or_else(|| format!("pod {key}: not namespace/name"))?;
    let r = api
        .get(&format!("/api/v1/namespaces/{ns}/pods/{name}"))
        .await
        .map_err(|e| format!("getting pod {key}: {e}"))?;
    if r.status != 200 {
        let said = status_message(&r.body);
        return Err(format!("getting pod {key}: HTTP {} {said}", r.status));
    }
    let mut pod: Pod = serde_json::from_slice(&r.body)
        .map_err(|e| format!("getting pod {key}: the answer is not a Pod: {e}"))?;
    trim_pod(&mut pod);
    lock(cache).kept.hold(pod);
    Ok(())
}

/// One thread that builds the view's model for each coalesced update. The cycle over every
/// node is the costly part: never on a runtime worker the watches need, and always on the
/// same thread, so the allocator keeps one arena warm instead of one per pooled thread.
struct Rebuilder {
    jobs: std::sync::mpsc::Sender<Job>,
}

type Job = (Frame, Vec<String>, tokio::sync::oneshot::Sender<Built>);

impl Rebuilder {
    fn start() -> Option<Rebuilder> {
        let (jobs, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("view5-rebuild".into())
            .spawn(move || {
                // Ends when the publisher drops `jobs`.
                for (frame, hidden, reply) in rx {
                    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        frame.build(hidden)
                    }))
                    // A bug in building the view must show, not freeze it on "watching".
                    .unwrap_or_else(|p| {
                        let why = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        (
                            Err(format!("rebuilding the view failed: {why}")),
                            Listing::default(),
                        )
                    });
                    let _ = reply.send(built);
                }
            })
            .ok()?;
        Some(Rebuilder { jobs })
    }

    /// The view's data for `frame`; `None` if the thread is gone.
    async fn build(&self, frame: Frame, hidden: Vec<String>) -> Option<Built> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs.send((frame, hidden, tx)).ok()?;
        rx.await.ok()
    }
}

/// The reflector of one listed collection (`from`: its path and list resourceVersion).
fn reflector<T: Cached>(
    from: &Option<(String, String)>,
    (ctx, api, cache, alive): (
        &ResolvedContext,
        &ApiClient,
        &Arc<Mutex<Cache>>,
        &Weak<Asks>,
    ),
) -> Option<tokio::task::JoinHandle<()>> {
    let (path, rv) = from.clone()?;
    Some(tokio::spawn(reflect::<T>(
        ctx.clone(),
        api.clone(),
        path,
        rv,
        cache.clone(),
        alive.clone(),
    )))
}

/// Watches what `seed` listed and sends feed `feed`'s `LiveUpdate`s through `send` until the
/// UI drops its `Feed`.
pub async fn follow(seed: Seed, feed: u64, alive: Weak<Asks>, send: impl Fn(LiveUpdate)) {
    let Seed {
        ctx,
        api,
        watch_from,
        kept,
        hidden,
        source,
        mut focus,
        fallback,
        release,
    } = seed;
    let Some(asked) = alive.upgrade().map(|a| a.wake.clone()) else {
        return;
    };
    let fallback_key = super::live::key_of(&fallback);
    // Why the pod asked for cannot be placed (gone since it was listed, say), said in place of
    // the model until another is asked for.
    let mut focus_error: Option<String> = None;
    let wake = Arc::new(Notify::new());
    let cache = Arc::new(Mutex::new(Cache {
        kept,
        wake: wake.clone(),
        node_phase: Phase::default(),
        pod_phase: Phase::default(),
        storage_phase: Phase::default(),
        dirty: false,
        events: 0,
        last_event_unix: None,
        notes: Vec::new(),
    }));
    let w = &watch_from;
    let on = (&ctx, &api, &cache, &alive);
    let tasks: Vec<_> = [
        reflector::<Node>(&w.nodes, on),
        reflector::<Pod>(&w.pods, on),
        reflector::<PersistentVolumeClaim>(&w.claims, on),
        reflector::<PersistentVolume>(&w.volumes, on),
        reflector::<StorageClass>(&w.classes, on),
    ]
    .into_iter()
    .flatten()
    .collect();
    // The last update's flag: set until the UI takes it.
    let mut in_flight = Arc::new(AtomicBool::new(false));
    let mut tick = tokio::time::interval(STATUS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_update: Option<Instant> = None;
    let mut last_sent: Option<LiveStatus> = None;
    let mut resimulations = 0;
    let mut build_ms = 0;
    let Some(rebuilder) = Rebuilder::start() else {
        return;
    };
    loop {
        tokio::select! {
            _ = wake.notified() => {}
            _ = asked.notified() => {}
            _ = tick.tick() => {}
        }
        if alive.strong_count() == 0 {
            break;
        }
        if let Some(key) = alive.upgrade().and_then(|a| lock(&a.focus).take()) {
            focus_error = refocus(&api, &cache, &key, &fallback_key).await.err();
            focus = Some(key);
            lock(&cache).touch();
        }
        if in_flight.load(Ordering::Acquire) {
            continue;
        }
        // At most one update per COALESCE: what arrives meanwhile goes into the same one.
        if let Some(gap) = last_update.map(|at| at.elapsed()).filter(|g| *g < COALESCE) {
            tokio::time::sleep(COALESCE - gap).await;
        }
        let t = Instant::now();
        let (changed, mut status) = {
            let mut c = lock(&cache);
            let status = c.status();
            let changed = c.dirty.then(|| {
                c.dirty = false;
                let mut notes = hidden.clone();
                notes.extend(c.notes.iter().cloned());
                let mut frame = c.kept.frame(focus.as_deref(), &fallback, &source, &release);
                if focus_error.is_some() {
                    frame.error = focus_error.clone();
                }
                (frame, notes)
            });
            (changed, status)
        };
        let cluster = match changed {
            Some((frame, notes)) => {
                resimulations += 1;
                let built = rebuilder.build(frame, notes).await;
                build_ms = t.elapsed().as_millis() as u64;
                match built {
                    Some(built) => Some(built),
                    None => break,
                }
            }
            None => None,
        };
        status.resimulations = resimulations;
        status.build_ms = build_ms;
        if cluster.is_none() && last_sent.as_ref() == Some(&status) {
            continue;
        }
        last_sent = Some(status.clone());
        let mut update = LiveUpdate::new(feed, status, focus.clone(), cluster);
        update.wake = wake.clone();
        in_flight = update.in_flight.clone();
        last_update = Some(Instant::now());
        send(update);
    }
    for t in tasks {
        t.abort();
    }
}

//! The etcd backend of [`Storage`], as kube-apiserver's `etcd3` store keeps objects: JSON
//! values (`--storage-media-type=application/json`) under `--etcd-prefix` with upstream's key
//! layout, no resourceVersion in the stored bytes, `metadata.resourceVersion` = the key's
//! mod_revision. Every write is an etcd transaction: a create succeeds only while the key's
//! mod_revision is 0, an update or delete only while it is still the one read (retried with
//! etcd's current value, as `GuaranteedUpdate` does). Reads, watches and the control loops'
//! history come from `etcd_mirror`'s watch-fed cache; a list at an older revision reads etcd at
//! that revision, so a compacted one is etcd's own 410.
//!
//! Every etcd round trip runs on this backend's own runtime thread. The trait is synchronous and
//! the caller waits (handing its worker's other tasks off first when it is a server worker),
//! except for a handler's create (`create_later`), which awaits the answer instead.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse, TxnResponse};
use serde_json::{Value, json};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::watch as signal;

use crate::apiserver::storage::etcd_config::{CALL_TIMEOUT, EtcdOptions, Keys};
use crate::apiserver::storage::etcd_dial;
use crate::apiserver::storage::etcd_mirror::{self, Mirror, decode};
use crate::apiserver::storage::interface::{
    CheckFn, HistoryPage, Item, PastPage, Pending, Storage, StoreError, UpdateFn, WatchStart, Write,
};
use crate::apiserver::storage::store::{HistoryLimits, Store, object_rv, set_rv};

/// kube-apiserver's `--etcd-healthcheck-timeout` default; a probe runs at most once per half.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// The key the health check and a consistent read's quorum check read: upstream's
/// `path.Join("/", prefix, "health")`, which holds nothing.
const HEALTH_KEY: &str = "/registry/health";

pub(crate) struct EtcdStore {
    handle: Handle,
    client: Client,
    mirror: Arc<Mirror>,
    opts: EtcdOptions,
    /// Ends the runtime thread, and with it the watch and the compactor, when dropped.
    _stop: signal::Sender<bool>,
    probe: Mutex<Option<(Instant, Result<(), String>)>>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EtcdStore({})", self.opts.servers.join(","))
    }
}

/// Wait for `f` on this thread; on a server worker, its other tasks move to another worker
/// meanwhile instead of waiting behind an etcd round trip.
fn block<T>(f: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// etcd's own words for a failure: the gRPC status message (`etcdserver: request timed out`),
/// else the innermost causes of a transport error (`Connection refused`).
pub(crate) fn reason(e: &etcd_client::Error) -> String {
    let (mut words, mut src) = match e {
        etcd_client::Error::GRpcStatus(s) => {
            (vec![s.message().to_string()], std::error::Error::source(s))
        }
        e => (vec![e.to_string()], std::error::Error::source(e)),
    };
    while let Some(s) = src {
        words.push(s.to_string());
        src = s.source();
    }
    words.dedup();
    words.join(": ")
}

fn classify(e: &etcd_client::Error) -> StoreError {
    let r = reason(e);
    if r.contains("required revision has been compacted") {
        StoreError::TooOld(0, 0)
    } else {
        StoreError::Unavailable(r)
    }
}

/// Whether the call never reached etcd (the member it was sent to is gone): then it is safe to
/// send again, to another member, even for a write — as etcd's own client retries.
fn never_sent(e: &StoreError) -> bool {
    matches!(e, StoreError::Unavailable(r) if r.contains("tcp connect error") || r.contains("Connection refused"))
}

/// `call` on the etcd runtime, sent again while it never reached etcd (a dead member of
/// several), all within `within`; its result goes to `reply`, on that runtime.
fn spawn_retrying<T: Send + 'static, F>(
    handle: &Handle,
    within: Duration,
    mut call: impl FnMut() -> F + Send + 'static,
    reply: impl FnOnce(Result<T, StoreError>) + Send + 'static,
) where
    F: Future<Output = Result<T, etcd_client::Error>> + Send + 'static,
{
    handle.spawn(async move {
        let deadline = Instant::now() + within;
        let result = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let r = match tokio::time::timeout(left, call()).await {
                Err(_) => Err(StoreError::Timeout),
                Ok(r) => r.map_err(|e| classify(&e)),
            };
            match r {
                Err(e) if never_sent(&e) && left > Duration::from_millis(100) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                r => break r,
            }
        };
        reply(result);
    });
}

fn stopped() -> StoreError {
    StoreError::Unavailable("etcd client stopped".into())
}

/// `spawn_retrying`, this thread waiting for the answer.
fn run_retrying<T: Send + 'static, F>(
    handle: &Handle,
    within: Duration,
    call: impl FnMut() -> F + Send + 'static,
) -> Result<T, StoreError>
where
    F: Future<Output = Result<T, etcd_client::Error>> + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    spawn_retrying(handle, within, call, move |r| {
        let _ = tx.send(r);
    });
    block(|| rx.recv()).unwrap_or_else(|_| Err(stopped()))
}

/// `spawn_retrying`, answered to a future: a handler awaits it and its worker thread serves
/// other requests meanwhile. (Waiting with `block_in_place` hands the worker's queue to another
/// thread on every write: at 64 concurrent creates the server ran 147 worker threads, each with
/// its own allocator heap, where awaiting needs 19.)
fn later_retrying<T: Send + 'static, F>(
    handle: &Handle,
    within: Duration,
    call: impl FnMut() -> F + Send + 'static,
) -> Pending<T>
where
    F: Future<Output = Result<T, etcd_client::Error>> + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn_retrying(handle, within, call, move |r| {
        let _ = tx.send(r);
    });
    Box::pin(async move { rx.await.unwrap_or_else(|_| Err(stopped())) })
}

fn run_on<T: Send + 'static>(
    handle: &Handle,
    within: Duration,
    fut: impl Future<Output = Result<T, etcd_client::Error>> + Send + 'static,
) -> Result<T, StoreError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle.spawn(async move {
        let _ = tx.send(tokio::time::timeout(within, fut).await);
    });
    match block(|| rx.recv()) {
        Err(_) => Err(StoreError::Unavailable("etcd client stopped".into())),
        Ok(Err(_)) => Err(StoreError::Timeout),
        Ok(Ok(r)) => r.map_err(|e| classify(&e)),
    }
}

/// The runtime every etcd call and the watch run on, on a thread of its own.
fn runtime_thread() -> Result<(Handle, signal::Sender<bool>), String> {
    let (stop, mut stop_rx) = signal::channel(false);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("kexplore-etcd".into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => {
                    let _ = tx.send(Ok(rt.handle().clone()));
                    rt.block_on(async move {
                        let _ = stop_rx.wait_for(|s| *s).await;
                    });
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start the etcd client's runtime: {e}")));
                }
            }
        })
        .map_err(|e| format!("cannot start the etcd client's thread: {e}"))?;
    let handle = rx
        .recv()
        .map_err(|_| "the etcd client's thread ended".to_string())??;
    Ok((handle, stop))
}

/// The first key after every key that starts with `prefix` (etcd's range end for a prefix).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// Upstream's create: If(mod_revision(key) == 0) Then(Put). `bytes`: what etcd stores, the
/// object without its resourceVersion (`PrepareObjectForStorage`; `OwnWrites::put`).
fn create_txn(etcd_key: &str, bytes: &[u8]) -> Txn {
    Txn::new()
        .when(vec![Compare::mod_revision(etcd_key, CompareOp::Equal, 0)])
        .and_then(vec![TxnOp::put(etcd_key, bytes.to_vec(), None)])
}

/// A create's answer: the object takes the transaction's revision, or the key existed.
fn created(resp: TxnResponse, value: &mut Value) -> Result<(), StoreError> {
    if !resp.succeeded() {
        return Err(StoreError::Exists);
    }
    set_rv(value, header_rev(&resp));
    Ok(())
}

fn header_rev(resp: &TxnResponse) -> u64 {
    resp.header()
        .map(|h| u64::try_from(h.revision()).unwrap_or(0))
        .unwrap_or(0)
}

/// The value the failed branch's Get read: etcd's current object (None: the key is gone).
fn else_value(resp: &TxnResponse) -> Option<Value> {
    resp.op_responses().into_iter().find_map(|r| match r {
        TxnOpResponse::Get(g) => g.kvs().first().and_then(decode),
        _ => None,
    })
}

impl EtcdStore {
    /// Check every URL answers as etcd with these certificates (exit 2 naming the URL and why
    /// when none does), read the prefix, and start following it.
    pub(crate) fn connect(opts: EtcdOptions, history: HistoryLimits) -> Result<EtcdStore, String> {
        let tls = etcd_dial::Tls::load(&opts)?;
        let (handle, stop) = runtime_thread()?;
        let checked = {
            let (servers, tls) = (opts.servers.clone(), tls.clone());
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            handle.spawn(async move {
                let _ = tx.send(etcd_dial::check_all(&servers, &tls).await);
            });
            block(|| rx.recv()).map_err(|_| "the etcd client's thread ended".to_string())?
        };
        checked?;
        let connect_opts = tls
            .connect_options()
            .with_keep_alive(Duration::from_secs(10), Duration::from_secs(5))
            .with_connect_timeout(CALL_TIMEOUT);
        let servers = opts.servers.clone();
        let client = run_on(&handle, CALL_TIMEOUT, async move {
            Client::connect(servers, Some(connect_opts)).await
        })
        .map_err(|e| format!("etcd {}: {e}", opts.servers.join(",")))?;
        let mirror = Arc::new(Mirror::new(Store::new(history), Keys::new(&opts.prefix)));
        {
            let (c, m) = (client.clone(), mirror.clone());
            run_on(&handle, CALL_TIMEOUT, async move {
                etcd_mirror::load(&c, &m).await
            })
            .map_err(|e| {
                format!(
                    "etcd {}: cannot read {}: {e}",
                    opts.servers.join(","),
                    mirror.keys.root()
                )
            })?;
        }
        handle.spawn(etcd_mirror::follow(
            client.clone(),
            mirror.clone(),
            stop.subscribe(),
        ));
        if !opts.compaction_interval.is_zero() {
            handle.spawn(etcd_mirror::compact_every(
                client.clone(),
                mirror.clone(),
                opts.compaction_interval,
                stop.subscribe(),
            ));
        }
        Ok(EtcdStore {
            handle,
            client,
            mirror,
            opts,
            _stop: stop,
            probe: Mutex::new(None),
        })
    }

    /// A write's transaction; when it succeeds, the answer waits until the mirror has applied
    /// its revision, so the writer reads its own write. Both waits happen on the etcd runtime:
    /// the server worker blocks once. (It used to wait for the mirror on its own thread
    /// afterwards, outside `block_in_place`, holding up every other request that worker could
    /// have served.) The mirror's wait has its own bound, so a write etcd has taken is not
    /// reported as a timeout because the watch is slow.
    fn write_txn(&self, txn: Txn) -> Result<TxnResponse, StoreError> {
        run_retrying(&self.handle, CALL_TIMEOUT, self.settled_txn(txn))
    }

    /// `write_txn`, answered to a future (a handler's create).
    fn write_txn_later(&self, txn: Txn) -> Pending<TxnResponse> {
        later_retrying(&self.handle, CALL_TIMEOUT, self.settled_txn(txn))
    }

    /// The call `write_txn` sends (again, while it never reached etcd).
    fn settled_txn(
        &self,
        txn: Txn,
    ) -> impl FnMut()
        -> Pin<Box<dyn Future<Output = Result<TxnResponse, etcd_client::Error>> + Send>>
    + Send
    + 'static {
        let kv = self.client.kv_client();
        let applied = self.mirror.store.changes();
        move || {
            let (mut kv, txn, mut applied) = (kv.clone(), txn.clone(), applied.clone());
            Box::pin(async move {
                let resp = kv.txn(txn).await?;
                if resp.succeeded() {
                    let rev = header_rev(&resp);
                    let settled = applied.wait_for(|r| *r >= rev);
                    let _ = tokio::time::timeout(CALL_TIMEOUT / 2, settled).await;
                }
                Ok(resp)
            })
        }
    }

    fn fetch(&self, key: &str) -> Result<Option<Value>, StoreError> {
        let kv = self.client.kv_client();
        let k = self.mirror.keys.to_etcd(key);
        let resp = run_retrying(&self.handle, CALL_TIMEOUT, move || {
            let (mut kv, k) = (kv.clone(), k.clone());
            async move { kv.get(k, None).await }
        })?;
        Ok(resp.kvs().first().and_then(decode))
    }

    /// The object to start a write from: the mirror's, or etcd's when the mirror lacks it or
    /// holds another revision than the one the client named.
    fn current(&self, key: &str, rv: Option<u64>) -> Result<Option<Arc<Value>>, StoreError> {
        if let Some(v) = self.mirror.store.get(key)
            && rv.is_none_or(|r| object_rv(&v) == Some(r))
        {
            return Ok(Some(v));
        }
        Ok(self.fetch(key)?.map(Arc::new))
    }

    fn probe(&self) -> Result<(), String> {
        let mut last = self.probe.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, r)) = &*last
            && at.elapsed() < HEALTH_TIMEOUT / 2
        {
            return r.clone();
        }
        let key = self.mirror.keys.to_etcd(HEALTH_KEY);
        let mut kv = self.client.kv_client();
        let r = run_on(&self.handle, HEALTH_TIMEOUT, async move {
            kv.get(key, None).await
        })
        .map(|_| ())
        .map_err(|e| format!("error getting data from etcd: {e}"));
        *last = Some((Instant::now(), r.clone()));
        r
    }
}

impl Storage for EtcdStore {
    fn current_rv(&self) -> u64 {
        self.mirror.store.current_rv()
    }
    fn get(&self, key: &str) -> Option<Arc<Value>> {
        self.mirror.store.get(key)
    }
    fn list(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        self.mirror.store.list(prefix)
    }
    fn list_items(&self, prefix: &str) -> (Vec<(String, Item)>, u64) {
        self.mirror.store.list_items(prefix)
    }
    fn list_with_metadata(&self, prefix: &str, fields: &[&str]) -> Vec<Arc<Value>> {
        self.mirror.store.list_with_metadata(prefix, fields)
    }
    fn encoded(&self, key: &str) -> Option<(u64, hyper::body::Bytes)> {
        self.mirror.store.encoded(key)
    }
    fn get_view(&self, key: &str) -> Option<Arc<Value>> {
        self.mirror.store.get_view(key)
    }
    fn list_views(&self, prefix: &str) -> (Vec<Arc<Value>>, u64) {
        self.mirror.store.list_views(prefix)
    }
    fn list_keys_at(
        &self,
        prefix: &str,
        start: &str,
        at: u64,
        limit: usize,
        count: bool,
    ) -> Result<PastPage, StoreError> {
        let now = self.mirror.store.current_rv();
        if self.mirror.live() && at >= now {
            return self
                .mirror
                .store
                .list_keys_at(prefix, start, now, limit, count);
        }
        // An older revision, or a mirror that may be behind: etcd itself, at that revision.
        let keys = &self.mirror.keys;
        let from = keys.to_etcd(if start.is_empty() { prefix } else { start });
        let mut opts = GetOptions::new().with_range(prefix_end(&keys.to_etcd(prefix)));
        if at < now {
            opts = opts.with_revision(i64::try_from(at).unwrap_or(i64::MAX));
        }
        if limit < usize::MAX {
            opts = opts.with_limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        let kv = self.client.kv_client();
        let resp = run_retrying(&self.handle, CALL_TIMEOUT, move || {
            let (mut kv, from, opts) = (kv.clone(), from.clone(), opts.clone());
            async move { kv.get(from, Some(opts)).await }
        })
        .map_err(|e| match e {
            StoreError::TooOld(..) => StoreError::TooOld(
                at,
                self.mirror
                    .compacted
                    .load(std::sync::atomic::Ordering::Acquire),
            ),
            e => e,
        })?;
        let items = resp
            .kvs()
            .iter()
            .filter_map(|kv| {
                Some((
                    keys.server_key(kv.key())?,
                    Item::parsed(Arc::new(decode(kv)?)),
                ))
            })
            .collect();
        Ok(PastPage {
            items,
            more: resp.more(),
            remaining_from_start: count.then(|| usize::try_from(resp.count()).unwrap_or(0)),
        })
    }
    fn changes(&self) -> signal::Receiver<u64> {
        self.mirror.store.changes()
    }
    fn history_after(
        &self,
        prefix: &str,
        after: u64,
        max_events: usize,
        max_bytes: usize,
    ) -> Result<HistoryPage, StoreError> {
        self.mirror
            .store
            .history_after(prefix, after, max_events, max_bytes)
    }
    fn create(&self, key: &str, mut value: Value, write: Write) -> Result<Arc<Value>, StoreError> {
        if write == Write::DryRun {
            return match self.current(key, None)? {
                Some(_) => Err(StoreError::Exists),
                None => Ok(Arc::new(value)),
            };
        }
        let bytes = self.mirror.own.put(key, &value);
        let done = self
            .write_txn(create_txn(&self.mirror.keys.to_etcd(key), &bytes))
            .and_then(|resp| created(resp, &mut value));
        if done.is_err() {
            self.mirror.own.failed(key, &bytes);
        }
        done.map(|()| Arc::new(value))
    }
    fn create_later(&self, key: &str, mut value: Value, write: Write) -> Pending<Arc<Value>> {
        if write == Write::DryRun {
            return Box::pin(std::future::ready(self.create(key, value, write)));
        }
        let bytes = self.mirror.own.put(key, &value);
        let pending = self.write_txn_later(create_txn(&self.mirror.keys.to_etcd(key), &bytes));
        let (mirror, key) = (self.mirror.clone(), key.to_string());
        Box::pin(async move {
            let done = pending.await.and_then(|resp| created(resp, &mut value));
            if done.is_err() {
                mirror.own.failed(&key, &bytes);
            }
            done.map(|()| Arc::new(value))
        })
    }
    fn update_with(
        &self,
        key: &str,
        expected_rv: Option<u64>,
        write: Write,
        f: &mut UpdateFn<'_>,
    ) -> Result<Arc<Value>, StoreError> {
        let mut cur = self
            .current(key, expected_rv)?
            .ok_or(StoreError::NotFound)?;
        loop {
            let rv = object_rv(&cur);
            if expected_rv.is_some_and(|exp| rv != Some(exp)) {
                return Err(StoreError::Conflict);
            }
            let mut next = f(&cur)?;
            if write == Write::DryRun {
                if let Some(rv) = rv {
                    set_rv(&mut next, rv);
                }
                return Ok(Arc::new(next));
            }
            if next == *cur {
                return Ok(cur); // no-op updates do not bump the revision, as upstream
            }
            let k = self.mirror.keys.to_etcd(key);
            let read = i64::try_from(rv.unwrap_or(0)).unwrap_or(i64::MAX);
            let bytes = self.mirror.own.put(key, &next);
            let txn = Txn::new()
                .when(vec![Compare::mod_revision(
                    k.clone(),
                    CompareOp::Equal,
                    read,
                )])
                .and_then(vec![TxnOp::put(k.clone(), bytes.to_vec(), None)])
                .or_else(vec![TxnOp::get(k, None)]);
            let resp = self.write_txn(txn);
            if !resp.as_ref().is_ok_and(TxnResponse::succeeded) {
                self.mirror.own.failed(key, &bytes);
            }
            let resp = resp?;
            if resp.succeeded() {
                set_rv(&mut next, header_rev(&resp));
                return Ok(Arc::new(next));
            }
            // Written meanwhile: again from etcd's current object, as GuaranteedUpdate does.
            cur = Arc::new(else_value(&resp).ok_or(StoreError::NotFound)?);
        }
    }
    fn delete_with(
        &self,
        key: &str,
        write: Write,
        check: &mut CheckFn<'_>,
    ) -> Result<Arc<Value>, StoreError> {
        let mut cur = self.current(key, None)?.ok_or(StoreError::NotFound)?;
        loop {
            check(&cur)?;
            if write == Write::DryRun {
                return Ok(cur);
            }
            let k = self.mirror.keys.to_etcd(key);
            let read = i64::try_from(object_rv(&cur).unwrap_or(0)).unwrap_or(i64::MAX);
            let txn = Txn::new()
                .when(vec![Compare::mod_revision(
                    k.clone(),
                    CompareOp::Equal,
                    read,
                )])
                .and_then(vec![TxnOp::delete(k.clone(), None)])
                .or_else(vec![TxnOp::get(k, None)]);
            let resp = self.write_txn(txn)?;
            if resp.succeeded() {
                let mut last = (*cur).clone();
                set_rv(&mut last, header_rev(&resp));
                return Ok(Arc::new(last));
            }
            cur = Arc::new(else_value(&resp).ok_or(StoreError::NotFound)?);
        }
    }
    fn watch(&self, prefix: &str, from: Option<u64>) -> Result<WatchStart, StoreError> {
        self.mirror.store.watch(prefix, from)
    }
    fn confirm_current(&self) -> Result<(), StoreError> {
        // A linearizable range (etcd-client's default), counting only: it answers only through
        // a quorum. The mirror already holds what it would return; this server's own writes
        // are in it before they are acknowledged.
        let kv = self.client.kv_client();
        let key = self.mirror.keys.to_etcd(HEALTH_KEY);
        run_retrying(&self.handle, CALL_TIMEOUT, move || {
            let (mut kv, key) = (kv.clone(), key.clone());
            async move { kv.get(key, Some(GetOptions::new().with_count_only())).await }
        })
        .map(|_| ())
    }
    fn health(&self) -> Option<(&'static str, Result<(), String>)> {
        Some(("etcd", self.probe()))
    }
    fn locate(&self, key: &str) -> Option<Value> {
        let k = self.mirror.keys.to_etcd(key);
        Some(json!({"backend": "etcd", "etcdKey": k, "etcdctl": self.opts.etcdctl_get(&k)}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_ends_and_etcdctl_lines() {
        assert_eq!(prefix_end("/registry/pods/"), b"/registry/pods0".to_vec());
        let o = EtcdOptions {
            servers: vec![
                "https://127.0.0.1:2379".into(),
                "https://127.0.0.1:2381".into(),
            ],
            cafile: Some("/tmp/pki/etcd/ca.crt".into()),
            certfile: Some("/tmp/my pki/apiserver-etcd-client.crt".into()),
            keyfile: None,
            prefix: "/registry".into(),
            compaction_interval: Duration::ZERO,
        };
        assert_eq!(
            o.etcdctl_get("/registry/pods/default/app"),
            "etcdctl --endpoints https://127.0.0.1:2379,https://127.0.0.1:2381 --cacert /tmp/pki/etcd/ca.crt --cert '/tmp/my pki/apiserver-etcd-client.crt' get /registry/pods/default/app"
        );
        let v = json!({"metadata": {"name": "a", "resourceVersion": "7"}});
        let (stored, _) = crate::apiserver::storage::etcd_own_writes::encode_for_etcd(&v);
        assert_eq!(stored, br#"{"metadata":{"name":"a"}}"#.to_vec());
    }
}

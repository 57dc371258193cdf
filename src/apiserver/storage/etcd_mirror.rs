//! The watch-fed cache behind the etcd backend (upstream's cacher, in spirit): one etcd watch on
//! the prefix from the revision of the initial read, applied in order to an in-memory `Store`
//! that serves reads, watches and the control loops' history at etcd's revisions. A broken watch resumes from the last revision seen; a compacted one reads
//! everything again. Also kube-apiserver's compactor (`etcd3/compact.go`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, EventType as EtcdEvent, GetOptions, KeyValue, Txn, TxnOp,
    TxnOpResponse, WatchOptions,
};
use serde_json::Value;
use tokio::sync::watch;

use crate::apiserver::storage::etcd_config::{CALL_TIMEOUT, Keys};
use crate::apiserver::storage::etcd_own_writes::OwnWrites;
use crate::apiserver::storage::store::{Store, set_rv};

/// A stored value as the server serves it: the JSON with `metadata.resourceVersion` set to the
/// key's mod_revision. None for a value that is not a JSON object (written by someone else).
pub(crate) fn decode(kv: &KeyValue) -> Option<Value> {
    let mut v: Value = serde_json::from_slice(kv.value()).ok()?;
    if !v.get("metadata").is_some_and(Value::is_object) {
        return None;
    }
    set_rv(&mut v, u64::try_from(kv.mod_revision()).unwrap_or(0));
    Some(v)
}

/// The mirror and what writers wait on.
pub(crate) struct Mirror {
    pub(crate) store: Store,
    pub(crate) keys: Keys,
    /// The watch is established: the mirror is etcd's state as of its revision.
    live: AtomicBool,
    /// The revision the compactor last compacted to (0: none).
    pub(crate) compacted: std::sync::atomic::AtomicU64,
    /// This server's puts, which the watch brings back already encoded and parsed.
    pub(crate) own: OwnWrites,
}

impl Mirror {
    pub(crate) fn new(store: Store, keys: Keys) -> Mirror {
        Mirror {
            store,
            keys,
            live: AtomicBool::new(false),
            compacted: std::sync::atomic::AtomicU64::new(0),
            own: OwnWrites::default(),
        }
    }

    pub(crate) fn live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    fn set_live(&self, live: bool) {
        self.live.store(live, Ordering::Release);
    }

    fn apply(&self, events: &[etcd_client::Event]) {
        for ev in events {
            let Some(kv) = ev.kv() else { continue };
            let Some(key) = self.keys.server_key(kv.key()) else {
                continue;
            };
            let rev = u64::try_from(kv.mod_revision()).unwrap_or(0);
            match ev.event_type() {
                EtcdEvent::Put => match self.own.recognise(&key, kv.value(), rev) {
                    Some(own) => self.store.observe_put(rev, &key, own.tree, own.json),
                    None => self.observe_foreign(rev, &key, kv),
                },
                EtcdEvent::Delete => self.store.observe(rev, &key, None),
            }
        }
    }

    /// A put made elsewhere (another server, etcdctl), or whose bytes differ from ours.
    fn observe_foreign(&self, rev: u64, key: &str, kv: &KeyValue) {
        match decode(kv) {
            Some(v) => self.store.observe(rev, key, Some(v)),
            None => {
                // Not ours to serve (protobuf, or bytes put by hand): as if absent.
                eprintln!("kexplore serve: etcd key {key}: not a JSON object, not served");
                self.store.observe(rev, key, None);
            }
        }
    }
}

/// Read everything under the prefix and make it the mirror's state at that read's revision.
pub(crate) async fn load(client: &Client, mirror: &Mirror) -> Result<(), etcd_client::Error> {
    let mut kv = client.kv_client();
    let resp = kv
        .get(mirror.keys.root(), Some(GetOptions::new().with_prefix()))
        .await?;
    let rev = resp.header().map(|h| h.revision()).unwrap_or(0);
    let objects = resp
        .kvs()
        .iter()
        .filter_map(|kv| Some((mirror.keys.server_key(kv.key())?, decode(kv)?)))
        .collect();
    mirror.store.reset(objects, u64::try_from(rev).unwrap_or(0));
    Ok(())
}

/// Sleeps, or returns true when the server is stopping.
async fn pause(stop: &mut watch::Receiver<bool>, d: Duration) -> bool {
    tokio::select! {
        _ = stop.wait_for(|s| *s) => true,
        _ = tokio::time::sleep(d) => false,
    }
}

/// Keep the mirror current until `stop`: watch from the mirror's revision + 1; on a broken
/// stream try again with back-off; on a compacted start read everything.
pub(crate) async fn follow(client: Client, mirror: Arc<Mirror>, mut stop: watch::Receiver<bool>) {
    let mut backoff = Duration::from_millis(100);
    loop {
        if *stop.borrow() {
            return;
        }
        let from = i64::try_from(mirror.store.current_rv() + 1).unwrap_or(i64::MAX);
        // Without previous values: the mirror has them (the state it holds before each event),
        // and asking etcd for them costs it a read of the old value per event.
        let opts = WatchOptions::new().with_prefix().with_start_revision(from);
        let mut wc = client.watch_client();
        let started = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            r = tokio::time::timeout(CALL_TIMEOUT, wc.watch(mirror.keys.root(), Some(opts))) => r,
        };
        if let Ok(Ok(mut stream)) = started {
            loop {
                let msg = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return,
                    m = stream.message() => m,
                };
                match msg {
                    Ok(Some(resp)) if resp.canceled() => {
                        mirror.set_live(false);
                        if resp.compact_revision() > 0 {
                            // Our start was compacted away: read everything again; watchers
                            // behind it get 410 and list again, as kube-apiserver's do.
                            let _ = load(&client, &mirror).await;
                        }
                        break;
                    }
                    Ok(Some(resp)) => {
                        mirror.set_live(true);
                        backoff = Duration::from_millis(100);
                        mirror.apply(resp.events());
                    }
                    Ok(None) | Err(_) => break,
                }
            }
        }
        mirror.set_live(false);
        if pause(&mut stop, backoff).await {
            return;
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// The key kube-apiserver's compactor keeps its CAS on (at etcd's root, outside the prefix).
const COMPACT_REV_KEY: &str = "compact_rev_key";

/// kube-apiserver's compactor: every `interval`, compact to the revision seen one interval
/// earlier, through a CAS on `compact_rev_key`'s version so that of several servers on one etcd
/// only one compacts each time (the others learn the key's version and go on).
pub(crate) async fn compact_every(
    client: Client,
    mirror: Arc<Mirror>,
    interval: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let (mut version, mut rev) = (0i64, 0i64);
    loop {
        if pause(&mut stop, interval).await {
            return;
        }
        let mut kv = client.kv_client();
        let txn = Txn::new()
            .when(vec![Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                version,
            )])
            .and_then(vec![TxnOp::put(COMPACT_REV_KEY, rev.to_string(), None)])
            .or_else(vec![TxnOp::get(COMPACT_REV_KEY, None)]);
        let Ok(Ok(resp)) = tokio::time::timeout(CALL_TIMEOUT, kv.txn(txn)).await else {
            continue;
        };
        let seen = resp.header().map(|h| h.revision()).unwrap_or(0);
        if !resp.succeeded() {
            version = resp
                .op_responses()
                .into_iter()
                .find_map(|r| match r {
                    TxnOpResponse::Get(g) => g.kvs().first().map(KeyValue::version),
                    _ => None,
                })
                .unwrap_or(0);
            rev = seen;
            continue;
        }
        version += 1;
        if rev > 0 {
            let done = tokio::time::timeout(CALL_TIMEOUT, kv.compact(rev, None)).await;
            if matches!(done, Ok(Ok(_))) {
                mirror
                    .compacted
                    .store(u64::try_from(rev).unwrap_or(0), Ordering::Release);
                mirror.store.compacted(u64::try_from(rev).unwrap_or(0));
            }
        }
        rev = seen;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_etcd_prefix() {
        let k = Keys::new("/registry");
        assert_eq!(
            k.to_etcd("/registry/pods/default/app"),
            "/registry/pods/default/app"
        );
        let k = Keys::new("kexplore/one/");
        assert_eq!(k.root(), "/kexplore/one/");
        assert_eq!(
            k.to_etcd("/registry/minions/node-1"),
            "/kexplore/one/minions/node-1"
        );
        assert_eq!(
            k.server_key(b"/kexplore/one/minions/node-1").as_deref(),
            Some("/registry/minions/node-1")
        );
        assert_eq!(k.server_key(b"/registry/minions/node-1"), None);
    }
}

//! The yardstick of the etcd benchmark (`cargo bench --bench etcd_store`): plain puts through
//! the same client, TLS and connection options the store uses, on a runtime thread of its own as
//! the store's calls run — the most this backend can write here, with nothing of the API
//! server's work around it — and creates as the store makes them (a transaction and the watch
//! event that comes back), which is what each pod create asks of etcd.

use std::time::Instant;

use etcd_client::{Client, Compare, CompareOp, Txn, TxnOp, WatchOptions};

use crate::apiserver::storage::etcd_config::EtcdOptions;
use crate::apiserver::storage::etcd_dial::Tls;

/// `n` puts of `size`-byte values under `/kexplore-baseline/` by `writers` concurrent writers;
/// the puts per second.
pub fn put_rate(opts: &EtcdOptions, n: usize, writers: usize, size: usize) -> Result<f64, String> {
    on_client(opts, |client| async move {
        let start = Instant::now();
        let done = write_all(&client, "/kexplore-baseline/", Write::Put, n, writers, size).await?;
        Ok(done as f64 / start.elapsed().as_secs_f64())
    })
}

/// `n` creates as the store makes them, with none of the API server's work: a transaction
/// that puts `size` bytes only while the key does not exist, under `/kexplore-baseline-create/`
/// by `writers` concurrent writers, and a watch on that prefix that receives every one (the
/// store's cache is fed so). Creates per second, counted when the last event has arrived: the
/// most this etcd can do of what each pod create asks of it.
pub fn create_rate(
    opts: &EtcdOptions,
    n: usize,
    writers: usize,
    size: usize,
) -> Result<f64, String> {
    on_client(opts, |client| async move {
        const PREFIX: &str = "/kexplore-baseline-create/";
        // From the revision before the first create, so none is missed however soon the
        // watch is in place.
        let now = client
            .kv_client()
            .get(PREFIX, None)
            .await
            .map_err(|e| e.to_string())?
            .header()
            .map_or(0, |h| h.revision());
        let opts = WatchOptions::new()
            .with_prefix()
            .with_start_revision(now + 1);
        let mut events = client
            .watch_client()
            .watch(PREFIX, Some(opts))
            .await
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let written = write_all(&client, PREFIX, Write::Create, n, writers, size);
        let watched = async {
            let mut seen = 0;
            while seen < n.div_ceil(writers.max(1)) * writers.max(1) {
                match events.message().await.map_err(|e| e.to_string())? {
                    Some(m) => seen += m.events().len(),
                    None => return Err("the watch ended".to_string()),
                }
            }
            Ok(seen)
        };
        let (done, _) = tokio::try_join!(written, watched)?;
        Ok(done as f64 / start.elapsed().as_secs_f64())
    })
}

/// How each write of a loop is made.
#[derive(Clone, Copy)]
enum Write {
    Put,
    /// The store's create: put only while the key does not exist.
    Create,
}

/// `n` writes of `size` bytes under `prefix` by `writers` concurrent writers (the `n` rounded
/// up to a whole number each); how many were made.
async fn write_all(
    client: &Client,
    prefix: &str,
    how: Write,
    n: usize,
    writers: usize,
    size: usize,
) -> Result<usize, String> {
    let value = vec![b'x'; size];
    let per = n.div_ceil(writers.max(1));
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..writers.max(1) {
        let (mut kv, value, prefix) = (client.kv_client(), value.clone(), prefix.to_string());
        tasks.spawn(async move {
            for i in 0..per {
                let key = format!("{prefix}{w}/{i}");
                match how {
                    Write::Put => {
                        kv.put(key, value.clone(), None)
                            .await
                            .map_err(|e| e.to_string())?;
                    }
                    Write::Create => {
                        let txn = Txn::new()
                            .when(vec![Compare::mod_revision(
                                key.as_str(),
                                CompareOp::Equal,
                                0,
                            )])
                            .and_then(vec![TxnOp::put(key.as_str(), value.clone(), None)]);
                        let r = kv.txn(txn).await.map_err(|e| e.to_string())?;
                        if !r.succeeded() {
                            return Err(format!("{key} existed before its create"));
                        }
                    }
                }
            }
            Ok::<usize, String>(per)
        });
    }
    let mut done = 0;
    while let Some(r) = tasks.join_next().await {
        done += r.map_err(|e| e.to_string())??;
    }
    Ok(done)
}

/// The length of the value stored at `key` (an etcd key), so the put loop writes values the
/// size of what the store really put.
pub fn stored_len(opts: &EtcdOptions, key: &str) -> Result<usize, String> {
    on_client(opts, |mut client| async move {
        let resp = client.get(key, None).await.map_err(|e| e.to_string())?;
        resp.kvs()
            .first()
            .map(|kv| kv.value().len())
            .ok_or_else(|| format!("nothing stored at {key}"))
    })
}

/// `f` with a client connected as the store connects, on a runtime thread of its own.
fn on_client<T, F>(opts: &EtcdOptions, f: impl FnOnce(Client) -> F) -> Result<T, String>
where
    F: std::future::Future<Output = Result<T, String>>,
{
    let tls = Tls::load(opts)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let servers = opts.servers.clone();
    rt.block_on(async move {
        let client = Client::connect(servers, Some(tls.connect_options()))
            .await
            .map_err(|e| e.to_string())?;
        f(client).await
    })
}

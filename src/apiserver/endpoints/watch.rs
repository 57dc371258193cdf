//! Watch: a chunked stream of `{"type","object"}` lines read from the store's history at the
//! client's pace, with resume from a resourceVersion, selector transitions (objects entering or
//! leaving the view become ADDED / DELETED), bookmarks, Table rows for `kubectl get -w`, and an
//! in-stream 410 once the client's position has left the history.
//!
//! Memory per watcher is bounded: its queue holds a few chunks of at most `CHUNK_BYTES` of
//! events (one event when a single object is larger), and the next chunk is read from the
//! history only when the queue has room. A watcher that takes nothing from a full queue for
//! `UNRESPONSIVE` is closed, as kube-apiserver's cacher forces unresponsive watchers closed;
//! the client resumes from the last resourceVersion it saw.

use std::time::Duration;

use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::apiserver::codec::body::{ApiBody, Format};
use crate::apiserver::endpoints::list_options;
use crate::apiserver::endpoints::reply;
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::table;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::storage::store::{EventType, StoreError, StoreEvent};

struct Encoder {
    def: &'static ResourceDef,
    format: Format,
    include: String,
    sent_columns: bool,
}

impl Encoder {
    /// One store event as a watch line appended to `out`; plain JSON sends the store's
    /// encoding as it is (`object`: the event's object when the caller already decoded it).
    fn event(&mut self, out: &mut Vec<u8>, kind: &str, ev: &StoreEvent, object: Option<&Value>) {
        if self.format != Format::Json || conversion::converts(self.def) {
            let line = match object {
                Some(o) => self.line(kind, o),
                None => self.line(kind, &ev.value()),
            };
            out.extend_from_slice(&line);
            return;
        }
        let obj = &ev.object;
        out.reserve(obj.len() + 40);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"object\":");
        out.extend_from_slice(obj);
        out.extend_from_slice(b"}\n");
    }

    fn line(&mut self, kind: &str, obj: &Value) -> Bytes {
        let object = match self.format {
            Format::Table { v1beta1 } if kind != "ERROR" && kind != "BOOKMARK" => {
                let rv = obj
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let t = table::table(
                    self.def,
                    &[obj],
                    rv,
                    &self.include,
                    v1beta1,
                    !self.sent_columns,
                );
                self.sent_columns = true;
                t
            }
            _ if kind == "ERROR" => obj.clone(),
            _ => reply::output(self.def, obj),
        };
        let mut out =
            serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
        out.push(b'\n');
        Bytes::from(out)
    }
}

fn bookmark(def: &ResourceDef, rv: u64) -> Value {
    json!({"kind": def.kind, "apiVersion": def.api_version(), "metadata": {"resourceVersion": rv.to_string()}})
}

/// Chunks a watcher's queue holds before it stops reading the history.
const QUEUE_CHUNKS: usize = 8;
/// Encoded bytes per chunk (a larger single event is a chunk of its own).
const CHUNK_BYTES: usize = 64 << 10;
/// History entries looked at per read, so one watcher holds the store's lock only briefly.
const PAGE_EVENTS: usize = 4096;
/// A watcher whose full queue is not read from for this long is closed.
const UNRESPONSIVE: Duration = Duration::from_secs(10);

pub fn start(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = list_options::selectors(ctx, def)?;
    let prefix = def.prefix_for(&ctx.info.namespace);
    let from = match ctx.info.query("resourceVersion").filter(|s| !s.is_empty()) {
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s}")))?,
        ),
        None => None,
    };
    let send_initial = list_options::watch_send_initial_events(
        ctx.info.query("sendInitialEvents"),
        ctx.info.query("resourceVersionMatch"),
        ctx.info.query("continue"),
    )?;
    // Watch-list (client-go's WatchList): the state now as ADDED events, then a bookmark that
    // marks their end, then changes; `false` starts from the given revision (or now) without them.
    let from = match send_initial {
        Some(true) => None,
        Some(false) => Some(from.unwrap_or_else(|| ctx.api.store.current_rv())),
        None => from,
    };
    let timeout = ctx
        .info
        .query("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(1800 + rand_secs(1800));
    let bookmarks = ctx.info.query("allowWatchBookmarks") == Some("true");
    let format = match ctx.format {
        Format::Yaml => Format::Json,
        f => f,
    };
    let mut enc = Encoder {
        def,
        format,
        include: ctx
            .info
            .query("includeObject")
            .unwrap_or("Metadata")
            .to_string(),
        sent_columns: false,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUE_CHUNKS);
    let content_type = match format {
        Format::Table { v1beta1: false } => "application/json;as=Table;v=v1;g=meta.k8s.io",
        Format::Table { v1beta1: true } => "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        _ => "application/json",
    };
    let start = match ctx.api.store.watch(&prefix, from) {
        Ok(s) => s,
        Err(StoreError::TooOld(a, b)) => {
            // Delivered inside a 200 stream, as the watch cache does.
            let _ = tx.try_send(expired(&mut enc, a, b));
            ctx.trace.stage(
                Stage::Watch,
                Status::Failed,
                json!({"prefix": prefix, "error": format!("too old resource version: {a} ({b})")}),
            );
            return Ok(Reply::Stream {
                content_type,
                body: ApiBody::Stream(rx),
            });
        }
        Err(e) => return Err(ApiError::storage(&e)),
    };
    ctx.trace.stage(
        Stage::Watch,
        Status::Ok,
        json!({"prefix": prefix, "from": from.map(|f| f.to_string()), "initialEvents": start.snapshot.len(), "timeoutSeconds": timeout}),
    );
    let api = ctx.api.clone();
    let kind = def.kind;
    // Without selectors every event is in view and plain JSON goes out without decoding.
    let selective = [
        ctx.info.query("labelSelector"),
        ctx.info.query("fieldSelector"),
    ]
    .iter()
    .any(|q| q.is_some_and(|q| !q.is_empty()));
    tokio::spawn(async move {
        let view = |o: &Value| ls.matches(o) && fs.matches(kind, o);
        // What a watcher sees of one store event given its selectors, and the decoded object
        // when the selectors needed it.
        let translate = |ev: &StoreEvent| -> Option<(&'static str, Option<Value>)> {
            if !selective {
                return Some((ev.kind.as_str(), None));
            }
            let object = ev.value();
            let now_in = view(&object);
            let t = match ev.kind {
                EventType::Added => now_in.then_some("ADDED"),
                EventType::Deleted => now_in.then_some("DELETED"),
                EventType::Modified => {
                    let was_in = ev.prev_value().is_none_or(|p| view(&p));
                    match (was_in, now_in) {
                        (true, true) => Some("MODIFIED"),
                        (false, true) => Some("ADDED"),
                        (true, false) => Some("DELETED"),
                        (false, false) => None,
                    }
                }
            };
            t.map(|t| (t, Some(object)))
        };
        let mut out = Chunker::new(tx);
        for ev in &start.snapshot {
            if let Some((t, object)) = translate(ev) {
                enc.event(out.buf(), t, ev, object.as_ref());
                if !out.flush_if_full().await {
                    return;
                }
            }
        }
        if send_initial == Some(true) && bookmarks {
            let mut end = bookmark(def, start.rv);
            end["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            let line = enc.line("BOOKMARK", &end);
            out.buf().extend_from_slice(&line);
        }
        if !out.flush().await {
            return;
        }
        // Every revision up to `pos` has been looked at (sent, or not in this watcher's view).
        let mut pos = start.rv;
        let mut changes = start.changes;
        let deadline = tokio::time::sleep(Duration::from_secs(timeout));
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        tick.tick().await;
        loop {
            changes.borrow_and_update();
            let page = match api
                .store
                .history_after(&prefix, pos, PAGE_EVENTS, CHUNK_BYTES)
            {
                Ok(p) => p,
                Err(StoreError::TooOld(a, b)) => {
                    // Fell out of the history: the client must relist, as after etcd compacts.
                    let _ = out.send(expired(&mut enc, a, b)).await;
                    return;
                }
                Err(_) => return,
            };
            for ev in &page.events {
                if let Some((t, object)) = translate(ev) {
                    enc.event(out.buf(), t, ev, object.as_ref());
                }
            }
            pos = page.through;
            if !out.flush().await {
                return;
            }
            if page.more {
                continue;
            }
            tokio::select! {
                _ = &mut deadline => {
                    if bookmarks {
                        let _ = out.send(enc.line("BOOKMARK", &bookmark(def, pos))).await;
                    }
                    return;
                }
                _ = tick.tick(), if bookmarks => {
                    if !out.send(enc.line("BOOKMARK", &bookmark(def, pos))).await {
                        return;
                    }
                }
                _ = out.closed() => return,
                r = changes.changed() => if r.is_err() { return },
            }
        }
    });
    Ok(Reply::Stream {
        content_type,
        body: ApiBody::Stream(rx),
    })
}

fn expired(enc: &mut Encoder, asked: u64, oldest: u64) -> Bytes {
    let e = ApiError::expired(format!("too old resource version: {asked} ({oldest})"));
    enc.line("ERROR", &e.to_status())
}

/// Collects encoded lines into chunks and hands them to the response body, waiting for room.
struct Chunker {
    tx: mpsc::Sender<Bytes>,
    buf: Vec<u8>,
}

impl Chunker {
    fn new(tx: mpsc::Sender<Bytes>) -> Self {
        Chunker {
            tx,
            buf: Vec::new(),
        }
    }

    fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    async fn closed(&self) {
        self.tx.closed().await
    }

    async fn flush_if_full(&mut self) -> bool {
        self.buf.len() < CHUNK_BYTES || self.flush().await
    }

    /// Queue what was collected. False when the client is gone or stopped reading.
    async fn flush(&mut self) -> bool {
        if self.buf.is_empty() {
            return true;
        }
        let chunk = Bytes::from(std::mem::take(&mut self.buf));
        self.send(chunk).await
    }

    async fn send(&mut self, chunk: Bytes) -> bool {
        match tokio::time::timeout(UNRESPONSIVE, self.tx.reserve()).await {
            Ok(Ok(permit)) => {
                permit.send(chunk);
                true
            }
            // Closed by the client, or forced closed for not reading (the body then ends
            // after what is already queued, and the client resumes from its last event).
            Ok(Err(_)) | Err(_) => false,
        }
    }
}

fn rand_secs(max: u64) -> u64 {
    let mut b = [0u8; 8];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b);
    u64::from_le_bytes(b) % max.max(1)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use http_body_util::{BodyExt, Full};
    use hyper::Request;
    use serde_json::{Value, json};

    use crate::apiserver::codec::body::ApiBody;
    use crate::apiserver::controllers::bootstrap;
    use crate::apiserver::filters::authn::TokenFile;
    use crate::apiserver::filters::chain;
    use crate::apiserver::request::context::Api;
    use crate::apiserver::storage::store::Write;
    use crate::apiserver::transport::tls::ConnInfo;

    fn api() -> Arc<Api> {
        let tokens = TokenFile::parse(
            Path::new("tokens.csv"),
            "admin-token,kexplore-admin,1,system:masters\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let api = Arc::new(Api::new(tokens, None));
        bootstrap::system(&api);
        api
    }

    async fn watch(api: &Arc<Api>, query: &str) -> ApiBody {
        let req = Request::builder()
            .uri(format!(
                "/api/v1/namespaces/default/pods?watch=true&{query}"
            ))
            .header("authorization", "Bearer admin-token")
            .body(Full::new(hyper::body::Bytes::new()))
            .unwrap_or_else(|e| panic!("{e}"));
        let resp = chain::handle(api, &ConnInfo::default(), req).await;
        assert_eq!(resp.status().as_u16(), 200);
        resp.into_body()
    }

    /// The stream's lines (type, resourceVersion or Status code) and how many chunks carried
    /// them, reading until `stop` says so, the stream ends, or 10 s pass without a chunk.
    async fn read(
        body: &mut ApiBody,
        stop: impl Fn(&[(String, u64)]) -> bool,
    ) -> (Vec<(String, u64)>, usize) {
        let (mut lines, mut chunks, mut buf) = (Vec::new(), 0, Vec::new());
        while !stop(&lines) {
            let frame =
                tokio::time::timeout(std::time::Duration::from_secs(10), body.frame()).await;
            let Ok(Some(Ok(frame))) = frame else { break };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            chunks += 1;
            buf.extend_from_slice(&data);
            while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                let v: Value = serde_json::from_slice(&line).unwrap_or_default();
                let t = v["type"].as_str().unwrap_or_default().to_string();
                let n = v["object"]["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .or_else(|| v["object"]["code"].as_u64())
                    .unwrap_or(0);
                lines.push((t, n));
            }
        }
        (lines, chunks)
    }

    fn pod(name: &str, filler: usize) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default", "annotations": {"a": "x".repeat(filler)}},
               "spec": {"containers": [{"name": "c", "image": "i"}]}})
    }

    #[tokio::test]
    async fn a_watcher_that_fell_behind_gets_every_event_in_order_in_few_chunks() {
        let api = api();
        let from = api.store.current_rv();
        let mut body = watch(&api, &format!("resourceVersion={from}")).await;
        // 3,000 changes while the client reads nothing.
        for i in 0..3000 {
            let _ = api.store.create(
                &format!("/registry/pods/default/p{i}"),
                pod(&format!("p{i}"), 10),
                Write::Commit,
            );
        }
        let (lines, chunks) = read(&mut body, |l| l.len() >= 3000).await;
        let want: Vec<(String, u64)> = (from + 1..=from + 3000)
            .map(|rv| ("ADDED".to_string(), rv))
            .collect();
        assert_eq!(lines, want);
        assert!(chunks < 300, "{chunks} chunks for 3,000 events");
    }

    #[tokio::test]
    async fn a_watcher_whose_position_was_compacted_away_gets_410_in_the_stream() {
        let api = api();
        let from = api.store.current_rv();
        let mut body = watch(&api, &format!("resourceVersion={from}")).await;
        // 48 changes of 1 MiB each: more than the history's 32 MiB, while the client reads
        // nothing, so its queue (8 chunks, one event each here) fills and the rest is compacted.
        let writing = std::time::Instant::now();
        for i in 0..48 {
            let _ = api.store.create(
                &format!("/registry/pods/default/big{i}"),
                pod(&format!("big{i}"), 1 << 20),
                Write::Commit,
            );
            tokio::task::yield_now().await;
        }
        let slow = writing.elapsed() >= super::UNRESPONSIVE;
        let (lines, _) = read(&mut body, |l| l.last().is_some_and(|(t, _)| t == "ERROR")).await;
        let (last, delivered) = match lines.split_last() {
            Some((last, before)) if last.0 == "ERROR" => (Some(last), before),
            _ => (None, lines.as_slice()),
        };
        // Writing took longer than a full queue may wait (a debug build on a busy machine): the
        // watcher may have been closed as unresponsive first, its stream ending after what was
        // queued, and the client resumes from there. Else the 410 must come.
        if !slow || last.is_some() {
            assert_eq!(last, Some(&("ERROR".to_string(), 410)), "{lines:?}");
        }
        // What came before is a gap-free, in-order prefix.
        let want: Vec<(String, u64)> = (from + 1..)
            .zip(delivered)
            .map(|(rv, _)| ("ADDED".to_string(), rv))
            .collect();
        assert_eq!(delivered, want.as_slice());
        assert!(delivered.len() < 48);
    }
}

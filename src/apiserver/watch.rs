//! Watch: a chunked stream of `{"type","object"}` lines fed from the store's fan-out, with
//! resume from a resourceVersion, selector transitions (objects entering or leaving the view
//! become ADDED / DELETED), bookmarks, Table rows for `kubectl get -w`, and an in-stream 410.

use std::time::Duration;

use hyper::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::api::{Ctx, Reply};
use super::body::{ApiBody, Format};
use super::resources::ResourceDef;
use super::rest;
use super::status::ApiError;
use super::store::{EventType, StoreError, StoreEvent};
use super::table;
use super::trace::StageStatus;

struct Encoder {
    def: &'static ResourceDef,
    format: Format,
    include: String,
    sent_columns: bool,
}

impl Encoder {
    /// One store event as a watch line; plain JSON reuses the event's shared encoding.
    fn event(&mut self, kind: &str, ev: &StoreEvent) -> Bytes {
        if self.format != Format::Json || self.def.group == "events.k8s.io" {
            return self.line(kind, &ev.object);
        }
        let obj = ev.object_json();
        let mut out = Vec::with_capacity(obj.len() + 40);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"object\":");
        out.extend_from_slice(obj);
        out.extend_from_slice(b"}\n");
        Bytes::from(out)
    }

    fn line(&mut self, kind: &str, obj: &Value) -> Bytes {
        let object = match self.format {
            Format::Table { v1beta1 } if kind != "ERROR" && kind != "BOOKMARK" => {
                let rv = obj
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let t = table::table(
                    self.def.kind,
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
            _ => rest::output(self.def, obj),
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

pub fn start(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = rest::selectors(ctx, def)?;
    let prefix = def.prefix_for(&ctx.info.namespace);
    let from = match ctx.info.query("resourceVersion").filter(|s| !s.is_empty()) {
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s}")))?,
        ),
        None => None,
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
    let (tx, rx) = mpsc::channel::<Bytes>(1024);
    let content_type = match format {
        Format::Table { v1beta1: false } => "application/json;as=Table;v=v1;g=meta.k8s.io",
        Format::Table { v1beta1: true } => "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        _ => "application/json",
    };
    let start = match ctx.api.store.watch(&prefix, from) {
        Ok(s) => s,
        Err(StoreError::TooOld(a, b)) => {
            // Delivered inside a 200 stream, as the watch cache does.
            let e = ApiError::expired(format!("too old resource version: {a} ({b})"));
            let _ = tx.try_send(enc.line("ERROR", &e.to_status()));
            ctx.trace.stage(
                "watch",
                StageStatus::Failed,
                json!({"prefix": prefix, "error": e.message}),
            );
            return Ok(Reply::Stream {
                content_type,
                body: ApiBody::Stream(rx),
            });
        }
        Err(e) => return Err(ApiError::internal(e)),
    };
    ctx.trace.stage(
        "watch",
        StageStatus::Ok,
        json!({"prefix": prefix, "from": from.map(|f| f.to_string()), "backlog": start.backlog.len(), "timeoutSeconds": timeout}),
    );
    let kind = def.kind;
    tokio::spawn(async move {
        let view = |o: &Value| ls.matches(o) && fs.matches(kind, o);
        let mut last_rv = start.rv;
        let mut rx_events = start.rx;
        // What a watcher sees of one store event, given its selectors.
        let translate = |ev: &StoreEvent| -> Option<&'static str> {
            let now_in = view(&ev.object);
            match ev.kind {
                EventType::Added => now_in.then_some("ADDED"),
                EventType::Deleted => now_in.then_some("DELETED"),
                EventType::Modified => {
                    let was_in = ev.prev.as_ref().is_none_or(|p| view(p));
                    match (was_in, now_in) {
                        (true, true) => Some("MODIFIED"),
                        (false, true) => Some("ADDED"),
                        (true, false) => Some("DELETED"),
                        (false, false) => None,
                    }
                }
            }
        };
        for ev in &start.backlog {
            last_rv = last_rv.max(ev.rv);
            if let Some(t) = translate(ev)
                && tx.send(enc.event(t, ev)).await.is_err()
            {
                return;
            }
        }
        let deadline = tokio::time::sleep(Duration::from_secs(timeout));
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        tick.tick().await;
        loop {
            tokio::select! {
                _ = &mut deadline => {
                    if bookmarks {
                        let _ = tx.send(enc.line("BOOKMARK", &bookmark(def, last_rv))).await;
                    }
                    return;
                }
                _ = tick.tick(), if bookmarks => {
                    if tx.send(enc.line("BOOKMARK", &bookmark(def, last_rv))).await.is_err() {
                        return;
                    }
                }
                _ = tx.closed() => return,
                r = rx_events.recv() => match r {
                    Ok(ev) => {
                                        // Events already covered by the backlog or the snapshot come again here.
                        if ev.rv <= last_rv || !ev.key.starts_with(&prefix) {
                            continue;
                        }
                        last_rv = ev.rv;
                        if let Some(t) = translate(&ev)
                            && tx.send(enc.event(t, &ev)).await.is_err() {
                                return;
                            }
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Too slow to keep up: end with 410 so the client relists, as upstream.
                        let e = ApiError::expired(format!("too old resource version: {last_rv} ({last_rv})"));
                        let _ = tx.send(enc.line("ERROR", &e.to_status())).await;
                        return;
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        }
    });
    Ok(Reply::Stream {
        content_type,
        body: ApiBody::Stream(rx),
    })
}

fn rand_secs(max: u64) -> u64 {
    let mut b = [0u8; 8];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b);
    u64::from_le_bytes(b) % max.max(1)
}

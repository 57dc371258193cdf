//! List: label and field selectors, `limit`/`continue` chunking, Table output, and encoded JSON
//! lists cached per request while the store revision is unchanged.

use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use super::api::{Ctx, Reply};
use super::body::Format;
use super::resources::ResourceDef;
use super::rest::{output, selectors};
use super::status::ApiError;
use super::table;
use super::trace::StageStatus;

#[derive(serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

/// The list cache key: path plus the query in a stable order.
fn list_cache_key(ctx: &Ctx<'_>) -> String {
    let mut q: Vec<(&String, &String)> = ctx.info.query.iter().collect();
    q.sort();
    let q: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{}?{}", ctx.info.path, q.join("&"))
}

pub fn list(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = selectors(ctx, def)?;
    if ctx.format == Format::Json && def.group != "events.k8s.io" {
        // Nothing was written since this exact list was encoded: the same bytes are the answer.
        let rv = ctx.api.store.current_rv();
        if let Some(bytes) = ctx.api.list_cache.get(&list_cache_key(ctx), rv) {
            ctx.trace.stage(
                "storage",
                StageStatus::Ok,
                json!({"operation": "list", "cached": true, "resourceVersion": rv.to_string()}),
            );
            return Ok(Reply::Raw {
                code: 200,
                content_type: "application/json",
                body: bytes,
            });
        }
    }
    let prefix = def.prefix_for(&ctx.info.namespace);
    let limit: usize = ctx
        .info
        .query("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let start = match ctx.info.query("continue").filter(|c| !c.is_empty()) {
        Some(c) => {
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(c.trim_end_matches('='))
                .or_else(|_| base64::engine::general_purpose::STANDARD.decode(c))
                .map_err(|_| {
                    ApiError::bad_request("continue key is not valid: illegal base64 data")
                })?;
            let t: ContinueToken = serde_json::from_slice(&raw)
                .map_err(|e| ApiError::bad_request(format!("continue key is not valid: {e}")))?;
            if !t.start.starts_with(&prefix) {
                return Err(ApiError::bad_request(
                    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
                ));
            }
            t.start
        }
        None => String::new(),
    };
    // Scan in key order, filtering, until `limit` matches; the token names the next key.
    let mut items: Vec<Arc<Value>> = Vec::new();
    let mut next_key: Option<String> = None;
    let mut cursor = start;
    let mut rv;
    'scan: loop {
        let (batch, more, at) = ctx.api.store.list_keys_from(&prefix, &cursor, 512);
        rv = at;
        for (k, v) in &batch {
            if items.len() == limit {
                next_key = Some(k.clone());
                break 'scan;
            }
            if ls.matches(v) && fs.matches(def.kind, v) {
                items.push(v.clone());
            }
        }
        match batch.last() {
            Some((k, _)) if more => cursor = format!("{k}\u{0}"),
            _ => break,
        }
    }
    ctx.trace.stage("storage", StageStatus::Ok, json!({"operation": "list", "prefix": prefix, "count": items.len(), "resourceVersion": rv.to_string()}));
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(k) = next_key {
        let tok = ContinueToken {
            v: "meta.k8s.io/v1".into(),
            rv,
            start: k,
        };
        let raw = serde_json::to_vec(&tok).unwrap_or_default();
        meta["continue"] = json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw));
    }
    if let Format::Table { v1beta1 } = ctx.format {
        let include = ctx.info.query("includeObject").unwrap_or("Metadata");
        let refs: Vec<&Value> = items.iter().map(|v| v.as_ref()).collect();
        let mut t = table::table(def.kind, &refs, &rv.to_string(), include, v1beta1, true);
        t["metadata"] = meta;
        return Ok(Reply::Object {
            code: 200,
            value: t,
            table_kind: Some(def.kind),
        });
    }
    if ctx.format == Format::Json && def.group != "events.k8s.io" {
        // Encode straight from the stored objects: no copy of each item (lists are the hot path).
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ListBody<'a> {
            kind: String,
            api_version: String,
            metadata: Value,
            items: Vec<&'a Value>,
        }
        let body = ListBody {
            kind: def.list_kind(),
            api_version: def.api_version(),
            metadata: meta,
            items: items.iter().map(|v| v.as_ref()).collect(),
        };
        let mut bytes = serde_json::to_vec(&body).map_err(ApiError::internal)?;
        bytes.push(b'\n');
        let bytes = hyper::body::Bytes::from(bytes);
        ctx.api
            .list_cache
            .put(list_cache_key(ctx), rv, bytes.clone());
        return Ok(Reply::Raw {
            code: 200,
            content_type: "application/json",
            body: bytes,
        });
    }
    let items: Vec<Value> = items.iter().map(|v| output(def, v)).collect();
    let value = json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": meta, "items": items});
    Ok(Reply::Object {
        code: 200,
        value,
        table_kind: None,
    })
}

/// Encoded list responses keyed by path+query, each tagged with the store revision it shows.
#[derive(Default)]
pub struct ListCache {
    inner: std::sync::Mutex<std::collections::HashMap<String, (u64, hyper::body::Bytes)>>,
}

impl ListCache {
    pub fn get(&self, key: &str, rv: u64) -> Option<hyper::body::Bytes> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.get(key)
            .filter(|(at, _)| *at == rv)
            .map(|(_, b)| b.clone())
    }

    pub fn put(&self, key: String, rv: u64, bytes: hyper::body::Bytes) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.len() >= 256 {
            g.clear(); // bounded: a burst of distinct lists just starts over
        }
        g.insert(key, (rv, bytes));
    }
}

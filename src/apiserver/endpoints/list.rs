//! List: label and field selectors, `limit`/`continue` chunking, Table output, and encoded JSON
//! lists cached per request while the store revision is unchanged.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::codec::body::Format;
use crate::apiserver::endpoints::continue_token;
use crate::apiserver::endpoints::list_options::selectors;
use crate::apiserver::endpoints::list_options::{self, ReadAt};
use crate::apiserver::endpoints::reply::{output, table_list};
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::storage::interface::Item;
use crate::apiserver::storage::store::StoreError;

/// The list cache key: path plus the query in a stable order.
fn list_cache_key(ctx: &Ctx<'_>) -> String {
    let mut q: Vec<(&String, &String)> = ctx.info.query.iter().collect();
    q.sort();
    let q: Vec<String> = q.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{}?{}", ctx.info.path, q.join("&"))
}

pub fn list(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let (ls, fs) = selectors(ctx, def)?;
    list_options::confirm_current(ctx)?;
    if ctx.format == Format::Json && !conversion::converts(def) {
        // Nothing was written since this exact list was encoded: the same bytes are the answer.
        let rv = ctx.api.store.current_rv();
        if let Some(bytes) = ctx.api.list_cache.get(&list_cache_key(ctx), rv) {
            ctx.trace.stage(
                Stage::Storage,
                Status::Ok,
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
    let limit_param: Option<usize> = ctx
        .info
        .query("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0);
    let limit = limit_param.unwrap_or(usize::MAX);
    let plan = list_options::plan(
        &prefix,
        ctx.info.query("resourceVersion"),
        ctx.info.query("resourceVersionMatch"),
        limit_param,
        ctx.info.query("continue"),
        ctx.info.query("sendInitialEvents"),
    )?;
    let current = ctx.api.store.current_rv();
    let at = match plan.at {
        ReadAt::Latest => current,
        ReadAt::Exact(n) | ReadAt::NotOlderThan(n) if n > current => {
            return Err(list_options::too_large(n, current));
        }
        ReadAt::Exact(n) => n,
        ReadAt::NotOlderThan(_) => current,
    };
    // remainingItemCount is only known without selectors (upstream: etcd counts the keys).
    let selective = [
        ctx.info.query("labelSelector"),
        ctx.info.query("fieldSelector"),
    ]
    .iter()
    .any(|q| q.is_some_and(|q| !q.is_empty()));
    let count = !selective && limit_param.is_some();
    // Scan in key order at revision `at`, filtering, until `limit` matches; the token names
    // the next key, and every page of one list reads the first page's revision.
    let mut items: Vec<Item> = Vec::new();
    let mut next_key: Option<String> = None;
    let mut remaining: Option<usize> = None;
    let mut cursor = plan.start.clone();
    'scan: loop {
        // Counting, every item matches: one more than the page is read, so the store's page
        // ends at the next page's first key and can keep the count from there for it.
        let chunk = if count {
            limit.saturating_add(1).min(8192)
        } else {
            512
        };
        let page = match ctx.api.store.list_keys_at(
            &prefix,
            &cursor,
            at,
            chunk,
            count && remaining.is_none(),
        ) {
            Ok(p) => p,
            Err(StoreError::TooOld(..)) if plan.continuing => {
                return Err(list_options::continue_expired(&plan.start, &prefix));
            }
            Err(StoreError::TooOld(..)) => return Err(list_options::list_too_old()),
            Err(e) => return Err(ApiError::storage(&e)),
        };
        if remaining.is_none() {
            // Keys from the page's start on; those returned are subtracted below.
            remaining = page.remaining_from_start;
        }
        for (i, (_, v)) in page.items.iter().enumerate() {
            if items.len() == limit {
                // Upstream's token starts just after the last key read: this page's last
                // item, in this chunk or the one before.
                next_key = Some(match i.checked_sub(1) {
                    Some(j) => format!("{}\u{0}", page.items[j].0),
                    None => cursor.clone(),
                });
                break 'scan;
            }
            // Without selectors nothing needs the tree: a JSON list sends the stored bytes.
            if !selective || {
                let tree = v.value();
                ls.matches(&tree) && fs.matches(def.kind, &tree)
            } {
                items.push(v.clone());
            }
        }
        match page.items.last() {
            Some((k, _)) if page.more => cursor = format!("{k}\u{0}"),
            _ => break,
        }
    }
    let rv = at;
    ctx.trace.stage(Stage::Storage, Status::Ok, json!({"operation": "list", "prefix": prefix, "count": items.len(), "resourceVersion": rv.to_string()}));
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(k) = next_key {
        meta["continue"] = json!(continue_token::encode(rv as i64, &k, &prefix));
        if let Some(n) = remaining.filter(|_| count) {
            meta["remainingItemCount"] = json!(n.saturating_sub(items.len()));
        }
    }
    if matches!(ctx.format, Format::Table { .. }) {
        let trees: Vec<Arc<Value>> = items.iter().map(Item::value).collect();
        let refs: Vec<&Value> = trees.iter().map(|v| v.as_ref()).collect();
        if let Some(t) = table_list(ctx, def, &refs, meta.clone()) {
            return Ok(t);
        }
    }
    if ctx.format == Format::Json && !conversion::converts(def) {
        // The stored encodings, spliced: no tree is parsed or copied (lists are the hot path).
        let size: usize = items.iter().map(Item::encoded_len).sum();
        let mut bytes = Vec::with_capacity(size + items.len() + 256);
        let head =
            json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": meta});
        let head = serde_json::to_vec(&head).map_err(ApiError::internal)?;
        // `{"apiVersion":…,"kind":…,"metadata":{…}` then `,"items":[…]}`.
        bytes.extend_from_slice(&head[..head.len() - 1]);
        bytes.extend_from_slice(b",\"items\":[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            item.write_json(&mut bytes).map_err(ApiError::internal)?;
        }
        bytes.extend_from_slice(b"]}\n");
        let bytes = hyper::body::Bytes::from(bytes);
        // A continue token is one client's cursor through one list: its page is asked for
        // once, and kept it only held memory (every page of a 150,000-pod list: 104 MB).
        if !plan.continuing {
            ctx.api
                .list_cache
                .put(list_cache_key(ctx), rv, bytes.clone());
        }
        return Ok(Reply::Raw {
            code: 200,
            content_type: "application/json",
            body: bytes,
        });
    }
    let items: Vec<Value> = items.iter().map(|v| output(def, &v.value())).collect();
    let value = json!({"kind": def.list_kind(), "apiVersion": def.api_version(), "metadata": meta, "items": items});
    Ok(Reply::Object { code: 200, value })
}

//! What every handler answers with: an object as the client asked for it (Table or the served
//! group's form) and store errors as kube-apiserver's Status errors.

use serde_json::Value;

use crate::apiserver::codec::body::Format;
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::table;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::storage::store::StoreError;

/// Output conversion: the object in the form `def` serves (`registry/conversion.rs`).
pub fn output(def: &ResourceDef, v: &Value) -> Value {
    converted(def, v).unwrap_or_else(|| v.clone())
}

/// The object in the group it is served in, when that is not the form it is stored in.
fn converted(def: &ResourceDef, v: &Value) -> Option<Value> {
    conversion::to_served(def, v)
}

/// A list as the Table the client asked for (None when it asked for the list itself), with the
/// list's metadata (resourceVersion, continue).
pub(crate) fn table_list(
    ctx: &Ctx<'_>,
    def: &ResourceDef,
    items: &[&Value],
    meta: Value,
) -> Option<Reply> {
    let Format::Table { v1beta1 } = ctx.format else {
        return None;
    };
    let include = ctx.info.query("includeObject").unwrap_or("Metadata");
    let mut t = table::table(def, items, "", include, v1beta1, true);
    t["metadata"] = meta;
    Some(Reply::Object {
        code: 200,
        value: t,
    })
}

/// An object reply, as a Table when the client asked for one.
pub fn object_reply(
    ctx: &Ctx<'_>,
    def: &'static ResourceDef,
    code: u16,
    v: Value,
) -> Result<Reply, ApiError> {
    if let Format::Table { v1beta1 } = ctx.format {
        let rv = v
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let include = ctx.info.query("includeObject").unwrap_or("Metadata");
        let t = table::table(def, &[&v], &rv, include, v1beta1, true);
        return Ok(Reply::Object { code, value: t });
    }
    // Taken by value: the reply is the object itself, not a copy of it.
    Ok(Reply::Object {
        code,
        value: converted(def, &v).unwrap_or(v),
    })
}

/// A written object's reply: as JSON, the encoding the store keeps for watchers when it is of
/// this very revision (the object was encoded once, when it was stored); else `object_reply`.
pub(crate) fn written_reply(
    ctx: &Ctx<'_>,
    def: &'static ResourceDef,
    code: u16,
    key: &str,
    v: Value,
) -> Result<Reply, ApiError> {
    let rv = crate::apiserver::storage::store::object_rv(&v);
    if ctx.format == Format::Json
        && !conversion::converts(def)
        && let Some((at, json)) = ctx.api.store.encoded(key)
        && rv == Some(at)
    {
        let mut body = Vec::with_capacity(json.len() + 1);
        body.extend_from_slice(&json);
        body.push(b'\n');
        return Ok(Reply::Raw {
            code,
            content_type: Format::Json.content_type(),
            body: body.into(),
        });
    }
    object_reply(ctx, def, code, v)
}

pub(crate) fn store_err(def: &ResourceDef, name: &str, e: StoreError) -> ApiError {
    match e {
        StoreError::Exists => ApiError::already_exists(def.group, def.plural, name),
        StoreError::NotFound => ApiError::not_found(def.group, def.plural, name),
        StoreError::Conflict => ApiError::stale(def.group, def.plural, name),
        StoreError::TooOld(a, b) => {
            ApiError::expired(format!("too old resource version: {a} ({b})"))
        }
        StoreError::Rejected(m) => ApiError::conflict(def.group, def.plural, name, &m),
        e @ (StoreError::Unavailable(_) | StoreError::Timeout) => ApiError::storage(&e),
    }
}

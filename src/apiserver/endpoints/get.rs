//! Get: one object by key, as the client asked for it.

use serde_json::json;

use crate::apiserver::endpoints::list_options;
use crate::apiserver::endpoints::reply::object_reply;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{Stage, Status};

pub fn get(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Reply, ApiError> {
    let key = def.key_for(&ctx.info.namespace, &ctx.info.name);
    list_options::confirm_current(ctx)?;
    let v = ctx
        .api
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(def.group, def.plural, &ctx.info.name))?;
    ctx.trace.stage(
        Stage::Storage,
        Status::Ok,
        json!({"operation": "get", "key": key}),
    );
    object_reply(ctx, def, 200, (*v).clone())
}

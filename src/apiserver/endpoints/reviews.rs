//! SelfSubjectReview (`kubectl auth whoami`) and SelfSubjectAccessReview (`kubectl auth can-i`):
//! computed from the request's own identity, never stored. kubectl 1.32+ posts them as protobuf.

use serde_json::{Value, json};

use crate::apiserver::codec::decode;
use crate::apiserver::filters::authz::Attributes;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::util;

/// The review body as JSON, whether it came as JSON or in the protobuf envelope.
fn review_body(ctx: &mut Ctx<'_>, def: &'static ResourceDef) -> Result<Value, ApiError> {
    let parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    Ok(decode::decode_object(def, parsed, "Ignore")?.0)
}

pub fn self_subject_review(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
) -> Result<Reply, ApiError> {
    let _ = review_body(ctx, def)?;
    let u = ctx.user;
    let mut user_info = json!({"username": u.username, "groups": u.groups});
    if !u.uid.is_empty() {
        user_info["uid"] = json!(u.uid);
    }
    if !u.extra.is_empty() {
        user_info["extra"] = json!(u.extra);
    }
    let value = json!({
        "kind": "SelfSubjectReview",
        "apiVersion": def.api_version(),
        "metadata": {"creationTimestamp": util::now()},
        "status": {"userInfo": user_info},
    });
    ctx.trace.stage(
        Stage::Storage,
        Status::Skipped,
        json!({"note": "reviews are computed, not stored"}),
    );
    Ok(Reply::Object { code: 201, value })
}

pub fn self_subject_access_review(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
) -> Result<Reply, ApiError> {
    let review = review_body(ctx, def)?;
    let ra = review.pointer("/spec/resourceAttributes").cloned();
    let nra = review.pointer("/spec/nonResourceAttributes").cloned();
    let s = |v: &Option<Value>, k: &str| {
        v.as_ref()
            .and_then(|x| x.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let attrs = match (&ra, &nra) {
        (Some(_), None) => Attributes {
            verb: s(&ra, "verb"),
            resource_request: true,
            group: s(&ra, "group"),
            resource: s(&ra, "resource"),
            subresource: s(&ra, "subresource"),
            namespace: s(&ra, "namespace"),
            name: s(&ra, "name"),
            path: String::new(),
        },
        (None, Some(_)) => Attributes {
            verb: s(&nra, "verb"),
            resource_request: false,
            path: s(&nra, "path"),
            ..Default::default()
        },
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                "SelfSubjectAccessReview",
                "",
                vec![Cause::invalid(
                    "spec.nonResourceAttributes",
                    &json!(nra),
                    "cannot be specified in combination with resourceAttributes",
                )],
            ));
        }
        (None, None) => {
            return Err(ApiError::invalid(
                "authorization.k8s.io",
                "SelfSubjectAccessReview",
                "",
                vec![Cause::invalid(
                    "spec.resourceAttributes",
                    &Value::Null,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )],
            ));
        }
    };
    let d = ctx
        .api
        .authorizer
        .authorize(&*ctx.api.store, ctx.user, &attrs);
    let mut status = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        status["reason"] = json!(d.reason);
    }
    let mut spec = review.get("spec").cloned().unwrap_or(json!({}));
    if let Some(m) = spec.as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    let value = json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": def.api_version(),
        "metadata": {"creationTimestamp": null},
        "spec": spec,
        "status": status,
    });
    ctx.trace.stage(
        Stage::Storage,
        Status::Skipped,
        json!({"note": "reviews are computed, not stored", "allowed": d.allowed}),
    );
    Ok(Reply::Object { code: 201, value })
}

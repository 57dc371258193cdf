//! SelfSubjectReview (`kubectl auth whoami`), SelfSubjectAccessReview (`kubectl auth can-i`) and
//! SelfSubjectRulesReview (`kubectl auth can-i --list`): computed from the request's own
//! identity, never stored. kubectl 1.32+ posts them as protobuf.

use k8s_openapi::api::rbac::v1::PolicyRule;
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

/// What the requester may do in `spec.namespace`: the rules of every role bound to them there
/// and cluster-wide, resource rules and non-resource rules apart, as upstream's
/// `selfsubjectrulesreview` REST answers from its authorizers' `RulesFor`.
pub fn self_subject_rules_review(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
) -> Result<Reply, ApiError> {
    let review = review_body(ctx, def)?;
    let namespace = review
        .pointer("/spec/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, errors) = ctx
        .api
        .authorizer
        .rules_for(&*ctx.api.store, ctx.user, &namespace);
    // Upstream's ResourceRule and NonResourceRule: verbs always, the lists when not empty.
    let rule = |r: &PolicyRule, fields: &[(&str, &Option<Vec<String>>)]| {
        let mut m = serde_json::Map::new();
        m.insert("verbs".into(), json!(r.verbs));
        for (k, v) in fields {
            if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
                m.insert((*k).into(), json!(v));
            }
        }
        Value::Object(m)
    };
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for r in &rules {
        if r.non_resource_urls.as_ref().is_some_and(|u| !u.is_empty()) {
            non_resource_rules.push(rule(r, &[("nonResourceURLs", &r.non_resource_urls)]));
        } else {
            resource_rules.push(rule(
                r,
                &[
                    ("apiGroups", &r.api_groups),
                    ("resources", &r.resources),
                    ("resourceNames", &r.resource_names),
                ],
            ));
        }
    }
    let mut status = json!({"resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules, "incomplete": false});
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    let value = json!({
        "kind": "SelfSubjectRulesReview",
        "apiVersion": def.api_version(),
        "metadata": {"creationTimestamp": null},
        "spec": {"namespace": namespace},
        "status": status,
    });
    ctx.trace.stage(
        Stage::Storage,
        Status::Skipped,
        json!({"note": "reviews are computed, not stored", "rules": rules.len()}),
    );
    Ok(Reply::Object { code: 201, value })
}

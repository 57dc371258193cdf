//! SelfSubjectReview (`kubectl auth whoami`), SelfSubjectAccessReview (`kubectl auth can-i`) and
//! SelfSubjectRulesReview (`kubectl auth can-i --list`), computed from the request's own
//! identity; SubjectAccessReview and LocalSubjectAccessReview (what a webhook authorizer or
//! an aggregated server asks about someone else), from the subject their spec names. Never
//! stored. kubectl 1.32+ posts the self reviews as protobuf.

use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{Value, json};

use crate::apiserver::codec::decode;
use crate::apiserver::filters::authz::Attributes;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::request::user::UserInfo;
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

/// Whose access an access review asks about.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// SelfSubjectAccessReview: the requester's (`kubectl auth can-i`).
    Requester,
    /// SubjectAccessReview: the user and groups its spec names, cluster-wide.
    Named,
    /// LocalSubjectAccessReview: the same, about the request's namespace only.
    NamedInNamespace,
}

/// An access review: the request's attributes checked against the authorizer for its subject,
/// after upstream's validation of the three kinds (`pkg/apis/authorization/validation`).
/// Computed, never stored.
pub(crate) fn access_review(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    subject: Subject,
) -> Result<Reply, ApiError> {
    let review = review_body(ctx, def)?;
    let spec = review.get("spec").cloned().unwrap_or(json!({}));
    let field = |v: Option<&Value>, k: &str| {
        v.and_then(|x| x.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let ra = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let nra = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut causes = Vec::new();
    match (ra, nra) {
        (Some(_), Some(n)) => causes.push(Cause::invalid(
            "spec.nonResourceAttributes",
            n,
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => causes.push(Cause::invalid(
            "spec.resourceAttributes",
            &Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    let user = UserInfo {
        username: field(Some(&spec), "user"),
        uid: field(Some(&spec), "uid"),
        groups: util::strings(spec.get("groups")),
        extra: spec
            .get("extra")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), util::strings(Some(v))))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let namespace = ctx.info.namespace.clone();
    let sent = field(review.get("metadata"), "namespace");
    if subject == Subject::NamedInNamespace && !sent.is_empty() && sent != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if subject != Subject::Requester && user.username.is_empty() && user.groups.is_empty() {
        causes.push(Cause::invalid(
            "spec.user",
            &json!(""),
            "at least one of user or group must be specified",
        ));
    }
    if subject == Subject::NamedInNamespace {
        let asked = field(ra, "namespace");
        if ra.is_some() && asked != namespace {
            causes.push(Cause::invalid(
                "spec.resourceAttributes.namespace",
                &json!(asked),
                "must match metadata.namespace",
            ));
        }
        if let Some(n) = nra {
            causes.push(Cause::invalid(
                "spec.nonResourceAttributes",
                n,
                "disallowed on this kind of request",
            ));
        }
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(def.group, def.kind, "", causes));
    }
    let attrs = match ra {
        Some(_) => Attributes {
            verb: field(ra, "verb"),
            resource_request: true,
            group: field(ra, "group"),
            resource: field(ra, "resource"),
            subresource: field(ra, "subresource"),
            namespace: field(ra, "namespace"),
            name: field(ra, "name"),
            path: String::new(),
        },
        None => Attributes {
            verb: field(nra, "verb"),
            resource_request: false,
            path: field(nra, "path"),
            ..Default::default()
        },
    };
    let who = match subject {
        Subject::Requester => ctx.user,
        Subject::Named | Subject::NamedInNamespace => &user,
    };
    let d = ctx.api.authorizer.authorize(&*ctx.api.store, who, &attrs);
    let mut status = json!({"allowed": d.allowed});
    if !d.reason.is_empty() {
        status["reason"] = json!(d.reason);
    }
    let mut spec = spec;
    if let Some(m) = spec.as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    let mut metadata = json!({"creationTimestamp": null});
    if subject == Subject::NamedInNamespace {
        metadata["namespace"] = json!(namespace);
    }
    let value = json!({
        "kind": def.kind,
        "apiVersion": def.api_version(),
        "metadata": metadata,
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

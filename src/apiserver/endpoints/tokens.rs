//! TokenRequest (`POST …/serviceaccounts/<name>/token`, upstream
//! `pkg/registry/core/serviceaccount/storage/token.go`) and TokenReview (`POST
//! /apis/authentication.k8s.io/v1/tokenreviews`, `pkg/registry/authentication/tokenreview`):
//! a token signed for a service account, and the answer to "who is this token?". Neither is
//! stored; the token itself never goes into a trace.

use serde_json::{Value, json};

use crate::apiserver::codec::decode;
use crate::apiserver::filters::sa_token::Bound;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{Stage, Status};
use crate::apiserver::util;

/// `authentication/v1` `SetDefaults_TokenRequestSpec`.
const DEFAULT_EXPIRATION: i64 = 3600;
/// `ValidateTokenRequest`: at least 10 minutes, at most 2^32 seconds.
const MIN_EXPIRATION: i64 = 10 * 60;
const MAX_EXPIRATION: i64 = 1 << 32;

/// The TokenRequest body's type: decoded through its strategy, never served as a resource.
static TOKEN_REQUEST: ResourceDef = ResourceDef {
    group: "authentication.k8s.io",
    version: "v1",
    plural: "tokenrequests",
    singular: "tokenrequest",
    kind: "TokenRequest",
    namespaced: true,
    short_names: &[],
    verbs: &["create"],
    key: "",
    subresources: &[],
    categories: &[],
};

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn body(ctx: &Ctx<'_>, def: &'static ResourceDef) -> Result<Value, ApiError> {
    let mut parsed = decode::parse_body(def, &ctx.content_type, &ctx.body)?;
    // The status is the server's to fill: a client's (kubectl 1.32+ sends an empty one in
    // protobuf, which lacks the fields the typed status requires) is dropped unread.
    if let Some(m) = parsed.as_object_mut() {
        m.remove("status");
    }
    Ok(decode::decode_object(def, parsed, "Ignore")?.0)
}

/// `kubectl create token <sa> [--duration] [--audience] [--bound-object-kind/-name]`.
pub(crate) fn token_request(ctx: &mut Ctx<'_>) -> Result<Reply, ApiError> {
    let def = &TOKEN_REQUEST;
    let mut req = body(ctx, def)?;
    let ns = ctx.info.namespace.clone();
    let name = ctx.info.name.clone();
    let expiration = match req.pointer("/spec/expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION,
        Some(v) => v.as_i64().unwrap_or(0),
    };
    let mut causes = Vec::new();
    if expiration < MIN_EXPIRATION {
        causes.push(Cause::invalid(
            "spec.expirationSeconds",
            &json!(expiration),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if expiration > MAX_EXPIRATION {
        causes.push(Cause::invalid(
            "spec.expirationSeconds",
            &json!(expiration),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(def.group, def.kind, "", causes));
    }
    let store = &*ctx.api.store;
    let sa = store
        .get(&format!("/registry/serviceaccounts/{ns}/{name}"))
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", &name))?;
    let bound_ref = req
        .pointer("/spec/boundObjectRef")
        .filter(|r| r.is_object())
        .cloned();
    let (mut pod, mut secret, mut node) = (None, None, None);
    if let Some(r) = &bound_ref {
        let (api_version, kind, obj_name) = (s(r, "/apiVersion"), s(r, "/kind"), s(r, "/name"));
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let version = api_version.rsplit('/').next().unwrap_or_default();
        let got = match (group, kind) {
            ("", "Pod") => {
                let p = store
                    .get(&format!("/registry/pods/{ns}/{obj_name}"))
                    .ok_or_else(|| ApiError::not_found("", "pods", obj_name))?;
                let pod_sa = s(&p, "/spec/serviceAccountName");
                if pod_sa != name {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount {name:?} to pod running with serviceaccount {pod_sa:?}"
                    )));
                }
                let node_name = s(&p, "/spec/nodeName");
                if !node_name.is_empty() {
                    node = store.get(&format!("/registry/minions/{node_name}"));
                }
                pod = Some(p);
                pod.clone()
            }
            ("", "Secret") => {
                secret = Some(
                    store
                        .get(&format!("/registry/secrets/{ns}/{obj_name}"))
                        .ok_or_else(|| ApiError::not_found("", "secrets", obj_name))?,
                );
                secret.clone()
            }
            ("", "Node") => {
                node = Some(
                    store
                        .get(&format!("/registry/minions/{obj_name}"))
                        .ok_or_else(|| ApiError::not_found("", "nodes", obj_name))?,
                );
                node.clone()
            }
            _ => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {group}/{version}, Kind={kind}"
                )));
            }
        };
        let uid = got
            .as_deref()
            .map(|o| s(o, "/metadata/uid"))
            .unwrap_or_default();
        let want = s(r, "/uid");
        if !want.is_empty() && want != uid {
            return Err(ApiError::conflict(
                group,
                kind,
                obj_name,
                &format!(
                    "the UID in the bound object reference ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                ),
            ));
        }
    }
    let Some(issuer) = ctx.api.service_accounts.as_ref() else {
        return Err(ApiError::internal(
            "failed to generate token: no service-account signing key",
        ));
    };
    let mut audiences = util::strings(req.pointer("/spec/audiences"));
    if audiences.is_empty() {
        audiences = issuer.audiences().to_vec();
    }
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let bound = Bound {
        pod: pod.as_deref(),
        secret: secret.as_deref(),
        node: node.as_deref(),
    };
    let (token, exp) = issuer
        .issue(&sa, &bound, expiration, &audiences, now)
        .map_err(ApiError::internal)?;
    let expires = time::OffsetDateTime::from_unix_timestamp(exp)
        .map(util::rfc3339)
        .unwrap_or_default();
    ctx.trace.stage(
        Stage::Storage,
        Status::Skipped,
        json!({"note": "a TokenRequest is signed, not stored (token not shown)",
               "serviceAccount": format!("{ns}/{name}"), "audiences": audiences,
               "expirationTimestamp": expires}),
    );
    req["metadata"] = json!({"name": name, "namespace": ns, "creationTimestamp": null});
    req["spec"]["audiences"] = json!(audiences);
    req["spec"]["expirationSeconds"] = json!(expiration);
    req["spec"]["boundObjectRef"] = bound_ref.unwrap_or(Value::Null);
    req["status"] = json!({"token": token, "expirationTimestamp": expires});
    Ok(Reply::Object {
        code: 201,
        value: req,
    })
}

/// `POST /apis/authentication.k8s.io/v1/tokenreviews`: the token authenticators' verdict on
/// `spec.token` for `spec.audiences` (the API audiences when empty).
pub(crate) fn token_review(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
) -> Result<Reply, ApiError> {
    let review = body(ctx, def)?;
    let token = s(&review, "/spec/token").to_string();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let api_auds = ctx
        .api
        .service_accounts
        .as_ref()
        .map(|sa| sa.audiences().to_vec())
        .unwrap_or_default();
    let asked = util::strings(review.pointer("/spec/audiences"));
    let wanted = if asked.is_empty() {
        api_auds.clone()
    } else {
        asked.clone()
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut status = json!({"authenticated": false, "user": {}});
    let verdict = match ctx.api.tokens.user(&token) {
        // A static token knows no audiences: it stands for the API audiences only.
        Some(user) => {
            let auds: Vec<String> = wanted
                .iter()
                .filter(|a| api_auds.contains(a))
                .cloned()
                .collect();
            (!auds.is_empty()).then_some(Ok((user, auds)))
        }
        None => ctx.api.service_accounts.as_ref().and_then(|sa| {
            sa.authenticate(&*ctx.api.store, &token, &wanted, now)
                .map(|r| r.map(|a| (a.user, a.audiences)))
        }),
    };
    match verdict {
        Some(Ok((mut user, auds))) => {
            if !user.in_group("system:authenticated") {
                user.groups.push("system:authenticated".into());
            }
            status["authenticated"] = json!(true);
            status["user"] = serde_json::to_value(&user).unwrap_or(json!({}));
            if !asked.is_empty() || !auds.is_empty() {
                status["audiences"] = json!(auds);
            }
        }
        Some(Err(e)) => status["error"] = json!(e),
        None => {}
    }
    ctx.trace.stage(
        Stage::Storage,
        Status::Skipped,
        json!({"note": "reviews are computed, not stored (token not shown)",
               "authenticated": status["authenticated"]}),
    );
    let mut spec = json!({"token": token});
    if !asked.is_empty() {
        spec["audiences"] = json!(asked);
    }
    let value = json!({
        "kind": "TokenReview",
        "apiVersion": def.api_version(),
        "metadata": {"creationTimestamp": null},
        "spec": spec,
        "status": status,
    });
    Ok(Reply::Object { code: 201, value })
}

//! Routing: non-resource paths (discovery, OpenAPI, health, the trace endpoint) and resource
//! requests by verb, with 404/405 answered as kube-apiserver answers them.

use hyper::Method;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::apiserver::endpoints::apply;
use crate::apiserver::endpoints::create;
use crate::apiserver::endpoints::delete;
use crate::apiserver::endpoints::dry_run;
use crate::apiserver::endpoints::eviction;
use crate::apiserver::endpoints::get;
use crate::apiserver::endpoints::health;
use crate::apiserver::endpoints::list;
use crate::apiserver::endpoints::metrics;
use crate::apiserver::endpoints::pod_streams;
use crate::apiserver::endpoints::pods;
use crate::apiserver::endpoints::reviews::{self, Subject};
use crate::apiserver::endpoints::scale;
use crate::apiserver::endpoints::tokens;
use crate::apiserver::endpoints::update;
use crate::apiserver::endpoints::watch;
use crate::apiserver::filters::authz::{self, Attributes};
use crate::apiserver::registry::core::componentstatus;
use crate::apiserver::registry::discovery;
use crate::apiserver::registry::openapi;
use crate::apiserver::registry::resources::{self, ResourceDef};
use crate::apiserver::request::context::{Ctx, Reply};
use crate::apiserver::request::status::ApiError;

fn json_reply(value: Value) -> Result<Reply, ApiError> {
    Ok(Reply::Object { code: 200, value })
}

pub async fn route(ctx: &mut Ctx<'_>, method: &Method) -> Result<Reply, ApiError> {
    if !ctx.info.is_resource_request {
        return non_resource(ctx, method);
    }
    let info = ctx.info;
    let Some(def) = resources::lookup(&info.api_group, &info.api_version, &info.resource) else {
        return Err(ApiError::no_route());
    };
    if !info.namespace.is_empty() && !def.namespaced && def.plural != "namespaces" {
        return Err(ApiError::no_route());
    }
    if let Some(w) = def.deprecation() {
        ctx.warnings.push(w.to_string());
    }
    if !info.subresource.is_empty() {
        return subresource(ctx, def, method).await;
    }
    let verb = info.verb.as_str();
    // Item verbs need a name, collection verbs must not have one (PUT on a collection → 405).
    let named = !info.name.is_empty();
    let wrong_shape = match verb {
        "update" | "patch" | "delete" | "get" => !named,
        "create" => named && def.plural != "namespaces",
        _ => false,
    };
    if verb == "watch" && def.verbs.contains(&"list") && !def.verbs.contains(&"watch") {
        // A list that cannot be watched: upstream's list handler refuses `?watch` by name.
        return Err(ApiError::watch_not_supported(def.plural));
    }
    if wrong_shape || !def.verbs.contains(&verb) {
        return Err(ApiError::method_not_allowed());
    }
    ctx.write = dry_run::gate(ctx)?;
    match (def.group, def.plural, verb) {
        ("authentication.k8s.io", "selfsubjectreviews", "create") => {
            return reviews::self_subject_review(ctx, def);
        }
        ("authorization.k8s.io", "selfsubjectaccessreviews", "create") => {
            return reviews::access_review(ctx, def, Subject::Requester);
        }
        ("authorization.k8s.io", "subjectaccessreviews", "create") => {
            return reviews::access_review(ctx, def, Subject::Named);
        }
        ("authorization.k8s.io", "localsubjectaccessreviews", "create") => {
            return reviews::access_review(ctx, def, Subject::NamedInNamespace);
        }
        ("authorization.k8s.io", "selfsubjectrulesreviews", "create") => {
            return reviews::self_subject_rules_review(ctx, def);
        }
        ("", "bindings", "create") => return pods::binding(ctx, None),
        ("authentication.k8s.io", "tokenreviews", "create") => {
            return tokens::token_review(ctx, def);
        }
        ("", "componentstatuses", "get") => return componentstatus::get(ctx, def),
        ("", "componentstatuses", "list") => return componentstatus::list(ctx, def),
        _ => {}
    }
    match verb {
        "get" => get::get(ctx, def),
        "list" => list::list(ctx, def),
        "watch" => watch::start(ctx, def),
        "create" => create::create(ctx, def).await,
        "update" => update::update(ctx, def, ""),
        "patch" => patch(ctx, def, ""),
        "delete" => delete::delete(ctx, def),
        "deletecollection" => delete::delete_collection(ctx, def),
        _ => Err(ApiError::method_not_allowed()),
    }
}

async fn subresource(
    ctx: &mut Ctx<'_>,
    def: &'static ResourceDef,
    method: &Method,
) -> Result<Reply, ApiError> {
    let sub = ctx.info.subresource.clone();
    if !def.subresources.contains(&sub.as_str()) {
        return Err(ApiError::no_route());
    }
    let write = match (sub.as_str(), method.as_str()) {
        ("status" | "ephemeralcontainers", "GET") => return get::get(ctx, def),
        ("scale", "GET") => return scale::get(ctx, def),
        ("log", "GET") => return pod_streams::log(ctx),
        ("exec" | "attach" | "portforward", "GET" | "POST") => {
            return pod_streams::no_process(ctx, &sub);
        }
        ("eviction", "POST") => {
            ctx.write = dry_run::gate(ctx)?;
            return eviction::evict(ctx);
        }
        ("binding" | "token", "POST")
        | ("status" | "scale" | "approval" | "ephemeralcontainers", "PUT" | "PATCH")
        | ("finalize", "PUT") => dry_run::gate(ctx)?,
        _ => return Err(ApiError::method_not_allowed()),
    };
    ctx.write = write;
    match sub.as_str() {
        "binding" => pods::binding(ctx, Some(ctx.info.name.clone())),
        "token" => tokens::token_request(ctx),
        "scale" => scale::update(ctx, def, method == Method::PATCH),
        "approval" | "ephemeralcontainers" | "finalize" if method == Method::PUT => {
            update::update(ctx, def, &sub)
        }
        "approval" | "ephemeralcontainers" => patch(ctx, def, &sub),
        _ if method == Method::PUT => update::update(ctx, def, "status"),
        _ => patch(ctx, def, "status"),
    }
}

/// A PATCH: server-side apply by its content type, else the JSON, merge or strategic patch.
fn patch(ctx: &mut Ctx<'_>, def: &'static ResourceDef, sub: &str) -> Result<Reply, ApiError> {
    if apply::is_apply(&ctx.content_type) {
        return apply::apply(ctx, def, sub);
    }
    update::patch(ctx, def, sub)
}

fn non_resource(ctx: &mut Ctx<'_>, method: &Method) -> Result<Reply, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(if ctx.info.path.starts_with("/api") {
            ApiError::method_not_allowed()
        } else {
            ApiError::no_route()
        });
    }
    let path = ctx.info.path.trim_end_matches('/').to_string();
    let accept = ctx.accept.clone();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(reply) = health::serve(ctx.api.store.as_ref(), ctx.info, &parts) {
        return reply;
    }
    match parts.as_slice() {
        ["version"] => json_reply(discovery::version()),
        ["metrics"] => metrics::serve(ctx.api),
        ["api"] => match discovery::wants_aggregated(accept.as_deref()) {
            Some(v) => aggregated(discovery::aggregated(true, v), v),
            None => {
                let addr = ctx
                    .api
                    .server_address
                    .lock()
                    .map(|a| a.clone())
                    .unwrap_or_default();
                json_reply(discovery::api_versions(&addr))
            }
        },
        ["apis"] => match discovery::wants_aggregated(accept.as_deref()) {
            Some(v) => aggregated(discovery::aggregated(false, v), v),
            None => json_reply(discovery::api_group_list()),
        },
        ["api", v] => discovery::api_resource_list("", v)
            .map_or_else(|| Err(ApiError::no_route()), json_reply),
        ["apis", g] => {
            discovery::api_group(g).map_or_else(|| Err(ApiError::no_route()), json_reply)
        }
        ["apis", g, v] => {
            discovery::api_resource_list(g, v).map_or_else(|| Err(ApiError::no_route()), json_reply)
        }
        ["openapi", "v3"] => json_reply(openapi::index()),
        ["openapi", "v3", "api", v] => {
            openapi::document("", v).map_or_else(|| Err(ApiError::no_route()), json_reply)
        }
        ["openapi", "v3", "apis", g, v] => {
            openapi::document(g, v).map_or_else(|| Err(ApiError::no_route()), json_reply)
        }
        ["openapi", "v2"] => crate::apiserver::registry::openapi_v2::serve(accept.as_deref()),
        // A request's trace is shown to the user who made it (and to system:masters).
        ["debug", "kexplore", "requests", id] => match ctx.api.traces.request(id) {
            Some(t)
                if t.user.as_deref() == Some(ctx.user.username.as_str())
                    || ctx.user.in_group("system:masters") =>
            {
                json_reply(serde_json::to_value(&*t).unwrap_or(Value::Null))
            }
            _ => Err(ApiError::not_found("", "requests", id)),
        },
        // A pod's trace is shown to whoever may get the pod itself.
        ["debug", "kexplore", "pods", ns, name] => {
            let attrs = Attributes {
                verb: "get".into(),
                resource_request: true,
                resource: "pods".into(),
                namespace: ns.to_string(),
                name: name.to_string(),
                ..Default::default()
            };
            let d = ctx
                .api
                .authorizer
                .authorize(&*ctx.api.store, ctx.user, &attrs);
            if !d.allowed {
                let text = authz::forbidden_text(&ctx.user.username, &attrs);
                return Err(ApiError::forbidden("", "pods", name, &text, &d.reason));
            }
            let key = format!("{ns}/{name}");
            let pod = ctx.api.traces.pod(&key);
            let create = pod
                .as_ref()
                .and_then(|p| p.create_audit_id.as_deref())
                .and_then(|id| ctx.api.traces.request(id));
            match pod {
                Some(p) => {
                    json_reply(json!({"pod": key, "create": create.as_deref(), "controlLoops": p}))
                }
                None => Err(ApiError::not_found("", "pods", name)),
            }
        }
        _ => Err(ApiError::no_route()),
    }
}

fn aggregated(v: Value, version: &str) -> Result<Reply, ApiError> {
    let content_type = if version == "v2" {
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    } else {
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    };
    let mut body = serde_json::to_vec(&v).unwrap_or_default();
    body.push(b'\n');
    Ok(Reply::Raw {
        code: 200,
        content_type,
        body: Bytes::from(body),
    })
}

//! The request pipeline, outermost first (upstream `DefaultBuildHandlerChain`): Audit-ID →
//! RequestInfo → authentication → authorization → handler (body limit, decode, admission,
//! validation, storage) → response encoding. Every stage lands in the request's trace.
//! `handle` takes any body type, so router tests run without sockets.

use std::sync::Arc;

use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::apiserver::codec::body::{ApiBody, Format, negotiate};
use crate::apiserver::endpoints::router;
use crate::apiserver::filters::authn;
use crate::apiserver::filters::authz::{self, attributes};
use crate::apiserver::filters::impersonation;
use crate::apiserver::filters::inflight::TOO_MANY;
use crate::apiserver::registry::resources;
use crate::apiserver::request::context::{Api, Ctx, Reply};
use crate::apiserver::request::info::{self as request_info, RequestInfo};
use crate::apiserver::request::metrics::{self, Labels};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::store::Write;
use crate::apiserver::transport::body_read::{Incoming, announced_len, discard, read_body};
use crate::apiserver::transport::tls::ConnInfo;
use crate::apiserver::transport::yaml_depth;
use crate::apiserver::util;

fn header(req_headers: &hyper::HeaderMap, name: hyper::header::HeaderName) -> Option<String> {
    req_headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

fn error_response(e: &ApiError, audit_id: &str) -> Response<ApiBody> {
    let mut r = Response::new(ApiBody::full(e.status_bytes()));
    *r.status_mut() = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if e.code == 403 {
        r.headers_mut().insert(
            "x-content-type-options",
            HeaderValue::from_static("nosniff"),
        );
    }
    set_common(&mut r, audit_id);
    r
}

fn set_common(r: &mut Response<ApiBody>, audit_id: &str) {
    if let Ok(v) = HeaderValue::from_str(audit_id) {
        r.headers_mut().insert("audit-id", v);
    }
    r.headers_mut().insert(
        "cache-control",
        HeaderValue::from_static("no-cache, private"),
    );
}

/// Handle one request end to end. Never panics on peer input: every failure is a Status.
pub async fn handle<B>(api: &Arc<Api>, conn: &ConnInfo, req: Request<B>) -> Response<ApiBody>
where
    B: hyper::body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let received = util::now_micro();
    let (parts, body) = req.into_parts();
    // Like kube-apiserver, keep a client-chosen Audit-ID (so a client can find its request's
    // trace afterwards) when it is a plain token; otherwise mint one.
    let audit_id = header(
        &parts.headers,
        hyper::header::HeaderName::from_static("audit-id"),
    )
    .filter(|v| {
        !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
    .unwrap_or_else(util::uuid);
    // Path and query only: over HTTP/2 the URI also carries scheme and authority.
    let uri = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| parts.uri.path().to_string());
    let mut trace = RequestTrace::new(
        audit_id.clone(),
        received.clone(),
        parts.method.as_str(),
        &uri,
    );
    let info = request_info::parse(&parts.method, parts.uri.path(), parts.uri.query());
    trace.verb = info.verb.clone();
    trace.resource = info.resource_with_sub();
    trace.stage(
        Stage::RequestInfo,
        Status::Ok,
        json!({"verb": info.verb, "apiGroup": info.api_group, "apiVersion": info.api_version, "resource": info.resource,
               "subresource": info.subresource, "namespace": info.namespace, "name": info.name,
               "tls": {"version": conn.tls_version, "cipher": conn.cipher_suite, "alpn": conn.alpn}}),
    );
    let user_agent = header(&parts.headers, hyper::header::USER_AGENT).unwrap_or_default();
    let served = resources::lookup(&info.api_group, &info.api_version, &info.resource).is_some();
    let content_type = header(&parts.headers, CONTENT_TYPE).unwrap_or_default();
    let end = Ending {
        api,
        info: &info,
        user_agent: &user_agent,
        conn,
        received: &received,
        metrics: None,
        started: std::time::Instant::now(),
    };
    // Counted as upstream's routes count: once authorized (and when max-in-flight drops it).
    let labels = metrics::labels(&info, parts.method.as_str(), &content_type, served);
    let incoming = Incoming {
        announced: announced_len(&parts.headers),
        http2: parts.version == hyper::Version::HTTP_2,
        limit: api.max_request_body_bytes,
    };

    // Authentication.
    let authz_header = header(&parts.headers, hyper::header::AUTHORIZATION);
    let outcome = authn::authenticate_with(
        conn,
        authz_header.as_deref(),
        &api.tokens,
        api.service_accounts.as_ref().map(|sa| (sa, &*api.store)),
        &info.path,
    );
    let Some(user) = outcome.user else {
        trace.stage(Stage::Authentication, Status::Failed, outcome.detail);
        discard(body, incoming).await;
        let e = ApiError::unauthorized();
        return finish(&end, trace, None, Err(e)).await;
    };
    trace.user = Some(user.username.clone());
    trace.stage(Stage::Authentication, Status::Ok, outcome.detail);

    // Impersonation (`kubectl --as`): the identity asked for replaces the authenticated one
    // once the actor may impersonate every part of it.
    let user = match impersonation::requested(&parts.headers) {
        Ok(None) => user,
        Ok(Some(asked)) => {
            match impersonation::impersonate(&api.authorizer, &*api.store, &user, &asked) {
                Ok((as_user, detail)) => {
                    trace.stage(Stage::Impersonation, Status::Ok, detail);
                    trace.user = Some(as_user.username.clone());
                    trace.impersonated_by = Some(user);
                    as_user
                }
                Err(e) => {
                    trace.stage(
                        Stage::Impersonation,
                        Status::Failed,
                        json!({"actingAs": user.username, "error": e.message}),
                    );
                    discard(body, incoming).await;
                    return finish(&end, trace, Some(&user), Err(e)).await;
                }
            }
        }
        Err(e) => {
            discard(body, incoming).await;
            return finish(&end, trace, Some(&user), Err(e)).await;
        }
    };

    trace.requester = Some(user.clone());

    // Long-running requests hold a stream, not a slot: watches, and a followed container log
    // (kube-apiserver's LongRunningRequestCheck names the `log` subresource too).
    let streaming =
        info.verb == "watch" || (info.subresource == "log" && info.query("follow") == Some("true"));
    // Max-in-flight limiter: streams and system:masters are exempt.
    let _slot = if streaming || user.in_group("system:masters") {
        None
    } else {
        match api.limiter.acquire(&info.verb) {
            Some(slot) => Some(slot),
            None => {
                trace.stage(
                    Stage::PriorityAndFairness,
                    Status::Failed,
                    json!({"limiter": "max-in-flight", "inFlight": api.limiter.in_flight()}),
                );
                discard(body, incoming).await;
                let end = Ending {
                    metrics: labels,
                    ..end
                };
                return too_many(&end, trace, &user);
            }
        }
    };

    // Authorization.
    let attrs = attributes(&info);
    let decision = api.authorizer.authorize(&*api.store, &user, &attrs);
    let detail = authz::trace_detail(&attrs, &decision);
    if !decision.allowed {
        trace.stage(Stage::Authorization, Status::Failed, detail);
        discard(body, incoming).await;
        let text = authz::forbidden_text(&user.username, &attrs);
        let e = if info.is_resource_request {
            ApiError::forbidden(
                &info.api_group,
                &info.resource,
                &info.name,
                &text,
                &decision.reason,
            )
        } else {
            ApiError::forbidden("", "", "", &text, &decision.reason)
        };
        return finish(&end, trace, Some(&user), Err(e)).await;
    }
    trace.stage(Stage::Authorization, Status::Ok, detail);
    let end = Ending {
        metrics: labels,
        ..end
    };

    // Streams are capped by count: each holds a task and its queue for as long as it lasts.
    let watch_slot = if streaming {
        match api.limiter.acquire_watch() {
            Some(slot) => Some(slot),
            None => {
                trace.stage(
                    Stage::WatchLimit,
                    Status::Failed,
                    json!({"maxWatches": api.limiter.max_watches, "watches": api.limiter.watches()}),
                );
                discard(body, incoming).await;
                let e = too_many_watches(api.limiter.max_watches);
                let mut r = finish(&end, trace, Some(&user), Err(e)).await;
                r.headers_mut()
                    .insert("retry-after", HeaderValue::from_static("1"));
                return r;
            }
        }
    } else {
        None
    };

    // Body, bounded like MaxRequestBodyBytes; an announced length over it is refused unread.
    let read = read_body(body, incoming)
        .await
        .and_then(|b| refuse_deep_yaml(&parts.headers, b));
    let bytes = match read {
        Ok(b) => b,
        Err(err) => {
            return finish(&end, trace, Some(&user), Err(err)).await;
        }
    };
    let accept = header(&parts.headers, hyper::header::ACCEPT);
    let table_ok =
        info.is_resource_request && matches!(info.verb.as_str(), "get" | "list" | "watch");
    // Non-resource paths (discovery, OpenAPI) pick their own media types.
    let negotiated = negotiate(accept.as_deref(), table_ok)
        .or((!info.is_resource_request).then_some(Format::Json));
    let Some(format) = negotiated else {
        let e = ApiError::not_acceptable(&[
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
        ]);
        return finish(&end, trace, Some(&user), Err(e)).await;
    };
    let mut ctx = Ctx {
        api,
        info: &info,
        user: &user,
        body: bytes,
        content_type: header(&parts.headers, CONTENT_TYPE).unwrap_or_default(),
        accept,
        user_agent: user_agent.clone(),
        format,
        trace: &mut trace,
        warnings: Vec::new(),
        write: Write::Commit,
    };
    let result = router::route(&mut ctx, &parts.method).await;
    let warnings = std::mem::take(&mut ctx.warnings);
    let mut resp = finish(&end, trace, Some(&user), result.map(|r| (r, format))).await;
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(&format!("299 - {w:?}")) {
            resp.headers_mut().append("warning", v);
        }
    }
    match watch_slot {
        // The slot is held until the stream is sent to its end or dropped.
        Some(slot) => resp.map(|b| b.hold(slot)),
        None => resp,
    }
}

/// kube-apiserver's `NewTooManyRequests`: a Status with reason TooManyRequests and
/// `retryAfterSeconds` (the limiter's own 429 is plain text; this one is kexplore's cap).
fn too_many_watches(max: usize) -> ApiError {
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: format!(
            "too many watches and followed logs: the server serves at most {max} at once"
        ),
        details: Some(json!({"retryAfterSeconds": 1})),
        list_continue: None,
    }
}

/// A YAML body nested deeper than any YAML parser here would accept is refused before one
/// runs (the parsers' cost grows with the square of the depth).
fn refuse_deep_yaml(headers: &hyper::HeaderMap, body: Bytes) -> Result<Bytes, ApiError> {
    let yaml = header(headers, CONTENT_TYPE).is_some_and(|ct| {
        let mt = ct
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        mt.ends_with("yaml")
    });
    if yaml && let Err(e) = yaml_depth::check(&body) {
        return Err(ApiError::bad_request(format!("error decoding YAML: {e}")));
    }
    Ok(body)
}

/// The limiter's 429: plain text, not a Status, with `Retry-After: 1`.
fn too_many(end: &Ending<'_>, mut trace: RequestTrace, user: &UserInfo) -> Response<ApiBody> {
    let Ending {
        api,
        info,
        user_agent,
        conn,
        received,
        ..
    } = *end;
    let mut r = Response::new(ApiBody::full(Bytes::from_static(TOO_MANY.as_bytes())));
    *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert("retry-after", HeaderValue::from_static("1"));
    set_common(&mut r, &trace.audit_id);
    trace.code = 429;
    trace.stage(Stage::Response, Status::Failed, json!({"code": 429}));
    if let Some(a) = &api.audit {
        let st = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": TOO_MANY.trim(), "reason": "TooManyRequests", "code": 429});
        a.record(
            &trace,
            info,
            Some(user),
            user_agent,
            conn,
            Some(&st),
            received,
        );
    }
    api.traces.push(trace);
    if let Some(l) = &end.metrics {
        api.request_metrics.record(l, 429, end.started);
    }
    r
}

/// What every ending of a request needs to answer, audit, trace and count it.
struct Ending<'a> {
    api: &'a Arc<Api>,
    info: &'a RequestInfo,
    user_agent: &'a str,
    conn: &'a ConnInfo,
    received: &'a str,
    /// The request's labels in `apiserver_request_total`, when it is counted there.
    metrics: Option<Labels>,
    started: std::time::Instant,
}

/// Encode the reply (or error), record the response stage, audit, keep the trace and count
/// the request.
async fn finish(
    end: &Ending<'_>,
    mut trace: RequestTrace,
    user: Option<&UserInfo>,
    result: Result<(Reply, Format), ApiError>,
) -> Response<ApiBody> {
    let Ending {
        api,
        info,
        user_agent,
        conn,
        received,
        ..
    } = *end;
    let audit_id = trace.audit_id.clone();
    let streamed = matches!(result, Ok((Reply::Stream { .. }, _)));
    let (resp, code, status_obj) = match result {
        Err(e) => (error_response(&e, &audit_id), e.code, Some(e.to_status())),
        Ok((Reply::Object { code, value }, format)) => {
            let mut r = Response::new(ApiBody::full(format.encode(&value)));
            *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(format.content_type()),
            );
            set_common(&mut r, &audit_id);
            if trace.object.is_none() && info.is_resource_request {
                let ns = value
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(n) = value.pointer("/metadata/name").and_then(Value::as_str) {
                    trace.object = Some(if ns.is_empty() {
                        n.to_string()
                    } else {
                        format!("{ns}/{n}")
                    });
                }
            }
            (r, code, None)
        }
        Ok((
            Reply::Raw {
                code,
                content_type,
                body,
            },
            _,
        )) => {
            let mut r = Response::new(ApiBody::full(body));
            *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            set_common(&mut r, &audit_id);
            (r, code, None)
        }
        Ok((Reply::Stream { content_type, body }, _)) => {
            // A stream is counted when it ends, with its whole length.
            let body = match &end.metrics {
                Some(l) => body.hold(Recorded {
                    api: api.clone(),
                    labels: l.clone(),
                    started: end.started,
                }),
                None => body,
            };
            let mut r = Response::new(body);
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
            set_common(&mut r, &audit_id);
            (r, 200, None)
        }
    };
    trace.code = code;
    let st = if code < 400 {
        Status::Ok
    } else {
        Status::Failed
    };
    let mut detail = json!({"code": code});
    if let Some(s) = &status_obj {
        detail["status"] = s.clone();
    }
    trace.stage(Stage::Response, st, detail);
    if let Some(a) = &api.audit {
        a.record(
            &trace,
            info,
            user,
            user_agent,
            conn,
            status_obj.as_ref(),
            received,
        );
    }
    api.traces.push(trace);
    if let Some(l) = &end.metrics
        && !streamed
    {
        api.request_metrics.record(l, code, end.started);
    }
    resp
}

/// Records a streamed request's metrics when its body is dropped: the stream has ended.
struct Recorded {
    api: Arc<Api>,
    labels: Labels,
    started: std::time::Instant,
}

impl Drop for Recorded {
    fn drop(&mut self) {
        self.api
            .request_metrics
            .record(&self.labels, 200, self.started);
    }
}

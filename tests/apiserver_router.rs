//! Router tests without sockets: requests go straight into `chain::handle` with bearer tokens
//! from a token file, so every pipeline stage runs but no TLS is involved.

use std::path::Path;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use kexplore::apiserver::controllers::bootstrap;
use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::filters::chain;
use kexplore::apiserver::request::context::Api;
use kexplore::apiserver::transport::tls::ConnInfo;
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::SEED_POD;

const TOKENS: &str = "admin-token,kexplore-admin,1,system:masters\njane-token,jane,2,developers\n";

fn api() -> Arc<Api> {
    let tokens = TokenFile::parse(Path::new("tokens.csv"), TOKENS).expect("tokens");
    let api = Arc::new(Api::new(tokens, None));
    bootstrap::system(&api);
    bootstrap::demo(&api);
    api
}

struct Resp {
    code: u16,
    body: Value,
    headers: hyper::HeaderMap,
}

async fn call(
    api: &Arc<Api>,
    token: Option<&str>,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut b = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b
        .body(Full::new(Bytes::copy_from_slice(body)))
        .expect("request");
    let resp = chain::handle(api, &ConnInfo::default(), req).await;
    let code = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Resp {
        code,
        body,
        headers,
    }
}

const JSON: &[(&str, &str)] = &[("content-type", "application/json")];

#[tokio::test]
async fn discovery_and_anonymous() {
    let api = api();
    let r = call(&api, Some("admin-token"), Method::GET, "/api", &[], b"").await;
    assert_eq!(
        (r.code, r.body["kind"].as_str()),
        (200, Some("APIVersions"))
    );
    assert!(r.headers.get("audit-id").is_some());
    let r = call(&api, None, Method::GET, "/api", &[], b"").await;
    assert_eq!(r.code, 401);
    assert_eq!(
        r.body,
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})
    );
    let r = call(&api, Some("wrong"), Method::GET, "/api", &[], b"").await;
    assert_eq!(r.code, 401);
    let r = call(&api, Some("admin-token"), Method::GET, "/apis", &[("accept", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")], b"").await;
    assert_eq!(r.body["apiVersion"], json!("apidiscovery.k8s.io/v2beta1"));
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/openapi/v3/api/v1",
        &[],
        b"",
    )
    .await;
    let params =
        &r.body["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]["parameters"];
    assert!(
        params
            .as_array()
            .is_some_and(|p| p.iter().any(|x| x["name"] == "fieldValidation"))
    );
}

#[tokio::test]
async fn create_seed_pod_with_admission_defaults_and_errors() {
    let api = api();
    let url = "/api/v1/namespaces/default/pods";
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        url,
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let p = &r.body;
    assert_eq!(p["spec"]["serviceAccountName"], json!("default"));
    assert_eq!(
        p["spec"]["containers"][0]["imagePullPolicy"],
        json!("Always")
    );
    assert_eq!(
        p["spec"]["containers"][0]["ports"][0]["protocol"],
        json!("TCP")
    );
    assert_eq!(
        p["spec"]["tolerations"][0]["key"],
        json!("node.kubernetes.io/not-ready")
    );
    assert_eq!(
        (
            p["spec"]["priority"].clone(),
            p["spec"]["schedulerName"].clone()
        ),
        (json!(0), json!("default-scheduler"))
    );
    assert_eq!(
        p["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert!(p["metadata"]["uid"].as_str().is_some_and(|u| u.len() == 36));
    // The trace of that request, as journey reads it.
    let trace = api
        .traces
        .pod("default/app")
        .and_then(|t| t.create_audit_id)
        .and_then(|id| api.traces.request(&id))
        .expect("trace");
    let names: Vec<&str> = trace.stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(
        names,
        [
            "request-info",
            "authentication",
            "authorization",
            // One mutating phase: the decode's defaults, then NamespaceLifecycle and the rest.
            "admission",
            "validation",
            "storage",
            "response"
        ]
    );
    assert_eq!(
        trace
            .find(kexplore::stage::Stage::Storage)
            .map(|s| s.detail.value()["key"].clone()),
        Some(json!("/registry/pods/default/app"))
    );

    let dup = call(
        &api,
        Some("admin-token"),
        Method::POST,
        url,
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(
        (dup.code, dup.body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
    assert_eq!(dup.body["message"], json!("pods \"app\" already exists"));

    let bad = call(
        &api,
        Some("admin-token"),
        Method::POST,
        url,
        JSON,
        b"{\"apiVersion\": ",
    )
    .await;
    assert_eq!(
        (bad.code, bad.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );

    let invalid = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}"#;
    let r = call(&api, Some("admin-token"), Method::POST, url, JSON, invalid).await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.body["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "message": "Invalid value: \"2\": must be less than or equal to cpu limit of 1", "field": "spec.containers[0].resources.requests"})
    );
    assert_eq!(
        r.body["message"],
        json!(
            "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"
        )
    );

    let strict = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"y"},"spec":{"foo":1,"containers":[{"name":"c","image":"i"}]}}"#;
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        &format!("{url}?fieldValidation=Strict"),
        JSON,
        strict,
    )
    .await;
    assert_eq!(
        r.body["message"],
        json!(
            "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.foo\""
        )
    );

    let stale = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","resourceVersion":"1"},"spec":{"containers":[{"name":"app","image":"x"}]}}"#;
    let r = call(
        &api,
        Some("admin-token"),
        Method::PUT,
        &format!("{url}/app"),
        JSON,
        stale,
    )
    .await;
    assert_eq!((r.code, r.body["reason"].as_str()), (409, Some("Conflict")));

    let big = vec![b'a'; 4 * 1024 * 1024];
    let r = call(&api, Some("admin-token"), Method::POST, url, JSON, &big).await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (413, Some("Request entity too large: limit is 3145728"))
    );

    let r = call(&api, Some("admin-token"), Method::PUT, url, JSON, b"{}").await;
    assert_eq!(r.code, 405);
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/nope/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (404, Some("namespaces \"nope\" not found"))
    );
}

#[tokio::test]
async fn rbac_for_jane() {
    let api = api();
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/api/v1/namespaces/kube-system/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 403);
    assert_eq!(
        r.body["message"],
        json!(
            "pods is forbidden: User \"jane\" cannot create resource \"pods\" in API group \"\" in the namespace \"kube-system\""
        )
    );
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 201);
    let r = call(
        &api,
        Some("jane-token"),
        Method::GET,
        "/api/v1/nodes",
        &[],
        b"",
    )
    .await;
    assert_eq!(
        r.body["message"],
        json!(
            "nodes is forbidden: User \"jane\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        )
    );
    let body = br#"{"kind":"Binding","apiVersion":"v1","metadata":{"name":"app"},"target":{"kind":"Node","name":"node-3"}}"#;
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods/app/binding",
        JSON,
        body,
    )
    .await;
    assert_eq!(
        r.body["message"],
        json!(
            "pods \"app\" is forbidden: User \"jane\" cannot create resource \"pods/binding\" in API group \"\" in the namespace \"default\""
        )
    );
    // can-i through a SelfSubjectAccessReview, JSON and protobuf (kubectl 1.32+).
    let ssar = br#"{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"creationTimestamp":null},"spec":{"resourceAttributes":{"namespace":"kube-system","verb":"create","resource":"pods"}},"status":{"allowed":false}}"#;
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        JSON,
        ssar,
    )
    .await;
    assert_eq!(
        (r.code, r.body["status"]["allowed"].clone()),
        (201, json!(false))
    );
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        &[("content-type", "application/vnd.kubernetes.protobuf")],
        &ssar_protobuf(),
    )
    .await;
    assert_eq!(
        (r.code, r.body["status"]["allowed"].clone()),
        (201, json!(true)),
        "{}",
        r.body
    );
    assert_eq!(
        r.body["spec"]["resourceAttributes"]["namespace"],
        json!("kube-system")
    );
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        JSON,
        br#"{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"}"#,
    )
    .await;
    assert_eq!(
        r.body["status"]["userInfo"]["groups"],
        json!(["developers", "system:authenticated"])
    );
    // can-i --list through a SelfSubjectRulesReview: the Role her group is bound to in
    // default, and a binding whose role is missing named in evaluationError.
    let rb = br#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"ghost"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"nope"},"subjects":[{"kind":"User","name":"jane"}]}"#;
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        JSON,
        rb,
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let rules_review = |ns: &str| {
        let body = format!(
            r#"{{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","spec":{{"namespace":"{ns}"}}}}"#
        );
        let api = api.clone();
        async move {
            call(
                &api,
                Some("jane-token"),
                Method::POST,
                "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                JSON,
                body.as_bytes(),
            )
            .await
        }
    };
    let r = rules_review("default").await;
    assert_eq!(r.code, 201, "{}", r.body);
    let status = &r.body["status"];
    assert!(
        status["resourceRules"]
            .as_array()
            .is_some_and(|rs| rs.iter().any(|rule| {
                rule["apiGroups"] == json!([""])
                    && rule["resources"] == json!(["pods"])
                    && rule["verbs"]
                        .as_array()
                        .is_some_and(|v| v.contains(&json!("create")))
            })),
        "{status}"
    );
    assert_eq!(
        status["evaluationError"],
        json!("role.rbac.authorization.k8s.io \"nope\" not found"),
        "{status}"
    );
    assert_eq!(status["incomplete"], json!(false));
    let r = rules_review("").await;
    assert_eq!(
        (r.code, r.body["message"].clone()),
        (400, json!("no namespace on request"))
    );
}

fn ld(num: u8, data: &[u8]) -> Vec<u8> {
    let mut v = vec![(num << 3) | 2, data.len() as u8];
    v.extend_from_slice(data);
    v
}

/// A SelfSubjectAccessReview in the `k8s\0` protobuf envelope, as kubectl 1.32 sends it.
fn ssar_protobuf() -> Vec<u8> {
    let attrs = [ld(1, b"kube-system"), ld(2, b"create"), ld(5, b"pods")].concat();
    let ssar = [ld(1, b""), ld(2, &ld(1, &attrs))].concat();
    let tm = [
        ld(1, b"authorization.k8s.io/v1"),
        ld(2, b"SelfSubjectAccessReview"),
    ]
    .concat();
    [b"k8s\0".to_vec(), ld(1, &tm), ld(2, &ssar)].concat()
}

#[tokio::test]
async fn table_selectors_and_watch() {
    let api = api();
    let accept = [(
        "accept",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )];
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/api/v1/nodes",
        &accept,
        b"",
    )
    .await;
    assert_eq!(r.body["kind"], json!("Table"));
    let cols: Vec<&str> = r.body["columnDefinitions"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|x| x["priority"] == 0)
                .filter_map(|x| x["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(cols, ["Name", "Status", "Roles", "Age", "Version"]);
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.body["items"].as_array().map(Vec::len), Some(1));
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/api/v1/pods?fieldSelector=spec.bogus%3D1",
        &[],
        b"",
    )
    .await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (400, Some("field label not supported: spec.bogus"))
    );
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/api/v1/pods?limit=2",
        &[],
        b"",
    )
    .await;
    let cont = r.body["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(r.body["items"].as_array().map(Vec::len), Some(2));
    let r = call(
        &api,
        Some("admin-token"),
        Method::GET,
        &format!("/api/v1/pods?limit=2&continue={cont}"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.body["items"].as_array().map(Vec::len), Some(1));

    // Watch from the current revision, then create: the stream carries ADDED.
    let rv = api.current_rv();
    let req = Request::builder()
        .uri(format!(
            "/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}"
        ))
        .header("authorization", "Bearer admin-token")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let resp = chain::handle(&api, &ConnInfo::default(), req).await;
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.into_body();
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 201);
    let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
        .await
        .ok()
        .flatten()
        .and_then(|f| f.ok())
        .and_then(|f| f.into_data().ok())
        .unwrap_or_default();
    let ev: Value = serde_json::from_slice(&frame).unwrap_or_default();
    assert_eq!(
        (
            ev["type"].as_str(),
            ev["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("app"))
    );
}

/// A request body that never finishes: its request holds an in-flight slot.
struct Endless;

impl hyper::body::Body for Endless {
    type Data = Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::task::Poll::Pending
    }
}

#[tokio::test]
async fn max_in_flight_answers_429_in_plain_text() {
    let tokens = TokenFile::parse(Path::new("tokens.csv"), TOKENS).expect("tokens");
    let mut api = Api::new(tokens, None);
    api.limiter = kexplore::apiserver::filters::inflight::Limiter::new(1, 1);
    let api = Arc::new(api);
    bootstrap::system(&api);
    let held = {
        let api = api.clone();
        tokio::spawn(async move {
            let req = Request::builder()
                .method(Method::POST)
                .uri("/api/v1/namespaces/default/pods")
                .header("authorization", "Bearer jane-token")
                .body(Endless)
                .expect("request");
            chain::handle(&api, &ConnInfo::default(), req).await
        })
    };
    for _ in 0..50 {
        if api.limiter.in_flight().1 == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let r = call(
        &api,
        Some("jane-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 429);
    assert_eq!(
        r.body,
        Value::String("Too many requests, please try again later.\n".into())
    );
    assert_eq!(
        r.headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1")
    );
    // system:masters is never limited.
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 201);
    held.abort();
}

/// system:public-info-viewer: anonymous requests get the health endpoints and /version, a
/// failing credential is still 401 there, and every other path stays 401 for anonymous.
#[tokio::test]
async fn public_info_paths_answer_anonymous_and_refuse_bad_credentials() {
    let api = api();
    for endpoint in ["healthz", "livez", "readyz"] {
        let path = format!("/{endpoint}");
        let r = call(&api, None, Method::GET, &path, &[], b"").await;
        assert_eq!((r.code, r.body.clone()), (200, json!("ok")), "{path}");
        let r = call(
            &api,
            None,
            Method::GET,
            &format!("{path}?verbose"),
            &[],
            b"",
        )
        .await;
        assert_eq!(
            (r.code, r.body),
            (200, json!(format!("[+]ping ok\n{endpoint} check passed\n"))),
            "{path}?verbose"
        );
        let r = call(&api, Some("wrong"), Method::GET, &path, &[], b"").await;
        assert_eq!(r.code, 401, "{path} with a bad token");
        // A single check is not on the public-info list: anonymous is not allowed there.
        let r = call(&api, None, Method::GET, &format!("{path}/ping"), &[], b"").await;
        assert_eq!(r.code, 401, "{path}/ping");
        // Nor is it in system:discovery: as upstream, only system:masters reaches it.
        let r = call(
            &api,
            Some("jane-token"),
            Method::GET,
            &format!("{path}/ping"),
            &[],
            b"",
        )
        .await;
        assert_eq!(r.code, 403, "{path}/ping as jane");
        let r = call(
            &api,
            Some("admin-token"),
            Method::GET,
            &format!("{path}/ping"),
            &[],
            b"",
        )
        .await;
        assert_eq!((r.code, r.body), (200, json!("ok")), "{path}/ping as admin");
    }
    let r = call(&api, None, Method::GET, "/version", &[], b"").await;
    assert_eq!((r.code, r.body["major"].as_str()), (200, Some("1")));
    let r = call(&api, Some("wrong"), Method::GET, "/version", &[], b"").await;
    assert_eq!(r.code, 401);
    for path in ["/api", "/apis", "/api/v1/pods", "/openapi/v2"] {
        let r = call(&api, None, Method::GET, path, &[], b"").await;
        assert_eq!(r.code, 401, "{path}");
    }
    let r = call(&api, None, Method::POST, "/healthz", &[], b"").await;
    assert_eq!(r.code, 403, "anonymous may only get");
}

const PROTOBUF: &[(&str, &str)] = &[("content-type", "application/vnd.kubernetes.protobuf")];

/// kubectl 1.33's `create serviceaccount builder` body (captured with `-v=8`) is stored; a
/// kind the server cannot read as protobuf gets a 415 that does not list protobuf, and a PATCH
/// of an unknown type a 415 listing the patch types, as kube-apiserver words both.
#[tokio::test]
async fn protobuf_bodies_and_truthful_unsupported_media_types() {
    let api = api();
    let body = include_bytes!("fixtures/protobuf/serviceaccount.pb");
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/default/serviceaccounts",
        PROTOBUF,
        body,
    )
    .await;
    assert_eq!(
        (r.code, r.body["metadata"]["name"].as_str()),
        (201, Some("builder")),
        "{}",
        r.body
    );
    let r = call(
        &api,
        Some("admin-token"),
        Method::DELETE,
        "/api/v1/namespaces/default/serviceaccounts/builder",
        PROTOBUF,
        include_bytes!("fixtures/protobuf/deleteoptions.pb"),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);

    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews",
        PROTOBUF,
        b"k8s\0",
    )
    .await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (
            415,
            Some(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
            )
        )
    );
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        &[("content-type", "text/plain")],
        b"x",
    )
    .await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (
            415,
            Some(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            )
        )
    );
    let r = call(
        &api,
        Some("admin-token"),
        Method::PATCH,
        "/api/v1/namespaces/default",
        &[("content-type", "application/json")],
        b"{}",
    )
    .await;
    assert_eq!(
        (r.code, r.body["message"].as_str()),
        (
            415,
            Some(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
            )
        )
    );
}

/// A client-go program (not kubectl) creating a pod as protobuf: stored like its JSON twin,
/// with Go's zero-valued scalars (generation 0, hostNetwork false) left out as JSON leaves them.
#[tokio::test]
async fn a_protobuf_pod_is_created_like_its_json_twin() {
    let api = api();
    let varint0 = |num: u8| vec![num << 3, 0];
    let meta = [ld(1, b"proto-pod"), ld(2, b""), varint0(7)].concat();
    let container = [ld(1, b"app"), ld(2, b"nginx")].concat();
    let spec = [ld(2, &container), varint0(11)].concat();
    let pod = [ld(1, &meta), ld(2, &spec)].concat();
    let tm = [ld(1, b"v1"), ld(2, b"Pod")].concat();
    let body = [b"k8s\0".to_vec(), ld(1, &tm), ld(2, &pod)].concat();
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        "/api/v1/namespaces/default/pods",
        PROTOBUF,
        &body,
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["spec"]["containers"][0]["image"], json!("nginx"));
    assert_eq!(r.body["metadata"]["generation"], json!(1));
    assert!(r.body["spec"].get("hostNetwork").is_none(), "{}", r.body);
    assert_eq!(
        r.body["spec"]["restartPolicy"],
        json!("Always"),
        "defaulted"
    );
}

/// `/metrics` as a scraper reads it: each authorized request counted under upstream's labels
/// (a create is a POST of scope resource, a collection GET a LIST, a dry run says so), the
/// stored objects per resource, the process; refused to a user outside system:monitoring.
#[tokio::test]
async fn metrics_count_requests_with_upstreams_labels() {
    let api = api();
    let pods = "/api/v1/namespaces/default/pods";
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        pods,
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 201);
    let dry = format!("{pods}?dryRun=All");
    let r = call(
        &api,
        Some("admin-token"),
        Method::POST,
        &dry,
        JSON,
        SEED_POD.as_bytes(),
    )
    .await;
    assert_eq!(r.code, 409, "{}", r.body);
    for _ in 0..2 {
        call(&api, Some("admin-token"), Method::GET, pods, &[], b"").await;
    }
    call(&api, Some("admin-token"), Method::GET, "/readyz", &[], b"").await;
    // A watch is counted when it ends, with its whole length.
    let watch = format!("{pods}?watch=true&timeoutSeconds=1");
    call(&api, Some("admin-token"), Method::GET, &watch, &[], b"").await;
    // Refused before it is authorized: not counted, as upstream counts at its routes.
    call(
        &api,
        Some("jane-token"),
        Method::GET,
        "/api/v1/nodes",
        &[],
        b"",
    )
    .await;
    let r = call(&api, Some("admin-token"), Method::GET, "/metrics", &[], b"").await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.headers["content-type"],
        "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
    );
    let text = r.body.as_str().unwrap_or_default();
    for want in [
        "# TYPE apiserver_request_total counter\n",
        "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\"} 1\n",
        "apiserver_request_total{code=\"409\",component=\"apiserver\",dry_run=\"All\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\"} 1\n",
        "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 2\n",
        "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 1\n",
        "apiserver_request_duration_seconds_count{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 2\n",
        "# TYPE process_start_time_seconds gauge\n",
        "kubernetes_build_info{build_date=",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("apiserver_request_total") && l.contains("resource=\"nodes\"")),
        "{text}"
    );
    let watched = "{component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"}";
    assert!(
        text.contains(&format!(
            "apiserver_request_duration_seconds_count{watched} 1\n"
        )),
        "{text}"
    );
    let watch_secs = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("apiserver_request_duration_seconds_sum{watched} ")))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(watch_secs.is_some_and(|s| s >= 0.9), "{text}");
    let stored = |name: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(&format!(
                    "apiserver_storage_objects{{resource=\"{name}\"}} "
                ))
            })
            .and_then(|n| n.parse::<usize>().ok())
    };
    let all = call(
        &api,
        Some("admin-token"),
        Method::GET,
        "/api/v1/pods",
        &[],
        b"",
    )
    .await;
    let listed = all.body["items"].as_array().map(Vec::len);
    assert_eq!(stored("pods"), listed, "{text}");
    assert!(stored("namespaces").is_some_and(|n| n >= 4), "{text}");
    let r = call(&api, Some("jane-token"), Method::GET, "/metrics", &[], b"").await;
    assert_eq!(r.code, 403);
    assert_eq!(
        r.body["message"],
        "forbidden: User \"jane\" cannot get path \"/metrics\""
    );
}

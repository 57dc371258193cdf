//! Writes at the router, without sockets. `dryRun`: every writing verb refuses a value other
//! than `All` as kube-apiserver does (422 on its `<Verb>Options`), and a dry run on every verb
//! and subresource leaves the store's revision where it was and says so in its trace. Updates:
//! what `BeforeUpdate` keeps from storage, what ObjectMeta validation refuses.

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
use kexplore::stage::{Stage, Status};
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::SEED_POD;

fn api() -> Arc<Api> {
    let tokens = TokenFile::parse(
        Path::new("tokens.csv"),
        "admin-token,kexplore-admin,1,system:masters\n",
    )
    .expect("tokens");
    let api = Arc::new(Api::new(tokens, None));
    bootstrap::system(&api);
    bootstrap::demo(&api);
    api
}

/// One request as the admin with these headers: (status, response headers, body as sent).
async fn send(
    api: &Arc<Api>,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, hyper::HeaderMap, Bytes) {
    let mut b = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).expect("method"))
        .uri(uri)
        .header("authorization", "Bearer admin-token");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b
        .body(Full::new(Bytes::copy_from_slice(body.as_bytes())))
        .expect("request");
    let resp = chain::handle(api, &ConnInfo::default(), req).await;
    let (code, headers) = (resp.status().as_u16(), resp.headers().clone());
    let bytes = resp.into_body().collect().await.map(|c| c.to_bytes());
    (code, headers, bytes.unwrap_or_default())
}

fn header(headers: &hyper::HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// One request as the admin: (status, body, audit id).
async fn call(
    api: &Arc<Api>,
    method: &str,
    uri: &str,
    ct: &str,
    body: &str,
) -> (u16, Value, String) {
    let with_ct = [("content-type", ct)];
    let headers: &[(&str, &str)] = if ct.is_empty() { &[] } else { &with_ct };
    let (code, headers, bytes) = send(api, method, uri, headers, body).await;
    (
        code,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        header(&headers, "audit-id"),
    )
}

const POD: &str = "/api/v1/namespaces/demo/pods/workload-node-1";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

/// A pod no scheduler picks up, for the binding subresource.
async fn manual_pod(api: &Arc<Api>) {
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"manual"},"spec":{"schedulerName":"manual","containers":[{"name":"c","image":"x"}]}}"#;
    let (code, body, _) = call(api, "POST", "/api/v1/namespaces/default/pods", JSON, pod).await;
    assert_eq!(code, 201, "{body}");
}

/// Every write the server has: (method, path, content type, body, the options kind it reads).
fn writes(pod_json: &str) -> Vec<(&'static str, String, &'static str, String, &'static str)> {
    let binding = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"manual"},"target":{"kind":"Node","name":"node-2"}}"#;
    let label = r#"{"metadata":{"labels":{"dry":"run"}}}"#;
    vec![
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            JSON,
            SEED_POD.into(),
            "CreateOptions",
        ),
        ("PUT", POD.into(), JSON, pod_json.into(), "UpdateOptions"),
        ("PATCH", POD.into(), MERGE, label.into(), "PatchOptions"),
        (
            "PATCH",
            POD.into(),
            "application/strategic-merge-patch+json",
            label.into(),
            "PatchOptions",
        ),
        (
            "PATCH",
            POD.into(),
            "application/json-patch+json",
            r#"[{"op":"add","path":"/metadata/labels/dry","value":"run"}]"#.into(),
            "PatchOptions",
        ),
        (
            "PUT",
            format!("{POD}/status"),
            JSON,
            pod_json.replace("\"Running\"", "\"Failed\""),
            "UpdateOptions",
        ),
        (
            "PATCH",
            format!("{POD}/status"),
            MERGE,
            r#"{"status":{"message":"dry"}}"#.into(),
            "PatchOptions",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods/manual/binding".into(),
            JSON,
            binding.into(),
            "CreateOptions",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/bindings".into(),
            JSON,
            binding.into(),
            "CreateOptions",
        ),
        ("DELETE", POD.into(), "", String::new(), "DeleteOptions"),
        (
            "DELETE",
            "/api/v1/namespaces/demo/pods".into(),
            "",
            String::new(),
            "DeleteOptions",
        ),
        (
            "PATCH",
            "/api/v1/nodes/node-1".into(),
            MERGE,
            r#"{"spec":{"unschedulable":true}}"#.into(),
            "PatchOptions",
        ),
        (
            "DELETE",
            "/api/v1/nodes/node-1".into(),
            "",
            String::new(),
            "DeleteOptions",
        ),
        (
            "POST",
            "/api/v1/namespaces".into(),
            JSON,
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dry"}}"#.into(),
            "CreateOptions",
        ),
        (
            "DELETE",
            "/api/v1/namespaces/demo".into(),
            "",
            String::new(),
            "DeleteOptions",
        ),
    ]
}

#[tokio::test]
async fn a_dry_run_value_other_than_all_is_refused_on_every_verb() {
    let api = api();
    manual_pod(&api).await;
    let (_, pod, _) = call(&api, "GET", POD, "", "").await;
    let rv = api.current_rv();
    for (query, shown) in [
        ("dryRun=foo", r#"[]string{"foo"}"#),
        ("dryRun=", r#"[]string{""}"#),
        ("dryRun=All&dryRun=all", r#"[]string{"All", "all"}"#),
    ] {
        for (method, path, ct, body, kind) in writes(&pod.to_string()) {
            let (code, st, _) = call(&api, method, &format!("{path}?{query}"), ct, &body).await;
            let what = format!("{method} {path}?{query}");
            assert_eq!(code, 422, "{what}: {st}");
            assert_eq!(
                st["message"],
                format!(
                    "{kind}.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: {shown}: supported values: \"All\""
                ),
                "{what}"
            );
            assert_eq!(st["reason"], "Invalid", "{what}");
            assert_eq!(
                st["details"],
                json!({"group": "meta.k8s.io", "kind": kind, "causes": [{
                    "reason": "FieldValueNotSupported", "field": "dryRun",
                    "message": format!("Unsupported value: {shown}: supported values: \"All\"")}]}),
                "{what}"
            );
        }
    }
    // DeleteOptions in the body are read as such; the query is then not looked at (upstream).
    let (code, st, _) = call(&api, "DELETE", POD, JSON, r#"{"dryRun":["Al"]}"#).await;
    assert_eq!(
        (code, st["details"]["kind"].clone()),
        (422, json!("DeleteOptions")),
        "{st}"
    );
    // A dryRun that is not a list is a decode error, not "no dry run": nothing is deleted.
    let (code, st, _) = call(&api, "DELETE", POD, JSON, r#"{"dryRun":"All"}"#).await;
    assert_eq!(
        (code, st["reason"].clone()),
        (400, json!("BadRequest")),
        "{st}"
    );
    assert_eq!(api.current_rv(), rv, "a refused request wrote");
}

#[tokio::test]
async fn a_dry_run_on_every_verb_stores_nothing_and_says_so() {
    let api = api();
    manual_pod(&api).await;
    let (_, pod, _) = call(&api, "GET", POD, "", "").await;
    let rv = api.current_rv();
    let mut changes = api.changes();
    changes.borrow_and_update();
    for (method, path, ct, body, _) in writes(&pod.to_string()) {
        let what = format!("{method} {path}?dryRun=All");
        let (code, answer, audit) =
            call(&api, method, &format!("{path}?dryRun=All"), ct, &body).await;
        assert!(code == 200 || code == 201, "{what}: {code} {answer}");
        let trace = api
            .traces
            .request(&audit)
            .unwrap_or_else(|| panic!("{what}: no trace"));
        let storage = trace
            .find(Stage::Storage)
            .unwrap_or_else(|| panic!("{what}: no storage stage"));
        assert_eq!(storage.status, Status::Skipped, "{what}");
        let detail = storage.detail.value();
        assert_eq!(detail["dryRun"], true, "{what}");
        assert_eq!(detail["note"], "dry run: nothing stored", "{what}");
        assert!(detail.get("resourceVersion").is_none(), "{what}: {detail}");
    }
    // kubectl delete sends its DeleteOptions as a body.
    let (code, answer, _) = call(
        &api,
        "DELETE",
        POD,
        JSON,
        r#"{"propagationPolicy":"Background","dryRun":["All"]}"#,
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    // A delete answers the object as it would be: a pod with its deletion under way.
    assert!(
        answer["metadata"]["deletionTimestamp"].is_string(),
        "{answer}"
    );
    assert_eq!(api.current_rv(), rv, "a dry run wrote");
    assert_eq!(
        changes.has_changed().ok(),
        Some(false),
        "a dry run woke the control loops"
    );
    let (_, now, _) = call(&api, "GET", POD, "", "").await;
    assert_eq!(now, pod);
    for gone in [
        "/api/v1/namespaces/default/pods/app",
        "/api/v1/namespaces/dry",
    ] {
        assert_eq!(call(&api, "GET", gone, "", "").await.0, 404, "{gone}");
    }
}

#[tokio::test]
async fn a_dry_run_still_runs_every_check() {
    let api = api();
    let (_, pod, _) = call(&api, "GET", POD, "", "").await;
    let edited = |f: &dyn Fn(&mut Value)| {
        let mut p = pod.clone();
        f(&mut p);
        p.to_string()
    };
    // Optimistic concurrency.
    let stale = edited(&|p| p["metadata"]["resourceVersion"] = json!("1"));
    let (code, st, _) = call(&api, "PUT", &format!("{POD}?dryRun=All"), JSON, &stale).await;
    assert_eq!(
        (code, st["reason"].clone()),
        (409, json!("Conflict")),
        "{st}"
    );
    // Validation of the update.
    let moved = edited(&|p| p["spec"]["nodeName"] = json!("node-2"));
    let (code, st, _) = call(&api, "PUT", &format!("{POD}?dryRun=All"), JSON, &moved).await;
    assert_eq!(code, 422, "{st}");
    // Delete preconditions.
    let (code, st, _) = call(
        &api,
        "DELETE",
        POD,
        JSON,
        r#"{"dryRun":["All"],"preconditions":{"uid":"nope"}}"#,
    )
    .await;
    assert_eq!(code, 409, "{st}");
    // Create of a name in use.
    let again = edited(&|p| {
        if let Some(m) = p["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
    });
    let (code, st, _) = call(
        &api,
        "POST",
        "/api/v1/namespaces/demo/pods?dryRun=All",
        JSON,
        &again,
    )
    .await;
    assert_eq!(
        (code, st["reason"].clone()),
        (409, json!("AlreadyExists")),
        "{st}"
    );
}

#[tokio::test]
async fn updates_keep_or_refuse_metadata_as_upstream() {
    let api = api();
    let (_, pod, _) = call(&api, "GET", POD, "", "").await;
    // Unconditional updates (no resourceVersion), so each applies to whatever is stored.
    let put = |f: &dyn Fn(&mut Value)| {
        let mut p = pod.clone();
        if let Some(m) = p["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        f(&mut p);
        p.to_string()
    };
    // Silently kept from storage: creationTimestamp, generation, a missing uid.
    let body = put(&|p| {
        p["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
        p["metadata"]["generation"] = json!(99);
        p["metadata"]["labels"]["edited"] = json!("yes");
        if let Some(m) = p["metadata"].as_object_mut() {
            m.remove("uid");
        }
    });
    let (code, stored, _) = call(&api, "PUT", POD, JSON, &body).await;
    assert_eq!(code, 200, "{stored}");
    assert_eq!(
        stored["metadata"]["creationTimestamp"],
        pod["metadata"]["creationTimestamp"]
    );
    assert_eq!(
        stored["metadata"]["generation"],
        pod["metadata"]["generation"]
    );
    assert_eq!(stored["metadata"]["uid"], pod["metadata"]["uid"]);
    assert_eq!(stored["metadata"]["labels"]["edited"], "yes");
    // Refused: another uid (named twice in the causes, once in the message, as upstream's
    // validateCommonFields and the pod strategy both check it).
    let (code, st, _) = call(
        &api,
        "PUT",
        POD,
        JSON,
        &put(&|p| p["metadata"]["uid"] = json!("another")),
    )
    .await;
    assert_eq!(code, 422, "{st}");
    assert_eq!(
        st["message"],
        r#"Pod "workload-node-1" is invalid: metadata.uid: Invalid value: "another": field is immutable"#
    );
    assert_eq!(
        st["details"]["causes"].as_array().map(Vec::len),
        Some(2),
        "{st}"
    );
    // Refused: starting a deletion by update.
    let (code, st, _) = call(
        &api,
        "PATCH",
        POD,
        MERGE,
        r#"{"metadata":{"deletionTimestamp":"2030-01-01T00:00:00Z"}}"#,
    )
    .await;
    assert_eq!(code, 422, "{st}");
    assert!(
        st["message"].as_str().is_some_and(|m| m.contains("metadata.deletionTimestamp: Invalid value: 2030-01-01 00:00:00 +0000 UTC: field is immutable")),
        "{st}"
    );
    // Another namespace in the body is a 400, as upstream's BeforeUpdate answers.
    let (code, st, _) = call(
        &api,
        "PUT",
        POD,
        JSON,
        &put(&|p| p["metadata"]["namespace"] = json!("default")),
    )
    .await;
    assert_eq!(code, 400, "{st}");
    assert_eq!(
        st["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    // Nodes follow the same metadata rules.
    let (code, st, _) = call(
        &api,
        "PATCH",
        "/api/v1/nodes/node-1",
        MERGE,
        r#"{"metadata":{"uid":"another"}}"#,
    )
    .await;
    assert_eq!(code, 422, "{st}");
    assert_eq!(st["details"]["kind"], "Node", "{st}");
}

/// A POST as the admin, with an Accept header: (status, content type, body as sent).
async fn raw_call(api: &Arc<Api>, uri: &str, accept: &str, body: &str) -> (u16, String, Bytes) {
    let headers = [("content-type", JSON), ("accept", accept)];
    let (code, headers, bytes) = send(api, "POST", uri, &headers, body).await;
    (code, header(&headers, "content-type"), bytes)
}

/// A create answers, as JSON, the encoding the store keeps (not encoded a second time): the
/// same object a GET reads, as one line. Asked for YAML, or created as an events.k8s.io Event,
/// it still answers in that form.
#[tokio::test]
async fn a_create_answers_the_stored_object_in_the_form_asked() {
    let api = api();
    let pods = "/api/v1/namespaces/demo/pods";
    let pod = |n: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{n}"}},"spec":{{"schedulerName":"manual","containers":[{{"name":"c","image":"x"}}]}}}}"#
        )
    };
    let (code, ct, body) = raw_call(&api, pods, JSON, &pod("as-json")).await;
    assert_eq!((code, ct.as_str()), (201, JSON));
    assert!(body.ends_with(b"}\n") && !body[..body.len() - 1].contains(&b'\n'));
    let created: Value = serde_json::from_slice(&body).expect("json");
    let (code, got, _) = call(&api, "GET", &format!("{pods}/as-json"), "", "").await;
    assert_eq!((code, &got), (200, &created));
    assert_eq!(created["spec"]["serviceAccountName"], "default", "admitted");

    let (code, ct, body) = raw_call(&api, pods, "application/yaml", &pod("as-yaml")).await;
    assert_eq!((code, ct.as_str()), (201, "application/yaml"));
    let yaml: Value = serde_yaml::from_slice(&body).expect("yaml");
    assert_eq!(yaml["metadata"]["name"], "as-yaml");

    let event = r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"eventTime":"2026-11-28T10:00:00.000000Z","reportingController":"x","reportingInstance":"y","action":"A","reason":"R","note":"hello","type":"Normal","regarding":{"kind":"Pod","name":"as-json","namespace":"demo"}}"#;
    let (code, _, body) = raw_call(
        &api,
        "/apis/events.k8s.io/v1/namespaces/demo/events",
        JSON,
        event,
    )
    .await;
    let e: Value = serde_json::from_slice(&body).expect("event");
    assert_eq!(
        (code, &e["note"], &e["apiVersion"]),
        (201, &json!("hello"), &json!("events.k8s.io/v1"))
    );
}

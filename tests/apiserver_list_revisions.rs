//! Lists in chunks read one revision: every `continue` page shows the first page's state even
//! while pods are created, changed and deleted between pages; `resourceVersionMatch` reads at a
//! revision; a token or revision the history no longer reaches is kube-apiserver's 410; real
//! kubectl's `--chunk-size` prints every pod once; and a watch-list (`sendInitialEvents`)
//! sends the state, a bookmark marking its end, then changes.

use std::process::Command;

use base64::Engine;

use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::storage::store::HistoryLimits;
use kexplore::apiserver::transport::limits::Limits;
use kexplore::apiserver::transport::pki::{self, ClusterPki};
use kexplore::apiserver::transport::server::{self, Running, ServeOptions};
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::kubectls;

async fn start(pki: &ClusterPki, history: HistoryLimits) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let opts = ServeOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        pki: pki.clone(),
        tokens: TokenFile::default(),
        audit_log: None,
        demo: false,
        scenarios: vec![],
        control_loops: false,
        service_account_issuer: None,
        simulated_run: kexplore::apiserver::request::context::DEFAULT_SIMULATED_RUN,
        scheduler_profiles: None,
    };
    let limits = Limits {
        history,
        ..Limits::default()
    };
    server::start_with_limits(opts, limits)
        .await
        .expect("server starts")
}

struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    fn new(pki: &ClusterPki, srv: &Running) -> Client {
        let identity = format!("{}{}", pki.admin.cert_pem, pki.admin.key_pem.expose());
        let http = reqwest::Client::builder()
            .tls_certs_only(
                reqwest::Certificate::from_pem_bundle(pki.ca.cert_pem.as_bytes()).expect("ca"),
            )
            .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("identity"))
            .build()
            .expect("client");
        Client {
            http,
            base: format!("https://127.0.0.1:{}", srv.addr.port()),
        }
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("get");
        let code = r.status().as_u16();
        (code, r.json().await.unwrap_or(Value::Null))
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> u16 {
        let mut r = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            r = r
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        r.send().await.expect("send").status().as_u16()
    }

    async fn create_pod(&self, ns: &str, name: &str) {
        let pod = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name": name},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"pause:3.10"}]}});
        let code = self
            .send(
                reqwest::Method::POST,
                &format!("/api/v1/namespaces/{ns}/pods"),
                Some(pod),
            )
            .await;
        assert_eq!(code, 201, "create {ns}/{name}");
    }

    async fn namespace(&self, ns: &str) {
        let body = json!({"apiVersion":"v1","kind":"Namespace","metadata":{"name": ns}});
        let code = self
            .send(reqwest::Method::POST, "/api/v1/namespaces", Some(body))
            .await;
        assert_eq!(code, 201);
        // The ServiceAccount controller does not run here (no control loops), and the
        // ServiceAccount admission plugin refuses pods in a namespace without `default`.
        let sa = json!({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name": "default"}});
        let code = self
            .send(
                reqwest::Method::POST,
                &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
                Some(sa),
            )
            .await;
        assert_eq!(code, 201, "default ServiceAccount in {ns}");
    }
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.pointer("/metadata/name").and_then(Value::as_str))
        .map(String::from)
        .collect()
}

fn token(list: &Value) -> String {
    list.pointer("/metadata/continue")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn continue_pages_show_the_first_pages_revision() {
    let pki = pki::mint().expect("pki");
    let srv = start(&pki, HistoryLimits::default()).await;
    let c = Client::new(&pki, &srv);
    c.namespace("chunks").await;
    for n in ["p0", "p1", "p2", "p3", "p4"] {
        c.create_pod("chunks", n).await;
    }
    let path = "/api/v1/namespaces/chunks/pods";
    let (code, first) = c.get(&format!("{path}?limit=2")).await;
    assert_eq!(code, 200, "{first}");
    assert_eq!(names(&first), ["p0", "p1"]);
    assert_eq!(first["metadata"]["remainingItemCount"], json!(3));
    let rv = first["metadata"]["resourceVersion"].clone();
    // The token is upstream's: the key after the last one read, relative to the collection.
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token(&first))
        .expect("unpadded URL-safe base64");
    let rv_number: i64 = rv.as_str().unwrap_or_default().parse().expect("rv");
    assert_eq!(
        serde_json::from_slice::<Value>(&raw).expect("JSON"),
        json!({"v": "meta.k8s.io/v1", "rv": rv_number, "start": "p1\u{0}"})
    );
    let (code, bad) = c
        .get(&format!("{path}?limit=2&continue=not-a-token!"))
        .await;
    assert_eq!(code, 400, "{bad}");
    assert_eq!(
        bad["message"],
        "invalid continue token: continue key is not valid: illegal base64 data at input byte 11"
    );

    // Between pages: one deleted, one changed, one created (after the cursor).
    let pods = reqwest::Method::DELETE;
    assert_eq!(c.send(pods, &format!("{path}/p2"), None).await, 200);
    let patch = json!({"metadata": {"labels": {"changed": "after-the-first-page"}}});
    let code = c
        .http
        .patch(format!("{}{path}/p3", c.base))
        .header("content-type", "application/merge-patch+json")
        .body(patch.to_string())
        .send()
        .await
        .expect("patch")
        .status()
        .as_u16();
    assert_eq!(code, 200);
    c.create_pod("chunks", "p5").await;

    let (code, second) = c
        .get(&format!("{path}?limit=2&continue={}", token(&first)))
        .await;
    assert_eq!(code, 200, "{second}");
    assert_eq!(
        names(&second),
        ["p2", "p3"],
        "the deleted p2 is still there"
    );
    assert_eq!(second["metadata"]["resourceVersion"], rv);
    assert!(
        second["items"][1]
            .pointer("/metadata/labels/changed")
            .is_none(),
        "p3 as it was at the first page: {}",
        second["items"][1]
    );
    assert_eq!(second["metadata"]["remainingItemCount"], json!(1));
    let (_, third) = c
        .get(&format!("{path}?limit=2&continue={}", token(&second)))
        .await;
    assert_eq!(names(&third), ["p4"], "p5 came after the first page");
    assert_eq!(token(&third), "");
    assert!(third["metadata"].get("remainingItemCount").is_none());

    // The same revision read whole, and the latest.
    let (_, exact) = c
        .get(&format!(
            "{path}?resourceVersion={}&resourceVersionMatch=Exact",
            rv.as_str().unwrap_or_default()
        ))
        .await;
    assert_eq!(names(&exact), ["p0", "p1", "p2", "p3", "p4"]);
    let (_, now) = c.get(path).await;
    assert_eq!(names(&now), ["p0", "p1", "p3", "p4", "p5"]);

    // A revision not reached yet: 504 Timeout, ResourceVersionTooLarge.
    let (code, status) = c
        .get(&format!(
            "{path}?resourceVersion=999999&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!((code, status["reason"].as_str()), (504, Some("Timeout")));
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Too large resource version: 999999, current: ")),
        "{status}"
    );
    // Invalid combinations: 422 on ListOptions.
    let (code, status) = c.get(&format!("{path}?resourceVersionMatch=Exact")).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    assert_eq!(status["details"]["kind"], "ListOptions");
    srv.shutdown().await;
}

#[tokio::test]
async fn a_compacted_revision_is_410_and_the_fresh_token_finishes_the_list() {
    let pki = pki::mint().expect("pki");
    let srv = start(
        &pki,
        HistoryLimits {
            max_events: 5,
            max_bytes: usize::MAX,
        },
    )
    .await;
    let c = Client::new(&pki, &srv);
    c.namespace("old").await;
    for n in ["a", "b", "c", "d"] {
        c.create_pod("old", n).await;
    }
    let path = "/api/v1/namespaces/old/pods";
    let (_, first) = c.get(&format!("{path}?limit=2")).await;
    assert_eq!(names(&first), ["a", "b"]);
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // More changes than the history keeps.
    for n in ["e", "f", "g", "h", "i", "j"] {
        c.create_pod("old", n).await;
    }
    let (code, status) = c
        .get(&format!("{path}?limit=2&continue={}", token(&first)))
        .await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (410, Some("Expired")),
        "{status}"
    );
    assert!(
        status["message"].as_str().is_some_and(|m| m.starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        )),
        "{status}"
    );
    let fresh = token(&status);
    assert!(
        !fresh.is_empty(),
        "a token to continue inconsistently: {status}"
    );
    let (code, rest) = c.get(&format!("{path}?limit=20&continue={fresh}")).await;
    assert_eq!(code, 200, "{rest}");
    assert_eq!(names(&rest), ["c", "d", "e", "f", "g", "h", "i", "j"]);

    let (code, status) = c
        .get(&format!(
            "{path}?resourceVersion={rv}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(code, 410, "{status}");
    assert_eq!(
        status["message"],
        "The resourceVersion for the provided list is too old."
    );
    srv.shutdown().await;
}

/// Every kubectl on the machine lists in chunks of 2 (`--chunk-size`, its default is 500):
/// all pods once, in order, with the columns of the first page.
#[tokio::test]
async fn kubectl_chunk_size_prints_every_pod_once() {
    let kubectls = kubectls();
    if kubectls.is_empty() {
        eprintln!("note: kubectl is not installed; skipping");
        return;
    }
    let pki = pki::mint().expect("pki");
    let srv = start(&pki, HistoryLimits::default()).await;
    let c = Client::new(&pki, &srv);
    c.namespace("chunked").await;
    let want: Vec<String> = (0..7).map(|i| format!("pod-{i}")).collect();
    for n in &want {
        c.create_pod("chunked", n).await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        pki::kubeconfig_yaml(&pki, &format!("https://127.0.0.1:{}", srv.addr.port())),
    )
    .expect("kubeconfig");
    for (version, bin) in kubectls {
        let kc = kc.clone();
        let cache = dir.path().join(format!("cache-{version}"));
        let out = tokio::task::spawn_blocking(move || {
            Command::new(bin)
                .arg("--kubeconfig")
                .arg(&kc)
                .arg("--cache-dir")
                .arg(&cache)
                .args([
                    "get",
                    "pods",
                    "-n",
                    "chunked",
                    "--chunk-size=2",
                    "--no-headers",
                ])
                .output()
                .expect("kubectl")
        })
        .await
        .expect("join");
        let text = String::from_utf8_lossy(&out.stdout);
        let got: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(String::from)
            .collect();
        assert_eq!(
            got,
            want,
            "kubectl {version}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn a_watch_list_sends_the_state_then_the_end_bookmark_then_changes() {
    let pki = pki::mint().expect("pki");
    let srv = start(&pki, HistoryLimits::default()).await;
    let c = Client::new(&pki, &srv);
    c.namespace("wl").await;
    for n in ["a", "b"] {
        c.create_pod("wl", n).await;
    }
    let path = "/api/v1/namespaces/wl/pods";
    let (code, status) = c
        .get(&format!("{path}?watch=true&sendInitialEvents=true"))
        .await;
    assert_eq!(code, 422, "{status}");
    assert!(
        status["message"].as_str().is_some_and(|m| m
            .contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")),
        "{status}"
    );
    let mut resp = c
        .http
        .get(format!(
            "{}{path}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10",
            c.base
        ))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status().as_u16(), 200);
    let mut lines: Vec<Value> = Vec::new();
    let mut buf = Vec::new();
    let mut created = false;
    while lines.len() < 4 {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), resp.chunk())
            .await
            .expect("an event within 10 s")
            .expect("stream")
            .expect("not ended");
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            lines.push(serde_json::from_slice(&line).expect("json line"));
        }
        if lines.len() >= 3 && !created {
            c.create_pod("wl", "c").await;
            created = true;
        }
    }
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(kinds, ["ADDED", "ADDED", "BOOKMARK", "ADDED"], "{lines:?}");
    assert_eq!(
        lines[2].pointer("/object/metadata/annotations/k8s.io~1initial-events-end"),
        Some(&json!("true")),
        "{}",
        lines[2]
    );
    assert_eq!(lines[3]["object"]["metadata"]["name"], "c");
    srv.shutdown().await;
}

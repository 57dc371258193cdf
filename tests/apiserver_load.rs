//! Concurrency and consistency over real mTLS: many clients create and read pods while many
//! watchers follow the namespace. Every acknowledged create must be listed, resourceVersions
//! must be unique and increasing, and every watcher must see every event, in order.
//! Defaults are small for CI; the issue's full run is
//! `KEXPLORE_LOAD_CLIENTS=200 KEXPLORE_LOAD_WATCHERS=1000 KEXPLORE_LOAD_SECS=60 cargo test --release --test apiserver_load`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::transport::pki;
use kexplore::apiserver::transport::server::{self, ServeOptions};
use serde_json::{Value, json};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_are_listed_and_every_watcher_sees_every_event_in_order() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (clients, watchers, secs) = (
        env("KEXPLORE_LOAD_CLIENTS", 20),
        env("KEXPLORE_LOAD_WATCHERS", 50),
        env("KEXPLORE_LOAD_SECS", 2),
    );
    let pki = pki::mint().expect("pki");
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
    let srv = server::start(opts).await.expect("server");
    let base = format!("https://127.0.0.1:{}", srv.addr.port());
    let identity = format!("{}{}", pki.admin.cert_pem, pki.admin.key_pem.expose());
    let make = || {
        reqwest::Client::builder()
            .tls_certs_only(
                reqwest::Certificate::from_pem_bundle(pki.ca.cert_pem.as_bytes()).expect("ca"),
            )
            .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("identity"))
            .build()
            .expect("client")
    };
    let c = make();
    let r = c
        .post(format!("{base}/api/v1/namespaces"))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"load"}}"#)
        .send()
        .await
        .expect("ns");
    assert_eq!(r.status().as_u16(), 201);
    // No control loops run here, so no ServiceAccount controller: the ServiceAccount admission
    // plugin refuses pods in a namespace without its `default` account, as upstream's does.
    let r = c
        .post(format!("{base}/api/v1/namespaces/load/serviceaccounts"))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}"#)
        .send()
        .await
        .expect("sa");
    assert_eq!(r.status().as_u16(), 201);
    let start_rv = srv.api.current_rv();

    // Watchers share a few connections (HTTP/2 streams), as informers in one process do.
    let mut watch_tasks = Vec::new();
    let shared: Vec<reqwest::Client> = (0..8).map(|_| make()).collect();
    for w in 0..watchers {
        let client = shared[w as usize % shared.len()].clone();
        let url = format!(
            "{base}/api/v1/namespaces/load/pods?watch=true&resourceVersion={start_rv}&timeoutSeconds={}",
            secs + 30
        );
        watch_tasks.push(tokio::spawn(async move {
            let mut resp = client.get(url).send().await.expect("watch");
            let mut buf = Vec::new();
            let mut rvs: Vec<u64> = Vec::new();
            let done = Instant::now() + Duration::from_secs(secs + 25);
            let mut ended = "the watch ran out of time";
            while Instant::now() < done {
                let chunk = match tokio::time::timeout(Duration::from_secs(3), resp.chunk()).await {
                    Ok(Ok(Some(chunk))) => chunk,
                    Ok(Ok(None)) => {
                        ended = "the server ended the stream";
                        break;
                    }
                    Ok(Err(_)) => {
                        ended = "the stream broke";
                        break;
                    }
                    Err(_) => {
                        ended = "nothing came for 3 s";
                        break;
                    }
                };
                buf.extend_from_slice(&chunk);
                while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let ev: Value = serde_json::from_slice(&line).unwrap_or_default();
                    if ev["type"] != json!("ADDED") {
                        return (rvs, format!("got {ev}"));
                    }
                    let rv = ev
                        .pointer("/object/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    rvs.push(rv);
                }
            }
            (rvs, ended.to_string())
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut workers = Vec::new();
    for i in 0..clients {
        let client = make();
        let base = base.clone();
        workers.push(tokio::spawn(async move {
            let mut acked: Vec<(String, u64)> = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                let name = format!("c{i}-{n}");
                n += 1;
                let body = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name": name},"spec":{"containers":[{"name":"c","image":"pause:3.10"}]}});
                let r = client.post(format!("{base}/api/v1/namespaces/load/pods")).header("content-type", "application/json").body(body.to_string()).send().await.expect("create");
                assert_eq!(r.status().as_u16(), 201);
                let v: Value = r.json().await.expect("json");
                let rv = v.pointer("/metadata/resourceVersion").and_then(Value::as_str).and_then(|s| s.parse().ok()).unwrap_or(0);
                acked.push((name.clone(), rv));
                let g = client.get(format!("{base}/api/v1/namespaces/load/pods/{name}")).send().await.expect("get");
                assert_eq!(g.status().as_u16(), 200);
            }
            acked
        }));
    }
    let mut acked: Vec<(String, u64)> = Vec::new();
    for w in workers {
        acked.extend(w.await.expect("worker"));
    }
    let rvs: BTreeSet<u64> = acked.iter().map(|(_, rv)| *rv).collect();
    assert_eq!(rvs.len(), acked.len(), "resourceVersions are unique");
    let list: Value = c
        .get(format!("{base}/api/v1/namespaces/load/pods"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    let listed: BTreeSet<String> = list["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    p.pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    for (name, _) in &acked {
        assert!(listed.contains(name), "{name} acknowledged but not listed");
    }
    let expected: Vec<u64> = rvs.iter().copied().collect();
    let mut short = Vec::new();
    for (w, t) in watch_tasks.into_iter().enumerate() {
        let (seen, ended) = t.await.expect("watcher");
        if seen != expected {
            let agree = seen
                .iter()
                .zip(&expected)
                .take_while(|(a, b)| a == b)
                .count();
            short.push(format!(
                "watcher {w}: {} events, the first {agree} in order of {} expected; {ended}",
                seen.len(),
                expected.len()
            ));
        }
    }
    assert!(
        short.is_empty(),
        "{} of {watchers} watchers missed events or saw them out of order:\n{}",
        short.len(),
        short
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!(
        "load: {} creates by {clients} clients in {secs}s, {watchers} watchers each saw all",
        acked.len()
    );
    srv.shutdown().await;
}

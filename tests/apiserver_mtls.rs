//! Real mTLS round trips against the in-process server on port 0: a trusted client, no
//! certificate (401 Status), a certificate from a foreign CA (401 Status, not a broken
//! handshake), HTTP/2 and HTTP/1.1, and an RBAC denial for jane.

use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::transport::pki::{self, ClusterPki};
use kexplore::apiserver::transport::server::{self, Running, ServeOptions};
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::SEED_POD;

async fn start(pki: &ClusterPki) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let opts = ServeOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        pki: pki.clone(),
        tokens: TokenFile::default(),
        audit_log: None,
        demo: true,
        scenarios: vec![],
        control_loops: false,
        service_account_issuer: None,
        simulated_run: kexplore::apiserver::request::context::DEFAULT_SIMULATED_RUN,
        scheduler_profiles: None,
    };
    server::start(opts).await.expect("server starts")
}

fn client(ca_pem: &str, identity: Option<(&str, &str)>, http1: bool) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(ca_pem.as_bytes()).expect("ca"));
    if let Some((cert, key)) = identity {
        b = b.identity(
            reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).expect("identity"),
        );
    }
    if http1 {
        b = b.http1_only();
    }
    b.build().expect("client")
}

async fn get(c: &reqwest::Client, url: &str) -> (u16, reqwest::Version, Value) {
    let r = c
        .get(url)
        .send()
        .await
        .expect("request completes (no handshake failure)");
    let (code, version) = (r.status().as_u16(), r.version());
    (code, version, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn trusted_missing_and_foreign_client_certificates() {
    let pki = pki::mint().expect("pki");
    let srv = start(&pki).await;
    let url = format!("https://127.0.0.1:{}/api", srv.addr.port());
    let admin = (
        pki.admin.cert_pem.as_str(),
        pki.admin.key_pem.expose().as_str(),
    );

    let (code, version, body) = get(&client(&pki.ca.cert_pem, Some(admin), false), &url).await;
    assert_eq!((code, version), (200, reqwest::Version::HTTP_2));
    assert_eq!(body["kind"], json!("APIVersions"));
    let (code, version, _) = get(&client(&pki.ca.cert_pem, Some(admin), true), &url).await;
    assert_eq!((code, version), (200, reqwest::Version::HTTP_11));

    let unauthorized = json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401});
    let (code, _, body) = get(&client(&pki.ca.cert_pem, None, false), &url).await;
    assert_eq!((code, body), (401, unauthorized.clone()));

    // Same names, another CA: the handshake completes, authentication says no.
    let foreign = pki::mint().expect("foreign pki");
    let foreign_admin = (
        foreign.admin.cert_pem.as_str(),
        foreign.admin.key_pem.expose().as_str(),
    );
    let (code, _, body) = get(&client(&pki.ca.cert_pem, Some(foreign_admin), false), &url).await;
    assert_eq!((code, body), (401, unauthorized));

    let jane = (
        pki.jane.cert_pem.as_str(),
        pki.jane.key_pem.expose().as_str(),
    );
    let r = client(&pki.ca.cert_pem, Some(jane), false)
        .post(format!(
            "https://127.0.0.1:{}/api/v1/namespaces/kube-system/pods",
            srv.addr.port()
        ))
        .header("content-type", "application/json")
        .body(SEED_POD)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 403);
    srv.shutdown().await;
}

#[tokio::test]
async fn scheduler_and_kubelets_take_the_pod_to_running() {
    let pki = pki::mint().expect("pki");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let opts = ServeOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        pki: pki.clone(),
        tokens: TokenFile::default(),
        audit_log: None,
        demo: true,
        scenarios: vec![],
        control_loops: true,
        service_account_issuer: None,
        simulated_run: kexplore::apiserver::request::context::DEFAULT_SIMULATED_RUN,
        scheduler_profiles: None,
    };
    let srv = server::start(opts).await.expect("server");
    let base = format!("https://127.0.0.1:{}", srv.addr.port());
    let c = client(
        &pki.ca.cert_pem,
        Some((
            pki.admin.cert_pem.as_str(),
            pki.admin.key_pem.expose().as_str(),
        )),
        false,
    );
    let r = c
        .post(format!("{base}/api/v1/namespaces/default/pods"))
        .header("content-type", "application/json")
        .body(SEED_POD)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status().as_u16(), 201);
    let mut pod = Value::Null;
    for _ in 0..100 {
        pod = c
            .get(format!("{base}/api/v1/namespaces/default/pods/app"))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .unwrap_or_default();
        if pod["status"]["phase"] == json!("Running") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(pod["status"]["phase"], json!("Running"));
    // In the seed's cluster every worker fits; LeastAllocated prefers the emptiest, node-3.
    assert_eq!(pod["spec"]["nodeName"], json!("node-3"));
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.244.3."))
    );
    let events: Value = c
        .get(format!(
            "{base}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dapp"
        ))
        .send()
        .await
        .expect("events")
        .json()
        .await
        .unwrap_or_default();
    let reasons: Vec<&str> = events["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["reason"].as_str()).collect())
        .unwrap_or_default();
    assert!(reasons.starts_with(&["Scheduled"]), "{reasons:?}");
    for r in ["Pulling", "Pulled", "Created", "Started"] {
        assert!(reasons.contains(&r), "{reasons:?}");
    }
    let trace = srv.api.traces.pod("default/app").expect("pod trace");
    assert_eq!(
        trace.scheduling().map(|s| s["selected"].clone()),
        Some(json!("node-3"))
    );
    // The kubelet records its Running step (with the write's resourceVersion) just after the
    // write a client can already see: on a busy machine the test may read in between.
    let mut ran = false;
    for _ in 0..50 {
        let t = srv.api.traces.pod("default/app").expect("pod trace");
        ran = t.kubelet.iter().any(|k| k["step"] == json!("Running"));
        if ran {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(ran, "the kubelet's Running step is in the pod's trace");
    // The journey's kubelet stage tells the image's pull as the events do: begun, then done.
    let t = srv.api.traces.pod("default/app").expect("pod trace");
    let steps: Vec<&str> = t
        .kubelet
        .iter()
        .filter_map(|k| k["step"].as_str())
        .collect();
    assert_eq!(
        steps,
        [
            "ContainerCreating",
            "Pulling",
            "Pulled",
            "Started",
            "Running"
        ],
        "{:?}",
        t.kubelet
    );
    srv.shutdown().await;
}

/// The server chooses the suite as Go's TLS server does (AES-128-GCM first), even for a client
/// that lists AES-256-GCM first, as rustls and OpenSSL clients do.
#[tokio::test]
async fn the_server_picks_aes_128_gcm_like_kube_apiserver() {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, ServerName};
    let pki = pki::mint().expect("pki");
    let srv = start(&pki).await;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pki.ca.cert_pem.as_bytes()).expect("ca"))
        .expect("root");
    let cfg = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let first = cfg.crypto_provider().cipher_suites[0].suite();
    assert_eq!(first, rustls::CipherSuite::TLS13_AES_256_GCM_SHA384);
    let tcp = tokio::net::TcpStream::connect(srv.addr)
        .await
        .expect("connect");
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(cfg))
        .connect(ServerName::try_from("localhost").expect("name"), tcp)
        .await
        .expect("handshake");
    let suite = tls.get_ref().1.negotiated_cipher_suite().map(|s| s.suite());
    assert_eq!(suite, Some(rustls::CipherSuite::TLS13_AES_128_GCM_SHA256));
}

//! Fixed inputs for views 3-5, so every step renders the same on every machine:
//! * view 3: the seed's Alibaba-style credentials (`sample-kubeconfigs/alibaba-style.yaml`)
//!   and the API server chain of `pki/alibaba-style/apiserver.crt`, as a recorded handshake;
//! * view 4: `data/journey.json`, a real run of scenarios/app.json through the embedded server;
//! * view 5: the embedded server's demo cluster (the seed's three nodes and a tainted
//!   control-plane node), and a generated 5,000-node cluster.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::json;
use x509_parser::prelude::FromDer;

use super::fixtures::NOW;
use crate::client::explain::{Explanation, HandshakeStep};
use crate::client::http::ApiResponse;
use crate::client::{HandshakeRecord, HandshakeReport, TlsTarget};
use crate::kubeconfig::Kubeconfig;
use crate::pki::CredentialReport;
use crate::scheduler::KubeVersion;
use crate::tui::connection::probe::{ConnectionReport, HttpStep, SELF_SUBJECT_REVIEW};
use crate::tui::sched::fetch;
use crate::tui::sched::model::ClusterData;

fn sample(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kubeconfigs")
        .join(rel)
}

/// The Alibaba-style context's credential report, checked at the fixed NOW.
pub fn alibaba_creds() -> CredentialReport {
    let ctx = Kubeconfig::load_file(&sample("alibaba-style.yaml"))
        .expect("sample")
        .resolve(None)
        .expect("resolves");
    crate::pki::inspect_at(&ctx, NOW).expect("inspects")
}

fn ok(
    status: u16,
    body: serde_json::Value,
) -> Result<ApiResponse, crate::client::http::RequestError> {
    Ok(ApiResponse {
        status,
        http_version: "HTTP/2.0".into(),
        content_type: Some("application/json".into()),
        body: serde_json::to_vec(&body).expect("json"),
    })
}

/// A complete, successful connection with the seed's cluster.
pub fn connection(failure: Option<Explanation>) -> ConnectionReport {
    let pem = std::fs::read(sample("pki/alibaba-style/apiserver.crt")).expect("apiserver.crt");
    let chain: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(&pem)
        .map(|c| c.expect("pem").as_ref().to_vec())
        .collect();
    let ca_subject = x509_parser::parse_x509_certificate(&chain[1])
        .map(|(_, c)| c.subject().as_raw().to_vec())
        .expect("ca");
    let _ = x509_parser::x509::X509Name::from_der(&ca_subject).expect("a DN");
    let failed = failure.is_some();
    let record = HandshakeRecord {
        server_chain: chain,
        server_name: Some("127.0.0.1".into()),
        server_verified: Some(if failed {
            Err("invalid peer certificate: UnknownIssuer".into())
        } else {
            Ok(())
        }),
        server_error: None,
        server_signature_scheme: Some("RSA_PSS_SHA256".into()),
        client_certificate_requested: !failed,
        acceptable_ca_names: if failed { vec![] } else { vec![ca_subject] },
        client_certificate_sent: !failed,
        verification_skipped: false,
        server_first_bytes: Vec::new(),
    };
    let hs = HandshakeReport {
        target: TlsTarget {
            url: "https://127.0.0.1:6443".into(),
            host: "127.0.0.1".into(),
            port: 6443,
            server_name: "127.0.0.1".into(),
        },
        peer_address: Some("127.0.0.1:6443".into()),
        tcp_connect_time: Some(Duration::from_micros(310)),
        handshake_time: (!failed).then_some(Duration::from_micros(2140)),
        offered_versions: vec!["TLSv1.3", "TLSv1.2"],
        offered_alpn: vec!["h2".into(), "http/1.1".into()],
        tls_version: (!failed).then(|| "TLSv1.3".into()),
        cipher_suite: (!failed).then(|| "TLS13_AES_128_GCM_SHA256".into()),
        key_exchange_group: (!failed).then(|| "X25519".into()),
        alpn: (!failed).then(|| "h2".into()),
        record,
        failure,
    };
    let requests = if failed {
        vec![]
    } else {
        vec![
            HttpStep {
                method: "GET",
                path: "/version",
                result: ok(
                    200,
                    json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1", "platform": "linux/amd64"}),
                ),
            },
            HttpStep {
                method: "GET",
                path: "/api",
                result: ok(
                    200,
                    json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "192.168.0.10:6443"}]}),
                ),
            },
            HttpStep {
                method: "POST",
                path: SELF_SUBJECT_REVIEW,
                result: ok(
                    201,
                    json!({"kind": "SelfSubjectReview", "status": {"userInfo": {"username": "252771643302762862", "groups": ["system:users", "system:authenticated"]}}}),
                ),
            },
        ]
    };
    ConnectionReport {
        context: "alibaba".into(),
        server_url: "https://127.0.0.1:6443".into(),
        handshake: Ok(hs),
        requests,
    }
}

pub fn unknown_authority() -> Explanation {
    Explanation {
        step: HandshakeStep::ServerCertificate,
        cause: "unknown-authority",
        message: "the server presented a certificate for CN=kube-apiserver issued by CN=c0256a3b8e4b948bb9c21e66b0e1d9a72, but the kubeconfig trusts only: CN=kubernetes".into(),
        fix: "put the CA that issued the server certificate in certificate-authority-data (kubeadm: /etc/kubernetes/pki/ca.crt), or check that the server URL is the right cluster".into(),
        kubectl_says: Vec::new(),
    }
}

/// The embedded server's demo cluster (bootstrap::demo), as `kubectl get nodes,pods -o yaml`.
pub const DEMO: &str = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: control-plane, labels: {kubernetes.io/hostname: control-plane, node-role.kubernetes.io/control-plane: ""}},
   spec: {taints: [{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]},
   status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-3, labels: {kubernetes.io/hostname: node-3}}, status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: workload-node-1, namespace: demo}, spec: {nodeName: node-1, containers: [{name: main, image: pause, resources: {requests: {cpu: 2500m, memory: 3Gi}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: workload-node-2, namespace: demo}, spec: {nodeName: node-2, containers: [{name: main, image: pause, resources: {requests: {cpu: 1800m, memory: 3584Mi}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: workload-node-3, namespace: demo}, spec: {nodeName: node-3, containers: [{name: main, image: pause, resources: {requests: {cpu: "3", memory: 6Gi}}}]}}
"#;

/// scenarios/app.json, the seed's pod, in namespace default.
pub fn app_pod() -> Pod {
    let mut v: serde_json::Value =
        serde_json::from_str(include_str!("../../../scenarios/app.json")).expect("app.json");
    v["metadata"]["namespace"] = json!("default");
    serde_json::from_value(v).expect("a Pod")
}

/// The demo cluster with app.json to place, as the embedded server's scheduler (v1.33) sees it.
pub fn demo_cluster() -> ClusterData {
    fetch::from_files(
        &[("demo.yaml".into(), DEMO.into())],
        None,
        app_pod(),
        KubeVersion::parse("1.33").expect("version"),
    )
    .expect("demo cluster")
}

/// `n` generated nodes (8 pods each) and a small pending pod: the 5,000-node case.
pub fn big_cluster(n: usize) -> ClusterData {
    let (nodes, running) = crate::scheduler::generate::cluster(n, 8);
    ClusterData {
        source: format!("{n} generated nodes"),
        nodes,
        running,
        pod: crate::scheduler::generate::pending_pod(
            crate::scheduler::generate::PendingKind::Plain,
            0,
        ),
        release: Default::default(),
    }
}

/// The demo cluster as a live server lists it, with app.json Pending beside the bound
/// workloads; `focus` picks the pod to simulate, as choosing it in the pods list does.
pub fn demo_live(focus: Option<&str>) -> crate::tui::sched::live::LiveCluster {
    use crate::scheduler::manifests::Manifests;
    use crate::tui::sched::live::{Listing, LiveCluster};
    let mut m = Manifests::default();
    m.add_text("demo.yaml", DEMO).expect("demo");
    let mut pods: Vec<Pod> = m.pods.iter().map(|(p, _)| p.clone()).collect();
    pods.push(app_pod());
    let version = KubeVersion::parse("1.33").expect("version");
    // The pending app pod is in the list the server returns, so focus can find it there.
    let app = serde_json::to_string(&app_pod()).expect("json");
    let data = fetch::from_files(
        &[("demo.yaml".into(), DEMO.into()), ("app.json".into(), app)],
        focus,
        app_pod(),
        version,
    )
    .expect("demo cluster");
    LiveCluster {
        data,
        listing: Listing::new(&pods, vec![]),
        feed: None,
        model: None,
    }
}

//! Real TLS handshakes against a rustls server on loopback, one per failure the Connection view
//! must explain. The PKI is minted per test with rcgen.

use std::sync::Arc;

use base64::Engine as _;
use kexplore::client::handshake;
use kexplore::kubeconfig::Kubeconfig;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const SERVER_DATE: &str = "Wed, 01 Jan 2020 00:00:05 GMT";
const SERVER_ANSWER: &str = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nDate: Wed, 01 Jan 2020 00:00:05 GMT\r\nConnection: close\r\n\r\n";

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(cn: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = p.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(p, key),
    }
}

fn leaf(
    ca: &Ca,
    cn: &str,
    org: Option<&str>,
    sans: &[&str],
    eku: ExtendedKeyUsagePurpose,
    expired: bool,
) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut p =
        CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.distinguished_name = DistinguishedName::new();
    if let Some(o) = org {
        p.distinguished_name.push(DnType::OrganizationName, o);
    }
    p.distinguished_name.push(DnType::CommonName, cn);
    p.extended_key_usages = vec![eku];
    if expired {
        p.not_before = time::macros::datetime!(2020-01-01 0:00 UTC);
        p.not_after = time::macros::datetime!(2021-01-01 0:00 UTC);
    }
    let cert = p.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Serves TLS handshakes on loopback until the test ends; requests (but does not require) a
/// client certificate from `client_ca`, as kube-apiserver does.
async fn server(server_pem: &str, key_pem: &str, client_ca: &Ca) -> u16 {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(server_pem.as_bytes())
        .map(|c| c.unwrap())
        .collect();
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(client_ca.pem.as_bytes()).unwrap())
        .unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
        .allow_unauthenticated()
        .build()
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that goes on to ask something gets an answer with this server's clock
                // (set in the past, as on a machine whose clock is wrong).
                if let Ok(mut tls) = acceptor.accept(tcp).await {
                    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                    let mut buf = [0u8; 1024];
                    if matches!(tls.read(&mut buf).await, Ok(n) if n > 0) {
                        let _ = tls.write_all(SERVER_ANSWER.as_bytes()).await;
                        let _ = tls.shutdown().await;
                    }
                }
            });
        }
    });
    port
}

/// A kubeconfig for `https://127.0.0.1:PORT`, every credential inline.
fn kubeconfig(
    port: u16,
    ca_pem: &str,
    client: Option<&(String, String)>,
    extra_cluster: &str,
) -> kexplore::kubeconfig::ResolvedContext {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let user = match client {
        Some((c, k)) => format!(
            "{{client-certificate-data: {}, client-key-data: {}}}",
            b64(c),
            b64(k)
        ),
        None => "{}".into(),
    };
    let text = format!(
        "current-context: t\nclusters:\n- name: c\n  cluster: {{server: 'https://127.0.0.1:{port}', certificate-authority-data: {}{extra_cluster}}}\n\
         users:\n- name: u\n  user: {user}\ncontexts:\n- name: t\n  context: {{cluster: c, user: u}}\n",
        b64(ca_pem)
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(&path, text).unwrap();
    Kubeconfig::load_file(&path).unwrap().resolve(None).unwrap()
}

fn provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[tokio::test]
async fn a_good_handshake_records_every_fact() {
    provider();
    let cluster_ca = ca("kexplore-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1", "localhost"],
        ExtendedKeyUsagePurpose::ServerAuth,
        false,
    );
    let client = leaf(
        &cluster_ca,
        "kexplore-admin",
        Some("system:masters"),
        &[],
        ExtendedKeyUsagePurpose::ClientAuth,
        false,
    );
    let port = server(&srv, &srv_key, &cluster_ca).await;
    let ctx = kubeconfig(port, &cluster_ca.pem, Some(&client), "");
    let r = handshake(&ctx).await.unwrap();
    assert!(r.succeeded(), "{:?}", r.failure);
    assert_eq!(r.tls_version.as_deref(), Some("TLSv1.3"));
    assert!(r.cipher_suite.as_deref().unwrap().starts_with("TLS13_"));
    assert_eq!(r.record.server_chain.len(), 1);
    assert_eq!(r.record.server_verified, Some(Ok(())));
    assert!(r.record.client_certificate_requested);
    assert!(r.record.client_certificate_sent);
    // The acceptable CA names are the DER subject of the client CA.
    let ca_der = CertificateDer::from_pem_slice(cluster_ca.pem.as_bytes()).unwrap();
    let (_, ca_cert) = x509_parser::parse_x509_certificate(ca_der.as_ref()).unwrap();
    assert_eq!(
        r.record.acceptable_ca_names,
        vec![ca_cert.subject().as_raw().to_vec()]
    );
}

#[tokio::test]
async fn an_unknown_authority_names_both_cas() {
    provider();
    let cluster_ca = ca("real-cluster-ca");
    let other_ca = ca("some-other-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        false,
    );
    let port = server(&srv, &srv_key, &cluster_ca).await;
    let ctx = kubeconfig(port, &other_ca.pem, None, "");
    let r = handshake(&ctx).await.unwrap();
    let f = r.failure.expect("the handshake must fail");
    assert_eq!(f.cause, "unknown-authority");
    assert!(
        f.message.contains("CN=real-cluster-ca") && f.message.contains("CN=some-other-ca"),
        "{}",
        f.message
    );
    assert_eq!(
        r.record.server_chain.len(),
        1,
        "the presented chain is still recorded"
    );
}

#[tokio::test]
async fn a_name_mismatch_lists_the_sans_and_tls_server_name_fixes_it() {
    provider();
    let cluster_ca = ca("kexplore-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["kubernetes.default", "10.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        false,
    );
    let port = server(&srv, &srv_key, &cluster_ca).await;
    let ctx = kubeconfig(port, &cluster_ca.pem, None, "");
    let f = handshake(&ctx).await.unwrap().failure.expect("mismatch");
    assert_eq!(f.cause, "name-mismatch");
    assert!(f.message.contains("kubernetes.default"), "{}", f.message);
    assert!(
        f.fix.contains("tls-server-name: kubernetes.default"),
        "{}",
        f.fix
    );
    let ctx = kubeconfig(
        port,
        &cluster_ca.pem,
        None,
        ", tls-server-name: kubernetes.default",
    );
    let r = handshake(&ctx).await.unwrap();
    assert!(r.succeeded(), "{:?}", r.failure);
    assert!(!r.record.client_certificate_sent);
}

#[tokio::test]
async fn an_expired_server_certificate_says_when() {
    provider();
    let cluster_ca = ca("kexplore-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        true,
    );
    let port = server(&srv, &srv_key, &cluster_ca).await;
    let ctx = kubeconfig(port, &cluster_ca.pem, None, "");
    let f = handshake(&ctx).await.unwrap().failure.expect("expired");
    assert_eq!(f.cause, "server-cert-expired");
    assert!(f.message.contains("2021-01-01T00:00:00Z"), "{}", f.message);
    assert!(f.message.contains("the local clock says"), "{}", f.message);
    assert!(
        f.message
            .contains(&format!("the server's Date header says {SERVER_DATE}")),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_not_yet_valid_server_certificate_shows_both_clocks() {
    provider();
    let cluster_ca = ca("kexplore-ca");
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    p.not_before = time::macros::datetime!(2200-01-01 0:00 UTC);
    p.not_after = time::macros::datetime!(2201-01-01 0:00 UTC);
    let srv = p.signed_by(&key, &cluster_ca.issuer).unwrap();
    let port = server(&srv.pem(), &key.serialize_pem(), &cluster_ca).await;
    let ctx = kubeconfig(port, &cluster_ca.pem, None, "");
    let f = handshake(&ctx)
        .await
        .unwrap()
        .failure
        .expect("not yet valid");
    assert_eq!(f.cause, "server-cert-not-yet-valid");
    assert!(
        f.message.contains("valid only from 2200-01-01T00:00:00Z"),
        "{}",
        f.message
    );
    assert!(f.message.contains("the local clock says"), "{}", f.message);
    assert!(f.message.contains(SERVER_DATE), "{}", f.message);
    assert!(f.fix.contains("clocks"), "{}", f.fix);
}

#[tokio::test]
async fn a_server_whose_clock_cannot_be_read_is_said_so() {
    provider();
    // A TLS server that never answers HTTP: the Date header cannot be read.
    let cluster_ca = ca("kexplore-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        true,
    );
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(srv.as_bytes())
        .map(|c| c.unwrap())
        .collect();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            chain,
            PrivateKeyDer::from_pem_slice(srv_key.as_bytes()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    drop(tls); // closes without a word
                }
            });
        }
    });
    let ctx = kubeconfig(port, &cluster_ca.pem, None, "");
    let f = handshake(&ctx).await.unwrap().failure.expect("expired");
    assert_eq!(f.cause, "server-cert-expired");
    assert!(
        f.message.contains("the server's clock could not be read"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_client_certificate_the_server_refuses_in_the_handshake_is_explained() {
    provider();
    // A server that requires a client certificate from its own CA, and one from another CA.
    let cluster_ca = ca("kexplore-ca");
    let other_ca = ca("some-other-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        false,
    );
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(srv.as_bytes())
        .map(|c| c.unwrap())
        .collect();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(cluster_ca.pem.as_bytes()).unwrap())
        .unwrap();
    // TLS 1.2, so the verdict on the client certificate is part of the handshake (in TLS 1.3
    // the client is done before the server judges it; tests/remote_failures.rs covers that).
    let config = rustls::ServerConfig::builder_with_protocol_versions(&[&rustls::version::TLS12])
        .with_client_cert_verifier(
            rustls::server::WebPkiClientVerifier::builder(Arc::new(roots))
                .build()
                .unwrap(),
        )
        .with_single_cert(
            chain,
            PrivateKeyDer::from_pem_slice(srv_key.as_bytes()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(tcp).await;
            });
        }
    });
    let client = leaf(
        &other_ca,
        "mallory",
        Some("system:masters"),
        &[],
        ExtendedKeyUsagePurpose::ClientAuth,
        false,
    );
    let ctx = kubeconfig(port, &cluster_ca.pem, Some(&client), "");
    let r = handshake(&ctx).await.unwrap();
    assert!(r.record.client_certificate_sent);
    let f = r.failure.expect("the server refuses the certificate");
    assert_eq!(f.cause, "client-cert-rejected", "{}", f.message);
    assert!(
        f.message.contains("rejected the client certificate"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn insecure_skip_tls_verify_records_but_does_not_enforce() {
    provider();
    let cluster_ca = ca("real-cluster-ca");
    let other_ca = ca("some-other-ca");
    let (srv, srv_key) = leaf(
        &cluster_ca,
        "kube-apiserver",
        None,
        &["127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
        false,
    );
    let port = server(&srv, &srv_key, &cluster_ca).await;
    let ctx = kubeconfig(
        port,
        &other_ca.pem,
        None,
        ", insecure-skip-tls-verify: true",
    );
    let r = handshake(&ctx).await.unwrap();
    assert!(r.succeeded());
    assert!(r.record.verification_skipped);
    assert!(matches!(r.record.server_verified, Some(Err(_))));
}

#[tokio::test]
async fn nothing_listening_is_a_tcp_failure() {
    provider();
    let cluster_ca = ca("kexplore-ca");
    // Port 1 (tcpmux) is closed on loopback; a port just freed may be taken by a server
    // another test starts meanwhile.
    let ctx = kubeconfig(1, &cluster_ca.pem, None, "");
    let f = handshake(&ctx).await.unwrap().failure.expect("refused");
    assert_eq!(f.cause, "tcp-connect-failed");
}

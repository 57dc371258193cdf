//! `kexplore certs --connect` against `kexplore serve` (a separate process) set up to produce
//! each failure that happens after, or because of, what the kubeconfig holds: a client
//! certificate the server rejects (401), a user RBAC stops (403), an X.509 v1 client
//! certificate, and the server's own certificate pinned as the CA. Each message names its cause.

use base64::Engine as _;
use kexplore::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};
use serde_json::Value;

mod apiserver_support;
mod remote_support;
use apiserver_support::{ServeProcess, openssl_in, which};
use remote_support::{kexplore, stdout};

const YEAR: i64 = 365 * 24 * 3600;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A kubeconfig for the served cluster with this CA data and client certificate and key.
fn kubeconfig(
    srv: &ServeProcess,
    name: &str,
    ca: &[u8],
    cert: &[u8],
    key: &[u8],
    ns: &str,
) -> String {
    let path = srv.dir.path().join(name);
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n\
             users:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n\
             contexts:\n- name: t\n  context: {{cluster: c, user: u, namespace: {ns}}}\n",
            srv.url,
            b64(ca),
            b64(cert),
            b64(key)
        ),
    )
    .expect("write kubeconfig");
    path.display().to_string()
}

fn read(srv: &ServeProcess, file: &str) -> Vec<u8> {
    std::fs::read(srv.pki(file)).expect("pki file")
}

/// `certs --connect -o json`: (exit code, server.error).
fn connect(kc: &str) -> (i32, String, Value) {
    let out = kexplore(&["certs", "--connect", "--kubeconfig", kc, "-o", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = j["server"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (out.status.code().unwrap_or(-1), err, j)
}

#[test]
fn a_client_certificate_from_another_ca_is_a_401_that_names_the_issuer() {
    let srv = ServeProcess::start(&[]);
    let foreign = Authority::self_signed(
        &CertSpec::ca(
            vec![(Attr::CN, "someone-elses-ca".into())],
            now() - 60,
            now() + YEAR,
        ),
        generate_key(KeyKind::EcdsaP256).expect("key"),
    )
    .expect("ca");
    let key = generate_key(KeyKind::EcdsaP256).expect("key");
    let client = foreign
        .issue(
            &CertSpec::client(
                vec![
                    (Attr::O, "system:masters".into()),
                    (Attr::CN, "mallory".into()),
                ],
                now() - 60,
                now() + YEAR,
            ),
            &key,
        )
        .expect("client");
    let kc = kubeconfig(
        &srv,
        "foreign.yaml",
        &read(&srv, "ca.crt"),
        client.cert_pem.as_bytes(),
        client.key_pem.expose().as_bytes(),
        "default",
    );
    let (code, err, j) = connect(&kc);
    assert_eq!(code, 1, "{j}");
    assert_eq!(
        j["server"]["verified"], true,
        "the server's side was fine: {j}"
    );
    assert!(err.contains("401 Unauthorized"), "{err}");
    assert!(
        err.contains("does not accept the client certificate CN=mallory"),
        "{err}"
    );
    assert!(err.contains("issued by CN=someone-elses-ca"), "{err}");
    assert!(
        err.contains("CN=kexplore-ca"),
        "the client CAs the server named: {err}"
    );
    let text = stdout(&kexplore(&["certs", "--connect", "--kubeconfig", &kc]));
    assert!(
        text.contains("Failed at        HTTP request: 401 Unauthorized"),
        "{text}"
    );
    assert!(
        text.contains("Fix              use a client certificate issued by"),
        "{text}"
    );
}

#[test]
fn a_user_rbac_stops_gets_a_403_with_the_servers_words() {
    let srv = ServeProcess::start(&[]);
    let ca = read(&srv, "ca.crt");
    let (cert, key) = (read(&srv, "jane.crt"), read(&srv, "jane.key"));
    // jane manages pods in default only.
    let ok = kubeconfig(&srv, "jane-default.yaml", &ca, &cert, &key, "default");
    let (code, err, _) = connect(&ok);
    assert_eq!((code, err.as_str()), (0, ""));
    let kc = kubeconfig(&srv, "jane-system.yaml", &ca, &cert, &key, "kube-system");
    let (code, err, _) = connect(&kc);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("403 Forbidden"), "{err}");
    assert!(
        err.contains("User \"jane\" cannot list resource \"pods\""),
        "{err}"
    );
    assert!(
        err.contains("kubectl auth can-i list pods -n kube-system"),
        "{err}"
    );
}

#[test]
fn an_x509_v1_client_certificate_is_named_as_such() {
    if which("openssl").is_none() {
        eprintln!("note: openssl not found; the X.509 v1 client certificate case is skipped");
        return;
    }
    let srv = ServeProcess::start(&[]);
    let d = srv.dir.path();
    let run = |args: &[&str]| openssl_in(d, args);
    // `openssl x509 -req` without extensions writes a version 1 certificate, as old tooling did.
    run(&[
        "genpkey",
        "-algorithm",
        "EC",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-out",
        "v1.key",
    ]);
    run(&[
        "req",
        "-new",
        "-key",
        "v1.key",
        "-subj",
        "/O=system:masters/CN=v1-user",
        "-out",
        "v1.csr",
    ]);
    let (ca_crt, ca_key) = (srv.pki("ca.crt"), srv.pki("ca.key"));
    run(&[
        "x509",
        "-req",
        "-in",
        "v1.csr",
        "-CA",
        ca_crt.to_str().unwrap_or_default(),
        "-CAkey",
        ca_key.to_str().unwrap_or_default(),
        "-set_serial",
        "7",
        "-days",
        "2",
        "-out",
        "v1.crt",
    ]);
    let cert = std::fs::read(d.join("v1.crt")).expect("v1.crt");
    let key = std::fs::read(d.join("v1.key")).expect("v1.key");
    let kc = kubeconfig(
        &srv,
        "v1.yaml",
        &read(&srv, "ca.crt"),
        &cert,
        &key,
        "default",
    );
    let (code, err, _) = connect(&kc);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("X.509 version 1"), "{err}");
    assert!(err.contains("Go's kube-apiserver accepts"), "{err}");
}

#[test]
fn the_servers_own_certificate_pinned_as_the_ca_is_explained() {
    let srv = ServeProcess::start(&[]);
    let kc = kubeconfig(
        &srv,
        "pinned.yaml",
        &read(&srv, "apiserver.crt"),
        &read(&srv, "admin.crt"),
        &read(&srv, "admin.key"),
        "default",
    );
    let (code, err, j) = connect(&kc);
    assert_eq!(code, 1, "{j}");
    assert_eq!(j["server"]["verified"], false);
    assert!(
        err.contains("holds the server's own certificate (CN=kube-apiserver)"),
        "{err}"
    );
    assert!(
        err.contains("kubectl (Go) accepts such a pinned leaf, rustls requires the issuing CA"),
        "{err}"
    );
}

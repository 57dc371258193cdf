//! An exec plugin that answers with a client certificate instead of a token: `certs --connect`
//! offers that certificate in the real handshake with `kexplore serve` (which verifies it
//! against its CA), and says so. Also what a missing plugin does to `certs --connect`: its
//! installHint as the fix, exit 1 (the kubeconfig is fine; getting a credential failed).

use std::path::Path;

use kexplore::kubeconfig::Secret;
use kexplore::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};
use serde_json::{Value, json};

mod apiserver_support;
mod remote_support;
use apiserver_support::ServeProcess;
use remote_support::{kexplore, stdout};

const DAY: i64 = 86_400;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// A client certificate for `cn` in group system:masters, signed by `ca`: (cert PEM, key PEM).
fn client_cert(ca: &Authority, cn: &str) -> (String, String) {
    let key = generate_key(KeyKind::EcdsaP256).expect("key");
    let spec = CertSpec::client(
        vec![(Attr::O, "system:masters".into()), (Attr::CN, cn.into())],
        now() - DAY,
        now() + DAY,
    );
    let m = ca.issue(&spec, &key).expect("issue");
    (m.cert_pem, m.key_pem.expose().clone())
}

/// A plugin script that prints `answer`, and a kubeconfig whose only credential it is.
fn kubeconfig_with_plugin(dir: &Path, srv: &ServeProcess, answer: Option<&Value>) -> String {
    let plugin = dir.join("cred-plugin");
    if let Some(answer) = answer {
        std::fs::write(dir.join("answer.json"), answer.to_string()).expect("answer");
        apiserver_support::write_executable(
            &plugin,
            "#!/bin/sh\ncat \"$(dirname \"$0\")/answer.json\"\n",
        );
    }
    let ca = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        std::fs::read(srv.pki("ca.crt")).expect("ca.crt"),
    );
    let kc = dir.join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\n\
             users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n      command: {}\n\
             \x20     installHint: 'install it with: apt-get install cred-plugin'\n\
             contexts:\n- name: t\n  context: {{cluster: c, user: u}}\n",
            srv.url,
            plugin.display()
        ),
    )
    .expect("kubeconfig");
    kc.to_string_lossy().into_owned()
}

fn answer(cert: &str, key: &str) -> Value {
    json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
           "status": {"clientCertificateData": cert, "clientKeyData": key}})
}

#[test]
fn certs_connect_offers_the_exec_plugins_certificate_and_the_server_verifies_it() {
    let srv = ServeProcess::start(&["--no-demo"]);
    let ca = Authority::from_pem(
        &std::fs::read_to_string(srv.pki("ca.crt")).expect("ca.crt"),
        &Secret::new(std::fs::read_to_string(srv.pki("ca.key")).expect("ca.key")),
    )
    .expect("the served CA");
    let (cert, key) = client_cert(&ca, "exec-cert-user");
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig_with_plugin(dir.path(), &srv, Some(&answer(&cert, &key)));

    let out = kexplore(&["certs", "--connect", "--kubeconfig", &kc]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let sent = text
        .lines()
        .find(|l| l.contains("Client cert"))
        .unwrap_or_default();
    assert!(
        sent.contains("✓ Client cert      sent") && sent.contains("CN=exec-cert-user"),
        "{text}"
    );
    assert!(sent.contains("returned by the exec plugin"), "{sent}");
    assert!(text.contains("verified by the server"), "{text}");
    assert!(text.contains("✓ Handshake        complete"), "{text}");

    // The server's own view: the request was authenticated by that certificate.
    let out = kexplore(&[
        "journey",
        "--kubeconfig",
        &kc,
        "-f",
        &pod(dir.path()),
        "-o",
        "json",
    ]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stage = |n: &str| {
        j["stages"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["stage"] == n))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        stage("tls-handshake")["detail"]["client_certificate_sent"],
        true,
        "{j}"
    );
    assert_eq!(
        stage("authentication")["detail"]["user"],
        "exec-cert-user",
        "{j}"
    );
}

fn pod(dir: &Path) -> String {
    let p = dir.join("app.json");
    std::fs::write(&p, apiserver_support::SEED_POD).expect("pod");
    p.to_string_lossy().into_owned()
}

#[test]
fn a_certificate_from_another_ca_is_offered_and_refused_by_name() {
    let srv = ServeProcess::start(&["--no-demo"]);
    let other = Authority::self_signed(
        &CertSpec::ca(
            vec![(Attr::CN, "not-the-cluster-ca".into())],
            now() - DAY,
            now() + DAY,
        ),
        generate_key(KeyKind::EcdsaP256).expect("key"),
    )
    .expect("a foreign CA");
    let (cert, key) = client_cert(&other, "stranger");
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig_with_plugin(dir.path(), &srv, Some(&answer(&cert, &key)));
    let out = kexplore(&["certs", "--connect", "--kubeconfig", &kc]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("sent CN=stranger"), "{text}");
    assert!(
        text.contains("does not accept the client certificate CN=stranger")
            && text.contains("issued by CN=not-the-cluster-ca"),
        "{text}"
    );
}

#[test]
fn a_missing_plugin_shows_its_install_hint_and_exits_1() {
    let srv = ServeProcess::start(&["--no-demo"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig_with_plugin(dir.path(), &srv, None);
    // Without --connect nothing needs a credential: the plugin is not run.
    let out = kexplore(&["certs", "--kubeconfig", &kc]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    let out = kexplore(&["certs", "--connect", "--kubeconfig", &kc]);
    let text = stdout(&out);
    // Exit 1, not 2: the kubeconfig is well formed; obtaining a credential failed, as a
    // refused connection would (CONTRACT.md: 1 the operation failed).
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("not found"), "{text}");
    assert!(
        text.contains("Fix              install it with: apt-get install cred-plugin"),
        "{text}"
    );
    let out = kexplore(&["certs", "--connect", "--kubeconfig", &kc, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let error = j["server"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("cred-plugin") && error.contains("apt-get install cred-plugin"),
        "{j}"
    );
    // The journey stops at the request it could not send, and says why.
    let out = kexplore(&["journey", "--kubeconfig", &kc, "-f", &pod(dir.path())]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("no HTTP response: user 'u': exec plugin")
            && text.contains("install it with: apt-get install cred-plugin"),
        "{text}"
    );
}

#[test]
fn a_failing_plugin_shows_its_stderr_in_certs_connect() {
    let srv = ServeProcess::start(&["--no-demo"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig_with_plugin(dir.path(), &srv, None);
    let plugin = dir.path().join("cred-plugin");
    apiserver_support::write_executable(
        &plugin,
        "#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\necho 'refresh token expired: run cred-plugin login' >&2\nexit 4\n",
    );
    let out = kexplore(&["certs", "--connect", "--kubeconfig", &kc]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("refresh token expired: run cred-plugin login")
            && text.contains("exit status: 4"),
        "{text}"
    );
    assert!(
        text.contains("Fix              run the plugin by hand"),
        "{text}"
    );
}

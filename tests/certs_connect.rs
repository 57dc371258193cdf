//! `kexplore certs --connect` against a real `openssl s_server` that asks for a client
//! certificate, serving the Alibaba-style sample's API server certificate.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pki() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kubeconfigs/pki/alibaba-style")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts s_server, or returns None (with a note) where openssl is not installed.
fn s_server(port: u16) -> Option<Server> {
    let pki = pki();
    let child = Command::new("openssl")
        .args([
            "s_server",
            "-accept",
            &port.to_string(),
            "-www",
            "-verify",
            "1",
        ])
        .arg("-cert")
        .arg(pki.join("apiserver.crt"))
        .arg("-key")
        .arg(pki.join("apiserver.key"))
        .arg("-CAfile")
        .arg(pki.join("apiserver-ca.crt"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!("note: openssl not installed; skipping");
        return None;
    };
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "openssl s_server did not start listening"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

fn kubeconfig(dir: &Path, sample: &str, port: u16) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample-kubeconfigs")
            .join(sample),
    )
    .unwrap();
    let p = dir.join("config");
    std::fs::write(
        &p,
        text.replace("127.0.0.1:6443", &format!("127.0.0.1:{port}")),
    )
    .unwrap();
    p
}

fn certs_connect(kubeconfig: &Path, json: bool) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kexplore"));
    cmd.args(["certs", "--connect", "--kubeconfig"])
        .arg(kubeconfig);
    if json {
        cmd.args(["-o", "json"]);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_presented_chain_is_captured_and_linked_to_the_kubeconfig_cas() {
    let port = free_port();
    let Some(_server) = s_server(port) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), "alibaba-style.yaml", port);
    let (code, out) = certs_connect(&kc, true);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let server = &v["server"];
    assert_eq!(server["verified"], true);
    assert_eq!(server["client_certificate_requested"], true);
    assert_eq!(server["error"], serde_json::Value::Null);
    assert!(
        server["tls_version"]
            .as_str()
            .unwrap()
            .starts_with("TLSv1.")
    );
    assert_eq!(server["chain"][0]["subject"], "CN=kube-apiserver");
    // The leaf's issuer is the cluster CA that the kubeconfig carries.
    let cluster_ca_fp = v["cluster"]["certificate_authority"][0]["sha256_fingerprint"].clone();
    assert_eq!(server["chain"][0]["issued_by"], cluster_ca_fp);
    let (code, text) = certs_connect(&kc, false);
    assert_eq!(code, 0);
    assert!(text.contains("CertificateRequest the server asked for a client certificate from: CN=c0256a3b8e4b948bb9c21e66b0e1d9a72"), "{text}");
    assert!(text.contains("✓ Handshake        complete"), "{text}");
}

#[test]
fn a_server_from_another_ca_fails_with_the_cause_and_exit_1() {
    let port = free_port();
    let Some(_server) = s_server(port) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), "kubeadm.yaml", port);
    let (code, out) = certs_connect(&kc, true);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["server"]["verified"], false);
    let error = v["server"]["error"].as_str().unwrap();
    assert!(
        error.contains("issued by CN=c0256a3b8e4b948bb9c21e66b0e1d9a72")
            && error.contains("CN=kubernetes"),
        "{error}"
    );
    let (_, text) = certs_connect(&kc, false);
    assert!(
        text.contains("✗ Failed at        server certificate"),
        "{text}"
    );
}

#[test]
fn nothing_listening_is_exit_1_with_a_reason() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), "kubeadm.yaml", port);
    let (code, text) = certs_connect(&kc, false);
    assert_eq!(code, 1);
    assert!(
        text.contains("✗ Failed at        TCP connect: cannot connect to 127.0.0.1"),
        "{text}"
    );
}

//! kexplore's "kubectl says" lines are kubectl's own: each broken connection is made for real
//! (`kexplore serve`, `openssl s_server` with minted certificates), `kexplore certs --connect`
//! names the line, and every kubectl on the machine, pointed at the same kubeconfig, must print
//! it. `journey` and the JSON `server.error` carry the same lines.

mod apiserver_support;

use std::net::{IpAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use apiserver_support::kubectl::Kubectl;
use apiserver_support::{ServeProcess, kubectls, which};
use kexplore::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};

const Y2020: i64 = 1_577_836_800;
const Y2021: i64 = 1_609_459_200;
const Y2025: i64 = 1_735_689_600;
const Y2124: i64 = 4_859_740_800;
const Y2125: i64 = 4_891_363_200;

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-kubeconfigs")
        .join(rel)
}

/// A field of the first user or cluster of a sample, base64-decoded.
fn sample_field(file: &str, field: &str) -> String {
    use base64::Engine as _;
    let text = std::fs::read_to_string(sample(file)).unwrap();
    let value = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{field}: ")))
        .unwrap_or_else(|| panic!("{file} has no {field}"));
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(value.trim().trim_matches('"'))
            .unwrap(),
    )
    .unwrap()
}

enum User<'a> {
    Cert(&'a str, &'a str),
    Token(&'a str),
}

struct Kc<'a> {
    server: String,
    ca: Option<&'a str>,
    tls_server_name: Option<&'a str>,
    user: User<'a>,
    namespace: &'a str,
}

fn write_kubeconfig(dir: &Path, name: &str, k: &Kc<'_>) -> PathBuf {
    let mut cluster = format!("    server: {}\n", k.server);
    if let Some(ca) = k.ca {
        cluster.push_str(&format!(
            "    certificate-authority-data: {}\n",
            b64(ca.as_bytes())
        ));
    }
    if let Some(n) = k.tls_server_name {
        cluster.push_str(&format!("    tls-server-name: {n}\n"));
    }
    let user = match k.user {
        User::Cert(c, key) => format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(c.as_bytes()),
            b64(key.as_bytes())
        ),
        User::Token(t) => format!("    token: {t}\n"),
    };
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: {}\ncurrent-context: x\n",
        k.namespace
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// kubectl prints its own clock: compare the words around it.
fn mask_time(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("current time ") {
        let after = &rest[i + "current time ".len()..];
        let end = after.find(' ').unwrap_or(after.len());
        out.push_str(&rest[..i]);
        out.push_str("current time <now>");
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn kexplore(args: &[&str], kc: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kc)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The lines `certs --connect` attributes to kubectl; the JSON says the same.
fn kexplore_says(kc: &Path) -> Vec<String> {
    let (code, text) = kexplore(&["certs", "--connect"], kc);
    assert_eq!(code, 1, "the connection fails: {text}");
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("    kubectl says     "))
        .map(str::to_string)
        .collect();
    let (_, json) = kexplore(&["certs", "--connect", "-o", "json"], kc);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let error = v["server"]["error"].as_str().unwrap_or_default();
    for l in &lines {
        assert!(
            mask_time(error).contains(&mask_time(&format!("\nkubectl says: {l}"))),
            "server.error carries {l:?}: {error}"
        );
    }
    lines
}

/// What every kubectl prints to stderr for `get pods` and `get --raw /api`.
/// Each kubectl gets a discovery cache of its own: with the shared `~/.kube/cache`, a cache that
/// an earlier run left for the same port makes `get pods` skip discovery and print the GET's
/// `(Unauthorized)` where discovery would have printed client-go's sentence.
fn kubectl_stderr(version: &str, bin: &Path, kc: &Path) -> String {
    let mut all = String::new();
    for args in [&["get", "pods"][..], &["get", "--raw", "/api"][..]] {
        let kubectl = Kubectl::new(version, bin, kc.to_path_buf());
        let mut args = args.to_vec();
        args.push("--request-timeout=20s");
        all.push_str(&kubectl.run(&args).stderr);
    }
    all
}

/// kexplore names exactly `expected` (in order, each line containing its fragment), and every
/// kubectl prints each of those lines.
fn check(kc: &Path, expected: &[&str]) {
    let says = kexplore_says(kc);
    assert_eq!(
        says.len(),
        expected.len(),
        "kexplore says {says:#?}, expected {expected:#?}"
    );
    for (line, want) in says.iter().zip(expected) {
        assert!(
            mask_time(line).contains(&mask_time(want)),
            "{line:?} does not contain {want:?}"
        );
    }
    let clients = kubectls();
    if clients.is_empty() {
        eprintln!("note: no kubectl on the machine; kexplore's words were not compared");
    }
    for (version, bin) in clients {
        let stderr = mask_time(&kubectl_stderr(&version, &bin, kc));
        for line in &says {
            assert!(
                stderr.contains(&mask_time(line)),
                "kubectl {version} does not print {line:?}; it printed:\n{stderr}"
            );
        }
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `openssl s_server` with the given certificate and key (PEM files in `dir`), plus `extra`.
fn s_server(dir: &Path, cert: &str, key: &str, extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    std::fs::write(dir.join("srv.crt"), cert).unwrap();
    std::fs::write(dir.join("srv.key"), key).unwrap();
    let child = Command::new("openssl")
        .current_dir(dir)
        .args(["s_server", "-accept", &port.to_string(), "-www"])
        .args(["-cert", "srv.crt", "-key", "srv.key"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_server");
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "s_server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    (server, port)
}

fn ca(cn: &str) -> Authority {
    Authority::self_signed(
        &CertSpec::ca(vec![(Attr::CN, cn.into())], Y2025, Y2125),
        generate_key(KeyKind::EcdsaP256).unwrap(),
    )
    .unwrap()
}

/// A serving certificate from `ca`: (cert PEM, key PEM).
fn serving(
    ca: &Authority,
    cn: &str,
    dns: &[&str],
    ips: &[&str],
    nb: i64,
    na: i64,
) -> (String, String) {
    let spec = CertSpec::server(
        vec![(Attr::CN, cn.into())],
        dns.iter().map(|s| s.to_string()).collect(),
        ips.iter().map(|s| s.parse::<IpAddr>().unwrap()).collect(),
        nb,
        na,
    );
    let m = ca
        .issue(&spec, &generate_key(KeyKind::EcdsaP256).unwrap())
        .unwrap();
    (m.cert_pem, m.key_pem.expose().clone())
}

fn have_tools() -> bool {
    let ok = which("openssl").is_some();
    if !ok {
        eprintln!("note: openssl not installed; skipping");
    }
    ok
}

const PREFIX: &str = "Unable to connect to the server: tls: failed to verify certificate: ";

#[test]
fn server_certificate_failures_name_go_s_x509_words() {
    let srv = ServeProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let serve_ca = std::fs::read_to_string(srv.pki("ca.crt")).unwrap();
    let admin = (
        std::fs::read_to_string(srv.pki("admin.crt")).unwrap(),
        std::fs::read_to_string(srv.pki("admin.key")).unwrap(),
    );
    let kubeadm_ca = sample_field("kubeadm.yaml", "certificate-authority-data");
    // A kubeconfig from another cluster: the server's CA is not the one it trusts.
    let kc = write_kubeconfig(
        dir.path(),
        "unknown",
        &Kc {
            server: srv.url.clone(),
            ca: Some(&kubeadm_ca),
            tls_server_name: None,
            user: User::Cert(&admin.0, &admin.1),
            namespace: "default",
        },
    );
    check(
        &kc,
        &[&format!(
            "{PREFIX}x509: certificate signed by unknown authority"
        )],
    );
    let (_, journey) = kexplore(&["journey", "-f", &pod(dir.path())], &kc);
    assert!(
        journey.contains(&format!(
            "kubectl get says: {PREFIX}x509: certificate signed by unknown authority\n"
        )),
        "{journey}"
    );
    // No CA at all: the system's roots do not know the cluster's CA either.
    let kc = write_kubeconfig(
        dir.path(),
        "system-roots",
        &Kc {
            server: srv.url.clone(),
            ca: None,
            tls_server_name: None,
            user: User::Cert(&admin.0, &admin.1),
            namespace: "default",
        },
    );
    check(
        &kc,
        &[&format!(
            "{PREFIX}x509: certificate signed by unknown authority"
        )],
    );
    // The right CA, the wrong name: by DNS name, then by IP address.
    for (name, want) in [
        (
            "foo.example",
            "x509: certificate is valid for localhost, kubernetes, kubernetes.default, kubernetes.default.svc, not foo.example",
        ),
        (
            "127.0.0.2",
            "x509: certificate is valid for 127.0.0.1, ::1, not 127.0.0.2",
        ),
    ] {
        let kc = write_kubeconfig(
            dir.path(),
            name,
            &Kc {
                server: srv.url.clone(),
                ca: Some(&serve_ca),
                tls_server_name: Some(name),
                user: User::Cert(&admin.0, &admin.1),
                namespace: "default",
            },
        );
        check(&kc, &[&format!("{PREFIX}{want}")]);
    }
}

fn pod(dir: &Path) -> String {
    let p = dir.join("pod.json");
    std::fs::write(&p, apiserver_support::SEED_POD).unwrap();
    p.display().to_string()
}

/// `kubeadm reset && kubeadm init` leaves a new CA with the old name: Go names the candidate
/// it tried and why its signature failed.
#[test]
fn a_same_named_ca_is_the_hint_go_gives() {
    let pki = tempfile::tempdir().unwrap();
    std::fs::copy(
        sample("pki/wrong-ca/other-ca.crt"),
        pki.path().join("ca.crt"),
    )
    .unwrap();
    std::fs::copy(
        sample("pki/wrong-ca/other-ca.key"),
        pki.path().join("ca.key"),
    )
    .unwrap();
    Command::new("chmod")
        .arg("600")
        .arg(pki.path().join("ca.key"))
        .status()
        .unwrap();
    let srv = ServeProcess::start_with_pki(&[], Some(pki.path()));
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(sample("wrong-ca.yaml"))
        .unwrap()
        .replace("https://127.0.0.1:6443", &srv.url);
    let kc = dir.path().join("config");
    std::fs::write(&kc, text).unwrap();
    check(
        &kc,
        &[&format!(
            "{PREFIX}x509: certificate signed by unknown authority (possibly because of \"x509: ECDSA verification failure\" while trying to verify candidate authority certificate \"kubernetes\")"
        )],
    );
}

/// Certificates kexplore serve would never present, served by openssl.
#[test]
fn expired_and_nameless_server_certificates() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ca = ca("words-ca");
    // (name, served certificate and key, tls-server-name, Go's words)
    type Case<'a> = (&'a str, (String, String), Option<&'a str>, String);
    let cases: [Case<'_>; 5] = [
        (
            "expired",
            serving(&ca, "kube-apiserver", &["localhost"], &["127.0.0.1"], Y2020, Y2021),
            None,
            "x509: certificate has expired or is not yet valid: current time 2026-01-01T00:00:00Z is after 2021-01-01T00:00:00Z".into(),
        ),
        (
            "no-ip-sans",
            serving(&ca, "kube-apiserver", &["localhost"], &[], Y2025, Y2125),
            None,
            "x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs".into(),
        ),
        (
            "no-names",
            serving(&ca, "kube-apiserver", &[], &["127.0.0.1"], Y2025, Y2125),
            Some("localhost"),
            "x509: certificate is not valid for any names, but wanted to match localhost".into(),
        ),
        (
            "legacy-cn",
            serving(&ca, "localhost", &[], &[], Y2025, Y2125),
            Some("localhost"),
            "x509: certificate relies on legacy Common Name field, use SANs instead".into(),
        ),
        (
            "not-yet-valid",
            serving(&ca, "kube-apiserver", &["localhost"], &["127.0.0.1"], Y2124, Y2125),
            None,
            "x509: certificate has expired or is not yet valid: current time 2026-01-01T00:00:00Z is before 2124-01-01T00:00:00Z".into(),
        ),
    ];
    for (name, (cert, key), tls_server_name, want) in cases {
        let (_server, port) = s_server(dir.path(), &cert, &key, &[]);
        let kc = write_kubeconfig(
            dir.path(),
            name,
            &Kc {
                server: format!("https://127.0.0.1:{port}"),
                ca: Some(&ca.cert.cert_pem),
                tls_server_name,
                user: User::Token("t"),
                namespace: "default",
            },
        );
        check(&kc, &[&format!("{PREFIX}{want}")]);
    }
}

/// The server judged the credentials: 401 and 403 are kubectl's `error:` and `Error from server`.
#[test]
fn refused_credentials_and_rbac_are_kubectl_s_401_and_403() {
    let srv = ServeProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let serve_ca = std::fs::read_to_string(srv.pki("ca.crt")).unwrap();
    let expired = (
        sample_field("expired-client.yaml", "client-certificate-data"),
        sample_field("expired-client.yaml", "client-key-data"),
    );
    let jane = (
        std::fs::read_to_string(srv.pki("jane.crt")).unwrap(),
        std::fs::read_to_string(srv.pki("jane.key")).unwrap(),
    );
    let unauthorized = [
        "error: You must be logged in to the server (the server has asked for the client to provide credentials)",
        "error: You must be logged in to the server (Unauthorized)",
    ];
    for (name, user) in [
        ("expired", User::Cert(&expired.0, &expired.1)),
        ("token", User::Token("not-a-token")),
    ] {
        let kc = write_kubeconfig(
            dir.path(),
            name,
            &Kc {
                server: srv.url.clone(),
                ca: Some(&serve_ca),
                tls_server_name: None,
                user,
                namespace: "default",
            },
        );
        check(&kc, &unauthorized);
        if name == "token" {
            let (_, journey) = kexplore(&["journey", "-f", &pod(dir.path())], &kc);
            for l in unauthorized {
                assert!(
                    journey.contains(&format!("kubectl get says: {l}\n")),
                    "{journey}"
                );
            }
        }
    }
    let kc = write_kubeconfig(
        dir.path(),
        "jane",
        &Kc {
            server: srv.url.clone(),
            ca: Some(&serve_ca),
            tls_server_name: None,
            user: User::Cert(&jane.0, &jane.1),
            namespace: "kube-system",
        },
    );
    check(
        &kc,
        &[
            "Error from server (Forbidden): pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"kube-system\"",
        ],
    );
}

/// Servers that refuse during the handshake (TLS 1.2) or right after it (TLS 1.3) send an
/// alert; nothing listening is kubectl's "was refused".
#[test]
fn alerts_and_a_closed_port_are_kubectl_s_words() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ca = ca("alert-ca");
    let (cert, key) = serving(
        &ca,
        "kube-apiserver",
        &["localhost"],
        &["127.0.0.1"],
        Y2025,
        Y2125,
    );
    std::fs::write(dir.path().join("client-ca.crt"), &ca.cert.cert_pem).unwrap();
    let require = [
        "-Verify",
        "1",
        "-verify_return_error",
        "-CAfile",
        "client-ca.crt",
    ];
    let foreign = (
        sample_field("ecdsa.yaml", "client-certificate-data"),
        sample_field("ecdsa.yaml", "client-key-data"),
    );
    for (tls12, user, want) in [
        // A token, not no credentials at all: for a user with none, kubectl first prompts
        // for a username.
        (
            false,
            User::Token("t"),
            "remote error: tls: certificate required",
        ),
        (
            true,
            User::Token("t"),
            "remote error: tls: handshake failure",
        ),
        (
            false,
            User::Cert(&foreign.0, &foreign.1),
            "remote error: tls: unknown certificate authority",
        ),
        (
            true,
            User::Cert(&foreign.0, &foreign.1),
            "remote error: tls: unknown certificate authority",
        ),
    ] {
        let mut extra = require.to_vec();
        if tls12 {
            extra.push("-tls1_2");
        }
        let (_server, port) = s_server(dir.path(), &cert, &key, &extra);
        let kc = write_kubeconfig(
            dir.path(),
            "alert",
            &Kc {
                server: format!("https://127.0.0.1:{port}"),
                ca: Some(&ca.cert.cert_pem),
                tls_server_name: None,
                user,
                namespace: "default",
            },
        );
        check(&kc, &[&format!("Unable to connect to the server: {want}")]);
    }
    // Not TLS at all: an HTTP server's status line, or anything else.
    for (reply, want) in [
        (
            &b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"[..],
            "http: server gave HTTP response to HTTPS client",
        ),
        (
            &b"SSH-2.0-OpenSSH_9.6\r\n"[..],
            "tls: first record does not look like a TLS handshake",
        ),
    ] {
        let plain = TcpListener::bind("127.0.0.1:0").unwrap();
        let plain_port = plain.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut conn in plain.incoming().flatten() {
                use std::io::{Read as _, Write as _};
                // Read the request (a ClientHello here), then answer in its own protocol.
                let _ = conn.read(&mut [0u8; 4096]);
                let _ = conn.write_all(reply);
            }
        });
        let kc = write_kubeconfig(
            dir.path(),
            "plain",
            &Kc {
                server: format!("https://127.0.0.1:{plain_port}"),
                ca: Some(&ca.cert.cert_pem),
                tls_server_name: None,
                user: User::Token("t"),
                namespace: "default",
            },
        );
        check(&kc, &[&format!("Unable to connect to the server: {want}")]);
    }
    let port = free_port();
    let kc = write_kubeconfig(
        dir.path(),
        "closed",
        &Kc {
            server: format!("https://127.0.0.1:{port}"),
            ca: Some(&ca.cert.cert_pem),
            tls_server_name: None,
            user: User::Token("t"),
            namespace: "default",
        },
    );
    check(
        &kc,
        &[&format!(
            "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?"
        )],
    );
}

//! `kexplore serve` as a process: the audit log in audit.k8s.io/v1 form, `--scenario`
//! preloading, `--pki-dir` reuse across restarts, `--token-auth-file`, and bad input → exit 2.

use std::process::Command;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::Kubectl;
use apiserver_support::{SEED_POD, ServeProcess, openssl_in, wait_for, which};

fn curl(srv: &ServeProcess, args: &[&str], path: &str) -> (u16, Value) {
    let (code, body) = srv.curl_admin(args, path);
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// POST a JSON body as the admin.
fn curl_post(srv: &ServeProcess, body: &str, path: &str) -> (u16, Value) {
    curl(
        srv,
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-d",
            body,
        ],
        path,
    )
}

#[test]
fn audit_log_scenario_and_pki_reuse() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let scenario_dir = tempfile::tempdir().expect("tempdir");
    let scenario = scenario_dir.path().join("cluster.yaml");
    std::fs::write(
        &scenario,
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: edge-1\n  labels: {zone: a}\nstatus:\n  capacity: {cpu: \"2\", memory: 2Gi, pods: \"10\"}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: already-there, namespace: team}\nspec:\n  nodeName: edge-1\n  containers: [{name: c, image: nginx}]\n",
    )
    .expect("write scenario");
    let audit = scenario_dir.path().join("audit.log");
    let srv = ServeProcess::start(&[
        "--no-demo",
        "--scenario",
        scenario.to_str().unwrap_or_default(),
        "--audit-log-path",
        audit.to_str().unwrap_or_default(),
    ]);
    let (code, nodes) = curl(&srv, &[], "/api/v1/nodes");
    assert_eq!(code, 200);
    let names: Vec<&str> = nodes["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["edge-1"]);
    let (code, pod) = curl(&srv, &[], "/api/v1/namespaces/team/pods/already-there");
    assert_eq!(
        (code, pod.pointer("/status/phase").and_then(Value::as_str)),
        (200, Some("Running"))
    );
    let (code, _) = curl_post(&srv, SEED_POD, "/api/v1/namespaces/default/pods");
    assert_eq!(code, 201);
    // The scheduler puts it on the only node.
    let bound = wait_for(std::time::Duration::from_secs(10), || {
        let (_, p) = curl(&srv, &[], "/api/v1/namespaces/default/pods/app");
        p.pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .map(String::from)
    });
    assert_eq!(bound.as_deref(), Some("edge-1"));

    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let create = lines
        .iter()
        .find(|e| {
            e["verb"] == "create" && e.pointer("/objectRef/resource") == Some(&Value::from("pods"))
        })
        .expect("audited create");
    assert_eq!(create["kind"], "Event");
    assert_eq!(create["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(create["stage"], "ResponseComplete");
    assert_eq!(create["requestURI"], "/api/v1/namespaces/default/pods");
    assert_eq!(
        create.pointer("/user/username"),
        Some(&Value::from("kexplore-admin"))
    );
    assert_eq!(
        create.pointer("/responseStatus/code"),
        Some(&Value::from(201))
    );
    assert_eq!(
        create.pointer("/annotations/authorization.k8s.io~1decision"),
        Some(&Value::from("allow"))
    );
    assert!(create["auditID"].as_str().is_some_and(|id| id.len() == 36));
    let text = std::fs::read_to_string(&audit).unwrap_or_default();
    assert!(
        !text.contains("PRIVATE KEY"),
        "no key material in the audit log"
    );

    // Restart on the same --pki-dir: same CA and certificates, so old clients keep working.
    let keep = tempfile::tempdir().expect("tempdir");
    let pki_dir = keep.path().join("pki");
    let first = ServeProcess::start_with_pki(&["--no-demo"], Some(&pki_dir));
    let ca_before = std::fs::read(first.pki("ca.crt")).unwrap_or_default();
    let admin_before = std::fs::read(first.pki("admin.crt")).unwrap_or_default();
    drop(first);
    let second = ServeProcess::start_with_pki(&["--no-demo"], Some(&pki_dir));
    assert_eq!(
        std::fs::read(second.pki("ca.crt")).unwrap_or_default(),
        ca_before
    );
    assert_eq!(
        std::fs::read(second.pki("admin.crt")).unwrap_or_default(),
        admin_before
    );
    let (code, _) = curl(&second, &[], "/version");
    assert_eq!(code, 200);
    drop(srv);
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--scenario",
            "/nonexistent/x.yaml",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.yaml"));
    assert!(!ca_before.is_empty());
}

#[test]
fn bearer_tokens_from_a_token_file() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "s3cr3t-token,bob,1001,\"developers,qa\"\n").expect("write");
    let srv = ServeProcess::start(&[
        "--no-demo",
        "--token-auth-file",
        tokens.to_str().unwrap_or_default(),
    ]);
    let whoami = |token: &str| -> (u16, Value) {
        let out = Command::new("curl")
            .args(["-sS", "-w", "\n%{http_code}", "--cacert"])
            .arg(srv.pki("ca.crt"))
            .args([
                "-H",
                &format!("Authorization: Bearer {token}"),
                "-H",
                "Content-Type: application/json",
                "-X",
                "POST",
                "-d",
                r#"{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"}"#,
            ])
            .arg(format!(
                "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                srv.url
            ))
            .output()
            .expect("curl");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
        (
            code.trim().parse().unwrap_or(0),
            serde_json::from_str(body).unwrap_or(Value::Null),
        )
    };
    let (code, r) = whoami("s3cr3t-token");
    assert_eq!(code, 201);
    assert_eq!(
        r.pointer("/status/userInfo/username"),
        Some(&Value::from("bob"))
    );
    assert_eq!(
        r.pointer("/status/userInfo/uid"),
        Some(&Value::from("1001"))
    );
    let (code, _) = whoami("wrong");
    assert_eq!(code, 401);
}

/// ring cannot generate RSA keys, so kexplore mints ECDSA P-256; a kubeadm-style PKI made of
/// RSA 2048 keys by openssl is served as it is: the RSA serving certificate in the handshake,
/// the RSA CA checking the client, curl and kubectl through it.
#[test]
fn a_kubeadm_style_rsa_pki_dir_is_served_as_is() {
    if which("openssl").is_none() || which("curl").is_none() {
        eprintln!("note: openssl or curl is not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let openssl = |args: &[&str]| openssl_in(d, args);
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-subj",
        "/CN=kubernetes",
        "-days",
        "30",
    ]);
    std::fs::write(
        d.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext");
    std::fs::write(d.join("client.ext"), "extendedKeyUsage=clientAuth\n").expect("ext");
    for (name, subject, ext) in [
        ("apiserver", "/CN=kube-apiserver", "server.ext"),
        (
            "admin",
            "/O=system:masters/CN=kubernetes-admin",
            "client.ext",
        ),
        ("jane", "/O=developers/CN=jane", "client.ext"),
    ] {
        let (key, csr, crt) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        openssl(&[
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", subject,
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "30",
            "-extfile",
            ext,
        ]);
    }
    for key in ["ca.key", "apiserver.key", "admin.key", "jane.key"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join(key), std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
    }
    let served_before = std::fs::read(d.join("apiserver.crt")).expect("read");
    let srv = ServeProcess::start_with_pki(&[], Some(d));
    assert_eq!(
        std::fs::read(d.join("apiserver.crt")).expect("read"),
        served_before,
        "the given serving certificate is kept, not re-minted"
    );
    let (code, api) = curl(&srv, &[], "/api");
    assert_eq!(code, 200, "{api}");
    assert_eq!(api["kind"], "APIVersions");
    let (code, review) = curl_post(
        &srv,
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    );
    assert_eq!(code, 201, "{review}");
    assert_eq!(
        review["status"]["userInfo"]["username"], "kubernetes-admin",
        "{review}"
    );
    let s_client = Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{}", srv.port)])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("s_client");
    let text = String::from_utf8_lossy(&s_client.stdout);
    assert!(
        text.contains("Server public key is 2048 bit"),
        "the RSA serving key is in the handshake:\n{text}"
    );
    if let Some(kubectl) = which("kubectl") {
        let out = Kubectl::new("kubectl", &kubectl, srv.kubeconfig()).run(&[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ]);
        assert_eq!(out.stdout, "kubernetes-admin");
    }
}

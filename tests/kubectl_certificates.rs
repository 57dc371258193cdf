//! A new user, the way a workshop makes one: a key and a certificate request from openssl
//! (`CN=alice, O=devs, O=ops`), a CertificateSigningRequest through kubectl, `kubectl
//! certificate approve` (a protobuf body from recent kubectls), the cluster CA's certificate
//! back in `status.certificate` — verified by openssl against the CA — and alice herself
//! through kubectl: `auth whoami` says who Kubernetes thinks she is. Also a denial, a request
//! the signer may not honour (a server usage), one for system:masters refused at admission, an
//! approval by a user without `approve` on the signer refused, a request that is not a CSR,
//! and a kubelet's serving certificate with its subjectAltNames; alice's email and URI
//! subjectAltNames are copied into hers.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, openssl_in, wait_for};

fn csr_manifest(name: &str, request_pem: &[u8], usages: &str) -> String {
    csr_manifest_for(
        "kubernetes.io/kube-apiserver-client",
        name,
        request_pem,
        usages,
    )
}

fn csr_manifest_for(signer: &str, name: &str, request_pem: &[u8], usages: &str) -> String {
    use base64::Engine;
    let request = base64::engine::general_purpose::STANDARD.encode(request_pem);
    format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {{name: {name}}}\nspec:\n  request: {request}\n  signerName: {signer}\n  expirationSeconds: 86400\n  usages: [{usages}]\n"
    )
}

fn csr(k: &Kubectl, name: &str) -> Value {
    let out = k.ok(&["get", "csr", name, "-o", "json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {e}: {out}", k.label))
}

fn condition_column(k: &Kubectl, name: &str) -> String {
    let out = k.ok(&["get", "csr", name, "--no-headers"]);
    out.split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// The certificate the CSR `name` was issued, written to `<name>.crt`, verified by openssl
/// against the cluster CA for `purpose`: its subject and the extensions `exts` as openssl prints
/// them.
fn verified_certificate(
    k: &Kubectl,
    srv: &ServeProcess,
    name: &str,
    purpose: &str,
    exts: &str,
) -> String {
    use base64::Engine;
    let dir = srv.dir.path();
    let c = csr(k, name);
    let cert = base64::engine::general_purpose::STANDARD
        .decode(c["status"]["certificate"].as_str().unwrap_or_default())
        .expect("base64 certificate");
    let file = format!("{name}.crt");
    std::fs::write(dir.join(&file), &cert).expect("write the certificate");
    let ca = srv.pki("ca.crt");
    let ca = ca.to_str().unwrap_or_default();
    openssl_in(dir, &["verify", "-purpose", purpose, "-CAfile", ca, &file]);
    let out = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(["x509", "-in", &file, "-noout", "-subject", "-ext", exts])
        .output()
        .expect("openssl x509");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn request(dir: &Path, name: &str, subject: &str) -> Vec<u8> {
    request_with(dir, name, subject, &["-newkey", "rsa:2048"])
}

/// `openssl req` for a new key, as `key_and_extra` says (`-newkey …`, `-addext …`).
fn request_with(dir: &Path, name: &str, subject: &str, key_and_extra: &[&str]) -> Vec<u8> {
    let (key, out) = (format!("{name}.key"), format!("{name}.csr"));
    let mut args = vec![
        "req", "-new", "-nodes", "-keyout", &key, "-subj", subject, "-out", &out,
    ];
    args.extend_from_slice(key_and_extra);
    openssl_in(dir, &args);
    std::fs::read(dir.join(out)).expect("the CSR openssl wrote")
}

/// A kubelet's serving certificate, as TLS bootstrapping asks for it: `O=system:nodes`,
/// `CN=system:node:<node>`, the node's name and address as subjectAltNames; signed once
/// approved, for a server, with those names (what metrics-server's "doesn't contain any IP
/// SANs" is about). Without a subjectAltName the signer refuses it, in upstream's words.
fn a_kubelet_serving_certificate(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let dir = srv.dir.path();
    let signer = "kubernetes.io/kubelet-serving";
    // A kubelet's key is ECDSA P-256: no key encipherment.
    let usages = "digital signature, server auth";
    let subject = "/O=system:nodes/CN=system:node:node-1";
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let san = [
        &ec[..],
        &["-addext", "subjectAltName=DNS:node-1,IP:10.0.0.11"],
    ]
    .concat();
    for (name, pem) in [
        (
            "node-1-serving",
            request_with(dir, "node-1-serving", subject, &san),
        ),
        (
            "node-1-no-san",
            request_with(dir, "node-1-no-san", subject, &ec),
        ),
    ] {
        let file = dir.join(format!("{name}.yaml"));
        std::fs::write(&file, csr_manifest_for(signer, name, &pem, usages)).expect("write");
        k.ok(&["create", "-f", file.to_str().unwrap_or_default()]);
        k.ok(&["certificate", "approve", name]);
    }
    let done = wait_for(Duration::from_secs(20), || {
        let rows = k.ok(&[
            "get",
            "csr",
            "node-1-serving",
            "node-1-no-san",
            "--no-headers",
        ]);
        let last: Vec<&str> = rows
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .collect();
        (last == ["Approved,Issued", "Approved,Failed"]).then_some(())
    });
    assert!(done.is_some(), "{label}: {}", k.ok(&["get", "csr"]));
    let refused = csr(k, "node-1-no-san");
    assert_eq!(
        refused["status"]["conditions"][1]["message"], "DNS or IP subjectAltName is required",
        "{label}: {refused}"
    );
    let text = verified_certificate(
        k,
        srv,
        "node-1-serving",
        "sslserver",
        "subjectAltName,extendedKeyUsage",
    );
    for want in [
        "O = system:nodes, CN = system:node:node-1",
        "DNS:node-1, IP Address:10.0.0.11",
        "TLS Web Server Authentication",
    ] {
        assert!(text.contains(want), "{label}: {want:?} not in {text}");
    }
}

fn a_new_user_through_a_signed_request(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let dir = srv.dir.path();
    // With the email and URI subjectAltNames a client may carry (a SPIFFE ID): the signer
    // copies them into the certificate as upstream's permissive policy does.
    let san =
        "subjectAltName=email:alice@example.com,URI:spiffe://kexplore.local/ns/default/sa/alice";
    let pem = request_with(
        dir,
        "alice",
        "/CN=alice/O=devs/O=ops",
        &["-newkey", "rsa:2048", "-addext", san],
    );
    let file = dir.join("alice-csr.yaml");
    std::fs::write(&file, csr_manifest("alice", &pem, "client auth")).expect("write");
    let out = k.ok(&["create", "-f", file.to_str().unwrap_or_default()]);
    assert_eq!(
        out.trim(),
        "certificatesigningrequest.certificates.k8s.io/alice created",
        "{label}"
    );
    let out = k.ok(&["get", "csr"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "AGE",
            "SIGNERNAME",
            "REQUESTOR",
            "REQUESTEDDURATION",
            "CONDITION"
        ],
        "{label}: {out}"
    );
    // The requester is who the server authenticated, whatever the body says.
    let c = csr(k, "alice");
    assert_eq!(c["spec"]["username"], "kexplore-admin", "{label}: {c}");
    assert_eq!(condition_column(k, "alice"), "Pending", "{label}");

    let out = k.ok(&["certificate", "approve", "alice"]);
    assert!(
        out.contains("certificatesigningrequest.certificates.k8s.io/alice approved"),
        "{label}: {out}"
    );
    let issued = wait_for(Duration::from_secs(20), || {
        (condition_column(k, "alice") == "Approved,Issued").then_some(())
    });
    assert!(
        issued.is_some(),
        "{label}: {}",
        k.ok(&["get", "csr", "alice"])
    );
    let c = csr(k, "alice");
    let approved = &c["status"]["conditions"][0];
    assert_eq!(approved["type"], "Approved", "{label}: {c}");
    assert_eq!(approved["reason"], "KubectlApprove", "{label}: {c}");
    assert!(approved["lastUpdateTime"].is_string(), "{label}: {c}");

    let text = verified_certificate(
        k,
        srv,
        "alice",
        "sslclient",
        "extendedKeyUsage,subjectAltName",
    );
    assert!(
        text.contains("email:alice@example.com, URI:spiffe://kexplore.local/ns/default/sa/alice"),
        "{label}: {text}"
    );
    assert!(
        text.contains("CN = alice, O = devs, O = ops"),
        "{label}: {text}"
    );
    assert!(
        text.contains("TLS Web Client Authentication"),
        "{label}: {text}"
    );

    // Alice herself: CN is her name, each O a group.
    let crt = dir.join("alice.crt");
    let key = dir.join("alice.key");
    k.ok(&[
        "config",
        "set-credentials",
        "alice",
        &format!("--client-certificate={}", crt.display()),
        &format!("--client-key={}", key.display()),
    ]);
    let cluster = k.ok(&["config", "view", "-o", "jsonpath={.clusters[0].name}"]);
    k.ok(&[
        "config",
        "set-context",
        "alice",
        &format!("--cluster={cluster}"),
        "--user=alice",
    ]);
    let me = k.ok(&["--context", "alice", "auth", "whoami", "-o", "json"]);
    let me: Value = serde_json::from_str(&me).expect("a SelfSubjectReview");
    assert_eq!(
        me["status"]["userInfo"]["username"], "alice",
        "{label}: {me}"
    );
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!(["devs", "ops", "system:authenticated"]),
        "{label}: {me}"
    );
}

fn denied_refused_and_failed(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let dir = srv.dir.path();
    let pem = request(dir, "bob", "/CN=bob");
    let file = dir.join("bob-csr.yaml");
    std::fs::write(&file, csr_manifest("bob", &pem, "client auth")).expect("write");
    k.ok(&["create", "-f", file.to_str().unwrap_or_default()]);
    k.ok(&["certificate", "deny", "bob"]);
    assert_eq!(condition_column(k, "bob"), "Denied", "{label}");
    // A server usage: approved, but the client signer refuses it.
    let pem = request(dir, "web", "/CN=web");
    let file = dir.join("web-csr.yaml");
    std::fs::write(&file, csr_manifest("web", &pem, "client auth, server auth")).expect("write");
    k.ok(&["create", "-f", file.to_str().unwrap_or_default()]);
    k.ok(&["certificate", "approve", "web"]);
    let failed = wait_for(Duration::from_secs(20), || {
        (condition_column(k, "web") == "Approved,Failed").then_some(())
    });
    assert!(
        failed.is_some(),
        "{label}: {}",
        k.ok(&["get", "csr", "web"])
    );
    let c = csr(k, "web");
    let reasons: Vec<&str> = c["status"]["conditions"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|x| x["message"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        reasons.contains(&"invalid usage for client certificate: server auth"),
        "{label}: {c}"
    );
    assert!(c["status"].get("certificate").is_none(), "{label}: {c}");
    // A certificate for system:masters would be cluster-admin no RBAC can take back.
    let pem = request(dir, "eve", "/CN=eve/O=system:masters");
    let file = dir.join("eve-csr.yaml");
    std::fs::write(&file, csr_manifest("eve", &pem, "client auth")).expect("write");
    let out = k.run(&["create", "-f", file.to_str().unwrap_or_default()]);
    assert_eq!(out.code, 1, "{label}: {}", out.stdout);
    assert!(
        out.stderr.contains(r#"certificatesigningrequests.certificates.k8s.io "eve" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"#),
        "{label}: {}",
        out.stderr
    );
    // Approving takes `approve` on the signer, beyond updating the approval subresource.
    let pem = request(dir, "carol", "/CN=carol");
    let file = dir.join("carol-csr.yaml");
    std::fs::write(&file, csr_manifest("carol", &pem, "client auth")).expect("write");
    k.ok(&["create", "-f", file.to_str().unwrap_or_default()]);
    k.ok(&[
        "create",
        "clusterrole",
        "csr-approver",
        "--verb=get,list,update",
        "--resource=certificatesigningrequests,certificatesigningrequests/approval",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "jane-approves",
        "--clusterrole=csr-approver",
        "--user=jane",
    ]);
    let out = k.run(&["--context", "jane", "certificate", "approve", "carol"]);
    assert_eq!(out.code, 1, "{label}: {}", out.stdout);
    assert!(
        out.stderr.contains(r#"user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client""#),
        "{label}: {}",
        out.stderr
    );
    assert_eq!(condition_column(k, "carol"), "Pending", "{label}");
    // `signers` is no resource kubectl can discover: the role is a manifest, as upstream's
    // documentation writes it.
    let role = dir.join("signer-role.yaml");
    std::fs::write(
        &role,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: client-signer-approver}\nrules:\n- apiGroups: [certificates.k8s.io]\n  resources: [signers]\n  resourceNames: [kubernetes.io/kube-apiserver-client]\n  verbs: [approve]\n",
    )
    .expect("write");
    k.ok(&["apply", "-f", role.to_str().unwrap_or_default()]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "jane-signer",
        "--clusterrole=client-signer-approver",
        "--user=jane",
    ]);
    k.ok(&["--context", "jane", "certificate", "approve", "carol"]);
    let issued = wait_for(Duration::from_secs(20), || {
        (condition_column(k, "carol") == "Approved,Issued").then_some(())
    });
    assert!(
        issued.is_some(),
        "{label}: {}",
        k.ok(&["get", "csr", "carol"])
    );
    // Not a certificate request at all.
    let file = dir.join("junk-csr.yaml");
    std::fs::write(&file, csr_manifest("junk", b"not a csr", "client auth")).expect("write");
    let out = k.run(&["create", "-f", file.to_str().unwrap_or_default()]);
    assert_eq!(out.code, 1, "{label}: {}", out.stdout);
    assert!(
        out.stderr
            .contains("spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74")
            && out
                .stderr
                .contains("PEM block type must be CERTIFICATE REQUEST"),
        "{label}: {}",
        out.stderr
    );
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        a_new_user_through_a_signed_request(&k, &srv);
        denied_refused_and_failed(&k, &srv);
        a_kubelet_serving_certificate(&k, &srv);
    });
}

per_kubectl!(run_version);

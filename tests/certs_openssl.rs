//! For every certificate in every sample (all contexts, plus the server-side files in pki/),
//! the fields kexplore prints must equal what `openssl x509` prints for the same PEM.
//! Skipped, with a note, when openssl is not installed.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};

use kexplore::pki::{self, CertSummary};

fn openssl(args: &[&str], pem: &str) -> String {
    openssl_or(args, pem, "a sample")
}

fn have_openssl() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `Jan  1 00:00:00 2025 GMT` → `2025-01-01T00:00:00Z`.
fn openssl_date(s: &str) -> String {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = months.iter().position(|x| *x == parts[0]).expect("month") + 1;
    let d: u32 = parts[1].parse().expect("day");
    format!("{}-{m:02}-{d:02}T{}Z", parts[3], parts[2])
}

fn pem_of(der: &[u8]) -> String {
    use base64::Engine as _;
    let b = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<String> = b
        .as_bytes()
        .chunks(64)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    )
}

/// The line after a `-text` heading such as `X509v3 Key Usage`, split on ", ".
fn text_list(text: &str, heading: &str) -> Vec<String> {
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.trim_start().starts_with(heading) {
            return lines
                .next()
                .unwrap_or("")
                .trim()
                .split(", ")
                .map(str::to_string)
                .collect();
        }
    }
    Vec::new()
}

fn compare(c: &CertSummary, what: &str) {
    let pem = pem_of(&c.extra.der);
    let out = openssl(
        &[
            "x509",
            "-noout",
            "-nameopt",
            "RFC2253",
            "-subject",
            "-issuer",
            "-serial",
            "-startdate",
            "-enddate",
            "-fingerprint",
            "-sha256",
        ],
        &pem,
    );
    let field = |prefix: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("{what}: no {prefix} in {out}"))
            .to_string()
    };
    assert_eq!(c.subject, field("subject="), "{what}: subject");
    assert_eq!(c.issuer, field("issuer="), "{what}: issuer");
    assert_eq!(c.serial, field("serial="), "{what}: serial");
    assert_eq!(
        c.not_before,
        openssl_date(&field("notBefore=")),
        "{what}: notBefore"
    );
    assert_eq!(
        c.not_after,
        openssl_date(&field("notAfter=")),
        "{what}: notAfter"
    );
    assert_eq!(
        c.sha256_fingerprint,
        field("sha256 Fingerprint="),
        "{what}: fingerprint"
    );
    let text = openssl(&["x509", "-noout", "-text"], &pem);
    let sig = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Signature Algorithm: "))
        .expect("signature algorithm");
    assert_eq!(c.signature_algorithm, sig, "{what}: signature algorithm");
    assert_eq!(
        c.key_usage,
        text_list(&text, "X509v3 Key Usage"),
        "{what}: key usage"
    );
    assert_eq!(
        c.extended_key_usage,
        text_list(&text, "X509v3 Extended Key Usage"),
        "{what}: extended key usage"
    );
    let one = |heading: &str| text_list(&text, heading).first().cloned();
    assert_eq!(
        c.subject_key_id,
        one("X509v3 Subject Key Identifier"),
        "{what}: SKI"
    );
    assert_eq!(
        c.authority_key_id,
        one("X509v3 Authority Key Identifier").map(|k| k.trim_start_matches("keyid:").to_string()),
        "{what}: AKI"
    );
    let version = format!("Version: {} ", c.version);
    assert!(text.contains(&version), "{what}: {version}");
    let ca = one("X509v3 Basic Constraints").unwrap_or_default();
    assert_eq!(c.is_ca, ca.starts_with("CA:TRUE"), "{what}: CA flag {ca}");
    // SANs: openssl prints them in encoding order, we group them by type.
    let mut ours: Vec<String> = c.san.dns.iter().map(|d| format!("DNS:{d}")).collect();
    ours.extend(c.san.ip.iter().map(|i| format!("IP Address:{i}")));
    ours.extend(c.san.email.iter().map(|e| format!("email:{e}")));
    ours.extend(c.san.uri.iter().map(|u| format!("URI:{u}")));
    // openssl 3.0 prints IPv6 uncompressed (0:0:0:0:0:0:0:1); we use RFC 5952 (::1), as Go does.
    let mut theirs: Vec<String> = text_list(&text, "X509v3 Subject Alternative Name")
        .into_iter()
        .map(|e| match e.strip_prefix("IP Address:") {
            Some(ip) => format!(
                "IP Address:{}",
                ip.parse::<std::net::IpAddr>()
                    .map_or(ip.to_string(), |a| a.to_string())
            ),
            None => e,
        })
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "{what}: SAN");
    if c.public_key.algorithm != "Ed25519" {
        let bits = format!("Public-Key: ({} bit)", c.public_key.bits);
        assert!(text.contains(&bits), "{what}: {bits}");
    }
    if let Some(curve) = &c.public_key.curve {
        assert!(
            text.contains(&format!("ASN1 OID: {curve}")),
            "{what}: curve {curve}"
        );
    }
}

#[test]
fn every_sample_certificate_matches_openssl() {
    if !have_openssl() {
        eprintln!("note: openssl not found; skipping the openssl comparison");
        return;
    }
    let mut n = 0;
    for (path, ctx) in common::all_contexts() {
        let report = pki::inspect_at(&ctx, 1_767_225_600)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for c in report.all_certificates() {
            compare(
                c,
                &format!("{} [{}] {}", path.display(), ctx.context_name, c.subject),
            );
            n += 1;
        }
    }
    for file in common::crt_files(&common::samples()) {
        let bytes = std::fs::read(&file).expect("read crt");
        for (i, der) in pki::pem::certificates(&bytes)
            .expect("PEM")
            .iter()
            .enumerate()
        {
            let c = pki::cert::summarize(der, "file", i).expect("certificate");
            compare(&c, &format!("{} #{i}", file.display()));
            n += 1;
        }
    }
    assert!(n >= 30, "only {n} certificates compared");
}

/// Every private key of every sample (each context's client key, and the CA and server keys in
/// pki/) is read by `openssl pkey`, and a client key's public half is its certificate's: curl
/// and `openssl s_client` take the same files the seed's experiment extracts.
#[test]
fn every_sample_key_is_read_by_openssl() {
    if !have_openssl() {
        eprintln!("note: openssl not found; skipping the openssl comparison");
        return;
    }
    let mut n = 0;
    for (path, ctx) in common::all_contexts() {
        let Some(key) = &ctx.user.client_key else {
            continue;
        };
        let key = String::from_utf8_lossy(&key.expose().bytes).into_owned();
        let what = format!("{} [{}]", path.display(), ctx.context_name);
        let public = openssl_or(&["pkey", "-pubout"], &key, &what);
        if let Some(cert) = &ctx.user.client_certificate {
            let cert = String::from_utf8_lossy(&cert.bytes).into_owned();
            assert_eq!(
                public,
                openssl(&["x509", "-noout", "-pubkey"], &cert),
                "{what}"
            );
        }
        n += 1;
    }
    for file in key_files(&common::samples()) {
        let key = std::fs::read_to_string(&file).expect("read key");
        openssl_or(&["pkey", "-noout"], &key, &file.display().to_string());
        n += 1;
    }
    assert!(n >= 15, "only {n} keys read");
}

/// `openssl ARGS` on `pem`, failing with openssl's own words and which key it was.
fn openssl_or(args: &[&str], pem: &str, what: &str) -> String {
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(pem.as_bytes())
        .expect("write pem");
    let out = child.wait_with_output().expect("openssl output");
    assert!(
        out.status.success(),
        "{what}: openssl {args:?} cannot read this key: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn key_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(key_files(&p));
        } else if p.extension().is_some_and(|x| x == "key") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Names with characters RFC 2253 escapes, multi-valued RDNs and non-ASCII text, made by
/// openssl itself, must print exactly as openssl prints them.
#[test]
fn tricky_names_match_openssl() {
    if !have_openssl() {
        eprintln!("note: openssl not found; skipping the openssl comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let subjects = [
        "/C=CN/ST=ZheJiang/L=HangZhou/O=Alibaba/OU=ACS/CN=root",
        "/O=a,b+c/OU=x;y<z>/CN=#hash \"q\" back\\\\slash",
        "/CN= leading and trailing /O=Zürich Straße",
        "/DC=example/DC=com/CN=multi+UID=jdoe",
        "/O=system:masters/O=second-group/CN=kubernetes-admin",
        "/emailAddress=a@b.c/serialNumber=1234/CN=x",
        "/OU=semi;colon <angle> end/CN=plus\\+sign, comma",
        "/CN=sans",
    ];
    for (i, subj) in subjects.iter().enumerate() {
        let key = dir.path().join(format!("k{i}.pem"));
        let crt = dir.path().join(format!("c{i}.pem"));
        let status = Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
            ])
            .args([
                "-nodes",
                "-days",
                "1",
                "-utf8",
                "-multivalue-rdn",
                "-subj",
                subj,
            ])
            .args([
                "-addext",
                "subjectAltName=IP:::1,IP:2001:db8::1,IP:10.0.0.1,email:a@b.c,URI:https://x/y,DNS:*.example.com",
            ])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&crt)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl req");
        assert!(status.success(), "openssl req for {subj}");
        let bytes = std::fs::read(&crt).expect("read");
        let ders = pki::pem::certificates(&bytes).expect("pem");
        let c = pki::cert::summarize(&ders[0], "test", 0).expect("cert");
        compare(&c, subj);
    }
}

/// A legacy PKI made by openssl itself: an X.509 v1 CA with a 1024-bit RSA key and SHA-1
/// signatures, and a client signed by it. Fields still match openssl; checks flag each flaw.
#[test]
fn legacy_v1_sha1_rsa1024_pki() {
    if !have_openssl() {
        eprintln!("note: openssl not found; skipping the openssl comparison");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let sh = |args: &[&str]| {
        let ok = Command::new("openssl")
            .args(args)
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl")
            .success();
        assert!(ok, "openssl {args:?}");
    };
    sh(&[
        "req",
        "-new",
        "-newkey",
        "rsa:1024",
        "-nodes",
        "-subj",
        "/CN=legacy-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.csr",
    ]);
    sh(&[
        "x509", "-req", "-in", "ca.csr", "-signkey", "ca.key", "-days", "3650", "-sha1", "-out",
        "ca.crt",
    ]);
    sh(&[
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/O=system:masters/CN=old",
        "-keyout",
        "client.key",
        "-out",
        "client.csr",
    ]);
    sh(&[
        "x509",
        "-req",
        "-in",
        "client.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-sha1",
        "-out",
        "client.crt",
    ]);
    let config = "apiVersion: v1\nkind: Config\nclusters:\n- name: legacy\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority: ca.crt\n\
         contexts:\n- name: legacy\n  context: {cluster: legacy, user: old}\ncurrent-context: legacy\n\
         users:\n- name: old\n  user:\n    client-certificate: client.crt\n    client-key: client.key\n".to_string();
    std::fs::write(d.join("config"), config).expect("write config");
    let kc = kexplore::kubeconfig::Kubeconfig::load(&kexplore::kubeconfig::Selection::Explicit(
        d.join("config"),
    ))
    .expect("load");
    let ctx = kc.resolve(None).expect("resolve");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_secs() as i64)
        .unwrap_or(0);
    let r = pki::inspect_at(&ctx, now).expect("inspect");
    for c in r.all_certificates() {
        compare(c, &c.subject);
    }
    let ca = &r.cluster.certificate_authority[0];
    assert_eq!((ca.version, ca.is_ca, ca.public_key.bits), (1, false, 1024));
    let has = |id: &str, status: pki::CheckStatus| {
        r.checks.iter().any(|c| c.id == id && c.status == status)
    };
    assert!(
        has("cert-version-1", pki::CheckStatus::Warn),
        "{:#?}",
        r.checks
    );
    assert!(has("weak-key", pki::CheckStatus::Error));
    assert!(has("weak-signature", pki::CheckStatus::Error));
    // A v1 root cannot say CA:TRUE, yet Go and rustls accept it as a trust anchor: not an error.
    assert!(!r.checks.iter().any(|c| c.id == "ca-cert-not-ca"));
    assert!(has("client-cert-issued-by-ca", pki::CheckStatus::Ok));
    assert_eq!(
        r.user
            .client_key
            .as_ref()
            .and_then(|k| k.matches_certificate),
        Some(true)
    );
}

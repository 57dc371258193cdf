//! The seed's experiment with every sample kubeconfig: take client-certificate-data,
//! client-key-data and certificate-authority-data out of the kubeconfig and hand them to curl
//! and `openssl s_client`, against `kexplore serve` running on the sample's own CA where the
//! sample keeps that CA's key (so the answer is 200), and on a CA of its own otherwise (so curl
//! must still load the credentials and present them; the server answers 401).

mod apiserver_support;
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use apiserver_support::{ServeProcess, which};

/// The samples whose CA key is in pki/, and the directory that holds it.
const WITH_CA_KEY: &[(&str, &str, &str)] = &[
    ("kubeadm.yaml", "pki/kubeadm/ca.crt", "pki/kubeadm/ca.key"),
    (
        "alibaba-style.yaml",
        "pki/alibaba-style/cluster-ca.crt",
        "pki/alibaba-style/cluster-ca.key",
    ),
    ("ecdsa.yaml", "pki/ecdsa/ca.crt", "pki/ecdsa/ca.key"),
    ("ed25519.yaml", "pki/ed25519/ca.crt", "pki/ed25519/ca.key"),
];

fn tools() -> bool {
    let ok = which("curl").is_some() && which("openssl").is_some();
    if !ok {
        eprintln!("note: curl or openssl not installed; skipping");
    }
    ok
}

/// The context's credentials as the three files of the seed's curl line.
struct Files {
    cert: PathBuf,
    key: PathBuf,
    ca: PathBuf,
}

fn extract(dir: &Path, ctx: &kexplore::kubeconfig::ResolvedContext) -> Option<Files> {
    let cert = ctx.user.client_certificate.as_ref()?;
    let key = ctx.user.client_key.as_ref()?;
    let f = Files {
        cert: dir.join("client.crt"),
        key: dir.join("client.key"),
        ca: dir.join("ca.crt"),
    };
    std::fs::write(&f.cert, &cert.bytes).unwrap();
    std::fs::write(&f.key, &key.expose().bytes).unwrap();
    if let Some(ca) = &ctx.cluster.certificate_authority {
        std::fs::write(&f.ca, &ca.bytes).unwrap();
    }
    Some(f)
}

/// `curl --cert --key --cacert https://…/api`: exit code, HTTP code, body.
fn curl(f: &Files, cacert: &Path, url: &str) -> (i32, String, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-w", "\n%{http_code}"])
        .arg("--cert")
        .arg(&f.cert)
        .arg("--key")
        .arg(&f.key)
        .arg("--cacert")
        .arg(cacert)
        .arg(format!("{url}/api"))
        .output()
        .expect("curl runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = stdout.rsplit_once('\n').unwrap_or(("", ""));
    (
        out.status.code().unwrap_or(-1),
        code.to_string(),
        format!("{body}{}", String::from_utf8_lossy(&out.stderr)),
    )
}

/// `kexplore serve` minting its serving certificate from the given CA (the directory goes
/// when the returned guard does).
fn serve_with_ca(crt: &Path, key: &Path) -> (tempfile::TempDir, ServeProcess) {
    let pki = tempfile::tempdir().unwrap();
    std::fs::copy(crt, pki.path().join("ca.crt")).unwrap();
    std::fs::copy(key, pki.path().join("ca.key")).unwrap();
    // serve refuses a CA key others can read.
    let status = Command::new("chmod")
        .arg("600")
        .arg(pki.path().join("ca.key"))
        .status()
        .unwrap();
    assert!(status.success());
    let srv = ServeProcess::start_with_pki(&[], Some(pki.path()));
    (pki, srv)
}

#[test]
fn curl_and_s_client_get_through_each_sample_served_by_its_own_ca() {
    if !tools() {
        return;
    }
    for (sample, crt, key) in WITH_CA_KEY {
        let samples = common::samples();
        let (_pki, srv) = serve_with_ca(&samples.join(crt), &samples.join(key));
        let kc = kexplore::kubeconfig::Kubeconfig::load(
            &kexplore::kubeconfig::Selection::Explicit(samples.join(sample)),
        )
        .unwrap();
        let ctx = kc.resolve(None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let f = extract(dir.path(), &ctx).expect("client credentials");
        let (rc, code, body) = curl(&f, &f.ca, &srv.url);
        assert_eq!(
            (rc, code.as_str()),
            (0, "200"),
            "{sample}: curl said {body}"
        );
        assert!(body.contains("\"APIVersions\""), "{sample}: {body}");
        let out = Command::new("openssl")
            .args(["s_client", "-connect", &format!("127.0.0.1:{}", srv.port)])
            .arg("-cert")
            .arg(&f.cert)
            .arg("-key")
            .arg(&f.key)
            .arg("-CAfile")
            .arg(&f.ca)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("Verify return code: 0 (ok)"),
            "{sample}: openssl s_client: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn curl_loads_and_presents_every_sample_client_credential() {
    if !tools() {
        return;
    }
    let srv = ServeProcess::start(&[]);
    let mut n = 0;
    for (path, ctx) in common::all_contexts() {
        let dir = tempfile::tempdir().unwrap();
        let Some(f) = extract(dir.path(), &ctx) else {
            continue;
        };
        let what = format!("{} [{}]", path.display(), ctx.context_name);
        let (rc, code, body) = curl(&f, &srv.pki("ca.crt"), &srv.url);
        // Exit 58 is curl's "unable to set private key file": the key is in a form OpenSSL
        // cannot read. Anything else but an HTTP answer would be a broken certificate.
        assert_eq!(rc, 0, "{what}: curl could not use the credentials: {body}");
        // The server's CA did not issue them (or they expired): it still read the
        // certificate curl presented, and said who it is not.
        assert!(
            matches!(code.as_str(), "200" | "401"),
            "{what}: HTTP {code}: {body}"
        );
        n += 1;
    }
    assert!(n >= 8, "only {n} client credentials tried");
}

//! Regenerates `sample-kubeconfigs/`: `cargo run --example gen-samples -- sample-kubeconfigs`.
//!
//! An example rather than a subcommand so the RSA key generator (the `rsa` crate; ring cannot
//! generate RSA keys) stays out of the kexplore binary. Every certificate is valid from
//! 2025-01-01 to 2125-01-01 so tests never break with time, except the deliberately expired
//! client certificate (2020-01-01 → 2021-01-01). Keys are new on every run; the committed
//! files are one such run. See sample-kubeconfigs/README.md for what each file shows.

use std::fs;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use kexplore::kubeconfig::Secret;
use kexplore::pki::mint::{Attr, Authority, CertSpec, KeyKind, Minted, generate_key, key_from_pem};
use rcgen::KeyPair;
use rsa::pkcs1::EncodeRsaPrivateKey as _;
use rsa::pkcs8::{EncodePrivateKey as _, LineEnding};

const Y2020: i64 = 1_577_836_800;
const Y2021: i64 = 1_609_459_200;
const Y2025: i64 = 1_735_689_600;
const Y2125: i64 = 4_891_363_200;

mod samples;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A 2048-bit RSA key: (rcgen signing key, PKCS#1 PEM as kubeadm writes client keys).
fn rsa_key() -> Result<(KeyPair, Secret<String>)> {
    let key = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), 2048)?;
    let pkcs8 = Secret::new(key.to_pkcs8_pem(LineEnding::LF)?.to_string());
    let pkcs1 = Secret::new(key.to_pkcs1_pem(LineEnding::LF)?.to_string());
    Ok((key_from_pem(&pkcs8)?, pkcs1))
}

fn ec() -> Result<KeyPair> {
    Ok(generate_key(KeyKind::EcdsaP256)?)
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// Names are quoted: an all-digit user name such as the article's RAM user id would
/// otherwise be a YAML integer.
fn q(s: &str) -> String {
    format!("\"{s}\"")
}

fn subject(parts: &[(Attr, &str)]) -> Vec<(Attr, String)> {
    parts.iter().map(|(a, v)| (*a, v.to_string())).collect()
}

/// The SAN set kubeadm gives an API server, plus loopback for local use.
fn apiserver_spec(not_before: i64, not_after: i64) -> CertSpec {
    CertSpec::server(
        subject(&[(Attr::CN, "kube-apiserver")]),
        [
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
            "localhost",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        vec![
            IpAddr::V4(Ipv4Addr::new(10, 96, 0, 1)),
            IpAddr::V4(Ipv4Addr::LOCALHOST),
        ],
        not_before,
        not_after,
    )
}

/// SEC1 `EC PRIVATE KEY` from a P-256 PKCS#8 key (rcgen only writes PKCS#8); kubectl and
/// openssl read both. SEC1 standalone files carry the curve in `[0]`, PKCS#8's inner copy does not.
fn p256_sec1_pem(key: &KeyPair) -> Result<Secret<String>> {
    let der = key.serialize_der();
    // PKCS#8 → privateKey OCTET STRING → ECPrivateKey → its 32-byte scalar.
    let scalar = find_scalar(&der).ok_or("unexpected P-256 PKCS#8 layout")?;
    let point = key.public_key_raw();
    let mut body = vec![0x02, 0x01, 0x01, 0x04, 0x20];
    body.extend_from_slice(scalar);
    body.extend_from_slice(&[
        0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07,
    ]);
    body.extend_from_slice(&[0xA1, 0x44, 0x03, 0x42, 0x00]);
    body.extend_from_slice(point);
    let mut seq = vec![0x30, body.len() as u8];
    seq.extend(body);
    let b = base64::engine::general_purpose::STANDARD.encode(&seq);
    let lines: Vec<&str> = b
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    Ok(Secret::new(format!(
        "-----BEGIN EC PRIVATE KEY-----\n{}\n-----END EC PRIVATE KEY-----\n",
        lines.join("\n")
    )))
}

/// The 32 bytes after the ECPrivateKey's `02 01 01 04 20`.
fn find_scalar(der: &[u8]) -> Option<&[u8]> {
    let marker = [0x02, 0x01, 0x01, 0x04, 0x20];
    let at = der.windows(marker.len()).position(|w| w == marker)? + marker.len();
    der.get(at..at + 32)
}

struct Cluster<'a> {
    name: &'a str,
    server: &'a str,
    ca_pem: &'a str,
}

struct User<'a> {
    name: &'a str,
    body: String,
}

fn cert_user<'a>(name: &'a str, cert_pem: &str, key_pem: &Secret<String>) -> User<'a> {
    User {
        name,
        body: format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(cert_pem),
            b64(key_pem.expose())
        ),
    }
}

/// A kubeconfig with the given clusters, users and (context, cluster, user, namespace).
fn kubeconfig(
    header: &str,
    clusters: &[Cluster<'_>],
    users: &[User<'_>],
    contexts: &[(&str, &str, &str, Option<&str>)],
) -> String {
    let mut s = String::new();
    for line in header.lines() {
        s.push_str(&format!("# {line}\n"));
    }
    s.push_str("apiVersion: v1\nkind: Config\nclusters:\n");
    for c in clusters {
        s.push_str(&format!(
            "- name: {}\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n",
            q(c.name),
            c.server,
            b64(c.ca_pem)
        ));
    }
    s.push_str("contexts:\n");
    for (name, cluster, user, ns) in contexts {
        s.push_str(&format!(
            "- name: {}\n  context:\n    cluster: {}\n    user: {}\n",
            q(name),
            q(cluster),
            q(user)
        ));
        if let Some(ns) = ns {
            s.push_str(&format!("    namespace: {ns}\n"));
        }
    }
    s.push_str(&format!("current-context: {}\n", q(contexts[0].0)));
    s.push_str("preferences: {}\nusers:\n");
    for u in users {
        s.push_str(&format!("- name: {}\n  user:\n{}", q(u.name), u.body));
    }
    s
}

struct Out {
    dir: PathBuf,
}

impl Out {
    fn write(&self, rel: &str, text: &str) -> Result<()> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, text)?;
        println!("wrote {}", path.display());
        Ok(())
    }
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "sample-kubeconfigs".into());
    // Further arguments name the samples to regenerate (keys are new each time, so
    // regenerating one leaves the others' fingerprints, and the tests that print them, alone).
    let only: Vec<String> = args.collect();
    let out = Out {
        dir: Path::new(&dir).to_path_buf(),
    };
    use samples::*;
    type Generate = fn(&Out) -> Result<()>;
    let all: [(&str, Generate); 10] = [
        ("kubeadm", kubeadm),
        ("alibaba-style", alibaba),
        ("intermediate-ca", intermediate),
        ("expired-client", expired),
        ("wrong-ca", wrong_ca),
        ("ecdsa", ecdsa),
        ("ed25519", ed25519),
        ("file-references", file_references),
        ("multi-context", multi_context),
        ("token-and-exec", token_and_exec),
    ];
    if let Some(unknown) = only.iter().find(|n| !all.iter().any(|(m, _)| m == n)) {
        let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "no sample {unknown:?}; the samples are {}",
            names.join(", ")
        )
        .into());
    }
    for (name, generate) in all {
        if only.is_empty() || only.iter().any(|n| n == name) {
            generate(&out)?;
        }
    }
    Ok(())
}

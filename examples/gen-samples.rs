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
    _p: std::marker::PhantomData<&'a ()>,
}

fn cert_user<'a>(name: &'a str, cert_pem: &str, key_pem: &Secret<String>) -> User<'a> {
    User {
        name,
        body: format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(cert_pem),
            b64(key_pem.expose())
        ),
        _p: std::marker::PhantomData,
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

fn kubeadm(out: &Out) -> Result<()> {
    let (ca_key, ca_pkcs1) = rsa_key()?;
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "kubernetes")]), Y2025, Y2125),
        ca_key,
    )?;
    let (admin_key, admin_pkcs1) = rsa_key()?;
    let admin = ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "kubernetes-admin")]),
            Y2025,
            Y2125,
        ),
        &admin_key,
    )?;
    out.write(
        "kubeadm.yaml",
        &kubeconfig(
            "kubeadm's admin.conf shape: RSA 2048, self-signed CN=kubernetes CA, admin in system:masters.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster {
                name: "kubernetes",
                server: "https://127.0.0.1:6443",
                ca_pem: &ca.cert.cert_pem,
            }],
            &[cert_user("kubernetes-admin", &admin.cert_pem, &admin_pkcs1)],
            &[("kubernetes-admin@kubernetes", "kubernetes", "kubernetes-admin", None)],
        ),
    )?;
    // The CA key is kept for later tests (e.g. an embedded server sharing this PKI).
    out.write("pki/kubeadm/ca.crt", &ca.cert.cert_pem)?;
    out.write("pki/kubeadm/ca.key", ca_pkcs1.expose())?;
    Ok(())
}

fn alibaba(out: &Out) -> Result<()> {
    let (root_key, _) = rsa_key()?;
    let mut root_spec = CertSpec::ca(
        subject(&[
            (Attr::C, "CN"),
            (Attr::ST, "ZheJiang"),
            (Attr::L, "HangZhou"),
            (Attr::O, "Alibaba"),
            (Attr::OU, "ACS"),
            (Attr::CN, "root"),
        ]),
        Y2025,
        Y2125,
    );
    root_spec.serial = Some(vec![0x0B, 0x8E, 0x3F]);
    let root = Authority::self_signed(&root_spec, root_key)?;
    let cluster_id = "c0256a3b8e4b948bb9c21e66b0e1d9a72";
    let (cluster_key, cluster_pkcs1) = rsa_key()?;
    let mut cluster_spec = CertSpec::ca(
        subject(&[
            (Attr::O, cluster_id),
            (Attr::OU, "default"),
            (Attr::CN, cluster_id),
        ]),
        Y2025,
        Y2125,
    );
    cluster_spec.serial = Some(vec![0x0C, 0x02, 0x1E]); // 786974, as in the seed article
    let cluster_ca = root.issue_ca(&cluster_spec, cluster_key)?;
    let (client_key, client_pkcs1) = rsa_key()?;
    let mut client_spec = CertSpec::client(
        subject(&[
            (Attr::O, "system:users"),
            (Attr::OU, ""),
            (Attr::CN, "252771643302762862"),
        ]),
        Y2025,
        Y2125,
    );
    client_spec.serial = Some(vec![0x0C, 0x03, 0x18]); // 787224
    let client = cluster_ca.issue(&client_spec, &client_key)?;
    let (server_key, server_pkcs1) = rsa_key()?;
    let mut server_spec = apiserver_spec(Y2025, Y2125);
    server_spec.serial = Some(vec![0x1E, 0x51, 0x2E, 0x86, 0xFC, 0xBA, 0x3F, 0x19]);
    let server = cluster_ca.issue(&server_spec, &server_key)?;
    // The API server's --client-ca-file held two CAs in the article: the cluster CA and one
    // for cluster management.
    let mgmt = Authority::self_signed(
        &CertSpec::ca(
            subject(&[
                (Attr::O, "Alibaba"),
                (Attr::OU, "ACS"),
                (Attr::CN, "cluster-management"),
            ]),
            Y2025,
            Y2125,
        ),
        ec()?,
    )?;
    let ca_bundle = format!("{}{}", cluster_ca.cert.cert_pem, root.cert.cert_pem);
    out.write(
        "alibaba-style.yaml",
        &kubeconfig(
            "The seed article's three levels: root (C=CN,...,CN=root) -> cluster CA -> client O=system:users.\ncertificate-authority-data holds the cluster CA then the root. Server side: pki/alibaba-style/.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster {
                name: "kubernetes",
                server: "https://127.0.0.1:6443",
                ca_pem: &ca_bundle,
            }],
            &[cert_user("252771643302762862", &client.cert_pem, &client_pkcs1)],
            &[("252771643302762862-c0256a3b8e4b948bb9c21e66b0e1d9a72", "kubernetes", "252771643302762862", None)],
        ),
    )?;
    let d = "pki/alibaba-style";
    out.write(&format!("{d}/root-ca.crt"), &root.cert.cert_pem)?;
    out.write(&format!("{d}/cluster-ca.crt"), &cluster_ca.cert.cert_pem)?;
    out.write(&format!("{d}/cluster-ca.key"), cluster_pkcs1.expose())?;
    out.write(&format!("{d}/ca.crt"), &ca_bundle)?;
    out.write(
        &format!("{d}/apiserver-ca.crt"),
        &format!("{}{}", cluster_ca.cert.cert_pem, mgmt.cert.cert_pem),
    )?;
    out.write(
        &format!("{d}/apiserver.crt"),
        &format!("{}{}", server.cert_pem, cluster_ca.cert.cert_pem),
    )?;
    out.write(&format!("{d}/apiserver.key"), server_pkcs1.expose())?;
    out.write(&format!("{d}/client.crt"), &client.cert_pem)?;
    out.write(&format!("{d}/client.key"), client_pkcs1.expose())?;
    Ok(())
}

fn intermediate(out: &Out) -> Result<()> {
    let root = Authority::self_signed(
        &CertSpec::ca(
            subject(&[(Attr::O, "kexplore"), (Attr::CN, "kexplore-root-ca")]),
            Y2025,
            Y2125,
        ),
        ec()?,
    )?;
    let mut mid_spec = CertSpec::ca(
        subject(&[(Attr::O, "kexplore"), (Attr::CN, "kexplore-clients-ca")]),
        Y2025,
        Y2125,
    );
    mid_spec.ca = Some(Some(0));
    let mid = root.issue_ca(&mid_spec, generate_key(KeyKind::EcdsaP384)?)?;
    let key = ec()?;
    let leaf = mid.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "developers"), (Attr::CN, "jane")]),
            Y2025,
            Y2125,
        ),
        &key,
    )?;
    let chain = format!("{}{}", leaf.cert_pem, mid.cert.cert_pem);
    out.write(
        "intermediate-ca.yaml",
        &kubeconfig(
            "A client certificate issued by an intermediate CA (P-384, pathlen 0) under a P-256 root.\nclient-certificate-data holds leaf + intermediate; certificate-authority-data the root only.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "intermediate", server: "https://localhost:6443", ca_pem: &root.cert.cert_pem }],
            &[cert_user("jane", &chain, &Secret::new(key.serialize_pem()))],
            &[("jane@intermediate", "intermediate", "jane", Some("dev"))],
        ),
    )
}

fn expired(out: &Out) -> Result<()> {
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "kubernetes")]), Y2025, Y2125),
        ec()?,
    )?;
    let key = ec()?;
    let client = ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "old-admin")]),
            Y2020,
            Y2021,
        ),
        &key,
    )?;
    out.write(
        "expired-client.yaml",
        &kubeconfig(
            "A client certificate that expired on 2021-01-01 (the CA is still valid).\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "expired", server: "https://127.0.0.1:6443", ca_pem: &ca.cert.cert_pem }],
            &[cert_user("old-admin", &client.cert_pem, &Secret::new(key.serialize_pem()))],
            &[("old-admin@expired", "expired", "old-admin", None)],
        ),
    )
}

fn wrong_ca(out: &Out) -> Result<()> {
    // Two CAs with the same name, as after `kubeadm reset && kubeadm init`: the kubeconfig
    // trusts the new one, the client certificate was signed by the old one.
    let name = subject(&[(Attr::CN, "kubernetes")]);
    let new_ca = Authority::self_signed(&CertSpec::ca(name.clone(), Y2025, Y2125), ec()?)?;
    let old_ca = Authority::self_signed(&CertSpec::ca(name, Y2025, Y2125), ec()?)?;
    let key = ec()?;
    let client = old_ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "kubernetes-admin")]),
            Y2025,
            Y2125,
        ),
        &key,
    )?;
    out.write(
        "wrong-ca.yaml",
        &kubeconfig(
            "The client certificate was signed by a different CA that has the same name (CN=kubernetes)\nas the one in certificate-authority-data: names match, signatures do not.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "kubernetes", server: "https://127.0.0.1:6443", ca_pem: &new_ca.cert.cert_pem }],
            &[cert_user("kubernetes-admin", &client.cert_pem, &Secret::new(key.serialize_pem()))],
            &[("kubernetes-admin@wrong-ca", "kubernetes", "kubernetes-admin", None)],
        ),
    )?;
    out.write("pki/wrong-ca/trusted-ca.crt", &new_ca.cert.cert_pem)?;
    out.write("pki/wrong-ca/trusted-ca.key", new_ca.cert.key_pem.expose())?;
    out.write("pki/wrong-ca/other-ca.crt", &old_ca.cert.cert_pem)?;
    out.write("pki/wrong-ca/other-ca.key", old_ca.cert.key_pem.expose())?;
    Ok(())
}

fn ecdsa(out: &Out) -> Result<()> {
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "ecdsa-ca")]), Y2025, Y2125),
        ec()?,
    )?;
    let key = ec()?;
    let client = ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "ecdsa-admin")]),
            Y2025,
            Y2125,
        ),
        &key,
    )?;
    out.write(
        "ecdsa.yaml",
        &kubeconfig(
            "ECDSA P-256 throughout; the client key is SEC1 (EC PRIVATE KEY), as openssl ecparam writes it.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "ecdsa", server: "https://127.0.0.1:6443", ca_pem: &ca.cert.cert_pem }],
            &[cert_user("ecdsa-admin", &client.cert_pem, &p256_sec1_pem(&key)?)],
            &[("ecdsa-admin@ecdsa", "ecdsa", "ecdsa-admin", None)],
        ),
    )
}

fn ed25519(out: &Out) -> Result<()> {
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "ed25519-ca")]), Y2025, Y2125),
        generate_key(KeyKind::Ed25519)?,
    )?;
    let key = generate_key(KeyKind::Ed25519)?;
    let client = ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "ed25519-admin")]),
            Y2025,
            Y2125,
        ),
        &key,
    )?;
    out.write(
        "ed25519.yaml",
        &kubeconfig(
            "Ed25519 throughout. The key is PKCS#8 v2 (public key included), which kubectl (Go) and rustls\nread but OpenSSL 3.0 / curl cannot (\"unsupported\"): use ecdsa.yaml with curl.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "ed25519", server: "https://127.0.0.1:6443", ca_pem: &ca.cert.cert_pem }],
            &[cert_user("ed25519-admin", &client.cert_pem, &client.key_pem)],
            &[("ed25519-admin@ed25519", "ed25519", "ed25519-admin", None)],
        ),
    )
}

fn file_references(out: &Out) -> Result<()> {
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "files-ca")]), Y2025, Y2125),
        ec()?,
    )?;
    let key = ec()?;
    let client: Minted = ca.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "files-admin")]),
            Y2025,
            Y2125,
        ),
        &key,
    )?;
    out.write("file-references/pki/ca.crt", &ca.cert.cert_pem)?;
    out.write("file-references/pki/admin.crt", &client.cert_pem)?;
    out.write("file-references/pki/admin.key", client.key_pem.expose())?;
    out.write(
        "file-references/config",
        "# Certificate and key referenced by paths relative to this file, as kubectl resolves them.\n\
         # Generated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.\n\
         apiVersion: v1\nkind: Config\nclusters:\n- name: files\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority: pki/ca.crt\n\
         contexts:\n- name: files-admin@files\n  context:\n    cluster: files\n    user: files-admin\n\
         current-context: files-admin@files\npreferences: {}\nusers:\n- name: files-admin\n  user:\n    client-certificate: pki/admin.crt\n    client-key: pki/admin.key\n",
    )
}

fn multi_context(out: &Out) -> Result<()> {
    let prod = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "prod-ca")]), Y2025, Y2125),
        ec()?,
    )?;
    let staging = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "staging-ca")]), Y2025, Y2125),
        ec()?,
    )?;
    let k1 = ec()?;
    let admin = prod.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "system:masters"), (Attr::CN, "prod-admin")]),
            Y2025,
            Y2125,
        ),
        &k1,
    )?;
    let k2 = ec()?;
    let dev = staging.issue(
        &CertSpec::client(
            subject(&[(Attr::O, "developers"), (Attr::CN, "alice")]),
            Y2025,
            Y2125,
        ),
        &k2,
    )?;
    let readonly = User {
        name: "readonly",
        body: "    token: kexplore-sample-token-not-a-real-secret\n".into(),
        _p: std::marker::PhantomData,
    };
    out.write(
        "multi-context.yaml",
        &kubeconfig(
            "Two clusters, three users, three contexts; select one with --context.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[
                Cluster { name: "prod", server: "https://prod.example.internal:6443", ca_pem: &prod.cert.cert_pem },
                Cluster { name: "staging", server: "https://10.10.0.1:6443", ca_pem: &staging.cert.cert_pem },
            ],
            &[
                cert_user("prod-admin", &admin.cert_pem, &admin.key_pem),
                cert_user("alice", &dev.cert_pem, &dev.key_pem),
                readonly,
            ],
            &[
                ("prod", "prod", "prod-admin", None),
                ("staging", "staging", "alice", Some("team-a")),
                ("prod-readonly", "prod", "readonly", Some("kube-system")),
            ],
        ),
    )
}

fn token_and_exec(out: &Out) -> Result<()> {
    let ca = Authority::self_signed(
        &CertSpec::ca(subject(&[(Attr::CN, "cloud-ca")]), Y2025, Y2125),
        ec()?,
    )?;
    let token = User {
        name: "token-user",
        body: "    token: kexplore-sample-token-not-a-real-secret\n".into(),
        _p: std::marker::PhantomData,
    };
    let exec = User {
        name: "exec-user",
        body: "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: gke-gcloud-auth-plugin\n      args: []\n      installHint: Install gke-gcloud-auth-plugin for use with kubectl\n      interactiveMode: IfAvailable\n      provideClusterInfo: true\n".into(),
        _p: std::marker::PhantomData,
    };
    out.write(
        "token-and-exec.yaml",
        &kubeconfig(
            "Users without certificates: a bearer token and an exec (client.authentication.k8s.io/v1) plugin.\nGenerated by `cargo run --example gen-samples -- sample-kubeconfigs`; test fixture only.",
            &[Cluster { name: "cloud", server: "https://34.120.0.10", ca_pem: &ca.cert.cert_pem }],
            &[token, exec],
            &[("token", "cloud", "token-user", None), ("exec", "cloud", "exec-user", None)],
        ),
    )
}

fn main() -> Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "sample-kubeconfigs".into());
    let out = Out {
        dir: Path::new(&dir).to_path_buf(),
    };
    kubeadm(&out)?;
    alibaba(&out)?;
    intermediate(&out)?;
    expired(&out)?;
    wrong_ca(&out)?;
    ecdsa(&out)?;
    ed25519(&out)?;
    file_references(&out)?;
    multi_context(&out)?;
    token_and_exec(&out)?;
    Ok(())
}

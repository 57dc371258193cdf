//! The embedded cluster's PKI, minted with `pki::mint` (ECDSA P-256: ring cannot generate RSA)
//! or reused from `--pki-dir`: a cluster CA, the serving certificate, and client certificates
//! for `kexplore-admin` (O=system:masters) and `jane` (O=developers).

use std::net::IpAddr;
use std::path::Path;

use crate::kubeconfig::Secret;
use crate::pki::mint::{Attr, Authority, CertSpec, KeyKind, Minted, generate_key, key_from_pem};

/// Everything the server and its kubeconfig need. Keys stay inside `Secret`s.
#[derive(Debug, Clone)]
pub struct ClusterPki {
    pub ca: Minted,
    pub(crate) serving: Minted,
    pub admin: Minted,
    pub jane: Minted,
    /// The service-account token signing key (PKCS#8 PEM), kubeadm's `sa.key`; its public half
    /// is kept beside it as `sa.pub`.
    pub(crate) service_account_key: Secret<String>,
}

pub(crate) const SERVING_DNS: &[&str] = &[
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
];

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

const YEAR: i64 = 365 * 24 * 3600;

fn leaf_specs() -> [(&'static str, CertSpec); 3] {
    let (nb, na) = (now() - 3600, now() + YEAR);
    let ips: Vec<IpAddr> = vec![[127, 0, 0, 1].into(), std::net::Ipv6Addr::LOCALHOST.into()];
    [
        (
            "apiserver",
            CertSpec::server(
                vec![(Attr::CN, "kube-apiserver".into())],
                SERVING_DNS.iter().map(|s| s.to_string()).collect(),
                ips,
                nb,
                na,
            ),
        ),
        (
            "admin",
            CertSpec::client(
                vec![
                    (Attr::O, "system:masters".into()),
                    (Attr::CN, "kexplore-admin".into()),
                ],
                nb,
                na,
            ),
        ),
        (
            "jane",
            CertSpec::client(
                vec![(Attr::O, "developers".into()), (Attr::CN, "jane".into())],
                nb,
                na,
            ),
        ),
    ]
}

/// Mint a fresh PKI in memory.
pub fn mint() -> Result<ClusterPki, String> {
    let ca_spec = CertSpec::ca(
        vec![(Attr::CN, "kexplore-ca".into())],
        now() - 3600,
        now() + 10 * YEAR,
    );
    let ca = Authority::self_signed(
        &ca_spec,
        generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    issue_all(&ca)
}

fn issue_all(ca: &Authority) -> Result<ClusterPki, String> {
    let mut out = Vec::new();
    for (_, spec) in leaf_specs() {
        let key = generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?;
        out.push(ca.issue(&spec, &key).map_err(|e| e.to_string())?);
    }
    let mut it = out.into_iter();
    let (Some(serving), Some(admin), Some(jane)) = (it.next(), it.next(), it.next()) else {
        return Err("internal: missing minted certificate".into());
    };
    Ok(ClusterPki {
        ca: ca.cert.clone(),
        serving,
        admin,
        jane,
        service_account_key: sa_key()?.0,
    })
}

/// A fresh service-account key: the private key (PKCS#8 PEM) and its public key PEM.
fn sa_key() -> Result<(Secret<String>, String), String> {
    let key = generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?;
    Ok((
        Secret::new(crate::pki::key_forms::openssl_readable_pem(
            &key.serialize_pem(),
        )),
        key.public_key_pem(),
    ))
}

/// `sa.key` reused when present, else minted with `sa.pub` beside it.
fn load_or_create_sa_key(dir: &Path) -> Result<Secret<String>, String> {
    let path = dir.join("sa.key");
    if let Ok(pem) = std::fs::read_to_string(&path) {
        return Ok(Secret::new(pem));
    }
    let (key, public) = sa_key()?;
    write_private(&path, key.expose(), 0o600)?;
    write_private(&dir.join("sa.pub"), &public, 0o644)?;
    Ok(key)
}

/// A kept private key that others can read is refused, not reused: whoever read it can
/// impersonate the cluster (ssh refuses such keys for the same reason).
fn refuse_exposed_key(dir: &Path, name: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(format!("{name}.key"));
    match std::fs::metadata(&path) {
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => Err(format!(
            "{}: private key is accessible by others (mode {:04o}); chmod 600 it or remove it to mint a new one",
            path.display(),
            meta.permissions().mode() & 0o7777
        )),
        _ => Ok(()),
    }
}

fn read_pair(dir: &Path, name: &str) -> Option<(String, Secret<String>)> {
    let cert = std::fs::read_to_string(dir.join(format!("{name}.crt"))).ok()?;
    let key = std::fs::read_to_string(dir.join(format!("{name}.key"))).ok()?;
    Some((cert, Secret::new(key)))
}

pub(crate) fn write_private(path: &Path, text: &str, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// An exclusive lock on a PKI directory, held while it lives. Replicas started together on one
/// `--pki-dir` (scripts/ha-local.sh starts three at once) must mint one CA between them, not
/// one each — each would then serve a certificate the others' kubeconfigs do not trust — and
/// none may read a key another is still writing.
fn lock_dir(dir: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(".kexplore-pki.lock");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // `File::lock` (Rust 1.89) is newer than this crate's rust-version (1.88): flock(2) itself.
    loop {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor belongs to `file`, open for the whole call.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("{}: cannot lock: {e}", path.display()));
        }
    }
}

/// Reuse the PKI kept in `dir`, creating whatever is missing (the CA first, then leaves).
pub(crate) fn load_or_create(dir: &Path) -> Result<ClusterPki, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _lock = lock_dir(dir)?;
    refuse_exposed_key(dir, "ca")?;
    refuse_exposed_key(dir, "sa")?;
    for (name, _) in leaf_specs() {
        refuse_exposed_key(dir, name)?;
    }
    let ca = match read_pair(dir, "ca") {
        Some((c, k)) => Authority::from_pem(&c, &k)
            .map_err(|e| format!("{}: {e}", dir.join("ca.crt").display()))?,
        None => {
            let spec = CertSpec::ca(
                vec![(Attr::CN, "kexplore-ca".into())],
                now() - 3600,
                now() + 10 * YEAR,
            );
            let a = Authority::self_signed(
                &spec,
                generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?,
            )
            .map_err(|e| e.to_string())?;
            write_private(&dir.join("ca.crt"), &a.cert.cert_pem, 0o644)?;
            write_private(&dir.join("ca.key"), a.cert.key_pem.expose(), 0o600)?;
            a
        }
    };
    let mut leaves = Vec::new();
    for (name, spec) in leaf_specs() {
        let m = match read_pair(dir, name) {
            Some((c, k)) if key_from_pem(&k).is_ok() => {
                let der = rustls_pki_types::pem::PemObject::from_pem_slice(c.as_bytes())
                    .map(|d: rustls_pki_types::CertificateDer<'static>| d.to_vec())
                    .map_err(|_| {
                        format!(
                            "{}: not a PEM certificate",
                            dir.join(format!("{name}.crt")).display()
                        )
                    })?;
                Minted {
                    cert_pem: c,
                    cert_der: der,
                    key_pem: k,
                }
            }
            _ => {
                let key = generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?;
                let m = ca.issue(&spec, &key).map_err(|e| e.to_string())?;
                write_private(&dir.join(format!("{name}.crt")), &m.cert_pem, 0o644)?;
                write_private(&dir.join(format!("{name}.key")), m.key_pem.expose(), 0o600)?;
                m
            }
        };
        leaves.push(m);
    }
    let mut it = leaves.into_iter();
    let (Some(serving), Some(admin), Some(jane)) = (it.next(), it.next(), it.next()) else {
        return Err("internal: missing certificate".into());
    };
    Ok(ClusterPki {
        ca: ca.cert,
        serving,
        admin,
        jane,
        service_account_key: load_or_create_sa_key(dir)?,
    })
}

/// A kubeconfig with one context per user, embedding data (no file references).
pub fn kubeconfig_yaml(pki: &ClusterPki, server: &str) -> String {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let user = |name: &str, m: &Minted| {
        format!(
            "- name: {name}\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(&m.cert_pem),
            b64(m.key_pem.expose())
        )
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kexplore\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\ncontexts:\n- name: kexplore-admin\n  context:\n    cluster: kexplore\n    user: kexplore-admin\n    namespace: default\n- name: jane\n  context:\n    cluster: kexplore\n    user: jane\n    namespace: default\ncurrent-context: kexplore-admin\npreferences: {{}}\nusers:\n{}{}",
        b64(&pki.ca.cert_pem),
        user("kexplore-admin", &pki.admin),
        user("jane", &pki.jane),
    )
}

/// Write a private file atomically (temp file in the same directory, then rename), mode 0600.
pub(crate) fn write_atomic_private(path: &Path, text: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("kubeconfig"),
        std::process::id()
    ));
    write_private(&tmp, text, 0o600)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replicas started at once on one `--pki-dir` share one CA, one serving certificate and one
    /// service-account key: whoever comes first mints them, the others read them.
    #[test]
    fn replicas_started_together_on_one_dir_mint_one_pki() {
        let dir = tempfile::tempdir().expect("tempdir");
        let minted: Vec<ClusterPki> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|_| s.spawn(|| load_or_create(dir.path())))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("no panic").expect("a PKI"))
                .collect()
        });
        let first = &minted[0];
        for p in &minted[1..] {
            assert_eq!(p.ca.cert_pem, first.ca.cert_pem);
            assert_eq!(p.serving.cert_pem, first.serving.cert_pem);
            assert_eq!(
                p.service_account_key.expose(),
                first.service_account_key.expose()
            );
        }
        let on_disk = std::fs::read_to_string(dir.path().join("ca.crt")).expect("ca.crt");
        assert_eq!(on_disk, first.ca.cert_pem);
    }
}

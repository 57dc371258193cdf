//! Test fixtures: freshly minted P-256 PKIs and hand-built resolved contexts, so unit tests of
//! checks and chains need no files.

use std::path::PathBuf;

use super::mint::{Attr, Authority, CertSpec, KeyKind, Minted, generate_key};
use crate::kubeconfig::{
    Impersonation, Material, Origin, ResolvedCluster, ResolvedContext, ResolvedUser, Secret,
};

pub const Y2025: i64 = 1_735_689_600;
pub const Y2125: i64 = 4_891_363_200;
/// 2026-01-01T00:00:00Z.
pub const NOW: i64 = 1_767_225_600;

pub fn ca(cn: &str) -> Authority {
    Authority::self_signed(
        &CertSpec::ca(vec![(Attr::CN, cn.into())], Y2025, Y2125),
        generate_key(KeyKind::EcdsaP256).expect("key"),
    )
    .expect("ca")
}

pub fn client_spec(cn: &str, groups: &[&str]) -> CertSpec {
    let mut subject: Vec<(Attr, String)> =
        groups.iter().map(|g| (Attr::O, g.to_string())).collect();
    subject.push((Attr::CN, cn.into()));
    CertSpec::client(subject, Y2025, Y2125)
}

pub fn client(ca: &Authority, spec: &CertSpec) -> Minted {
    let key = generate_key(KeyKind::EcdsaP256).expect("key");
    ca.issue(spec, &key).expect("client")
}

fn origin(kind: &'static str, field: &'static str) -> Origin {
    Origin {
        kubeconfig: PathBuf::from("/test/config"),
        entry_kind: kind,
        entry_name: "t".into(),
        field,
        file: None,
    }
}

/// A context with an optional CA bundle and an optional (certificate PEM, key PEM) pair.
pub fn context(ca_pem: Option<&str>, client: Option<(&str, &str)>) -> ResolvedContext {
    ResolvedContext {
        kubeconfig_files: vec![PathBuf::from("/test/config")],
        context_name: "t".into(),
        context_source: PathBuf::from("/test/config"),
        namespace: "default".into(),
        cluster: ResolvedCluster {
            name: "t".into(),
            source: PathBuf::from("/test/config"),
            server: "https://127.0.0.1:6443".into(),
            tls_server_name: None,
            insecure_skip_tls_verify: false,
            proxy_url: None,
            disable_compression: false,
            certificate_authority: ca_pem.map(|p| Material {
                origin: origin("cluster", "certificate-authority-data"),
                bytes: p.as_bytes().to_vec(),
            }),
            exec_extension: None,
        },
        user: ResolvedUser {
            name: "t".into(),
            source: PathBuf::from("/test/config"),
            client_certificate: client.map(|(c, _)| Material {
                origin: origin("user", "client-certificate-data"),
                bytes: c.as_bytes().to_vec(),
            }),
            client_key: client.map(|(_, k)| {
                Secret::new(Material {
                    origin: origin("user", "client-key-data"),
                    bytes: k.as_bytes().to_vec(),
                })
            }),
            token: None,
            username: None,
            password: None,
            exec: None,
            auth_provider: None,
            impersonate: Impersonation::default(),
        },
        warnings: Vec::new(),
    }
}

/// The ids of the checks with the given status.
pub fn ids(r: &super::CredentialReport, status: super::CheckStatus) -> Vec<String> {
    r.checks
        .iter()
        .filter(|c| c.status == status)
        .map(|c| c.id.clone())
        .collect()
}

//! Certificates and keys: PEM/base64 → DER, the facts openssl prints, chains built by
//! signature, the checks, and minting (rcgen).

pub mod cert;
pub mod chain;
pub mod checks;
mod der;
pub mod error;
pub mod key;
pub mod key_forms;
pub mod mint;
pub mod names;
pub mod pem;
pub mod render;
pub mod report;
#[cfg(test)]
pub(crate) mod testkit;

pub use error::PkiError;
pub use report::*;

use crate::kubeconfig::{Material, ResolvedContext};

/// Decodes and checks every certificate and key of a resolved context, as of now.
pub fn inspect(ctx: &ResolvedContext) -> Result<CredentialReport, PkiError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    inspect_at(ctx, now)
}

/// As `inspect`, with the clock passed in so expiry checks are testable.
pub fn inspect_at(ctx: &ResolvedContext, now_unix: i64) -> Result<CredentialReport, PkiError> {
    let mut ca = match &ctx.cluster.certificate_authority {
        Some(m) => certificates(m)?,
        None => Vec::new(),
    };
    let mut client = match &ctx.user.client_certificate {
        Some(m) => certificates(m)?,
        None => Vec::new(),
    };
    let key = match &ctx.user.client_key {
        Some(secret) => {
            let m = secret.expose();
            Some(key::parse(&m.bytes).map_err(|e| PkiError::BadMaterial {
                origin: m.origin.to_string(),
                problem: e.to_string(),
            })?)
        }
        None => None,
    };
    let issuance = {
        let mut all: Vec<&mut CertSummary> = ca.iter_mut().chain(client.iter_mut()).collect();
        chain::link(&mut all)
    };
    let client_key = key.as_ref().map(|k| {
        let pkcs8_v2 = ctx.user.client_key.as_ref().and_then(|m| {
            let key = pem::private_key(&m.expose().bytes).ok()?;
            key_forms::pkcs8_v2(&key.der)
        });
        ClientKeyInfo {
            algorithm: k.algorithm.clone(),
            bits: k.bits,
            curve: k.curve.clone(),
            matches_certificate: client
                .first()
                .and_then(|c| k.matches_certificate(&c.extra.der)),
            // The version is what decides whether OpenSSL reads it: name it when it is 2.
            format: match pkcs8_v2 {
                Some(_) => "PKCS#8 v2".to_string(),
                None => k.format.as_str().to_string(),
            },
            pkcs8_v2,
        }
    });
    let identity = client.first().map(|c| Identity {
        user: c.extra.common_name.clone().unwrap_or_default(),
        groups: c.extra.organizations.clone(),
    });
    let mut report = CredentialReport {
        kubeconfig: ctx
            .kubeconfig_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        context: ctx.context_name.clone(),
        cluster: ClusterReport {
            name: ctx.cluster.name.clone(),
            server: ctx.cluster.server.clone(),
            tls_server_name: ctx.cluster.tls_server_name.clone(),
            insecure_skip_tls_verify: ctx.cluster.insecure_skip_tls_verify,
            certificate_authority: ca,
        },
        user: UserReport {
            name: ctx.user.name.clone(),
            auth: ctx.user.auth_method().as_str().to_string(),
            client_certificate: client,
            client_key,
            identity,
        },
        checks: Vec::new(),
        server: None,
        issuance,
    };
    report.checks = checks::run(ctx, &report, now_unix);
    Ok(report)
}

/// Every certificate of a bundle, in order, or an error naming the field and the problem.
fn certificates(m: &Material) -> Result<Vec<CertSummary>, PkiError> {
    let origin = m.origin.to_string();
    let bad = |problem: String| PkiError::BadMaterial {
        origin: origin.clone(),
        problem,
    };
    let ders = pem::certificates(&m.bytes).map_err(|e| bad(e.to_string()))?;
    let many = ders.len() > 1;
    ders.iter()
        .enumerate()
        .map(|(i, der)| {
            cert::summarize(der, &origin, i).map_err(|p| {
                if many {
                    bad(format!("certificate #{} {p}", i + 1))
                } else {
                    bad(format!("certificate {p}"))
                }
            })
        })
        .collect()
}

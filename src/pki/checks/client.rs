//! Checks of the certificates themselves: CA flags, the client certificate's issuer, key
//! match, usages and identity, and algorithms that clients refuse.

use super::check;
use crate::pki::report::{CertSummary, Check, CheckStatus, CredentialReport};

pub(super) fn ca_flags(what: &str, c: &CertSummary, out: &mut Vec<Check>) {
    if c.version == 1 {
        // v1 has no extensions, so no CA:TRUE to ask for; `cert-version-1` explains it.
        return;
    }
    if c.is_ca {
        out.push(
            check(
                "ca-cert-is-ca",
                CheckStatus::Ok,
                format!("{what} is a CA (CA:TRUE)"),
            )
            .about(c),
        );
    } else {
        out.push(check(
            "ca-cert-not-ca",
            CheckStatus::Error,
            format!(
                "{what} lacks CA:TRUE: it is a leaf pinned as a CA. kubectl (Go) may accept it when it is exactly the server's certificate, but rustls-based clients reject it (UnknownIssuer); put the issuing CA here instead"
            ),
        ).about(c));
    }
}

/// Follows `issued_by` from the leaf upwards; returns the certificates met (leaf excluded).
fn ancestors<'a>(leaf: &'a CertSummary, r: &'a CredentialReport) -> Vec<&'a CertSummary> {
    let mut out: Vec<&CertSummary> = Vec::new();
    let mut cur = leaf;
    while let Some(fp) = &cur.issued_by {
        if fp == &cur.sha256_fingerprint || out.iter().any(|c| &c.sha256_fingerprint == fp) {
            break;
        }
        match r.all_certificates().find(|c| &c.sha256_fingerprint == fp) {
            Some(p) => {
                out.push(p);
                cur = p;
            }
            None => break,
        }
    }
    out
}

pub(super) fn client_leaf(leaf: &CertSummary, r: &CredentialReport, out: &mut Vec<Check>) {
    let first = out.len();
    let in_ca = |c: &CertSummary| {
        r.cluster
            .certificate_authority
            .iter()
            .any(|a| a.sha256_fingerprint == c.sha256_fingerprint)
    };
    let chain = ancestors(leaf, r);
    let top = chain.last().copied().unwrap_or(leaf);
    let failed_edge = r.issuance.iter().find(|e| {
        e.child == top.sha256_fingerprint
            && !e.verified
            && r.cluster
                .certificate_authority
                .iter()
                .any(|a| a.sha256_fingerprint == e.issuer)
    });
    if let Some(ca) = chain.iter().find(|c| in_ca(c)) {
        out.push(check(
            "client-cert-issued-by-ca",
            CheckStatus::Ok,
            format!(
                "the client certificate chains by signature to {}, which certificate-authority also trusts for the server; clusters that use one CA for servers and clients (kubeadm) accept such a certificate",
                ca.subject
            ),
        ).about(top));
    } else if failed_edge.is_some() {
        out.push(check(
            "client-cert-signature-mismatch",
            CheckStatus::Error,
            format!(
                "the client certificate's issuer is named {}, and certificate-authority holds a CA of that name, but its key did not sign this certificate: the CA was regenerated or the credentials belong to another cluster; the API server will most likely answer 401 Unauthorized",
                top.issuer
            ),
        ).about(top));
    } else {
        out.push(check(
            "client-cert-issuer-not-in-kubeconfig",
            CheckStatus::Warn,
            format!(
                "the client certificate was issued by {}, which this kubeconfig does not contain. certificate-authority only says which *server* to trust; the API server checks clients against its own --client-ca-file. That is normal for clusters with a separate client CA, but if the API server does not trust {} every request gets 401 Unauthorized",
                top.issuer, top.issuer
            ),
        ).about(top));
    }
    match r.user.client_key.as_ref().and_then(|k| k.matches_certificate) {
        Some(true) => out.push(check(
            "client-key-matches-cert",
            CheckStatus::Ok,
            "the client key's public half is the client certificate's public key",
        )),
        Some(false) => out.push(check(
            "client-key-mismatch",
            CheckStatus::Error,
            "the client key does not belong to the client certificate: the TLS handshake will fail (kubectl: \"tls: private key does not match public key\")",
        )),
        None => out.push(check(
            "client-key-unverified",
            CheckStatus::Warn,
            "could not tell whether the client key belongs to the certificate (unsupported key type)",
        )),
    }
    let eku = &leaf.extended_key_usage;
    if eku.is_empty() {
        out.push(check(
            "client-cert-client-auth",
            CheckStatus::Ok,
            "the client certificate has no extended key usage, so it may be used for client authentication",
        ));
    } else if eku
        .iter()
        .any(|e| e == "TLS Web Client Authentication" || e == "Any Extended Key Usage")
    {
        out.push(check(
            "client-cert-client-auth",
            CheckStatus::Ok,
            "the client certificate allows TLS Web Client Authentication",
        ));
    } else {
        out.push(check(
            "client-cert-missing-client-auth",
            CheckStatus::Error,
            format!(
                "the client certificate's extended key usage ({}) lacks TLS Web Client Authentication: the API server rejects it",
                eku.join(", ")
            ),
        ));
    }
    match &r.user.identity {
        Some(id) if id.user.is_empty() => out.push(check(
            "client-cert-no-common-name",
            CheckStatus::Error,
            "the client certificate has no CN: Kubernetes takes the user name from the CN, so it cannot authenticate you",
        )),
        Some(id) if id.groups.iter().any(|g| g == "system:masters") => {
            {
                out.push(check(
                    "identity-system-masters",
                    CheckStatus::Warn,
                    format!(
                        "user '{}' is in group system:masters, which bypasses RBAC and cannot be revoked short of rotating the CA; keep such credentials for break-glass use",
                        id.user
                    ),
                ));
            }
        }
        _ => {}
    }
    // The rest judge the leaf itself (its key, usages, identity).
    for c in &mut out[first..] {
        c.certificate
            .get_or_insert_with(|| leaf.sha256_fingerprint.clone());
    }
}

/// Key sizes and signature algorithms that today's clients refuse.
pub(super) fn algorithms(r: &CredentialReport, out: &mut Vec<Check>) {
    let mut weak = Vec::new();
    let mut weakest = None;
    for c in r.all_certificates() {
        if c.public_key.algorithm == "RSA" && c.public_key.bits < 2048 {
            weak.push(format!("{} ({} bits)", c.subject, c.public_key.bits));
            weakest.get_or_insert(c);
        }
        let sha1 = c.signature_algorithm.starts_with("sha1")
            || c.signature_algorithm.starts_with("md5")
            || c.signature_algorithm == "ecdsa-with-SHA1";
        if sha1 && !c.self_signed {
            out.push(
                check(
                    "weak-signature",
                    CheckStatus::Error,
                    format!(
                        "{} is signed with {}, which Go (kubectl ≥ 1.24) and rustls reject",
                        c.subject, c.signature_algorithm
                    ),
                )
                .about(c),
            );
        }
        if c.version == 1 {
            let anchor = c.self_signed
                && r.cluster
                    .certificate_authority
                    .iter()
                    .any(|a| a.sha256_fingerprint == c.sha256_fingerprint);
            let msg = if anchor {
                format!(
                    "{} is an X.509 v1 certificate: it cannot carry CA:TRUE or key usages; kubectl and rustls still accept it as a root of trust",
                    c.subject
                )
            } else {
                format!(
                    "{} is an X.509 v1 certificate: kubectl accepts it, but rustls-based tools reject v1 certificates outside the trust store (UnsupportedCertVersion)",
                    c.subject
                )
            };
            out.push(check("cert-version-1", CheckStatus::Warn, msg).about(c));
        }
    }
    if let Some(k) = &r.user.client_key
        && k.algorithm == "RSA"
        && k.bits < 2048
    {
        weak.push(format!("the client key ({} bits)", k.bits));
        if let Some(leaf) = r.user.client_certificate.first() {
            weakest.get_or_insert(leaf);
        }
    }
    if weak.is_empty() {
        out.push(check(
            "key-sizes",
            CheckStatus::Ok,
            "no RSA key is shorter than 2048 bits",
        ));
    } else {
        out.push(check(
            "weak-key",
            CheckStatus::Error,
            format!(
                "RSA keys shorter than 2048 bits: {}; rustls refuses them and NIST retired them in 2013",
                weak.join(", ")
            ),
        ));
        if let (Some(c), Some(last)) = (weakest, out.last_mut()) {
            last.certificate = Some(c.sha256_fingerprint.clone());
        }
    }
}

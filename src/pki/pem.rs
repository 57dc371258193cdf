//! PEM text → DER blocks, with errors a person can act on. kubectl (Go's crypto/tls) only
//! accepts PEM in kubeconfig material, so DER or anything else is reported, not guessed at.

use rustls_pki_types::pem::{PemObject, SectionKind};

/// Why material could not be read as the PEM that was expected. The caller adds the origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PemProblem {
    #[error("is not PEM (no '-----BEGIN' line){hint}")]
    NotPem { hint: &'static str },
    #[error("is not valid PEM: {0}")]
    Malformed(String),
    #[error("contains a private key ({found}) where a certificate was expected")]
    KeyInsteadOfCertificate { found: &'static str },
    #[error("contains a CERTIFICATE where a private key was expected")]
    CertificateInsteadOfKey,
    #[error("no PEM certificate found (sections present: {0})")]
    NoCertificate(String),
    #[error("no PEM private key found (sections present: {0})")]
    NoKey(String),
    #[error(
        "holds an encrypted private key, which kubectl cannot use (decrypt it with openssl first)"
    )]
    EncryptedKey,
}

/// One private key block and the PEM label it came in, which names its format.
pub struct PemKey {
    pub kind: SectionKind,
    /// DER bytes. Never printed: the type has no Debug.
    pub der: Vec<u8>,
}

fn label(kind: SectionKind) -> &'static str {
    match kind {
        SectionKind::Certificate => "CERTIFICATE",
        SectionKind::PublicKey => "PUBLIC KEY",
        SectionKind::RsaPrivateKey => "RSA PRIVATE KEY",
        SectionKind::PrivateKey => "PRIVATE KEY",
        SectionKind::EcPrivateKey => "EC PRIVATE KEY",
        SectionKind::Crl => "X509 CRL",
        SectionKind::Csr => "CERTIFICATE REQUEST",
        _ => "other PEM block",
    }
}

fn is_private_key(kind: SectionKind) -> bool {
    matches!(
        kind,
        SectionKind::RsaPrivateKey | SectionKind::PrivateKey | SectionKind::EcPrivateKey
    )
}

/// A hint for the common ways material is not PEM: raw DER, or base64 that was decoded once
/// too few (or too many) times.
fn not_pem_hint(bytes: &[u8]) -> &'static str {
    if bytes.first() == Some(&0x30) {
        "; it looks like binary DER, which kubectl does not accept: convert it with `openssl x509 -inform DER`"
    } else if bytes.starts_with(b"LS0tLS1CRUdJTi") {
        "; it is base64 of PEM: decode it once more, or move it to a *-data field"
    } else {
        ""
    }
}

/// Every known PEM section, in file order. Unknown labels are skipped, as Go does.
fn sections(bytes: &[u8]) -> Result<Vec<(SectionKind, Vec<u8>)>, PemProblem> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains("-----BEGIN ") {
        return Err(PemProblem::NotPem {
            hint: not_pem_hint(bytes),
        });
    }
    if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
        || text.contains("Proc-Type: 4,ENCRYPTED")
    {
        return Err(PemProblem::EncryptedKey);
    }
    <(SectionKind, Vec<u8>)>::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PemProblem::Malformed(describe(e)))
}

/// pki-types' errors print byte vectors; say the same in words, with the text quoted.
fn describe(e: rustls_pki_types::pem::Error) -> String {
    use rustls_pki_types::pem::Error as E;
    match e {
        E::MissingSectionEnd { end_marker } => format!(
            "a block has no END line (expected -----END {}-----)",
            String::from_utf8_lossy(&end_marker).trim()
        ),
        E::IllegalSectionStart { line } => format!(
            "malformed BEGIN line '{}'",
            String::from_utf8_lossy(&line).trim()
        ),
        E::Base64Decode(d) => format!("a block's base64 is invalid ({d})"),
        other => other.to_string(),
    }
}

fn present(sections: &[(SectionKind, Vec<u8>)]) -> String {
    if sections.is_empty() {
        "none that kubectl recognises".into()
    } else {
        sections
            .iter()
            .map(|(k, _)| label(*k))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// All CERTIFICATE blocks, in order. Other blocks beside certificates are tolerated (Go skips
/// them too), but a bundle holding only a private key is the classic copy-paste mistake.
pub fn certificates(bytes: &[u8]) -> Result<Vec<Vec<u8>>, PemProblem> {
    let all = sections(bytes)?;
    let certs: Vec<Vec<u8>> = all
        .iter()
        .filter(|(k, _)| *k == SectionKind::Certificate)
        .map(|(_, der)| der.clone())
        .collect();
    if certs.is_empty() {
        if let Some((k, _)) = all.iter().find(|(k, _)| is_private_key(*k)) {
            return Err(PemProblem::KeyInsteadOfCertificate { found: label(*k) });
        }
        return Err(PemProblem::NoCertificate(present(&all)));
    }
    Ok(certs)
}

/// The first private key block, as Go's tls.X509KeyPair takes it.
pub fn private_key(bytes: &[u8]) -> Result<PemKey, PemProblem> {
    let all = sections(bytes)?;
    if let Some((kind, der)) = all.iter().find(|(k, _)| is_private_key(*k)) {
        return Ok(PemKey {
            kind: *kind,
            der: der.clone(),
        });
    }
    if all.iter().any(|(k, _)| *k == SectionKind::Certificate) {
        return Err(PemProblem::CertificateInsteadOfKey);
    }
    Err(PemProblem::NoKey(present(&all)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMAMCAQE=\n-----END PRIVATE KEY-----\n";

    #[test]
    fn bundles_keep_order() {
        let two = format!("{CERT}junk between\n{CERT}");
        assert_eq!(certificates(two.as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn a_key_where_a_certificate_belongs_is_named() {
        let e = certificates(KEY.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "contains a private key (PRIVATE KEY) where a certificate was expected"
        );
        let e = private_key(CERT.as_bytes()).err().unwrap();
        assert_eq!(
            e.to_string(),
            "contains a CERTIFICATE where a private key was expected"
        );
    }

    #[test]
    fn not_pem_and_der_hint() {
        assert!(matches!(
            certificates(b"hello"),
            Err(PemProblem::NotPem { hint: "" })
        ));
        let e = certificates(&[0x30, 0x82, 0x01]).unwrap_err().to_string();
        assert!(e.contains("DER"), "{e}");
        let e = certificates(b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n")
            .unwrap_err();
        assert!(matches!(e, PemProblem::Malformed(_)), "{e}");
        let e = certificates(b"-----BEGIN CERTIFICATE-----\nMAMCAQE=\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "is not valid PEM: a block has no END line (expected -----END CERTIFICATE-----)"
        );
    }

    #[test]
    fn encrypted_keys_are_refused_clearly() {
        let enc = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAMCAQE=\n-----END ENCRYPTED PRIVATE KEY-----\n";
        assert_eq!(
            private_key(enc.as_bytes()).err(),
            Some(PemProblem::EncryptedKey)
        );
    }
}

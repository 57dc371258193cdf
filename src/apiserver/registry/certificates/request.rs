//! A CertificateSigningRequest's `spec.request`: the PEM `CERTIFICATE REQUEST` it must hold,
//! decoded and its signature checked, as validation, admission and the signer all read it.

use base64::Engine;
use serde_json::Value;
use x509_parser::prelude::FromDer;

/// The decoded `spec.request` (the JSON holds it base64, as Go's `[]byte`).
pub(crate) fn request_pem(o: &Value) -> Option<Vec<u8>> {
    let b64 = o.pointer("/spec/request")?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(b64).ok()
}

/// The request's DER when it is one PEM `CERTIFICATE REQUEST` block, else upstream's reason.
pub(crate) fn parse_request(pem: &[u8]) -> Result<Vec<u8>, String> {
    use rustls_pki_types::CertificateSigningRequestDer;
    use rustls_pki_types::pem::PemObject;
    let der = CertificateSigningRequestDer::from_pem_slice(pem)
        .map_err(|_| "PEM block type must be CERTIFICATE REQUEST".to_string())?;
    let (_, csr) =
        x509_parser::certification_request::X509CertificationRequest::from_der(der.as_ref())
            .map_err(|e| format!("x509: malformed certificate request: {e}"))?;
    if csr.verify_signature().is_err() {
        // Go's words for the key's algorithm.
        let rsa = csr
            .certification_request_info
            .subject_pki
            .algorithm
            .algorithm
            == x509_parser::oid_registry::OID_PKCS1_RSAENCRYPTION;
        return Err(if rsa {
            "crypto/rsa: verification error"
        } else {
            "x509: ECDSA verification failure"
        }
        .into());
    }
    Ok(der.as_ref().to_vec())
}

//! The lines kubectl prints for the failures kexplore explains, so that a user holding
//! kubectl's words can find kexplore's explanation. Only words kubectl really prints for the
//! case are produced; each was compared with kubectl 1.27–1.33 (tests/kubectl_words.rs).

use rustls::AlertDescription;

use super::go_x509::{self, Verdict};
use super::recorder::HandshakeRecord;
use crate::kubeconfig::ResolvedContext;

/// kubectl's prefix for an error that stopped it before any HTTP answer (`helpers.go`).
fn unable_to_connect(err: &str) -> String {
    format!("Unable to connect to the server: {err}")
}

/// A refused TCP connection; `authority` is the URL's host[:port] as written.
pub(crate) fn connection_refused(server_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(server_url).ok()?;
    let host = url.host_str()?;
    let authority = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    Some(format!(
        "The connection to the server {authority} was refused - did you specify the right host or port?"
    ))
}

/// The server certificate failed Go's verification: crypto/tls wraps x509's words.
pub(crate) fn server_certificate(
    record: &HandshakeRecord,
    ctx: &ResolvedContext,
    server_name: &str,
    now: i64,
) -> Option<String> {
    if record.verification_skipped || record.server_chain.is_empty() {
        return None;
    }
    let roots: Option<Vec<Vec<u8>>> = ctx.cluster.certificate_authority.as_ref().map(|ca| {
        rustls::pki_types::pem::PemObject::pem_slice_iter(&ca.bytes)
            .filter_map(|c: Result<rustls::pki_types::CertificateDer<'static>, _>| c.ok())
            .map(|c| c.to_vec())
            .collect()
    });
    let verdict = go_x509::verify(&go_x509::Inputs {
        chain: &record.server_chain,
        roots: roots.as_deref(),
        host: server_name,
        now,
    });
    let x509 = match verdict {
        Verdict::Rejects(x509) => x509,
        // Go reads the same system roots as rustls-native-certs; with none of them issuing the
        // chain, both stop at the unknown authority (a same-named system root, which would add
        // Go's hint, is not looked for).
        Verdict::Unsure
            if roots.is_none()
                && matches!(
                    record.server_error,
                    Some(rustls::Error::InvalidCertificate(
                        rustls::CertificateError::UnknownIssuer
                    ))
                ) =>
        {
            "x509: certificate signed by unknown authority".to_string()
        }
        Verdict::Accepts | Verdict::Unsure => return None,
    };
    Some(unable_to_connect(&format!(
        "tls: failed to verify certificate: {x509}"
    )))
}

/// The first record from the server is not TLS: Go's record layer says so, and net/http turns
/// a record header that reads `HTTP/` into its own words. Fewer than the five bytes of a record
/// header is another error, not claimed here.
pub(crate) fn not_tls(first_bytes: &[u8]) -> Option<String> {
    let header = first_bytes.get(..5)?;
    Some(unable_to_connect(if header == b"HTTP/" {
        "http: server gave HTTP response to HTTPS client"
    } else {
        "tls: first record does not look like a TLS handshake"
    }))
}

/// A TLS alert from the server, as Go names it (`crypto/tls/alert.go`).
pub(crate) fn remote_alert(alert: AlertDescription) -> String {
    let name = match alert {
        AlertDescription::CloseNotify => "close notify",
        AlertDescription::UnexpectedMessage => "unexpected message",
        AlertDescription::BadRecordMac => "bad record MAC",
        AlertDescription::DecryptionFailed => "decryption failed",
        AlertDescription::RecordOverflow => "record overflow",
        AlertDescription::DecompressionFailure => "decompression failure",
        AlertDescription::HandshakeFailure => "handshake failure",
        AlertDescription::BadCertificate => "bad certificate",
        AlertDescription::UnsupportedCertificate => "unsupported certificate",
        AlertDescription::CertificateRevoked => "revoked certificate",
        AlertDescription::CertificateExpired => "expired certificate",
        AlertDescription::CertificateUnknown => "unknown certificate",
        AlertDescription::IllegalParameter => "illegal parameter",
        AlertDescription::UnknownCA => "unknown certificate authority",
        AlertDescription::AccessDenied => "access denied",
        AlertDescription::DecodeError => "error decoding message",
        AlertDescription::DecryptError => "error decrypting message",
        AlertDescription::ProtocolVersion => "protocol version not supported",
        AlertDescription::InsufficientSecurity => "insufficient security level",
        AlertDescription::InternalError => "internal error",
        AlertDescription::InappropriateFallback => "inappropriate fallback",
        AlertDescription::UserCanceled => "user canceled",
        AlertDescription::NoRenegotiation => "no renegotiation",
        AlertDescription::MissingExtension => "missing extension",
        AlertDescription::UnsupportedExtension => "unsupported extension",
        AlertDescription::UnrecognisedName => "unrecognized name",
        AlertDescription::BadCertificateStatusResponse => "bad certificate status response",
        AlertDescription::BadCertificateHashValue => "bad certificate hash value",
        AlertDescription::UnknownPSKIdentity => "unknown PSK identity",
        AlertDescription::CertificateRequired => "certificate required",
        AlertDescription::NoApplicationProtocol => "no application protocol",
        other => {
            return unable_to_connect(&format!("remote error: tls: alert({})", u8::from(other)));
        }
    };
    unable_to_connect(&format!("remote error: tls: {name}"))
}

/// A 401. kubectl reads discovery first for most commands (`get`, `apply`, …), and there
/// client-go replaces the server's message with its own; a command that goes straight to a
/// path (`get --raw`) shows the server's `Status` message.
pub(crate) fn unauthorized(status_message: &str) -> Vec<String> {
    let mut lines = vec![
        "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
            .to_string(),
    ];
    if !status_message.is_empty() {
        lines.push(format!(
            "error: You must be logged in to the server ({status_message})"
        ));
    }
    lines
}

/// A 403 to a request kubectl makes directly (`kubectl get pods`).
pub(crate) fn forbidden(status_message: &str) -> String {
    format!("Error from server (Forbidden): {status_message}")
}

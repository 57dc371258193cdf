//! Turning a failed handshake into plain words and a fix. The cases are the ones people meet
//! with real clusters: an unknown authority, a name mismatch, an expired certificate, a key the
//! server will not take, and the places where Go's TLS (kubectl) and rustls differ.

use rustls::{AlertDescription, CertificateError};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::config::TlsTarget;
use super::kubectl_words;
use super::recorder::HandshakeRecord;
use crate::kubeconfig::ResolvedContext;

/// The protocol step a handshake reached or stopped at, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HandshakeStep {
    TcpConnect,
    ClientHello,
    ServerHello,
    ServerCertificate,
    CertificateRequest,
    ClientCertificate,
    Finished,
    /// After the handshake: the first HTTP requests (401, 403).
    Request,
}

impl HandshakeStep {
    pub fn label(self) -> &'static str {
        match self {
            HandshakeStep::TcpConnect => "TCP connect",
            HandshakeStep::ClientHello => "ClientHello",
            HandshakeStep::ServerHello => "ServerHello",
            HandshakeStep::ServerCertificate => "server certificate",
            HandshakeStep::CertificateRequest => "CertificateRequest",
            HandshakeStep::ClientCertificate => "client certificate",
            HandshakeStep::Finished => "Finished",
            HandshakeStep::Request => "HTTP request",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    pub step: HandshakeStep,
    /// Stable kebab-case id of the cause, e.g. `unknown-authority`.
    pub cause: &'static str,
    /// What happened, in plain words.
    pub message: String,
    /// What would fix it.
    pub fix: String,
    /// The lines kubectl prints for the same failure (empty when kubectl would get through,
    /// or when its words are not known for certain).
    pub kubectl_says: Vec<String>,
}

fn subject_of(der: &[u8]) -> Option<(String, String)> {
    let (_, c) = X509Certificate::from_der(der).ok()?;
    Some((
        crate::pki::names::rfc2253(c.subject()),
        crate::pki::names::rfc2253(c.issuer()),
    ))
}

fn trusted_subjects(ctx: &ResolvedContext) -> Vec<String> {
    let Some(ca) = &ctx.cluster.certificate_authority else {
        return vec![
            "the system's root CAs (the kubeconfig names no certificate-authority)".into(),
        ];
    };
    rustls::pki_types::pem::PemObject::pem_slice_iter(&ca.bytes)
        .filter_map(|c: Result<rustls::pki_types::CertificateDer<'static>, _>| c.ok())
        .filter_map(|c| subject_of(c.as_ref()).map(|(s, _)| s))
        .collect()
}

fn unix_to_rfc3339(secs: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs as i64)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

/// Explains a rustls error from a handshake with `ctx`'s server.
pub fn explain_tls_error(
    err: &rustls::Error,
    record: &HandshakeRecord,
    ctx: &ResolvedContext,
) -> Explanation {
    let presented = record.server_chain.first().and_then(|d| subject_of(d));
    let mut explained = match err {
        rustls::Error::InvalidCertificate(ce) => explain_certificate(ce, record, ctx, presented),
        rustls::Error::AlertReceived(alert) => explain_alert(*alert, record),
        rustls::Error::PeerIncompatible(p) => Explanation {
            step: HandshakeStep::ServerHello,
            cause: "incompatible-peer",
            message: format!(
                "the server and kexplore share no TLS version or cipher suite ({p:?})"
            ),
            fix: "the server must offer TLS 1.2 or 1.3 with a modern cipher suite".into(),
            kubectl_says: Vec::new(),
        },
        // The first bytes back are not a TLS record at all: `HTTP/1.1 400…` from a plain-HTTP
        // port is the usual case.
        rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)
            if record.server_chain.is_empty() =>
        {
            let first = &record.server_first_bytes;
            let what = if first.starts_with(b"HTTP/") {
                let line = first
                    .split(|b| *b == b'\r' || *b == b'\n')
                    .next()
                    .unwrap_or(first);
                format!(
                    "it answered in plain HTTP ({})",
                    String::from_utf8_lossy(line)
                )
            } else {
                "this port speaks plain HTTP or another protocol".to_string()
            };
            Explanation {
                step: HandshakeStep::ServerHello,
                cause: "not-tls",
                message: format!("the server's first answer is not a TLS record: {what}"),
                fix: "point the server URL at the API server's HTTPS port (kube-apiserver --secure-port, 6443 by default)".into(),
                kubectl_says: Vec::new(),
            }
        }
        other => Explanation {
            step: HandshakeStep::ServerHello,
            cause: "tls-error",
            message: format!("the TLS handshake failed: {other}"),
            fix: "check that the server URL points at a Kubernetes API server speaking HTTPS"
                .into(),
            kubectl_says: Vec::new(),
        },
    };
    // kubectl's words come from Go's own verdict on the same chain, not from rustls's.
    explained.kubectl_says = match err {
        rustls::Error::InvalidCertificate(_) => {
            let name = TlsTarget::from_context(ctx)
                .map(|t| t.server_name)
                .unwrap_or_default();
            kubectl_words::server_certificate(record, ctx, &name, unix_now())
                .into_iter()
                .collect()
        }
        rustls::Error::AlertReceived(alert) => vec![kubectl_words::remote_alert(*alert)],
        _ if explained.cause == "not-tls" => kubectl_words::not_tls(&record.server_first_bytes)
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    explained
}

/// rustls names a certificate's SANs in Debug form (`DnsName("a")`, `IpAddress(0::1)`); people
/// know them as `a` and `::1`.
fn plain_name(p: &str) -> String {
    if let Some(dns) = p
        .strip_prefix("DnsName(\"")
        .and_then(|s| s.strip_suffix("\")"))
    {
        return dns.to_string();
    }
    if let Some(ip) = p
        .strip_prefix("IpAddress(")
        .and_then(|s| s.strip_suffix(')'))
    {
        return ip
            .parse::<std::net::IpAddr>()
            .map(|ip| ip.to_string())
            .unwrap_or_else(|_| ip.to_string());
    }
    p.to_string()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn explain_certificate(
    ce: &CertificateError,
    record: &HandshakeRecord,
    ctx: &ResolvedContext,
    presented: Option<(String, String)>,
) -> Explanation {
    let step = HandshakeStep::ServerCertificate;
    let leaf = presented
        .as_ref()
        .map(|(s, _)| s.as_str())
        .unwrap_or("(unreadable)");
    let issuer = presented
        .as_ref()
        .map(|(_, i)| i.as_str())
        .unwrap_or("(unreadable)");
    match ce {
        CertificateError::UnknownIssuer => {
            let trusted = trusted_subjects(ctx);
            let pinned_leaf = record.server_chain.first().is_some_and(|leaf_der| {
                ctx.cluster.certificate_authority.as_ref().is_some_and(|ca| {
                    rustls::pki_types::pem::PemObject::pem_slice_iter(&ca.bytes)
                        .filter_map(|c: Result<rustls::pki_types::CertificateDer<'static>, _>| c.ok())
                        .any(|c| c.as_ref() == leaf_der.as_slice())
                })
            });
            if pinned_leaf {
                return Explanation {
                    step,
                    cause: "leaf-pinned-as-ca",
                    message: format!(
                        "certificate-authority holds the server's own certificate ({leaf}), not the CA that issued it; \
                         kubectl (Go) accepts such a pinned leaf, rustls requires the issuing CA"
                    ),
                    fix: format!("put the CA certificate ({issuer}) in certificate-authority-data"),
                    kubectl_says: Vec::new(),
                };
            }
            Explanation {
                step,
                cause: "unknown-authority",
                message: format!(
                    "the server presented a certificate for {leaf} issued by {issuer}, but the kubeconfig trusts only: {}",
                    trusted.join("; ")
                ),
                fix: format!(
                    "put the CA that issued the server certificate ({issuer}) in certificate-authority-data \
                     (kubeadm: /etc/kubernetes/pki/ca.crt), or check that the server URL is the right cluster"
                ),
                kubectl_says: Vec::new(),
            }
        }
        CertificateError::NotValidForNameContext { expected, presented } => Explanation {
            step,
            cause: "name-mismatch",
            message: format!(
                "the server certificate is valid for {} but kexplore connected to {:?}",
                presented.iter().map(|p| plain_name(p)).collect::<Vec<_>>().join(", "),
                expected.to_str()
            ),
            fix: format!(
                "use a server URL with one of those names, or set tls-server-name: {} in the cluster entry",
                presented
                    .iter()
                    .find_map(|p| p.strip_prefix("DnsName(\"").and_then(|s| s.strip_suffix("\")")))
                    .unwrap_or("<a name from the list>")
            ),
            kubectl_says: Vec::new(),
        },
        CertificateError::NotValidForName => Explanation {
            step,
            cause: "name-mismatch",
            message: format!("the server certificate ({leaf}) is not valid for {:?}", record.server_name.as_deref().unwrap_or("")),
            fix: "use a server URL whose host is in the certificate's SANs, or set tls-server-name".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::ExpiredContext { time, not_after } => Explanation {
            step,
            cause: "server-cert-expired",
            message: format!(
                "the server certificate ({leaf}) expired at {}; the local clock says {}",
                unix_to_rfc3339(not_after.as_secs()),
                unix_to_rfc3339(time.as_secs())
            ),
            fix: "renew the API server's certificate (kubeadm: kubeadm certs renew apiserver), or fix the local clock if it is wrong".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::Expired => Explanation {
            step,
            cause: "server-cert-expired",
            message: format!("the server certificate ({leaf}) or a CA in its chain has expired"),
            fix: "renew the API server's certificate, or fix the local clock if it is wrong".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::NotValidYetContext { time, not_before } => Explanation {
            step,
            cause: "server-cert-not-yet-valid",
            message: format!(
                "the server certificate ({leaf}) is valid only from {}; the local clock says {}",
                unix_to_rfc3339(not_before.as_secs()),
                unix_to_rfc3339(time.as_secs())
            ),
            fix: "check the clocks of this machine and of the machine that issued the certificate".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::NotValidYet => Explanation {
            step,
            cause: "server-cert-not-yet-valid",
            message: format!("the server certificate ({leaf}) is not valid yet"),
            fix: "check the clocks of this machine and of the machine that issued the certificate".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::BadSignature => Explanation {
            step,
            cause: "bad-signature",
            message: format!("the signature on the server certificate ({leaf}) does not verify with its issuer's key"),
            fix: "the CA in the kubeconfig has the right name but a different key: fetch the cluster's current CA".into(),
            kubectl_says: Vec::new(),
        },
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => Explanation {
            step,
            cause: "server-cert-wrong-purpose",
            message: format!("the server certificate ({leaf}) is not allowed for TLS server authentication (extendedKeyUsage)"),
            fix: "reissue the API server certificate with extendedKeyUsage serverAuth".into(),
            kubectl_says: Vec::new(),
        },
        other => {
            let text = format!("{other:?}");
            if text.contains("UnsupportedCertVersion") {
                return Explanation {
                    step,
                    cause: "x509-v1-certificate",
                    message: format!("a certificate in the server's chain ({leaf}) is X.509 version 1; Go accepts it, rustls/webpki only accept version 3"),
                    fix: "reissue the certificate as X.509 v3 (openssl: add -extfile with basicConstraints / keyUsage)".into(),
                    kubectl_says: Vec::new(),
                };
            }
            Explanation {
                step,
                cause: "server-cert-invalid",
                message: format!("the server certificate ({leaf}) was rejected: {other:?}"),
                fix: "inspect the chain with kexplore certs --connect and openssl s_client -showcerts".into(),
                kubectl_says: Vec::new(),
            }
        }
    }
}

fn explain_alert(alert: AlertDescription, record: &HandshakeRecord) -> Explanation {
    let about_client_cert = matches!(
        alert,
        AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateRequired
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::DecryptError
    );
    if about_client_cert {
        let message = if record.client_certificate_sent {
            format!("the server rejected the client certificate (TLS alert {alert:?})")
        } else {
            format!(
                "the server requires a client certificate and none was sent (TLS alert {alert:?})"
            )
        };
        return Explanation {
            step: HandshakeStep::ClientCertificate,
            cause: "client-cert-rejected",
            message,
            fix: "use a client certificate issued by a CA the server trusts (kube-apiserver --client-ca-file) and check it has not expired".into(),
            kubectl_says: Vec::new(),
        };
    }
    Explanation {
        step: HandshakeStep::ServerHello,
        cause: "alert",
        message: format!("the server ended the handshake with TLS alert {alert:?}"),
        fix: "check that the server URL is a Kubernetes API server and supports TLS 1.2 or 1.3"
            .into(),
        kubectl_says: Vec::new(),
    }
}

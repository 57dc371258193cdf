//! A rustls `ClientConfig` from a resolved context, the way client-go builds its TLS config:
//! the kubeconfig's CA bundle (or the system roots), the client certificate and key, SNI from
//! `tls-server-name` or the URL's host, and insecure-skip-tls-verify honoured (and recorded).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use super::error::ClientError;
use super::recorder::{Recorder, RecordingResolver, RecordingVerifier};
use crate::kubeconfig::{Material, ResolvedContext};

/// Where to connect and which name the server certificate must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsTarget {
    pub url: String,
    pub host: String,
    pub port: u16,
    /// SNI and the name verified: `tls-server-name`, else the URL's host.
    pub server_name: String,
}

impl TlsTarget {
    pub fn from_context(ctx: &ResolvedContext) -> Result<TlsTarget, ClientError> {
        let url_text = ctx.cluster.server.clone();
        let bad = |reason: &str| ClientError::BadServerUrl {
            url: url_text.clone(),
            reason: reason.into(),
        };
        let url = reqwest::Url::parse(&url_text).map_err(|e| bad(&e.to_string()))?;
        if url.scheme() != "https" {
            return Err(bad("only https:// servers can be inspected for TLS"));
        }
        let host = url.host_str().ok_or_else(|| bad("it has no host"))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let server_name = ctx
            .cluster
            .tls_server_name
            .clone()
            .unwrap_or_else(|| host.clone());
        Ok(TlsTarget {
            url: url_text,
            host,
            port,
            server_name,
        })
    }
}

fn certs_from(m: &Material) -> Result<Vec<CertificateDer<'static>>, ClientError> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&m.bytes).collect();
    let certs = certs.map_err(|e| ClientError::BadMaterial {
        origin: m.origin.to_string(),
        problem: format!("not PEM: {e}"),
    })?;
    if certs.is_empty() {
        return Err(ClientError::BadMaterial {
            origin: m.origin.to_string(),
            problem: "no PEM certificate found".into(),
        });
    }
    Ok(certs)
}

/// Builds the config and the recorder that will hold what the handshake reveals.
pub fn build_client_config(ctx: &ResolvedContext) -> Result<(ClientConfig, Recorder), ClientError> {
    let recorder = Recorder::default();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    match &ctx.cluster.certificate_authority {
        Some(ca) => {
            for cert in certs_from(ca)? {
                // A certificate webpki cannot use as a trust anchor is skipped here and explained
                // by the chain checks; the handshake then reports UnknownIssuer.
                let _ = roots.add(cert);
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                let _ = roots.add(cert);
            }
        }
    }
    let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .map_err(|e| ClientError::Tls(format!("no usable CA certificate: {e}")))?;
    let verifier = Arc::new(RecordingVerifier {
        inner,
        recorder: recorder.clone(),
        insecure: ctx.cluster.insecure_skip_tls_verify,
    });
    let key = match (&ctx.user.client_certificate, &ctx.user.client_key) {
        (Some(cert), Some(key)) => {
            let chain = certs_from(cert)?;
            let key_material = key.expose();
            let der = PrivateKeyDer::from_pem_slice(&key_material.bytes).map_err(|e| {
                ClientError::BadMaterial {
                    origin: key_material.origin.to_string(),
                    problem: format!("no usable private key: {e}"),
                }
            })?;
            let signing = provider.key_provider.load_private_key(der).map_err(|e| {
                ClientError::BadMaterial {
                    origin: key_material.origin.to_string(),
                    problem: format!("unsupported private key: {e}"),
                }
            })?;
            Some(Arc::new(rustls::sign::CertifiedKey::new(chain, signing)))
        }
        _ => None,
    };
    let resolver = Arc::new(RecordingResolver {
        key,
        recorder: recorder.clone(),
    });
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // Every connection is a full handshake, so the recorder always sees the server's chain.
    config.resumption = rustls::client::Resumption::disabled();
    Ok((config, recorder))
}

/// The SNI value rustls needs; an IP address is sent as no SNI and verified against IP SANs.
pub fn server_name(target: &TlsTarget) -> Result<ServerName<'static>, ClientError> {
    ServerName::try_from(target.server_name.clone()).map_err(|e| ClientError::BadServerUrl {
        url: target.url.clone(),
        reason: format!("{:?} is not a valid server name: {e}", target.server_name),
    })
}

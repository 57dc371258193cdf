//! TLS like kube-apiserver: the server *requests* a client certificate, names the cluster CA as
//! acceptable, checks the handshake signature, but leaves the chain verdict to authentication —
//! so an unknown-CA certificate becomes a 401 `Status`, not a broken handshake (Go's
//! `RequestClientCert` + the x509 authenticator).

use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

/// Accepts any client chain during the handshake (the signature over the handshake is still
/// verified, proving possession of the key) and keeps the real verifier for authentication.
#[derive(Debug)]
pub(crate) struct DeferredClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
}

impl DeferredClientVerifier {
    pub fn new(ca_der: &CertificateDer<'static>) -> Result<Self, rustls::Error> {
        let mut roots = RootCertStore::empty();
        roots.add(ca_der.clone())?;
        let inner = WebPkiClientVerifier::builder(Arc::new(roots))
            .allow_unauthenticated()
            .build()
            .map_err(|e| rustls::Error::General(e.to_string()))?;
        Ok(DeferredClientVerifier { inner })
    }

    /// The verdict the x509 authenticator uses: does this chain verify against the cluster CA
    /// (signature, validity, clientAuth usage)?
    pub(crate) fn verify_chain(&self, chain: &[CertificateDer<'static>]) -> Result<(), String> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err("no certificate".into());
        };
        self.inner
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl ClientCertVerifier for DeferredClientVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }
    fn client_auth_mandatory(&self) -> bool {
        false
    }
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }
    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The rustls server config: serving chain (leaf + CA), deferred client verification, h2 + 1.1.
pub(crate) fn server_config(
    serving_chain: Vec<CertificateDer<'static>>,
    serving_key: PrivateKeyDer<'static>,
    verifier: Arc<DeferredClientVerifier>,
) -> Result<rustls::ServerConfig, rustls::Error> {
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(server_provider()))
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(serving_chain, serving_key)?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    cfg.ignore_client_order = true;
    Ok(cfg)
}

/// kube-apiserver's Go TLS server picks the suite by its own order, AES-128-GCM first on CPUs
/// with AES instructions, whatever the client lists first (rustls and OpenSSL clients list
/// AES-256 first). Same choice here: it is also a third less AES work per byte.
fn server_provider() -> rustls::crypto::CryptoProvider {
    use rustls::crypto::ring::cipher_suite as cs;
    let mut p = rustls::crypto::ring::default_provider();
    let rank = |s: &rustls::SupportedCipherSuite| {
        [
            cs::TLS13_AES_128_GCM_SHA256,
            cs::TLS13_AES_256_GCM_SHA384,
            cs::TLS13_CHACHA20_POLY1305_SHA256,
        ]
        .iter()
        .position(|x| x.suite() == s.suite())
        .unwrap_or(usize::MAX)
    };
    // Stable: the TLS 1.2 suites keep rustls's order after the three TLS 1.3 ones.
    p.cipher_suites.sort_by_key(rank);
    p
}

/// What the TLS layer learnt about one connection, handed to every request on it.
#[derive(Debug, Clone, Default)]
pub struct ConnInfo {
    pub(crate) remote: Option<std::net::SocketAddr>,
    pub(crate) tls_version: String,
    pub(crate) cipher_suite: String,
    pub(crate) alpn: String,
    pub(crate) client_chain: Vec<CertificateDer<'static>>,
    /// Ok when the chain verified against the cluster CA; the error text otherwise.
    pub(crate) chain_verdict: Option<Result<(), String>>,
    /// The leaf's subject facts, parsed once per connection rather than per request.
    pub(crate) client_facts: Option<CertFacts>,
}

impl ConnInfo {
    pub(crate) fn from_tls(
        conn: &rustls::ServerConnection,
        remote: Option<std::net::SocketAddr>,
        verifier: &DeferredClientVerifier,
    ) -> Self {
        let client_chain: Vec<CertificateDer<'static>> = conn
            .peer_certificates()
            .map(|c| c.iter().map(|d| d.clone().into_owned()).collect())
            .unwrap_or_default();
        let chain_verdict = if client_chain.is_empty() {
            None
        } else {
            Some(verifier.verify_chain(&client_chain))
        };
        ConnInfo {
            remote,
            tls_version: conn
                .protocol_version()
                .map(|v| match v {
                    rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
                    rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
                    other => format!("{other:?}"),
                })
                .unwrap_or_default(),
            cipher_suite: conn
                .negotiated_cipher_suite()
                .map(|s| format!("{:?}", s.suite()))
                .unwrap_or_default(),
            alpn: conn
                .alpn_protocol()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .unwrap_or_default(),
            client_facts: client_chain.first().and_then(|c| cert_facts(c)),
            client_chain,
            chain_verdict,
        }
    }
}

/// Facts about the presented client certificate, for the trace (no key material).
#[derive(Debug, Clone, Serialize, Default)]
pub(crate) struct CertFacts {
    pub(crate) subject: String,
    pub(crate) issuer: String,
    pub(crate) serial: String,
    pub(crate) common_name: String,
    pub(crate) organizations: Vec<String>,
    pub(crate) sha256: String,
    pub(crate) not_after: String,
}

pub(crate) fn cert_facts(der: &[u8]) -> Option<CertFacts> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let cn = cert
        .subject()
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())
        .unwrap_or_default();
    let orgs = cert
        .subject()
        .iter_organization()
        .filter_map(|a| a.as_str().ok())
        .map(String::from)
        .collect();
    Some(CertFacts {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        serial: cert.serial.to_string(),
        common_name: cn.to_string(),
        organizations: orgs,
        sha256: hex(&Sha256::digest(der)),
        not_after: cert.validity().not_after.to_string(),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

//! Wrappers around rustls' verifier and client-certificate resolver that record what happened
//! during a handshake. rustls calls them at the exact protocol points the Connection view shows
//! (server certificate verification, CertificateRequest), so recording there is the truth, not a
//! reconstruction.

use std::sync::{Arc, Mutex};

use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// What the handshake revealed, filled in as it happens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HandshakeRecord {
    /// The chain the server presented, leaf first (DER).
    pub server_chain: Vec<Vec<u8>>,
    /// The name the certificate was checked against.
    pub server_name: Option<String>,
    /// `None` until verification ran; then the verdict (error text when it failed).
    pub server_verified: Option<Result<(), String>>,
    /// The error itself, for explanations.
    pub server_error: Option<rustls::Error>,
    /// The signature scheme of the server's handshake signature.
    pub server_signature_scheme: Option<String>,
    /// Whether the server sent a CertificateRequest (rustls asks the resolver only then).
    pub client_certificate_requested: bool,
    /// The acceptable CA names from the CertificateRequest (DER distinguished names).
    pub acceptable_ca_names: Vec<Vec<u8>>,
    /// Whether the client answered with a certificate.
    pub client_certificate_sent: bool,
    /// Set when verification was skipped because of insecure-skip-tls-verify.
    pub verification_skipped: bool,
    /// The first bytes the server sent (up to 64), whatever they were.
    pub server_first_bytes: Vec<u8>,
}

/// Shared between the verifier, the resolver and whoever reads the record afterwards.
#[derive(Debug, Default, Clone)]
pub struct Recorder(Arc<Mutex<HandshakeRecord>>);

impl Recorder {
    pub fn snapshot(&self) -> HandshakeRecord {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }

    fn with(&self, f: impl FnOnce(&mut HandshakeRecord)) {
        if let Ok(mut r) = self.0.lock() {
            f(&mut r);
        }
    }
}

/// Records the server's chain and the verdict, then returns what the inner verifier said —
/// unless `insecure` is set, in which case (like kubectl with insecure-skip-tls-verify) the
/// verdict is recorded but not enforced.
#[derive(Debug)]
pub struct RecordingVerifier {
    pub inner: Arc<dyn ServerCertVerifier>,
    pub recorder: Recorder,
    pub insecure: bool,
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        self.recorder.with(|r| {
            r.server_chain = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.as_ref().to_vec())
                .collect();
            r.server_name = Some(server_name.to_str().into_owned());
            r.server_verified = Some(verdict.as_ref().map(|_| ()).map_err(|e| e.to_string()));
            r.server_error = verdict.as_ref().err().cloned();
            r.verification_skipped = self.insecure;
        });
        if self.insecure {
            Ok(ServerCertVerified::assertion())
        } else {
            verdict
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.recorder
            .with(|r| r.server_signature_scheme = Some(format!("{:?}", dss.scheme)));
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.recorder
            .with(|r| r.server_signature_scheme = Some(format!("{:?}", dss.scheme)));
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Presents the kubeconfig's client certificate (if any) and records the CertificateRequest.
#[derive(Debug)]
pub struct RecordingResolver {
    pub key: Option<Arc<rustls::sign::CertifiedKey>>,
    pub recorder: Recorder,
}

impl ResolvesClientCert for RecordingResolver {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        let chosen = self
            .key
            .as_ref()
            .filter(|k| k.key.choose_scheme(sigschemes).is_some())
            .cloned();
        self.recorder.with(|r| {
            r.client_certificate_requested = true;
            r.acceptable_ca_names = root_hint_subjects.iter().map(|s| s.to_vec()).collect();
            r.client_certificate_sent = chosen.is_some();
        });
        chosen
    }

    fn has_certs(&self) -> bool {
        self.key.is_some()
    }
}

//! The server's clock, for "expired" and "not yet valid": whose clock is wrong? A second
//! connection that verifies nothing (it carries no credentials and only reads headers) sends
//! `HEAD /`; every HTTP server, kube-apiserver included, answers with a `Date` header.

use std::sync::Arc;
use std::time::Duration;

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::config::TlsTarget;

const WAIT: Duration = Duration::from_secs(3);

/// Accepts any certificate: this connection only asks for the time.
#[derive(Debug)]
struct AskTheTime(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AskTheTime {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The `Date` header of the server's answer to `HEAD /`, or why it could not be read.
pub async fn server_date(target: &TlsTarget) -> Result<String, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AskTheTime(provider)))
        .with_no_client_auth();
    let name = ServerName::try_from(target.server_name.clone()).map_err(|e| e.to_string())?;
    let ask = async {
        let tcp = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|e| e.to_string())?;
        let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let request = format!(
            "HEAD / HTTP/1.1\r\nHost: {}\r\nUser-Agent: kexplore\r\nConnection: close\r\n\r\n",
            target.server_name
        );
        tls.write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 8192];
        let mut len = 0;
        // The headers end at the first empty line; that is all this needs.
        while len < buf.len() && !buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut buf[len..]).await {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if len == 0 => return Err(e.to_string()),
                Err(_) => break,
            }
        }
        date_header(&buf[..len]).ok_or_else(|| "the answer has no Date header".to_string())
    };
    tokio::time::timeout(WAIT, ask)
        .await
        .map_err(|_| format!("no answer within {}s", WAIT.as_secs()))?
}

fn date_header(head: &[u8]) -> Option<String> {
    String::from_utf8_lossy(head)
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("date")
                .then(|| v.trim().to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_header_is_found_in_any_case() {
        let head = b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\ndate: Wed, 01 Jan 2020 00:00:05 GMT\r\n\r\nbody";
        assert_eq!(
            date_header(head).as_deref(),
            Some("Wed, 01 Jan 2020 00:00:05 GMT")
        );
        assert_eq!(
            date_header(b"HTTP/1.1 200 OK\r\n\r\nDate: in the body"),
            None
        );
    }
}

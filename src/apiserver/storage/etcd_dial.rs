//! The etcd flags' certificates, and the check made before serving: each `--etcd-servers` URL
//! is dialled (TCP, then TLS with `--etcd-cafile` and the client certificate) so that a refused
//! port or a certificate etcd does not accept stops `serve` with the URL and the reason, instead
//! of a gRPC channel that retries in silence.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Certificate, ConnectOptions, Identity, TlsOptions};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls_pki_types::pem::PemObject;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::apiserver::storage::etcd_config::EtcdOptions;

const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

/// The PEM files of `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile`, read once.
#[derive(Clone, Default)]
pub(crate) struct Tls {
    ca: Option<Vec<u8>>,
    cert: Option<Vec<u8>>,
    key: Option<Vec<u8>>,
}

fn read(flag: &str, path: &Option<std::path::PathBuf>) -> Result<Option<Vec<u8>>, String> {
    path.as_ref()
        .map(|p| std::fs::read(p).map_err(|e| format!("{flag} {}: {e}", p.display())))
        .transpose()
}

impl Tls {
    pub(crate) fn load(opts: &EtcdOptions) -> Result<Tls, String> {
        let tls = Tls {
            ca: read("--etcd-cafile", &opts.cafile)?,
            cert: read("--etcd-certfile", &opts.certfile)?,
            key: read("--etcd-keyfile", &opts.keyfile)?,
        };
        if tls.cert.is_some() != tls.key.is_some() {
            return Err("--etcd-certfile and --etcd-keyfile go together".into());
        }
        Ok(tls)
    }

    fn any(&self) -> bool {
        self.ca.is_some() || self.cert.is_some()
    }

    /// The client's options: TLS with the CA and client identity when any file was given.
    pub(crate) fn connect_options(&self) -> ConnectOptions {
        let opts = ConnectOptions::new();
        if !self.any() {
            return opts;
        }
        let mut tls = TlsOptions::new();
        if let Some(ca) = &self.ca {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        if let (Some(c), Some(k)) = (&self.cert, &self.key) {
            tls = tls.identity(Identity::from_pem(c, k));
        }
        opts.with_tls(tls)
    }

    fn rustls_config(&self) -> Result<rustls::ClientConfig, String> {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(ca) = &self.ca {
            for c in CertificateDer::pem_slice_iter(ca) {
                let c = c.map_err(|e| format!("--etcd-cafile: {e}"))?;
                roots.add(c).map_err(|e| format!("--etcd-cafile: {e}"))?;
            }
        }
        let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
        let mut cfg = match (&self.cert, &self.key) {
            (Some(c), Some(k)) => {
                let chain = CertificateDer::pem_slice_iter(c)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("--etcd-certfile: {e}"))?;
                let key =
                    PrivateKeyDer::from_pem_slice(k).map_err(|e| format!("--etcd-keyfile: {e}"))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("--etcd-certfile/--etcd-keyfile: {e}"))?
            }
            _ => builder.with_no_client_auth(),
        };
        cfg.alpn_protocols = vec![b"h2".to_vec()];
        Ok(cfg)
    }
}

/// Dial one URL as the gRPC client will: TCP, then for https a TLS handshake and a first read,
/// which is where a TLS 1.3 server's refusal of our certificate arrives.
async fn check(url: &str, tls: &Tls) -> Result<(), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "not a URL (want https://HOST:PORT)".to_string())?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = authority
        .rsplit_once(':')
        .map(|(h, _)| h)
        .unwrap_or(authority)
        .trim_start_matches('[')
        .trim_end_matches(']');
    let addr = match authority.rsplit_once(':') {
        Some(_) => authority.to_string(),
        None => format!("{authority}:2379"),
    };
    let tcp = tokio::time::timeout(DIAL_TIMEOUT, tokio::net::TcpStream::connect(&addr))
        .await
        .map_err(|_| format!("no answer from {addr} within {DIAL_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    match scheme {
        "http" => return Ok(()),
        "https" => {}
        other => return Err(format!("unsupported scheme {other:?} (want https or http)")),
    }
    let cfg = tls.rustls_config()?;
    let name =
        ServerName::try_from(host.to_string()).map_err(|e| format!("server name {host}: {e}"))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(cfg));
    let mut stream = tokio::time::timeout(DIAL_TIMEOUT, connector.connect(name, tcp))
        .await
        .map_err(|_| "TLS handshake did not finish".to_string())?
        .map_err(|e| format!("TLS handshake: {}", explain(&e, host)))?;
    // The HTTP/2 preface: etcd answers with its SETTINGS, or with an alert when it refused
    // our certificate after the handshake.
    let _ = stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await;
    let _ = stream.flush().await;
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await {
        Ok(Err(e)) => Err(format!("TLS: {}", explain(&e, host))),
        Ok(Ok(0)) => Err("the server closed the connection after the TLS handshake (is our client certificate accepted?)".into()),
        _ => Ok(()),
    }
}

/// A TLS failure in the words of the flags that would fix it; rustls's own name follows.
fn explain(e: &std::io::Error, host: &str) -> String {
    use rustls::{AlertDescription as A, CertificateError as C, Error as R};
    let Some(r) = e.get_ref().and_then(|i| i.downcast_ref::<R>()) else {
        return e.to_string();
    };
    let why = match r {
        R::InvalidCertificate(C::UnknownIssuer) => {
            "etcd's certificate is not signed by a CA in --etcd-cafile".to_string()
        }
        R::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            format!("etcd's certificate is not valid for {host}")
        }
        R::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            "etcd's certificate has expired".to_string()
        }
        R::AlertReceived(
            A::BadCertificate | A::UnknownCA | A::CertificateRequired | A::CertificateUnknown,
        ) => "etcd refused our client certificate (--etcd-certfile, --etcd-keyfile): it wants one signed by its own CA".to_string(),
        _ => return r.to_string(),
    };
    format!("{why} ({r})")
}

/// Every URL dialled; fine when at least one answers (the client balances over the rest), a
/// note on stderr for each that does not; otherwise every URL with its reason.
pub(crate) async fn check_all(servers: &[String], tls: &Tls) -> Result<(), String> {
    if servers.is_empty() {
        return Err("--etcd-servers: no URL given".into());
    }
    let mut failed = Vec::new();
    for url in servers {
        if let Err(e) = check(url, tls).await {
            failed.push(format!("etcd {url}: {e}"));
        }
    }
    if failed.len() == servers.len() {
        return Err(failed.join("; "));
    }
    for f in failed {
        eprintln!("kexplore serve: {f}");
    }
    Ok(())
}

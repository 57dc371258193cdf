//! One real mTLS handshake with the context's server, recorded step by step. Used by
//! `certs --connect` and the Connection view; the HTTP requests that follow go through reqwest.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::net::TcpStream;

use super::config::{TlsTarget, build_client_config, server_name};
use super::error::ClientError;
use super::exec::ExecError;
use super::exec_context::{ExecOutcome, with_exec_credential};
use super::explain::{Explanation, HandshakeStep, explain_tls_error};
use super::first_bytes::FirstBytes;
use super::recorder::HandshakeRecord;
use super::server_clock;
use crate::kubeconfig::ResolvedContext;

/// How long each phase may take before it is reported as a failure.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct HandshakeReport {
    pub target: TlsTarget,
    /// The address TCP reached, e.g. `127.0.0.1:6443`.
    pub peer_address: Option<String>,
    pub tcp_connect_time: Option<Duration>,
    pub handshake_time: Option<Duration>,
    /// What the ClientHello offered.
    pub offered_versions: Vec<&'static str>,
    pub offered_alpn: Vec<String>,
    /// What the ServerHello chose.
    pub tls_version: Option<String>,
    pub cipher_suite: Option<String>,
    pub key_exchange_group: Option<String>,
    pub alpn: Option<String>,
    pub record: HandshakeRecord,
    /// The step the handshake stopped at, and why; `None` when it completed.
    pub failure: Option<Explanation>,
}

impl HandshakeReport {
    pub fn succeeded(&self) -> bool {
        self.failure.is_none()
    }
}

fn version_name(v: rustls::ProtocolVersion) -> String {
    match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".into(),
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".into(),
        other => format!("{other:?}"),
    }
}

/// Connects to the context's server and performs the TLS handshake, never panicking and never
/// waiting longer than `CONNECT_TIMEOUT` per phase. Configuration problems (unusable URL or key)
/// are errors; everything the network does is a report.
pub async fn handshake(ctx: &ResolvedContext) -> Result<HandshakeReport, ClientError> {
    handshake_with_exec(ctx).await.map(|(report, _)| report)
}

/// `handshake`, and what the user's exec plugin contributed to it.
pub async fn handshake_with_exec(
    ctx: &ResolvedContext,
) -> Result<(HandshakeReport, ExecOutcome), ClientError> {
    let target = TlsTarget::from_context(ctx)?;
    // An exec plugin's client certificate is presented here as a kubeconfig one would be. A
    // plugin that gives none still lets the handshake show the server's side; the requests
    // that follow report the plugin's failure.
    let mut exec = ExecOutcome::default();
    let built = match with_exec_credential(ctx).await {
        Ok((exec_ctx, Some(cred))) if cred.client_certificate_pem.is_some() => {
            match build_client_config(&exec_ctx) {
                Ok(built) => {
                    exec.certificate = exec_ctx
                        .user
                        .client_certificate
                        .as_ref()
                        .and_then(|m| CertificateDer::pem_slice_iter(&m.bytes).next())
                        .and_then(Result::ok)
                        .map(|c| c.to_vec());
                    Some(built)
                }
                Err(e) => {
                    exec.error = Some(ExecError::BadAnswer {
                        command: exec_ctx
                            .user
                            .exec
                            .as_ref()
                            .map(|x| x.command.clone())
                            .unwrap_or_default(),
                        problem: e.to_string(),
                    });
                    None
                }
            }
        }
        Ok(_) => None,
        Err(e) => {
            exec.error = Some(e);
            None
        }
    };
    let (config, recorder) = match built {
        Some(b) => b,
        None => build_client_config(ctx)?,
    };
    let name = server_name(&target)?;
    let mut report = HandshakeReport {
        target: target.clone(),
        peer_address: None,
        tcp_connect_time: None,
        handshake_time: None,
        offered_versions: vec!["TLSv1.3", "TLSv1.2"],
        offered_alpn: config
            .alpn_protocols
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect(),
        tls_version: None,
        cipher_suite: None,
        key_exchange_group: None,
        alpn: None,
        record: HandshakeRecord::default(),
        failure: None,
    };
    let started = Instant::now();
    let tcp = match tokio::time::timeout(
        CONNECT_TIMEOUT,
        TcpStream::connect((target.host.as_str(), target.port)),
    )
    .await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            report.failure = Some(Explanation {
                step: HandshakeStep::TcpConnect,
                cause: "tcp-connect-failed",
                message: format!("cannot connect to {}:{}: {e}", target.host, target.port),
                fix: "check that the API server is running and the server URL (host and port) is right".into(),
                kubectl_says: (e.kind() == std::io::ErrorKind::ConnectionRefused)
                    .then(|| super::kubectl_words::connection_refused(&target.url))
                    .flatten()
                    .into_iter()
                    .collect(),
            });
            return Ok((report, exec));
        }
        Err(_) => {
            report.failure = Some(Explanation {
                step: HandshakeStep::TcpConnect,
                cause: "tcp-connect-timeout",
                message: format!(
                    "no answer from {}:{} within {}s",
                    target.host,
                    target.port,
                    CONNECT_TIMEOUT.as_secs()
                ),
                fix: "check the network path (firewall, VPN, proxy-url) to the API server".into(),
                kubectl_says: Vec::new(),
            });
            return Ok((report, exec));
        }
    };
    report.tcp_connect_time = Some(started.elapsed());
    report.peer_address = tcp.peer_addr().ok().map(|a| a.to_string());
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tls_started = Instant::now();
    let tcp = FirstBytes::new(tcp);
    let first_bytes = tcp.seen.clone();
    let outcome = tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, tcp)).await;
    report.record = recorder.snapshot();
    report.record.server_first_bytes = first_bytes.lock().map(|b| b.clone()).unwrap_or_default();
    match outcome {
        Ok(Ok(stream)) => {
            report.handshake_time = Some(tls_started.elapsed());
            let (_, conn) = stream.get_ref();
            report.tls_version = conn.protocol_version().map(version_name);
            report.cipher_suite = conn
                .negotiated_cipher_suite()
                .map(|s| format!("{:?}", s.suite()));
            report.key_exchange_group = conn
                .negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name()));
            report.alpn = conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned());
        }
        Ok(Err(io_err)) => {
            let tls_err = io_err
                .get_ref()
                .and_then(|e| e.downcast_ref::<rustls::Error>())
                .cloned();
            report.failure = Some(match tls_err {
                Some(e) => {
                    let mut f = explain_tls_error(&e, &report.record, ctx);
                    if matches!(
                        f.cause,
                        "server-cert-expired" | "server-cert-not-yet-valid"
                    ) {
                        // Whose clock is wrong, ours or the server's?
                        f.message.push_str(&match server_clock::server_date(&target).await {
                            Ok(d) => format!("; the server's Date header says {d}"),
                            Err(e) => format!("; the server's clock could not be read ({e})"),
                        });
                    }
                    f
                }
                None => Explanation {
                    step: HandshakeStep::ClientHello,
                    cause: "connection-closed",
                    message: format!("the connection broke during the TLS handshake: {io_err}"),
                    fix: "check that the port speaks TLS (an http:// server or a proxy may be listening there)".into(),
                    kubectl_says: Vec::new(),
                },
            });
        }
        Err(_) => {
            report.failure = Some(Explanation {
                step: HandshakeStep::ClientHello,
                cause: "tls-timeout",
                message: format!(
                    "the TLS handshake did not finish within {}s",
                    CONNECT_TIMEOUT.as_secs()
                ),
                fix: "check that the port speaks TLS and is not a plain-TCP proxy".into(),
                kubectl_says: Vec::new(),
            });
        }
    }
    Ok((report, exec))
}

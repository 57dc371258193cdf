//! Errors that stop a client from being built at all (as opposed to a failed handshake,
//! which is a result the handshake report explains).

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("server URL {url:?} is not usable: {reason}")]
    BadServerUrl { url: String, reason: String },
    #[error("{origin}: {problem}")]
    BadMaterial { origin: String, problem: String },
    #[error("TLS configuration: {0}")]
    Tls(String),
}

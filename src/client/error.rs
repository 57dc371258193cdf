//! Errors that stop a client from being built at all (as opposed to a failed handshake,
//! which is a result the handshake report explains).

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("server URL {url:?} is not usable: {reason}")]
    BadServerUrl { url: String, reason: String },
    #[error("{origin}: {problem}")]
    BadMaterial { origin: String, problem: String },
    /// The user's exec plugin could not give a credential (missing, failed, bad answer).
    #[error("user '{user}': {error}")]
    Exec {
        user: String,
        error: super::exec::ExecError,
    },
    #[error("TLS configuration: {0}")]
    Tls(String),
}

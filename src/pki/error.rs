//! Errors decoding certificate material, naming where it came from.

#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// `origin` is the kubeconfig field, e.g. `user 'admin' in /x/config: client-certificate-data`.
    #[error("{origin}: {problem}")]
    BadMaterial { origin: String, problem: String },
}

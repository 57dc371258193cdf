//! Certificates and keys: PEM/base64 → DER, the facts openssl prints, chains built by
//! signature, the checks, and minting (rcgen).

pub mod error;
pub mod report;

pub use error::PkiError;
pub use report::*;

use crate::kubeconfig::ResolvedContext;

/// Decodes and checks every certificate and key of a resolved context, as of now.
pub fn inspect(ctx: &ResolvedContext) -> Result<CredentialReport, PkiError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    inspect_at(ctx, now)
}

/// As `inspect`, with the clock passed in so expiry checks are testable.
pub fn inspect_at(_ctx: &ResolvedContext, _now_unix: i64) -> Result<CredentialReport, PkiError> {
    Err(PkiError::BadMaterial {
        origin: String::new(),
        problem: "not built yet".into(),
    })
}

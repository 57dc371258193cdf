//! Kubeconfig loading with kubectl's semantics: which files, how they merge, how one context
//! resolves (relative paths, data-or-file). Knows nothing of certificates or terminals.

pub mod error;
pub mod load;
pub mod merged;
pub mod model;
pub mod resolve;
pub mod resolved;
pub mod secret;

#[cfg(test)]
mod tests;

pub use error::KubeconfigError;
pub use load::Selection;
pub use merged::{FileState, Kubeconfig, SourceFile, Sourced};
pub use resolved::*;
pub use secret::Secret;

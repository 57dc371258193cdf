//! Errors from loading and resolving kubeconfigs. Each names the file and what is wrong,
//! in words a person can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("no kubeconfig found: {0}")]
    NotFound(String),
    #[error("{}: cannot read: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{}: file is empty", path.display())]
    Empty { path: PathBuf },
    #[error("{}: not valid YAML: {reason}", path.display())]
    NotYaml { path: PathBuf, reason: String },
    #[error("{}: not a kubeconfig: {reason}", path.display())]
    NotKubeconfig { path: PathBuf, reason: String },
    #[error(
        "context \"{name}\" does not exist (known contexts: {})",
        list_or_none(known)
    )]
    UnknownContext { name: String, known: Vec<String> },
    #[error(
        "no context selected: current-context is not set and --context was not given (known contexts: {})",
        list_or_none(known)
    )]
    NoCurrentContext { known: Vec<String> },
    #[error("context \"{context}\" in {}: {what}", source_file.display())]
    BrokenContext {
        context: String,
        source_file: PathBuf,
        what: String,
    },
    /// A field of a cluster or user entry that cannot be used.
    #[error("{entry_kind} '{entry_name}' in {}: {field} {problem}", source_file.display())]
    BadField {
        source_file: PathBuf,
        entry_kind: &'static str,
        entry_name: String,
        field: &'static str,
        problem: String,
    },
}

fn list_or_none(known: &[String]) -> String {
    if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    }
}

//! One thin file per subcommand: load inputs through the core, print text or JSON.

pub mod certs;
pub mod etcd;
pub mod journey;
pub mod lesson;
pub mod scenario;
pub mod schedule;
pub mod serve;
pub mod tui;

use crate::kubeconfig::KubeconfigError;

/// An error at the edge, already in plain words, with the contract's exit code.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Bad usage or bad input: exit 2.
    #[error("{0}")]
    Input(String),
    /// The operation failed: exit 1.
    #[error("{0}")]
    Failed(String),
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Input(_) => 2,
            CommandError::Failed(_) => 1,
        }
    }
}

impl From<KubeconfigError> for CommandError {
    fn from(e: KubeconfigError) -> Self {
        CommandError::Input(e.to_string())
    }
}

pub type CommandResult = Result<u8, CommandError>;

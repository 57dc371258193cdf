//! A pod's journey as data: the contract's stages in order (tls-handshake … kubelet), each with
//! a status and a source — `observed` by the client itself, `reported` by the embedded server's
//! own trace, or `inferred` (explained, not seen, as a remote server does not report its
//! internals). `build` assembles one from what a run collected; the TUI and `journey` read it.

pub mod build;
pub mod manifest;
mod refusal;
pub mod run;
pub mod spread_text;
pub mod text;
pub mod words;
pub mod workload;
pub mod workload_build;
pub mod workload_text;

use serde::Serialize;
use serde_json::Value;

pub use crate::stage::{Stage, Status};

/// The journey's stages, in the contract's order.
pub const STAGES: [Stage; 12] = Stage::JOURNEY;

/// How a dry run's binding names the node kexplore's simulation chose (the text output and the
/// TUI say it alike), followed by the node.
pub const SIMULATED_BINDING: &str = "the simulated scheduler would bind it to";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Observed,
    Reported,
    Inferred,
}

/// One stage of one journey: how it ended, who saw it, and what it decided.
#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    pub stage: Stage,
    pub status: Status,
    pub source: Source,
    pub detail: Value,
}

/// `kexplore journey -o json`: `{"pod", "server", "stages": [...]}`.
#[derive(Debug, Clone, Serialize)]
pub struct Journey {
    pub pod: String,
    pub server: String,
    pub stages: Vec<StageReport>,
    /// Present (true) when the create was `dryRun=All` and nothing was stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Present with `--cleanup`: how deleting the pod at the end went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Value>,
}

impl StageReport {
    /// Its detail says only why (an explanation, a note): no values of its own to show.
    pub fn only_words(&self) -> bool {
        self.detail.as_object().is_none_or(|o| {
            o.iter().all(|(k, v)| {
                matches!(k.as_str(), "explanation" | "note" | "dryRun") || v.is_null()
            })
        })
    }
}

impl Journey {
    /// True when every stage that ran succeeded.
    pub fn succeeded(&self) -> bool {
        self.stages.iter().all(|s| s.status != Status::Failed)
    }
}

//! View 4's state: the pod manifest (a file the user may edit), what the run collected so far,
//! and the step. Step 0 is the request itself (as curl and as kubectl send it); steps 1–12 are
//! the contract's stages, built by `journey::build` from what was collected.

pub mod request;
pub mod run;

use std::path::PathBuf;

use serde_json::Value;

use crate::journey::build::{Collected, build};
use crate::journey::{Journey, STAGES};

#[derive(Debug, Default)]
pub struct JourneyState {
    /// The manifest's file (shown, and handed to $EDITOR).
    pub path: PathBuf,
    /// The manifest as parsed, or why it is not a pod.
    pub manifest: Option<Result<Value, String>>,
    /// What the current run collected; `None` before the request is sent.
    pub collected: Option<Collected>,
    /// A run is under way.
    pub running: bool,
    pub step: usize,
    /// The server is the embedded one: re-runs may replace the previous pod.
    pub embedded: bool,
}

/// Steps: the request, then one per stage.
pub const STEP_COUNT: usize = STAGES.len() + 1;

impl JourneyState {
    pub fn new(path: PathBuf, text: Option<&str>, embedded: bool) -> JourneyState {
        let mut s = JourneyState {
            path,
            embedded,
            ..Default::default()
        };
        if let Some(t) = text {
            s.set_manifest(t);
        }
        s
    }

    /// Parses the manifest text (YAML or JSON), which must be one Pod with a name.
    pub fn set_manifest(&mut self, text: &str) {
        self.manifest = Some(parse(text, &self.path));
        self.collected = None;
        self.step = 0;
    }

    pub fn pod(&self) -> Option<&Value> {
        self.manifest.as_ref().and_then(|m| m.as_ref().ok())
    }

    pub fn journey(&self) -> Option<Journey> {
        self.collected.as_ref().map(build)
    }
}

fn parse(text: &str, path: &std::path::Path) -> Result<Value, String> {
    let v: Value = serde_yaml::from_str(text)
        .map_err(|e| format!("{}: not a YAML or JSON manifest: {e}", path.display()))?;
    if v.get("kind").and_then(Value::as_str) != Some("Pod") {
        return Err(format!(
            "{}: expected one object of kind Pod",
            path.display()
        ));
    }
    if v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(format!("{}: the pod needs metadata.name", path.display()));
    }
    Ok(v)
}

//! View 4's state: the pod manifest (a file the user may edit), what the run collected so far,
//! and the step. Step 0 is the request itself (as curl and as kubectl send it); steps 1–12 are
//! the contract's stages, built by `journey::build` from what was collected. A workload
//! manifest (`workload.rs`) has its own stages and then a list of its pods, each of which
//! opens into the pod's twelve stages.

pub mod request;
pub mod workload;

use std::path::PathBuf;

use serde_json::Value;

use crate::journey::build::{Collected, build};
use crate::journey::run::WriteMode;
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
    /// Pod manifests `l` cycles through: (file, text), read before the UI started.
    pub choices: Vec<(PathBuf, String)>,
    /// `--for-real`: runs against a remote server create the pod instead of a dry run.
    pub for_real: bool,
    /// `W` asked "create … for real? y/N" and the answer is awaited.
    pub confirm: bool,
    /// How the run under way (or the last one) writes: `W` may create while Space dry-runs.
    pub sent: Option<WriteMode>,
    /// A workload's run: its request, its controllers' work and its pods.
    pub workload: Option<crate::journey::workload::WorkloadCollected>,
    /// The pod under the cursor in a workload's pod list.
    pub pod_cursor: usize,
    /// That pod's own journey is on screen (steps 1–12), not the workload's.
    pub pod_open: bool,
}

/// An API server's refusal of view 4's create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The manifest's kind: `Pod`, `Deployment`, ….
    pub kind: String,
    pub code: u16,
    /// The Status's reason (`Invalid`, `Forbidden`, `AlreadyExists`, …), empty when it had none.
    pub reason: String,
    /// The refused create was a dry run: nothing would have been stored anyway.
    pub dry_run: bool,
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
        self.manifest = Some(crate::journey::manifest::parse(text, &self.path));
        self.collected = None;
        self.workload = None;
        self.pod_open = false;
        self.pod_cursor = 0;
        self.step = 0;
    }

    /// `l`: the next manifest of `choices` (after the last, the first again).
    pub fn next_choice(&mut self) {
        if self.choices.is_empty() {
            return;
        }
        let i = self
            .choices
            .iter()
            .position(|(p, _)| *p == self.path)
            .map_or(0, |i| (i + 1) % self.choices.len());
        let (path, text) = self.choices[i].clone();
        self.path = path;
        self.set_manifest(&text);
    }

    /// The manifest when it is a Pod (view 5 places it; `W` names it).
    pub fn pod(&self) -> Option<&Value> {
        self.sendable().filter(|v| v["kind"] == "Pod")
    }

    /// The manifest Space sends: a Pod or a workload.
    pub fn sendable(&self) -> Option<&Value> {
        self.manifest.as_ref().and_then(|m| m.as_ref().ok())
    }

    /// How a run started by Space or `r` writes: the embedded sandbox and `--for-real` create
    /// the pod, any other server gets a dry run.
    pub fn write_mode(&self) -> WriteMode {
        if self.embedded || self.for_real {
            WriteMode::ForReal
        } else {
            WriteMode::DryRun
        }
    }

    /// The status bar's READ-ONLY badge: a remote server without `--for-real`.
    pub fn read_only(&self) -> bool {
        self.write_mode() == WriteMode::DryRun
    }

    /// Whether the journey may go past its request step: not when the manifest cannot be
    /// sent (its step says why), where the stages after would wait for a request that never
    /// leaves.
    pub fn can_leave_request(&self) -> bool {
        self.pod_open || self.sendable().is_some()
    }

    /// What Space (or a click on a stage) does from the request step: send the pod, written
    /// this way, or — when a run is under way or was made — only show its stages. The step
    /// logic and the words on screen both read this, so they cannot disagree.
    pub fn space_sends(&self) -> Option<WriteMode> {
        (self.sendable().is_some()
            && self.collected.is_none()
            && self.workload.is_none()
            && !self.running)
            .then(|| self.write_mode())
    }

    /// How the run on screen writes: what was sent, else what Space would send.
    pub fn shown_write(&self) -> WriteMode {
        let ran = self
            .collected
            .as_ref()
            .or(self.workload.as_ref().map(|w| &w.request));
        match (ran, self.sent) {
            (Some(c), _) if c.dry_run => WriteMode::DryRun,
            (Some(_), _) => WriteMode::ForReal,
            (None, Some(w)) if self.running => w,
            _ => self.write_mode(),
        }
    }

    /// The request step's last line: what Space does now, from `space_sends`; `true` when it
    /// writes to a cluster the user did not start (said as a warning).
    pub fn space_sentence(&self, server: &str) -> (String, bool) {
        match self.space_sends() {
            Some(WriteMode::DryRun) => (
                format!(
                    "Space sends this to {server} as a dry run (dryRun=All): every check runs, nothing is stored · W creates it for real (asks first) · e edits it"
                ),
                false,
            ),
            Some(WriteMode::ForReal) if self.embedded => (
                "Space sends this to the embedded cluster kexplore started: it creates the pod there · e edits it".into(),
                false,
            ),
            Some(WriteMode::ForReal) => (
                format!(
                    "! Space sends this to {server} for real (--for-real): it creates the pod there · e edits it"
                ),
                true,
            ),
            None => {
                let how = |w| match w {
                    WriteMode::DryRun => "as a dry run (dryRun=All)",
                    WriteMode::ForReal => "for real",
                };
                let sent = if self.running { "Being sent" } else { "Sent" };
                (
                    format!(
                        "{sent} {}: Space shows what happened · r sends it again {} · e edits it",
                        how(self.shown_write()),
                        how(self.write_mode())
                    ),
                    false,
                )
            }
        }
    }

    /// View 4's create of this manifest as the API server refused it: what view 5, which then
    /// places the manifest itself, must say of the object it shows. `None` before a run, for a
    /// create that got no answer at all, and once it was created.
    pub fn refusal(&self) -> Option<Refusal> {
        let (kind, c) = match &self.workload {
            Some(w) => (w.kind.clone(), &w.request),
            None => ("Pod".to_string(), self.collected.as_ref()?),
        };
        let (code, status) = c.create.as_ref()?;
        if *code == 0 || (200..300).contains(code) || c.created_by.is_some() {
            return None;
        }
        Some(Refusal {
            kind,
            code: *code,
            reason: status["reason"].as_str().unwrap_or_default().to_string(),
            dry_run: c.dry_run,
        })
    }

    /// The pod journey on screen: the pod's run, or the open pod of a workload's.
    pub fn journey(&self) -> Option<Journey> {
        if self.pod_open {
            return self.open_pod().map(build);
        }
        self.collected.as_ref().map(build)
    }
}

/// Pod manifests in `dir` (one object of kind Pod per file, `.json`/`.yaml`/`.yml`), sorted by
/// name; files that are not a single pod (cluster states) are left out.
pub fn pod_files(dir: &std::path::Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x, "json" | "yaml" | "yml"))
        })
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            crate::journey::manifest::parse(&text, &p).ok()?;
            Some((p, text))
        })
        .collect();
    out.sort();
    out
}

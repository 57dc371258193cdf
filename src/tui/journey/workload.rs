//! View 4 on a workload manifest: step 0 is the request, then the workload's stages (its own
//! request's seven, then each controller that acted on it), then the list of its pods; Space on
//! the list opens the pod under the cursor into its twelve stages, Backspace from its first
//! stage comes back to the list.

use super::JourneyState;
use crate::journey::build::Collected;
use crate::journey::workload::kind_of;
use crate::journey::workload_build::{REQUEST_STAGES, WorkloadJourney, build_workload};
use crate::journey::{STAGES, Stage};

impl JourneyState {
    /// The manifest is a Deployment, ReplicaSet, DaemonSet or StatefulSet.
    pub fn is_workload(&self) -> bool {
        self.sendable().and_then(kind_of).is_some()
    }

    /// The workload's stage names, fixed by its kind before anything runs.
    pub fn workload_stage_names(&self) -> Vec<Stage> {
        let mut names: Vec<Stage> = STAGES[..REQUEST_STAGES].to_vec();
        if self.sendable().is_some_and(|v| v["kind"] == "Deployment") {
            names.push(Stage::DeploymentController);
        }
        if let Some((_, controller)) = self.sendable().and_then(kind_of) {
            names.push(controller);
        }
        names
    }

    pub fn workload_journey(&self) -> Option<WorkloadJourney> {
        self.workload.as_ref().map(build_workload)
    }

    /// The step of the pod list: after the request and every workload stage.
    pub fn pods_step(&self) -> usize {
        self.workload_stage_names().len() + 1
    }

    /// The workload's step on screen: its stage (`None` for the request), or its pod list
    /// (`true`).
    pub fn workload_step(&self) -> (Option<Stage>, bool) {
        if self.step >= self.pods_step() {
            return (None, true);
        }
        let names = self.workload_stage_names();
        let stage = self.step.checked_sub(1).and_then(|i| names.get(i)).copied();
        (stage, false)
    }

    /// The pod of a workload's run under the cursor.
    pub fn open_pod(&self) -> Option<&Collected> {
        self.workload.as_ref()?.pods.get(self.pod_cursor)
    }

    /// The last step there is: a pod's kubelet, or a workload's pod list.
    pub fn last_step(&self) -> usize {
        if self.is_workload() && !self.pod_open {
            self.pods_step()
        } else {
            STAGES.len()
        }
    }

    /// Space (`forward`) or Backspace: the next or previous step, into the open pod's stages
    /// from the pod list and back out of them.
    pub fn advance(&mut self, forward: bool) {
        let workload = self.is_workload();
        match (forward, self.pod_open) {
            (true, false) if workload && self.step == self.pods_step() => {
                if self.open_pod().is_some() {
                    self.pod_open = true;
                    self.step = 1;
                }
            }
            (false, true) if self.step <= 1 => {
                self.pod_open = false;
                self.step = self.pods_step();
            }
            (true, _) => self.step = (self.step + 1).min(self.last_step()),
            (false, _) => self.step = self.step.saturating_sub(1),
        }
    }

    /// The pod on screen may still change: its run goes on (a workload's pod: until it runs,
    /// as the workload's run follows its other pods after that).
    pub fn pod_running(&self) -> bool {
        if !self.pod_open {
            return self.running || self.collected.is_none();
        }
        let phase = self
            .open_pod()
            .and_then(|p| p.final_pod.as_ref())
            .and_then(|p| p.pointer("/status/phase"))
            .and_then(serde_json::Value::as_str);
        self.running && !matches!(phase, Some("Running" | "Succeeded" | "Failed"))
    }

    /// ↑/↓ on the pod list move its cursor; false anywhere else (the keys scroll there).
    pub fn move_pod_cursor(&mut self, down: bool) -> bool {
        if !self.is_workload() || self.pod_open || self.step != self.pods_step() {
            return false;
        }
        let n = self.workload.as_ref().map_or(0, |w| w.pods.len());
        self.pod_cursor = if down {
            (self.pod_cursor + 1).min(n.saturating_sub(1))
        } else {
            self.pod_cursor.saturating_sub(1)
        };
        true
    }
}

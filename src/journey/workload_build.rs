//! A workload run's facts → its journey: the workload's own request stages (as a pod's), one
//! stage per controller that acted on it, and every pod's twelve-stage journey.
//!
//! JSON keeps the contract's pod journey at the top (`pod`, `server`, `stages`: the first pod's
//! journey, or, when no pod exists — a dry run —, the workload's request with the rest
//! explained) and adds `workload` (`kind`, `name`, `stages`) and `pods` (each pod's journey in
//! the contract's shape), which contract readers ignore.

use serde::Serialize;
use serde_json::{Value, json};

use super::build::{Collected, build};
use super::workload::WorkloadCollected;
use super::{Journey, Source, Stage, StageReport, Status};

/// The stages of a workload's own request, in the pod journey's order (the rest are its pods').
pub const REQUEST_STAGES: usize = 7;

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadStages {
    pub kind: String,
    pub name: String,
    pub stages: Vec<StageReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadJourney {
    #[serde(flatten)]
    pub first: Journey,
    pub workload: WorkloadStages,
    pub pods: Vec<Journey>,
    /// Pods the controllers created in all; only the first `workload::MAX_FOLLOWED` are in `pods`.
    pub pods_total: usize,
}

impl WorkloadJourney {
    pub fn succeeded(&self) -> bool {
        self.workload
            .stages
            .iter()
            .all(|s| s.status != Status::Failed)
            && self.pods.iter().all(Journey::succeeded)
            && (!self.pods.is_empty() || self.first.dry_run == Some(true))
    }
}

const DRY_RUN: &str = "dry run (dryRun=All): the server checked the workload and stored nothing";

fn stage(name: Stage, status: Status, source: Source, detail: Value) -> StageReport {
    StageReport {
        stage: name,
        status,
        source,
        detail,
    }
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// Events about objects of `kind`, as `{reason, type, message, object, count}` (`count`: how
/// many occurrences the Event stands for, more than one once the recorder counted repeats or
/// combined similar events).
fn events_about(w: &WorkloadCollected, kind: &str) -> Vec<Value> {
    w.events
        .iter()
        .filter(|e| e.pointer("/involvedObject/kind") == Some(&json!(kind)))
        .map(|e| {
            json!({"reason": e["reason"], "type": e["type"], "message": e["message"],
                   "object": format!("{kind} {}", str_at(e, "/involvedObject/name")),
                   "component": e.pointer("/source/component"), "count": e["count"]})
        })
        .collect()
}

fn owner_refs(v: &Value) -> Value {
    let refs: Vec<Value> = v
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|o| json!({"kind": o["kind"], "name": o["name"], "controller": o["controller"]}))
        .collect();
    json!(refs)
}

/// A controller's stage: Ok when it made what was expected, Failed on a Warning event of its
/// own, Skipped while nothing was made; reported when its own Events say what it did.
fn controller_stage(name: Stage, made: bool, events: Vec<Value>, mut detail: Value) -> StageReport {
    let failed = events.iter().any(|e| e["type"] == json!("Warning"));
    let status = match (failed, made) {
        (true, _) => Status::Failed,
        (false, true) => Status::Ok,
        (false, false) => Status::Skipped,
    };
    let source = if events.is_empty() {
        Source::Observed
    } else {
        Source::Reported
    };
    detail["events"] = json!(events);
    stage(name, status, source, detail)
}

fn pod_row(c: &Collected) -> Value {
    let p = c.final_pod.as_ref().unwrap_or(&Value::Null);
    json!({"name": str_at(p, "/metadata/name"), "node": p.pointer("/spec/nodeName"),
           "phase": p.pointer("/status/phase"), "ownerReferences": owner_refs(p)})
}

fn controller_stages(w: &WorkloadCollected) -> Vec<StageReport> {
    let pod_controller = super::workload::KINDS
        .iter()
        .find(|(k, _, _)| *k == w.kind)
        .map_or(Stage::ReplicasetController, |(_, _, c)| *c);
    if w.request.dry_run {
        let mut out = Vec::new();
        if w.kind == "Deployment" {
            out.push(stage(
                Stage::DeploymentController,
                Status::Skipped,
                Source::Inferred,
                json!({"explanation": format!("{DRY_RUN}: the deployment controller never sees it, so no ReplicaSet is created")}),
            ));
        }
        out.push(stage(
            pod_controller,
            Status::Skipped,
            Source::Inferred,
            json!({"explanation": format!("{DRY_RUN}: no controller creates its pods, so none is scheduled or run")}),
        ));
        return out;
    }
    let created = w
        .request
        .create
        .as_ref()
        .is_some_and(|(code, _)| (200..300).contains(code));
    if !created {
        return vec![stage(
            pod_controller,
            Status::Skipped,
            Source::Observed,
            json!({"explanation": "the workload was not created; see the response"}),
        )];
    }
    let pods: Vec<Value> = w.pods.iter().map(pod_row).collect();
    let want = w
        .workload
        .as_ref()
        .map(|o| o.pointer("/spec/replicas").cloned().unwrap_or(json!(1)));
    let waited = if w.timed_out {
        json!(format!(
            "{} pod(s) existed when the run stopped waiting",
            w.pods_total
        ))
    } else {
        Value::Null
    };
    let mut out = Vec::new();
    if w.kind == "Deployment" {
        let rss: Vec<Value> = w
            .replicasets
            .iter()
            .map(|rs| {
                json!({"name": str_at(rs, "/metadata/name"),
                       "pod-template-hash": rs.pointer("/metadata/labels/pod-template-hash"),
                       "revision": rs.pointer("/metadata/annotations/deployment.kubernetes.io~1revision"),
                       "replicas": rs.pointer("/spec/replicas"),
                       "ownerReferences": owner_refs(rs)})
            })
            .collect();
        out.push(controller_stage(
            Stage::DeploymentController,
            !rss.is_empty(),
            events_about(w, "Deployment"),
            json!({"replicasets": rss}),
        ));
        let owner_kind = "ReplicaSet";
        out.push(controller_stage(
            pod_controller,
            !pods.is_empty(),
            events_about(w, owner_kind),
            json!({"replicas": want, "pods": pods, "pods_total": w.pods_total, "waited": waited}),
        ));
    } else {
        let replicas = if w.kind == "DaemonSet" {
            w.workload
                .as_ref()
                .and_then(|o| o.pointer("/status/desiredNumberScheduled").cloned())
        } else {
            want
        };
        out.push(controller_stage(
            pod_controller,
            !pods.is_empty(),
            events_about(w, &w.kind),
            json!({"replicas": replicas, "pods": pods, "pods_total": w.pods_total, "waited": waited}),
        ));
    }
    out
}

pub fn build_workload(w: &WorkloadCollected) -> WorkloadJourney {
    let request = build(&w.request);
    let mut stages: Vec<StageReport> = request
        .stages
        .iter()
        .take(REQUEST_STAGES)
        .cloned()
        .collect();
    stages.extend(controller_stages(w));
    let pods: Vec<Journey> = w.pods.iter().map(build).collect();
    let first = match pods.first() {
        Some(p) => p.clone(),
        None => {
            // No pod (a dry run, a refused create, controllers that made none): the request
            // stages, the rest said for what they are.
            let mut j = request;
            let why = if w.request.dry_run {
                format!("{DRY_RUN}: no pod was created")
            } else {
                "no pod of this workload existed when the run ended".to_string()
            };
            for st in j.stages.iter_mut().skip(REQUEST_STAGES) {
                *st = stage(
                    st.stage,
                    Status::Skipped,
                    Source::Inferred,
                    json!({"explanation": why}),
                );
            }
            j
        }
    };
    WorkloadJourney {
        first,
        workload: WorkloadStages {
            kind: w.kind.clone(),
            name: w.name.clone(),
            stages,
        },
        pods,
        pods_total: w.pods_total,
    }
}

//! What the simulated kubelets add for containers that exit and for `kubectl logs`. A pod that
//! restarts `Never` or `OnFailure` (a Job's) runs for `serve --simulated-run-seconds` (or its
//! `kexplore.dev/simulated-run-seconds` annotation), then its containers exit with code 0 —
//! or with the code its `kexplore.dev/simulated-exit-code` annotation names, which also makes
//! an `Always` pod's containers exit after their run time. Then the restart policy decides, as
//! the kubelet's does (`kubelet_restarts.rs` runs that loop): restarted with back-off, or the
//! pod ends Succeeded (every code 0) or Failed. No process runs: the container logs hold only what the
//! kubelet did, each line saying so.

use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_report::{event, pod_key, step, still_starting};
use crate::apiserver::registry::core::pod::restartable_init;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;

/// A pod's own run time, overriding the server's (whole seconds).
pub(crate) const RUN_SECONDS_ANNOTATION: &str = "kexplore.dev/simulated-run-seconds";
/// The code a pod's containers exit with after their run time (0 to 255).
pub(crate) const EXIT_CODE_ANNOTATION: &str = "kexplore.dev/simulated-exit-code";

/// The code a pod's init containers (not its sidecars) exit with after their run time.
pub(crate) const INIT_EXIT_CODE_ANNOTATION: &str = "kexplore.dev/simulated-init-exit-code";

/// How often a running container checks whether its pod is being deleted.
const POLL: Duration = Duration::from_millis(250);

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// One line in a container's log, stamped now (what `kubectl logs --timestamps` shows).
pub(crate) fn log(api: &Api, pod: &Value, container: &str, line: &str) {
    let node = s(pod, "/spec/nodeName");
    api.container_logs.append(
        s(pod, "/metadata/uid"),
        container,
        &util::now_micro(),
        &format!("[kexplore simulated kubelet on {node}] {line}"),
    );
}

/// Whether the pod's containers run to completion (its restartPolicy is not Always).
pub(crate) fn runs_to_completion(pod: &Value) -> bool {
    matches!(s(pod, "/spec/restartPolicy"), "Never" | "OnFailure")
}

fn annotation<'a>(pod: &'a Value, name: &str) -> Option<&'a str> {
    pod.get("metadata")?
        .get("annotations")?
        .get(name)?
        .as_str()
        .map(str::trim)
}

/// The code the pod's containers exit with once their run time is over: its annotation's, else
/// 0 for a pod that runs to completion; None when they do not exit (`Always`, no annotation).
pub(crate) fn exit_code(pod: &Value) -> Option<i32> {
    let own = annotation(pod, EXIT_CODE_ANNOTATION)
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|c| (0..=255).contains(c));
    own.or_else(|| runs_to_completion(pod).then_some(0))
}

/// The code the pod's init containers exit with: its annotation's (0 to 255), else 0.
pub(crate) fn init_exit_code(pod: &Value) -> i32 {
    annotation(pod, INIT_EXIT_CODE_ANNOTATION)
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|c| (0..=255).contains(c))
        .unwrap_or(0)
}

/// Whether the restart policy starts a container again after it exited with `code`.
pub(crate) fn restarts(pod: &Value, code: i32) -> bool {
    match s(pod, "/spec/restartPolicy") {
        "Never" => false,
        "OnFailure" => code != 0,
        _ => true,
    }
}

/// How long a container that exits runs: the pod's annotation, else the server's.
fn run_time(api: &Api, pod: &Value) -> Duration {
    let own = annotation(pod, RUN_SECONDS_ANNOTATION).and_then(|v| v.parse::<u64>().ok());
    match own {
        Some(secs) => Duration::from_secs(secs),
        None => api
            .simulated_run
            .lock()
            .map(|d| *d)
            .unwrap_or(crate::apiserver::request::context::DEFAULT_SIMULATED_RUN),
    }
}

/// A container of the pod runs for what is left of its run time (`already`: how long it has
/// run, for a start that a restart interrupted); false when the pod is deleted or replaced
/// meanwhile (the kubelet then stops it).
pub(crate) async fn run_for(api: &Api, pod: &Value, already: Duration) -> bool {
    let until = tokio::time::Instant::now() + run_time(api, pod).saturating_sub(already);
    loop {
        if still_starting(api, pod).is_none() {
            return false;
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return true;
        }
        tokio::time::sleep(POLL.min(until - now)).await;
    }
}

/// The containers exited with `code` and are not restarted: the pod is Succeeded (code 0) or
/// Failed; its sidecars are then stopped, last first, as the kubelet stops them once the main
/// containers are done.
pub(crate) fn finish(api: &Api, pod: &Value, started_at: &str, code: i32) {
    let uid = s(pod, "/metadata/uid").to_string();
    let key = pod_key(pod);
    let finished = util::now();
    let containers: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &containers {
        log(api, pod, s(c, "/name"), &exited(code));
    }
    let terminated = terminated(code, started_at, &finished);
    let sidecars = stop_sidecars(api, pod);
    let (phase, reason) = if code == 0 {
        ("Succeeded", "PodCompleted")
    } else {
        ("Failed", "PodFailed")
    };
    let cond = |t: &str, status: &str| {
        let mut c = json!({"type": t, "status": status, "lastProbeTime": null, "lastTransitionTime": finished});
        // Upstream's kubelet: Initialized says PodCompleted only for a Succeeded pod.
        let terminal =
            matches!(t, "Ready" | "ContainersReady") || (t == "Initialized" && code == 0);
        if terminal {
            c["reason"] = json!(reason);
        }
        c
    };
    let ended = api.store.update(&key, None, Write::Commit, |cur| {
        if s(cur, "/metadata/uid") != uid || cur.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(StoreError::Rejected("pod was deleted or replaced".into()));
        }
        let mut next = cur.clone();
        next["status"]["phase"] = json!(phase);
        next["status"]["conditions"] = json!([
            cond("PodReadyToStartContainers", "False"),
            cond("Initialized", "True"),
            cond("Ready", "False"),
            cond("ContainersReady", "False"),
            cond("PodScheduled", "True"),
        ]);
        if let Some(statuses) = next["status"]
            .get_mut("containerStatuses")
            .and_then(Value::as_array_mut)
        {
            for st in statuses.iter_mut() {
                st["ready"] = json!(false);
                st["started"] = json!(false);
                let mut state = terminated.clone();
                state["terminated"]["containerID"] = st["containerID"].clone();
                st["state"] = state;
            }
        }
        if let Some(inits) = next["status"]
            .get_mut("initContainerStatuses")
            .and_then(Value::as_array_mut)
        {
            for st in inits.iter_mut().filter(|st| sidecars.contains(&s(st, "/name"))) {
                let started = st.pointer("/state/running/startedAt").cloned();
                let Some(started) = started else { continue };
                st["ready"] = json!(false);
                st["started"] = json!(false);
                st["state"] = json!({"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": started, "finishedAt": finished, "containerID": st["containerID"]}});
            }
        }
        crate::apiserver::endpoints::managed_fields::record_pod_status_write(
            cur, &mut next, "kubelet",
        );
        Ok(next)
    });
    if let Ok(p) = ended {
        step(
            api,
            &p,
            "Exited",
            json!({"exitCode": code, "phase": phase, "note": "simulated: the run time elapsed, no process ran"}),
        );
    }
}

/// The pod's sidecars (restartable init containers), told to stop in reverse order once the
/// main containers have exited: a Killing event and a log line each. Their names.
fn stop_sidecars<'a>(api: &Api, pod: &'a Value) -> Vec<&'a str> {
    let sidecars: Vec<&str> = pod
        .pointer("/spec/initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| restartable_init(c))
        .map(|c| s(c, "/name"))
        .collect();
    for name in sidecars.iter().rev() {
        event(
            api,
            pod,
            s(pod, "/spec/nodeName"),
            &format!("spec.initContainers{{{name}}}"),
            ("Normal", "Killing"),
            &format!("Stopping container {name}"),
        );
        log(
            api,
            pod,
            name,
            "container stopped after the main containers exited, exit code 0 (simulated: no process ran)",
        );
    }
    sidecars
}

/// The log line a container's exit leaves.
pub(crate) fn exited(code: i32) -> String {
    format!("container exited with code {code} (simulated: the run time elapsed, no process ran)")
}

/// A container's terminated state after exiting with `code` (its containerID left to the
/// caller): reason Completed for 0, else Error, as the runtime reports it.
pub(crate) fn terminated(code: i32, started_at: &str, finished_at: &str) -> Value {
    let reason = if code == 0 { "Completed" } else { "Error" };
    json!({"terminated": {"exitCode": code, "reason": reason, "startedAt": started_at,
        "finishedAt": finished_at}})
}

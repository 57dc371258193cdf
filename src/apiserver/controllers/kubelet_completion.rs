//! What the simulated kubelets add for run-to-completion pods and for `kubectl logs`: a pod
//! that restarts `Never` or `OnFailure` (a Job's) runs for `serve --simulated-run-seconds`
//! (or its `kexplore.dev/simulated-run-seconds` annotation), then its containers terminate with
//! exit code 0, reason Completed, and the pod is Succeeded — as a kubelet reports a container
//! whose process exited 0. No process runs: the container logs hold only what the kubelet did,
//! each line saying so.

use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_report::{event, pod_key, still_starting};
use crate::apiserver::registry::core::pod::restartable_init;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util;

/// A pod's own run time, overriding the server's (whole seconds).
pub(crate) const RUN_SECONDS_ANNOTATION: &str = "kexplore.dev/simulated-run-seconds";

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

/// How long a container that runs to completion runs: the pod's annotation, else the server's.
fn run_time(api: &Api, pod: &Value) -> Duration {
    let own = pod
        .pointer(&format!(
            "/metadata/annotations/{}",
            RUN_SECONDS_ANNOTATION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .and_then(|v| v.trim().parse::<u64>().ok());
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

/// Let a Running pod's containers run for their time, then exit 0; its sidecars are then
/// stopped, last first, as the kubelet stops them once the main containers are done. Returns
/// early, changing nothing, when the pod is deleted or replaced meanwhile (the kubelet then
/// stops it).
pub(crate) async fn run_then_succeed(api: &Api, pod: &Value, started_at: &str, already: Duration) {
    if !run_for(api, pod, already).await {
        return;
    }
    let uid = s(pod, "/metadata/uid").to_string();
    let key = pod_key(pod);
    let finished = util::now();
    let containers: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &containers {
        log(
            api,
            pod,
            s(c, "/name"),
            "container exited with code 0 (simulated: the run time elapsed, no process ran)",
        );
    }
    let statuses: Vec<Value> = containers
        .iter()
        .map(|c| {
            let id = format!("simulated://{}", s(c, "/name"));
            json!({"name": c["name"], "image": c["image"], "imageID": format!("{}@sha256:simulated", s(c, "/image")),
                   "containerID": id, "ready": false, "started": false, "restartCount": 0,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started_at,
                                            "finishedAt": finished, "containerID": id}}})
        })
        .collect();
    let sidecars = stop_sidecars(api, pod);
    let cond = |t: &str, status: &str| {
        let mut c = json!({"type": t, "status": status, "lastProbeTime": null, "lastTransitionTime": finished});
        if t != "PodScheduled" && t != "PodReadyToStartContainers" {
            c["reason"] = json!("PodCompleted");
        }
        c
    };
    let _ = api.store.update(&key, None, Write::Commit, |cur| {
        if s(cur, "/metadata/uid") != uid || cur.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(StoreError::Rejected("pod was deleted or replaced".into()));
        }
        let mut next = cur.clone();
        next["status"]["phase"] = json!("Succeeded");
        next["status"]["conditions"] = json!([
            cond("PodReadyToStartContainers", "False"),
            cond("Initialized", "True"),
            cond("Ready", "False"),
            cond("ContainersReady", "False"),
            cond("PodScheduled", "True"),
        ]);
        next["status"]["containerStatuses"] = json!(statuses);
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

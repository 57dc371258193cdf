//! An init container that exits non-zero (the pod's `kexplore.dev/simulated-init-exit-code`),
//! as the kubelet handles it: with restartPolicy Never the pod fails (`Init:Error`); otherwise
//! the container is started again, at once the first time, then after the same back-off as any
//! container (`kubelet_restarts::backoff`), meanwhile waiting in CrashLoopBackOff
//! (`Init:CrashLoopBackOff`). Its restartCount and lastState follow each restart. The code is
//! read from the pod as it is at each exit, so removing the annotation lets the next run
//! complete and the pod go on.

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_completion::{exited, init_exit_code, log, terminated};
use crate::apiserver::controllers::kubelet_containers::{
    CRASH_LOOP, STEP, State, pull_image, start_container,
};
use crate::apiserver::controllers::kubelet_images::NodeImages;
use crate::apiserver::controllers::kubelet_report::{event, s, set_status, step, still_starting};
use crate::apiserver::controllers::kubelet_restarts::{
    backoff, each_status, go_duration, pod_ref, sit_out,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::util;

/// What became of an init container after its run time.
pub(crate) enum Exit {
    /// Exited 0: it completed.
    Completed,
    /// Exited non-zero and was started again: running since then.
    Restarted(String),
    /// The pod failed (restartPolicy Never) or went away: the kubelet stops here.
    Ended,
}

/// The `i`th init container, running since `since`, has run its time: its exit, as the pod now
/// says it is.
pub(crate) async fn exit(
    api: &Api,
    pod: &Value,
    (inits, i): (&[Value], usize),
    since: &str,
    node_images: &NodeImages,
) -> Exit {
    let Some(now_pod) = still_starting(api, pod) else {
        return Exit::Ended;
    };
    let code = init_exit_code(&now_pod);
    if code == 0 {
        return Exit::Completed;
    }
    let name = s(&inits[i], "/name").to_string();
    log(api, pod, &name, &exited(code));
    let state = terminated(code, since, &util::now());
    let never = s(pod, "/spec/restartPolicy") == "Never";
    let now = util::now();
    let Some(p) = set_status(api, pod, |st| {
        each_status(st, "initContainerStatuses", |c| {
            if c["name"] != name.as_str() {
                return;
            }
            let mut state = state.clone();
            state["terminated"]["containerID"] = c["containerID"].clone();
            c["state"] = state;
            c["ready"] = json!(false);
            c["started"] = json!(false);
        });
        if never {
            failed(st, &now);
        }
    }) else {
        return Exit::Ended;
    };
    let restarts = p
        .pointer("/status/initContainerStatuses")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().find(|c| c["name"] == name.as_str()))
        .and_then(|c| c["restartCount"].as_i64())
        .unwrap_or(0);
    step(
        api,
        &p,
        "Exited",
        json!({"container": name, "exitCode": code, "restartCount": restarts,
            "note": if never { "an init container failed: the pod fails (restartPolicy Never)" }
                else { "an init container failed: it is started again; the app waits" }}),
    );
    if never {
        return Exit::Ended;
    }
    match restarted(api, &p, (&inits[i], restarts), node_images).await {
        Some(at) => Exit::Restarted(at),
        None => Exit::Ended,
    }
}

/// Phase Failed; Ready and ContainersReady False with reason PodFailed (generate.go).
fn failed(st: &mut Value, now: &str) {
    st["phase"] = json!("Failed");
    if let Some(list) = st.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in list.iter_mut() {
            if matches!(c["type"].as_str(), Some("Ready" | "ContainersReady")) {
                c["status"] = json!("False");
                c["reason"] = json!("PodFailed");
                c["lastTransitionTime"] = json!(now);
                if let Some(m) = c.as_object_mut() {
                    m.remove("message");
                }
            }
        }
    }
}

/// The failed init container started again after its back-off: when it started. None when
/// the pod went away meanwhile.
async fn restarted(
    api: &Api,
    pod: &Value,
    (c, restarts): (&Value, i64),
    node_images: &NodeImages,
) -> Option<String> {
    let name = s(c, "/name").to_string();
    let node = s(pod, "/spec/nodeName").to_string();
    let field = format!("spec.initContainers{{{name}}}");
    let wait = backoff(restarts);
    if wait.is_zero() {
        tokio::time::sleep(STEP).await;
    } else {
        let who = pod_ref(pod);
        let message = format!(
            "back-off {} restarting failed container={name} pod={who}",
            go_duration(wait)
        );
        let p = set_status(api, pod, |st| {
            each_status(st, "initContainerStatuses", |c| {
                if c["name"] != name.as_str() {
                    return;
                }
                c["lastState"] = c["state"].clone();
                c["state"] = json!({"waiting": {"reason": CRASH_LOOP, "message": message}});
            });
        })?;
        event(
            api,
            &p,
            &node,
            &field,
            ("Warning", "BackOff"),
            &format!("Back-off restarting failed container {name} in pod {who}"),
        );
        step(
            api,
            &p,
            CRASH_LOOP,
            json!({"backOff": go_duration(wait), "containers": name}),
        );
        sit_out(api, pod, wait).await?;
    }
    let p = still_starting(api, pod)?;
    api.container_logs.restarted(s(&p, "/metadata/uid"), &name);
    // The image is on the node: it ran before.
    let _ = pull_image(api, &p, &node, c, &field, node_images).await;
    let at = match start_container(api, &p, &node, (&name, &field)) {
        State::Running(at) => at,
        State::Waiting(..) | State::Completed(..) => util::now(),
    };
    let p = set_status(api, pod, |st| {
        each_status(st, "initContainerStatuses", |c| {
            if c["name"] != name.as_str() {
                return;
            }
            if c["state"].get("terminated").is_some() {
                c["lastState"] = c["state"].clone();
            }
            c["restartCount"] = json!(restarts + 1);
            c["state"] = json!({"running": {"startedAt": at}});
            c["started"] = json!(true);
        });
    })?;
    step(
        api,
        &p,
        "Restarted",
        json!({"container": name, "restartCount": restarts + 1}),
    );
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_pod_says_so_in_its_readiness() {
        let mut st = json!({"phase": "Pending", "conditions": [
            {"type": "Initialized", "status": "False", "reason": "ContainersNotInitialized"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "m"}]});
        failed(&mut st, "t");
        assert_eq!(st["phase"], "Failed");
        assert_eq!(st["conditions"][0]["reason"], "ContainersNotInitialized");
        assert_eq!(
            st["conditions"][1],
            json!({"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": "t"})
        );
    }
}

//! A simulated kubelet stops a pod being deleted: a Killing event per running container, then
//! its final delete with grace 0. A pod a finalizer still holds is not removed by that delete
//! (`storage::deletion`); its containers are stopped all the same, so the kubelet reports them
//! terminated and the pod in its terminal phase, as upstream's kubelet does for a deleted pod
//! (Failed, its containers ended by SIGTERM), and leaves it to whoever owns the finalizer.

use serde_json::{Value, json};

use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::controllers::kubelet_completion as completion;
use crate::apiserver::controllers::kubelet_containers::STEP;
use crate::apiserver::controllers::kubelet_ephemeral as ephemeral;
use crate::apiserver::controllers::kubelet_report::{self as report, s, step};
use crate::apiserver::endpoints::managed_fields;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::deletion;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util::{self, At};

/// 128 + SIGTERM: the code of a container the kubelet stopped.
const SIGTERM_EXIT: i32 = 143;

/// Whether `pod` is being deleted and its containers are already stopped: a finalizer keeps it.
pub(crate) fn stopped(pod: &Value) -> bool {
    pod.at("/metadata/deletionTimestamp").is_some()
        && matches!(s(pod, "/status/phase"), "Succeeded" | "Failed")
}

pub(crate) async fn stop_pod(api: &Api, pod: &Value) {
    let node = s(pod, "/spec/nodeName").to_string();
    let own = pod
        .at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let cname = s(c, "/name");
            (format!("spec.containers{{{cname}}}"), cname)
        });
    for (field, cname) in own.chain(ephemeral::running(pod)) {
        events::record(
            api,
            pod,
            Reporter::Kubelet { node: &node },
            "Normal",
            "Killing",
            "",
            &format!("Stopping container {cname}"),
            &field,
        );
    }
    tokio::time::sleep(STEP).await;
    let key = report::pod_key(pod);
    let uid = s(pod, "/metadata/uid").to_string();
    // The kubelet's final delete with gracePeriodSeconds=0, guarded by the pod's UID.
    let left = api.store.delete(&key, Write::Commit, |cur| {
        if s(cur, "/metadata/uid") == uid {
            Ok(())
        } else {
            Err(StoreError::Rejected("uid changed".into()))
        }
    });
    match left {
        Ok(p) if deletion::held(&p) => report_stopped(api, &key, &uid),
        _ => api.container_logs.forget(&uid),
    }
}

/// Every running container terminated by the SIGTERM that stops it — exit code 143, reason
/// Error, as the runtime reports a process that did not handle the signal — and so the pod
/// Failed and not ready (upstream's kubelet gives a deleted pod the terminal phase its exit codes
/// say): what `kubectl get pod -o yaml` shows of a deleted pod a finalizer holds on a real node.
/// A Job's controller reads that as the pod's failure. Its logs stay readable while it is there.
fn report_stopped(api: &Api, key: &str, uid: &str) {
    let now = util::now();
    let stopped = api.store.update(key, None, Write::Commit, |cur| {
        if s(cur, "/metadata/uid") != uid || stopped(cur) {
            return Err(StoreError::Rejected("replaced or already stopped".into()));
        }
        let mut next = cur.clone();
        next["status"]["phase"] = json!("Failed");
        if let Some(conds) = next["status"]
            .get_mut("conditions")
            .and_then(Value::as_array_mut)
        {
            for c in conds
                .iter_mut()
                .filter(|c| matches!(s(c, "/type"), "Ready" | "ContainersReady"))
            {
                c["status"] = json!("False");
                c["reason"] = json!("PodFailed");
                c["lastTransitionTime"] = json!(now);
            }
        }
        for list in [
            "initContainerStatuses",
            "containerStatuses",
            "ephemeralContainerStatuses",
        ] {
            let Some(statuses) = next["status"].get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for st in statuses.iter_mut() {
                let Some(started) = st.pointer("/state/running/startedAt").cloned() else {
                    continue;
                };
                let mut state =
                    completion::terminated(SIGTERM_EXIT, started.as_str().unwrap_or(""), &now);
                state["terminated"]["containerID"] = st["containerID"].clone();
                st["state"] = state;
                st["ready"] = json!(false);
                st["started"] = json!(false);
            }
        }
        managed_fields::record_pod_status_write(cur, &mut next, "kubelet");
        Ok(next)
    });
    if let Ok(p) = stopped {
        for c in p
            .at("/status/containerStatuses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            completion::log(
                api,
                &p,
                s(c, "/name"),
                "container stopped on the pod's deletion by SIGTERM, exit code 143 (simulated: no process ran)",
            );
        }
        step(
            api,
            &p,
            "Stopped",
            json!({"phase": "Failed", "exitCode": SIGTERM_EXIT, "heldBy": p["metadata"]["finalizers"],
                "note": "simulated: the containers stopped, a finalizer keeps the pod"}),
        );
    }
}

//! The pod sandbox a simulated kubelet asks its container runtime for: under the runtime
//! handler of the pod's RuntimeClass, which the node's runtime must have configured. A
//! simulated node's runtime is containerd with its default handler, `runc`, unless the node's
//! `kexplore.dev/runtime-handlers` annotation lists others (`runc,runsc`, for a workshop on
//! gVisor). A handler the node lacks holds the pod in ContainerCreating with the
//! FailedCreatePodSandBox event upstream's kubelet reports from containerd, until it is there.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_containers::POLL;
use crate::apiserver::controllers::kubelet_report::{event, s, step, still_starting};
use crate::apiserver::request::context::Api;
use crate::apiserver::util::At;

const HANDLERS_ANNOTATION: &str = "kexplore.dev/runtime-handlers";
const DEFAULT_HANDLERS: &str = "runc";
const FAILED: &str = "FailedCreatePodSandBox";
/// The kubelet's pod workers sync a pod again this long after a failed sync.
const WORKER_BACKOFF: Duration = Duration::from_secs(10);

/// The runtime handlers a node's runtime has.
fn handlers(node: &Value) -> Vec<String> {
    node.at("/metadata/annotations")
        .and_then(|a| a.get(HANDLERS_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_HANDLERS)
        .split(',')
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect()
}

/// Why the pod's sandbox cannot be made on `node`, in the kubelet's event words; None when it
/// can (no RuntimeClass: the runtime's default handler).
fn sandbox_error(api: &Api, pod: &Value, node: &str) -> Option<String> {
    let class = s(pod, "/spec/runtimeClassName");
    if class.is_empty() {
        return None;
    }
    let Some(rc) = api
        .store
        .get_view(&format!("/registry/runtimeclasses/{class}"))
    else {
        return Some(format!(
            "Failed to create pod sandbox: runtimeclass.node.k8s.io {class:?} not found"
        ));
    };
    let handler = s(&rc, "/handler");
    let known = api
        .store
        .get_view(&format!("/registry/minions/{node}"))
        .map(|n| handlers(&n))
        .unwrap_or_default();
    if known.iter().any(|h| h == handler) {
        return None;
    }
    Some(format!(
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for {handler:?} is configured"
    ))
}

/// Waits until the pod's sandbox can be created, reporting FailedCreatePodSandBox meanwhile,
/// again at each of the pod worker's retries (10 s after a failed sync); false when the pod
/// went away first.
pub(crate) async fn created(api: &Api, pod: &Value, node: &str) -> bool {
    let mut next_sync = Instant::now();
    let mut first = true;
    loop {
        let Some(why) = sandbox_error(api, pod, node) else {
            return true;
        };
        if Instant::now() >= next_sync {
            event(api, pod, node, "", ("Warning", FAILED), &why);
            next_sync = Instant::now() + WORKER_BACKOFF;
        }
        if first {
            step(api, pod, FAILED, json!({"message": why, "simulated": true}));
            first = false;
        }
        tokio::time::sleep(POLL).await;
        if still_starting(api, pod).is_none() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_has_runc_unless_its_annotation_says_more() {
        assert_eq!(handlers(&json!({"metadata": {}})), vec!["runc"]);
        let gvisor = json!({"metadata": {"annotations": {HANDLERS_ANNOTATION: "runc, runsc"}}});
        assert_eq!(handlers(&gvisor), vec!["runc", "runsc"]);
    }
}

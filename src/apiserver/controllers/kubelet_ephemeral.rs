//! A simulated kubelet starting the ephemeral containers `kubectl debug` adds to a running pod
//! (`registry/core/ephemeral_containers.rs`): each one's image pulled as its policy says, the
//! Created and Started events, and its status in `status.ephemeralContainerStatuses`, running
//! and never ready (upstream's prober sets readiness for the pod's own containers only). No
//! process runs, so `kubectl debug -it` then finds nothing to attach to, and says so.

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_containers::{
    State, container_statuses, pull_image, start_container,
};
use crate::apiserver::controllers::kubelet_images::NodeImages;
use crate::apiserver::controllers::kubelet_report::{self as report, s, set_status};
use crate::apiserver::request::context::Api;
use crate::apiserver::util::At;

const STATUSES: &str = "ephemeralContainerStatuses";

fn names<'a>(p: &'a Value, pointer: &str) -> impl Iterator<Item = &'a str> {
    p.at(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| s(c, "/name"))
}

/// A running pod with an ephemeral container its kubelet has not started yet. Reads only the
/// names, which the control loops' view of a pod keeps.
pub(crate) fn waiting(p: &Value) -> bool {
    if s(p, "/spec/nodeName").is_empty()
        || p.at("/metadata/deletionTimestamp").is_some()
        || s(p, "/status/phase") != "Running"
    {
        return false;
    }
    let started: Vec<&str> = names(p, "/status/ephemeralContainerStatuses").collect();
    names(p, "/spec/ephemeralContainers").any(|n| !started.contains(&n))
}

/// The ephemeral containers running in `pod`, each with its events' field: a kubelet stopping
/// the pod stops them too.
pub(crate) fn running(pod: &Value) -> impl Iterator<Item = (String, &str)> {
    pod.at("/status/ephemeralContainerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|st| st.at("/state/running").is_some())
        .map(|st| {
            let name = s(st, "/name");
            (format!("spec.ephemeralContainers{{{name}}}"), name)
        })
}

/// Starts each ephemeral container of `pod` that has no status, then reports them all.
pub(crate) async fn start(api: &Api, pod: &Value, node_images: &NodeImages) {
    let node = s(pod, "/spec/nodeName").to_string();
    let started: Vec<String> = names(pod, "/status/ephemeralContainerStatuses")
        .map(String::from)
        .collect();
    let fresh: Vec<Value> = report::containers(pod, "ephemeralContainers")
        .into_iter()
        .filter(|c| !started.iter().any(|n| n == s(c, "/name")))
        .collect();
    let mut states: Vec<(String, State)> = Vec::new();
    for c in &fresh {
        let cname = s(c, "/name");
        let field = format!("spec.ephemeralContainers{{{cname}}}");
        let state = match pull_image(api, pod, &node, c, &field, node_images).await {
            Err((reason, message)) => State::Waiting(reason, message),
            Ok(()) => start_container(api, pod, &node, (cname, &field)),
        };
        states.push((cname.to_string(), state));
    }
    let mut added = container_statuses(&fresh, &states);
    for st in &mut added {
        st["ready"] = json!(false);
        if let Some(m) = st.as_object_mut() {
            m.remove("started");
        }
    }
    set_status(api, pod, |status| {
        let mut list = status
            .get(STATUSES)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.retain(|st| !added.iter().any(|a| a["name"] == st["name"]));
        list.extend(added.iter().cloned());
        status[STATUSES] = Value::Array(list);
    });
}

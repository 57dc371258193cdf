//! A pod's containers as its kubelet reports them: each running since a time or waiting with
//! a reason and upstream's message, the `containerStatuses` written from that, and the
//! back-off at which a failure that goes on is reported again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_completion as completion;
use crate::apiserver::controllers::kubelet_image_name::{
    INSPECT_FAILED, INVALID_IMAGE_NAME, invalid_image_message,
};
use crate::apiserver::controllers::kubelet_images::{self as images, Image, NodeImages};
use crate::apiserver::controllers::kubelet_report::{event, s, step};
use crate::apiserver::registry::core::pod::restartable_init as restartable;
use crate::apiserver::request::context::Api;
use crate::apiserver::util;

/// How long each simulated step takes: long enough for `kubectl get -w` to show the phases.
pub(crate) const STEP: Duration = Duration::from_millis(400);

/// `imagePullPolicy: Never` and the image is not on the node.
pub(crate) const NEVER_PULL: &str = "ErrImageNeverPull";
/// The container's environment names a ConfigMap or Secret (or a key) that is not there.
pub(crate) const CONFIG_ERROR: &str = "CreateContainerConfigError";

/// The FailedMount event's reason, and the journey's step: a volume cannot be set up.
pub(crate) const FAILED_MOUNT: &str = "FailedMount";
/// The journey's step when some containers wait and the pod stays Pending.
pub(crate) const WAITING: &str = "Waiting";
/// The journey's step when a kubelet goes on with a start another one began.
pub(crate) const RESUMED: &str = "Resumed";

/// Whether a kubelet step (the journey's) leaves the pod unable to start, or to run, until
/// something changes.
pub(crate) fn stuck_step(step: &str) -> bool {
    [
        FAILED_MOUNT,
        CONFIG_ERROR,
        NEVER_PULL,
        INVALID_IMAGE_NAME,
        WAITING,
        CRASH_LOOP,
    ]
    .contains(&step)
}

/// The journey's step while a failed container waits out its back-off.
pub(crate) const CRASH_LOOP: &str = "CrashLoopBackOff";

/// A container as its kubelet left it: running since, or waiting with a reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    Running(String),
    Waiting(&'static str, String),
    /// An init container that ran to completion: started, finished.
    Completed(String, String),
}

/// An app container not started yet because the init containers have not all completed.
pub(crate) const POD_INITIALIZING: &str = "PodInitializing";

/// How often a waiting pod looks again at what it waits for.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// When to report a failure that goes on again: after 0.5 s, then twice as long each time,
/// up to 2 min 2 s (the volume manager's exponential back-off; the event correlator counts
/// the repeats).
pub(crate) struct Backoff {
    next: Instant,
    wait: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: Instant::now() + Duration::from_millis(500),
            wait: Duration::from_millis(500),
        }
    }
}

impl Backoff {
    pub(crate) fn due(&mut self) -> bool {
        let now = Instant::now();
        if now < self.next {
            return false;
        }
        self.wait = (self.wait * 2).min(Duration::from_millis(122_000));
        self.next = now + self.wait;
        true
    }
}

/// What a pod's stored status (`containerStatuses`, `initContainerStatuses`) says its
/// containers already did and a new kubelet does not do again: running since a time, or run to
/// completion. A kubelet restarted (a serve restarted, another replica taking the kubelets
/// over) finds its containers as the runtime left them.
pub(crate) fn already(pod: &Value, list: &str) -> Vec<(String, State)> {
    let statuses = pod
        .get("status")
        .and_then(|st| st.get(list))
        .and_then(Value::as_array);
    statuses
        .into_iter()
        .flatten()
        .filter_map(|st| {
            let name = s(st, "/name").to_string();
            let at = |p: &str| st.pointer(p).and_then(Value::as_str).map(String::from);
            if let Some(since) = at("/state/running/startedAt") {
                return Some((name, State::Running(since)));
            }
            let done = st.pointer("/state/terminated/exitCode") == Some(&json!(0));
            let started = at("/state/terminated/startedAt")?;
            let finished = at("/state/terminated/finishedAt")?;
            done.then_some((name, State::Completed(started, finished)))
        })
        .collect()
}

/// How long a container running since `since` (RFC 3339) has run.
pub(crate) fn ran_since(since: &str) -> Duration {
    util::parse_time(since)
        .and_then(|t| Duration::try_from(time::OffsetDateTime::now_utc() - t).ok())
        .unwrap_or_default()
}

/// The containers' statuses for their states, in the spec's order.
pub(crate) fn container_statuses(containers: &[Value], states: &[(String, State)]) -> Vec<Value> {
    statuses(containers, states, false)
}

/// The init containers' statuses: one running is not ready unless it is a sidecar; one that
/// completed is ready, no longer started.
pub(crate) fn init_container_statuses(inits: &[Value], states: &[(String, State)]) -> Vec<Value> {
    statuses(inits, states, true)
}

fn statuses(containers: &[Value], states: &[(String, State)], init: bool) -> Vec<Value> {
    containers
        .iter()
        .filter_map(|c| {
            let (_, st) = states.iter().find(|(n, _)| c["name"] == n.as_str())?;
            let id = format!("simulated://{}", s(c, "/name"));
            let image_id = format!("{}@sha256:simulated", s(c, "/image"));
            Some(match st {
                State::Running(at) => json!({"name": c["name"], "image": c["image"],
                    "imageID": image_id, "containerID": id,
                    "ready": !init || restartable(c), "started": true, "restartCount": 0,
                    "state": {"running": {"startedAt": at}}}),
                State::Waiting(reason, message) => {
                    let mut waiting = json!({"reason": reason});
                    if !message.is_empty() {
                        waiting["message"] = json!(message);
                    }
                    json!({"name": c["name"], "image": c["image"],
                        "imageID": "", "ready": false, "started": false, "restartCount": 0,
                        "state": {"waiting": waiting}})
                }
                State::Completed(started, finished) => json!({"name": c["name"],
                    "image": c["image"], "imageID": image_id, "containerID": id,
                    "ready": true, "started": false, "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                        "startedAt": started, "finishedAt": finished, "containerID": id}}}),
            })
        })
        .collect()
}

/// The container's image as the node's image manager decides: pulled (Pulling, then Pulled),
/// already there (Pulled), or not to be had: Err with the container's waiting reason and
/// message (see [`image_refusal`]), its Events and step sent.
pub(crate) async fn pull_image(
    api: &Api,
    p: &Value,
    node: &str,
    c: &Value,
    field: &str,
    node_images: &NodeImages,
) -> Result<(), (&'static str, String)> {
    let image = s(c, "/image");
    let cname = s(c, "/name");
    if let Some(refusal) = image_refusal(node, c, node_images) {
        refusal_events(api, p, (node, field), &refusal);
        step(
            api,
            p,
            refusal.reason,
            json!({"image": image, "message": refusal.message}),
        );
        return Err((refusal.reason, refusal.message));
    }
    if node_images.decide(node, image, s(c, "/imagePullPolicy")) == Image::Pull {
        event(
            api,
            p,
            node,
            field,
            ("Normal", "Pulling"),
            &format!("Pulling image {image:?}"),
        );
        step(api, p, "Pulling", json!({"image": image}));
        completion::log(
            api,
            p,
            cname,
            &format!("image {image:?} recorded as pulled (simulated: nothing was downloaded)"),
        );
        tokio::time::sleep(STEP / 2).await;
        event(
            api,
            p,
            node,
            field,
            ("Normal", "Pulled"),
            &format!(
                "Successfully pulled image {image:?} in 200ms (200ms including waiting). Image size: 0 bytes."
            ),
        );
        step(
            api,
            p,
            "Pulled",
            json!({"note": "simulated: nothing was downloaded"}),
        );
        node_images.pulled(node, image);
    } else {
        event(
            api,
            p,
            node,
            field,
            ("Normal", "Pulled"),
            &images::present_message(image),
        );
        step(
            api,
            p,
            "Pulled",
            json!({"image": image, "note": "already present on the node: not pulled again"}),
        );
    }
    Ok(())
}

/// Why the image manager cannot give a container its image: the waiting reason, its message,
/// and the reason of the image manager's own Warning.
pub(crate) struct Refusal {
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    event: &'static str,
}

/// The image manager's refusal, if any: a name that is no image reference (InvalidImageName;
/// it parses the name before it looks at the policy), or `Never` and the node lacks the
/// image (ErrImageNeverPull). Checked again on each retry: `kubectl set image` may fix the
/// name, and another pod may bring the image to the node.
pub(crate) fn image_refusal(node: &str, c: &Value, node_images: &NodeImages) -> Option<Refusal> {
    let image = s(c, "/image");
    if let Some(message) = invalid_image_message(image) {
        return Some(Refusal {
            reason: INVALID_IMAGE_NAME,
            message,
            event: INSPECT_FAILED,
        });
    }
    (node_images.decide(node, image, s(c, "/imagePullPolicy")) == Image::NeverPull).then(|| {
        Refusal {
            reason: NEVER_PULL,
            message: images::never_pull_message(image),
            event: NEVER_PULL,
        }
    })
}

/// The image manager's Warning, then the runtime manager's (`startContainer`'s `Failed`,
/// `Error: <reason>`), as each failed start records them.
pub(crate) fn refusal_events(api: &Api, p: &Value, (node, field): (&str, &str), r: &Refusal) {
    event(api, p, node, field, ("Warning", r.event), &r.message);
    event(
        api,
        p,
        node,
        field,
        ("Warning", "Failed"),
        &format!("Error: {}", r.reason),
    );
}

/// A container whose environment cannot be made: upstream's Failed event (and, the first
/// time, the journey's step).
pub(crate) fn config_failed(
    api: &Api,
    pod: &Value,
    node: &str,
    (cname, field): (&str, &str),
    why: &str,
    first: bool,
) {
    event(
        api,
        pod,
        node,
        field,
        ("Warning", "Failed"),
        &format!("Error: {why}"),
    );
    if first {
        step(
            api,
            pod,
            CONFIG_ERROR,
            json!({"container": cname, "message": why}),
        );
    }
}

/// Created, then Started: one container running from now.
pub(crate) fn start_container(
    api: &Api,
    pod: &Value,
    node: &str,
    (cname, field): (&str, &str),
) -> State {
    event(
        api,
        pod,
        node,
        field,
        ("Normal", "Created"),
        &format!("Created container: {cname}"),
    );
    event(
        api,
        pod,
        node,
        field,
        ("Normal", "Started"),
        &format!("Started container {cname}"),
    );
    completion::log(
        api,
        pod,
        cname,
        "container started (simulated: no process runs)",
    );
    step(
        api,
        pod,
        "Started",
        json!({"container": cname, "note": "simulated: no container runs"}),
    );
    State::Running(util::now())
}

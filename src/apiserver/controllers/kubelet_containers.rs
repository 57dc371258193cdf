//! A pod's containers as its kubelet reports them: each running since a time or waiting with
//! a reason and upstream's message, the `containerStatuses` written from that, and the
//! back-off at which a failure that goes on is reported again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::apiserver::util::At;

/// `imagePullPolicy: Never` and the image is not on the node.
pub(crate) const NEVER_PULL: &str = "ErrImageNeverPull";
/// The container's environment names a ConfigMap or Secret (or a key) that is not there.
pub(crate) const CONFIG_ERROR: &str = "CreateContainerConfigError";

/// The FailedMount event's reason, and the journey's step: a volume cannot be set up.
pub(crate) const FAILED_MOUNT: &str = "FailedMount";
/// The journey's step when some containers wait and the pod stays Pending.
pub(crate) const WAITING: &str = "Waiting";

/// Whether a kubelet step (the journey's) leaves the pod unable to start until something
/// changes.
pub(crate) fn stuck_step(step: &str) -> bool {
    [FAILED_MOUNT, CONFIG_ERROR, NEVER_PULL, WAITING].contains(&step)
}

/// A container as its kubelet left it: running since, or waiting with a reason and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    Running(String),
    Waiting(&'static str, String),
}

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

/// The containers' statuses for their states, in the spec's order.
pub(crate) fn container_statuses(containers: &[Value], states: &[(String, State)]) -> Vec<Value> {
    containers
        .iter()
        .filter_map(|c| {
            let (_, st) = states.iter().find(|(n, _)| c["name"] == n.as_str())?;
            Some(match st {
                State::Running(at) => json!({"name": c["name"], "image": c["image"],
                    "imageID": format!("{}@sha256:simulated", str_at(c, "/image")),
                    "containerID": format!("simulated://{}", str_at(c, "/name")),
                    "ready": true, "started": true, "restartCount": 0,
                    "state": {"running": {"startedAt": at}}}),
                State::Waiting(reason, message) => json!({"name": c["name"], "image": c["image"],
                    "imageID": "", "ready": false, "started": false, "restartCount": 0,
                    "state": {"waiting": {"reason": reason, "message": message}}}),
            })
        })
        .collect()
}

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.at(p).and_then(Value::as_str).unwrap_or_default()
}

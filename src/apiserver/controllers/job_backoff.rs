//! How long a Job waits before it replaces a failed pod (upstream `backoff_utils.go`): 10 s
//! after the last failure, doubling with each failure since the last success, at most 10
//! minutes; under `backoffLimitPerIndex`, the same per index, from its pods' failure counts.
//! The record of failures is the controller's own memory, as upstream's is: a restart forgets it.

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;

use crate::apiserver::controllers::workload::s;
use crate::apiserver::util::{self, At};

/// `DefaultJobPodFailureBackOff` and `MaxJobPodFailureBackOff`.
const BASE: Duration = Duration::from_secs(10);
const MAX: Duration = Duration::from_secs(600);

/// `backoffRecord`: failures since the last success, and when the last of them ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Record {
    failures: u32,
    last_failure: Option<OffsetDateTime>,
}

impl Record {
    /// `newBackoffRecord`: the record once this sync's newly finished pods (their finish times)
    /// are counted — a success resets it, and only the failures after the last success count.
    pub(crate) fn after(&self, succeeded: &[OffsetDateTime], failed: &[OffsetDateTime]) -> Record {
        let last_success = succeeded.iter().max();
        let Some(&last_success) = last_success else {
            let Some(&last) = failed.iter().max() else {
                return self.clone();
            };
            return Record {
                failures: self.failures + u32::try_from(failed.len()).unwrap_or(u32::MAX),
                last_failure: Some(last),
            };
        };
        let later: Vec<&OffsetDateTime> = failed.iter().filter(|t| **t > last_success).collect();
        Record {
            failures: u32::try_from(later.len()).unwrap_or(u32::MAX),
            last_failure: later.into_iter().max().copied(),
        }
    }

    /// `getRemainingTime`: how long the Job still waits before it creates a pod.
    pub(crate) fn remaining(&self, now: OffsetDateTime) -> Duration {
        self.last_failure
            .map_or(Duration::ZERO, |last| remaining(self.failures, last, now))
    }
}

/// `getRemainingTimeForFailuresCount`.
pub(crate) fn remaining(
    failures: u32,
    last_failure: OffsetDateTime,
    now: OffsetDateTime,
) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let wait = (1..failures).fold(BASE, |d, _| (d * 2).min(MAX));
    let since = Duration::try_from(now - last_failure).unwrap_or(Duration::ZERO);
    wait.saturating_sub(since)
}

/// `getFinishedTime`: when its last container ended (all of them having ended), else when it
/// stopped being Ready, else when its deletion was asked for, else when it was created.
pub(crate) fn finished_at(pod: &Value) -> OffsetDateTime {
    let time_at = |v: Option<&Value>| v.and_then(Value::as_str).and_then(util::parse_time);
    let containers = pod
        .at("/status/containerStatuses")
        .and_then(Value::as_array)
        .filter(|cs| !cs.is_empty())
        .and_then(|cs| {
            cs.iter()
                .map(|c| time_at(c.at("/state/terminated/finishedAt")))
                .collect::<Option<Vec<_>>>()
        })
        .and_then(|ts| ts.into_iter().max());
    let not_ready = || {
        pod.at("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| s(c, "/type") == "Ready" && s(c, "/status") == "False")
            .and_then(|c| time_at(c.get("lastTransitionTime")))
    };
    let deletion = || {
        let grace = pod
            .at("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        time_at(pod.at("/metadata/deletionTimestamp")).map(|t| t - time::Duration::seconds(grace))
    };
    containers
        .or_else(not_ready)
        .or_else(deletion)
        .or_else(|| time_at(pod.at("/metadata/creationTimestamp")))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(secs: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(secs)
    }

    /// Upstream's `TestNewBackoffRecord` and `TestGetRemainingBackoffTime` cases, in this shape.
    #[test]
    fn failures_double_the_wait_and_a_success_resets_it() {
        let none = Record::default();
        assert_eq!(none.remaining(at(0)), Duration::ZERO);
        let one = none.after(&[], &[at(100)]);
        assert_eq!(one.remaining(at(104)), Duration::from_secs(6));
        assert_eq!(one.remaining(at(120)), Duration::ZERO);
        let three = one.after(&[], &[at(110), at(130)]);
        assert_eq!(three.remaining(at(130)), Duration::from_secs(40));
        // A success after every failure: no wait; failures after it count again.
        assert_eq!(three.after(&[at(140)], &[at(135)]), Record::default());
        let after = three.after(&[at(140)], &[at(135), at(150)]);
        assert_eq!(after.remaining(at(150)), Duration::from_secs(10));
        // At most ten minutes.
        assert_eq!(remaining(30, at(0), at(0)), Duration::from_secs(600));
    }

    #[test]
    fn a_pod_finished_when_its_last_container_ended() {
        let t = |s: &str| util::parse_time(s).unwrap_or(at(0));
        let pod = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Ready", "status": "False",
                                       "lastTransitionTime": "2026-01-01T00:00:30Z"}],
                "containerStatuses": [
                    {"state": {"terminated": {"finishedAt": "2026-01-01T00:00:29Z"}}},
                    {"state": {"terminated": {"finishedAt": "2026-01-01T00:00:28Z"}}}]}});
        assert_eq!(finished_at(&pod), t("2026-01-01T00:00:29Z"));
        let mut running = pod.clone();
        running["status"]["containerStatuses"][1]["state"] = json!({"running": {}});
        assert_eq!(finished_at(&running), t("2026-01-01T00:00:30Z"));
        let deleted = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": "2026-01-01T00:01:00Z", "deletionGracePeriodSeconds": 30}});
        assert_eq!(
            finished_at(&deleted),
            t("2026-01-01T00:00:30Z"),
            "a deletion is asked for its grace period before its timestamp"
        );
    }
}

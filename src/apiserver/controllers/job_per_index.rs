//! An Indexed Job's `backoffLimitPerIndex` (upstream `indexed_job_utils.go`): each pod carries
//! how many of its index's pods failed before it (`batch.kubernetes.io/job-index-failure-count`,
//! and those a podFailurePolicy ignored, `…-ignored-failure-count`); an index whose pod fails
//! with that count at the limit — or under a `FailIndex` rule — is failed for good and listed in
//! `status.failedIndexes`. The Job fails once more indexes failed than `maxFailedIndexes`, or
//! once every index has succeeded or failed and some failed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::job_failure_policy::{Verdict, pod_failed};
use crate::apiserver::controllers::job_indexed::index_of;
use crate::apiserver::util::At;

pub(crate) const FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";
pub(crate) const IGNORED_FAILURE_COUNT: &str =
    "batch.kubernetes.io/job-index-ignored-failure-count";

pub(crate) const MAX_FAILED_REASON: &str = "MaxFailedIndexesExceeded";
pub(crate) const MAX_FAILED_MESSAGE: &str =
    "Job has exceeded the specified maximal number of failed indexes";
pub(crate) const FAILED_INDEXES_REASON: &str = "FailedIndexes";
pub(crate) const FAILED_INDEXES_MESSAGE: &str = "Job has failed indexes";

/// The Job's per-index limit, when it has one.
pub(crate) fn limit(job: &Value) -> Option<i64> {
    job.at("/spec/backoffLimitPerIndex").and_then(Value::as_i64)
}

/// An annotation's count; 0 when absent, unreadable, negative or past int32, as upstream reads
/// a value a user may have edited.
fn count(pod: &Value, key: &str) -> i64 {
    pod.at("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
        .unwrap_or(0)
}

/// `getIndexAbsoluteFailureCount`: the failures of the pod's index before it, counted or not.
pub(crate) fn failures_before(pod: &Value) -> i64 {
    count(pod, FAILURE_COUNT) + count(pod, IGNORED_FAILURE_COUNT)
}

/// `isIndexFailed`: a failed pod fails its index under a `FailIndex` rule, or when it counted
/// and its index had already failed `limit` times before it.
pub(crate) fn index_failed(pod: &Value, verdict: &Verdict, limit: i64) -> bool {
    match verdict {
        Verdict::FailIndex => true,
        Verdict::Ignore => false,
        _ => count(pod, FAILURE_COUNT) >= limit,
    }
}

/// The counts a new pod of an index carries (`getNewIndexFailureCounts`): those of the index's
/// last failed pod — the one with the most failures before it — plus that pod's own failure,
/// counted or ignored as `verdict` says. `(0, 0)` for an index that never failed.
pub(crate) fn next_counts(failed: &[(Arc<Value>, Verdict)]) -> (i64, i64) {
    failed
        .iter()
        .max_by_key(|(p, _)| failures_before(p))
        .map_or((0, 0), |(p, verdict)| {
            let (counted, ignored) = (count(p, FAILURE_COUNT), count(p, IGNORED_FAILURE_COUNT));
            match verdict {
                Verdict::Ignore => (counted, ignored + 1),
                _ => (counted + 1, ignored),
            }
        })
}

/// `addIndexFailureCountAnnotation`: the failure count always, the ignored one when some were.
pub(crate) fn annotate(pod: &mut Value, (counted, ignored): (i64, i64)) {
    if !pod["metadata"]["annotations"].is_object() {
        pod["metadata"]["annotations"] = json!({});
    }
    let a = &mut pod["metadata"]["annotations"];
    a[FAILURE_COUNT] = json!(counted.to_string());
    if ignored > 0 {
        a[IGNORED_FAILURE_COUNT] = json!(ignored.to_string());
    }
}

/// `getPodsWithDelayedDeletionPerIndex`: per index still to run (not succeeded, not failed, no
/// pod active), its last failed pod. That pod keeps its tracking finalizer until a replacement
/// exists, so a deleted pod stays readable long enough to hand on its counts.
pub(crate) fn awaiting_replacement<'a>(
    job: &Value,
    pods: &'a [Arc<Value>],
    done: &BTreeSet<i64>,
    active: &BTreeSet<i64>,
) -> BTreeMap<i64, &'a Arc<Value>> {
    let mut last: BTreeMap<i64, &Arc<Value>> = BTreeMap::new();
    for p in pods.iter().filter(|p| pod_failed(job, p)) {
        let Some(i) = index_of(p).filter(|i| !done.contains(i) && !active.contains(i)) else {
            continue;
        };
        let later = last
            .get(&i)
            .is_none_or(|q| failures_before(q) <= failures_before(p));
        if later {
            last.insert(i, p);
        }
    }
    last
}

/// Why the Job fails for its indexes, if it does (upstream checks this after backoffLimit and
/// the deadline): more failed indexes than `maxFailedIndexes`, or every index finished and some
/// failed.
pub(crate) fn failure(
    job: &Value,
    failed: &BTreeSet<i64>,
    succeeded: &BTreeSet<i64>,
    completions: i64,
) -> Option<(&'static str, &'static str)> {
    let n = i64::try_from(failed.len()).unwrap_or(i64::MAX);
    let max = job.at("/spec/maxFailedIndexes").and_then(Value::as_i64);
    if max.is_some_and(|m| n > m) {
        Some((MAX_FAILED_REASON, MAX_FAILED_MESSAGE))
    } else if n > 0 && n + i64::try_from(succeeded.len()).unwrap_or(0) >= completions {
        Some((FAILED_INDEXES_REASON, FAILED_INDEXES_MESSAGE))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(index: i64, phase: &str, counted: Option<&str>, ignored: Option<&str>) -> Value {
        let mut p = json!({"metadata": {"annotations": {
            "batch.kubernetes.io/job-completion-index": index.to_string()}},
            "status": {"phase": phase}});
        if let Some(c) = counted {
            p["metadata"]["annotations"][FAILURE_COUNT] = json!(c);
        }
        if let Some(c) = ignored {
            p["metadata"]["annotations"][IGNORED_FAILURE_COUNT] = json!(c);
        }
        p
    }

    #[test]
    fn an_index_fails_once_its_pods_failed_past_the_limit() {
        // backoffLimitPerIndex 1: the first pod (count 0) is retried, the second (count 1) fails
        // the index.
        assert!(!index_failed(
            &pod(0, "Failed", Some("0"), None),
            &Verdict::Count,
            1
        ));
        assert!(index_failed(
            &pod(0, "Failed", Some("1"), None),
            &Verdict::Count,
            1
        ));
        assert!(!index_failed(
            &pod(0, "Failed", Some("5"), None),
            &Verdict::Ignore,
            1
        ));
        assert!(index_failed(
            &pod(0, "Failed", Some("0"), None),
            &Verdict::FailIndex,
            3
        ));
        // An edited, unreadable count reads as 0.
        assert!(!index_failed(
            &pod(0, "Failed", Some("-4"), None),
            &Verdict::Count,
            1
        ));
        assert!(!index_failed(
            &pod(0, "Failed", Some("x"), None),
            &Verdict::Count,
            1
        ));
    }

    #[test]
    fn a_replacement_carries_the_counts_on() {
        assert_eq!(next_counts(&[]), (0, 0));
        let first = Arc::new(pod(2, "Failed", Some("0"), None));
        let second = Arc::new(pod(2, "Failed", Some("1"), Some("2")));
        assert_eq!(
            next_counts(&[(first, Verdict::Count), (second.clone(), Verdict::Count)]),
            (2, 2)
        );
        assert_eq!(next_counts(&[(second, Verdict::Ignore)]), (1, 3));
        let mut p = json!({"metadata": {}});
        annotate(&mut p, (2, 0));
        assert_eq!(p["metadata"]["annotations"], json!({FAILURE_COUNT: "2"}));
        annotate(&mut p, (2, 1));
        assert_eq!(p["metadata"]["annotations"][IGNORED_FAILURE_COUNT], "1");
    }

    #[test]
    fn the_job_fails_for_its_indexes_as_upstream() {
        let set = |v: &[i64]| v.iter().copied().collect::<BTreeSet<i64>>();
        let job = json!({"spec": {"maxFailedIndexes": 1}});
        assert_eq!(failure(&job, &set(&[0]), &set(&[]), 4), None);
        assert_eq!(
            failure(&job, &set(&[0, 2]), &set(&[]), 4),
            Some((MAX_FAILED_REASON, MAX_FAILED_MESSAGE))
        );
        let open = json!({"spec": {}});
        assert_eq!(failure(&open, &set(&[1]), &set(&[0, 2]), 4), None);
        assert_eq!(
            failure(&open, &set(&[1]), &set(&[0, 2, 3]), 4),
            Some((FAILED_INDEXES_REASON, FAILED_INDEXES_MESSAGE))
        );
    }

    #[test]
    fn the_last_failed_pod_of_a_pending_index_awaits_its_replacement() {
        let job = json!({"spec": {"podReplacementPolicy": "Failed"}});
        let pods: Vec<Arc<Value>> = vec![
            Arc::new(pod(0, "Failed", Some("0"), None)),
            Arc::new(pod(0, "Failed", Some("1"), None)),
            Arc::new(pod(1, "Failed", Some("0"), None)),
            Arc::new(pod(2, "Failed", Some("0"), None)),
            Arc::new(pod(3, "Running", Some("0"), None)),
        ];
        let held = awaiting_replacement(&job, &pods, &[1].into(), &[2].into());
        assert_eq!(held.keys().copied().collect::<Vec<_>>(), [0]);
        assert_eq!(count(held[&0], FAILURE_COUNT), 1);
    }
}

//! Which of a Job's pods have failed (upstream `isPodFailed`, under its podReplacementPolicy),
//! and what its `podFailurePolicy` makes of one (upstream `matchPodFailurePolicy`):
//! the first rule whose exit codes (of a terminated container, app containers first, then init
//! containers, 0 never matching) or pod conditions match decides — `FailJob` fails the Job with
//! reason `PodFailurePolicy`, `Ignore` keeps the failure off backoffLimit, `FailIndex` fails the
//! pod's index (`job_per_index`), `Count` counts it, as does a failure no rule matches.

use serde_json::Value;

use crate::apiserver::controllers::workload::{s, terminating};
use crate::apiserver::util::At;

/// The Job's failure reason when a `FailJob` rule matched.
pub(crate) const REASON: &str = "PodFailurePolicy";

/// `onlyReplaceFailedPods`: podReplacementPolicy Failed (the default under a podFailurePolicy)
/// — a pod being deleted is replaced, and counted, only once it has failed.
pub(crate) fn only_replace_failed(job: &Value) -> bool {
    s(job, "/spec/podReplacementPolicy") == "Failed"
}

/// `isPodFailed`: Failed, or being deleted before it succeeded — under `only_replace_failed`
/// only when no node will ever stop it (it was never scheduled; upstream's PodGC marks such a
/// pod Failed).
pub(crate) fn pod_failed(job: &Value, pod: &Value) -> bool {
    match s(pod, "/status/phase") {
        "Failed" => true,
        "Succeeded" => false,
        _ => terminating(pod) && (!only_replace_failed(job) || s(pod, "/spec/nodeName").is_empty()),
    }
}

#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Counted against backoffLimit (a `Count` rule, or none matched).
    Count,
    /// Not counted (an `Ignore` rule).
    Ignore,
    /// The Job fails, with this message.
    FailJob(String),
    /// The pod's index fails (under `backoffLimitPerIndex`); the failure counts.
    FailIndex,
}

fn rules(job: &Value) -> &[Value] {
    job.at("/spec/podFailurePolicy/rules")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `matchOnExitCodes`: a terminated container with a non-zero exit code the rule names.
fn exit_code_match<'a>(pod: &'a Value, req: &Value) -> Option<(&'a str, i64)> {
    let values: Vec<i64> = req
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    let container = req.get("containerName").and_then(Value::as_str);
    let operator_in = s(req, "/operator") == "In";
    ["/status/containerStatuses", "/status/initContainerStatuses"]
        .into_iter()
        .filter_map(|l| pod.at(l).and_then(Value::as_array))
        .flatten()
        .filter(|c| container.is_none_or(|n| s(c, "/name") == n))
        .filter_map(|c| {
            let code = c.at("/state/terminated/exitCode")?.as_i64()?;
            Some((s(c, "/name"), code))
        })
        .find(|(_, code)| *code != 0 && values.contains(code) == operator_in)
}

/// `matchOnPodConditions`: a pod condition of the type and status a pattern names.
fn condition_match<'a>(pod: &'a Value, patterns: &[Value]) -> Option<&'a str> {
    pod.at("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| {
            patterns
                .iter()
                .any(|p| s(p, "/type") == s(c, "/type") && s(p, "/status") == s(c, "/status"))
        })
        .map(|c| s(c, "/type"))
}

/// The verdict on a failed pod of `job`.
pub(crate) fn verdict(job: &Value, pod: &Value) -> Verdict {
    let (ns, name) = (s(pod, "/metadata/namespace"), s(pod, "/metadata/name"));
    for (index, rule) in rules(job).iter().enumerate() {
        let action = s(rule, "/action");
        let matched = if let Some(req) = rule.get("onExitCodes").filter(|r| r.is_object()) {
            exit_code_match(pod, req).map(|(container, code)| {
                format!(
                    "Container {container} for pod {ns}/{name} failed with exit code {code} matching {action} rule at index {index}"
                )
            })
        } else {
            let patterns = rule
                .get("onPodConditions")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            condition_match(pod, patterns).map(|ty| {
                format!(
                    "Pod {ns}/{name} has condition {ty} matching {action} rule at index {index}"
                )
            })
        };
        let Some(message) = matched else { continue };
        match action {
            "Ignore" => return Verdict::Ignore,
            "FailJob" => return Verdict::FailJob(message),
            "Count" => return Verdict::Count,
            "FailIndex" => return Verdict::FailIndex,
            _ => continue,
        }
    }
    Verdict::Count
}

/// `getFailJobMessage`: the first failed pod a `FailJob` rule matches.
pub(crate) fn fail_job_message<'a>(
    job: &Value,
    pods: impl IntoIterator<Item = &'a Value>,
) -> Option<String> {
    if rules(job).is_empty() {
        return None;
    }
    pods.into_iter()
        .filter(|p| s(p, "/status/phase") == "Failed")
        .find_map(|p| match verdict(job, p) {
            Verdict::FailJob(m) => Some(m),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job() -> Value {
        json!({"spec": {"podFailurePolicy": {"rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}}]}}})
    }

    fn failed(code: i64, conditions: Value) -> Value {
        json!({"metadata": {"namespace": "default", "name": "p"}, "status": {"phase": "Failed",
            "conditions": conditions,
            "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": code}}}]}})
    }

    /// Upstream's `TestMatchPodFailurePolicy` cases, in this shape.
    #[test]
    fn the_first_matching_rule_decides() {
        assert_eq!(
            verdict(&job(), &failed(42, json!([]))),
            Verdict::FailJob(
                "Container main for pod default/p failed with exit code 42 matching FailJob rule at index 0"
                    .into()
            )
        );
        let evicted = json!([{"type": "DisruptionTarget", "status": "True"}]);
        assert_eq!(
            verdict(&job(), &failed(1, evicted.clone())),
            Verdict::Ignore
        );
        assert_eq!(verdict(&job(), &failed(42, evicted)), Verdict::FailJob(
            "Container main for pod default/p failed with exit code 42 matching FailJob rule at index 0".into()));
        assert_eq!(
            verdict(&job(), &failed(1, json!([]))),
            Verdict::Count,
            "no rule matched"
        );
        assert_eq!(verdict(&job(), &failed(7, json!([]))), Verdict::Count);
        // Exit code 0 never matches, not even NotIn.
        assert_eq!(verdict(&job(), &failed(0, json!([]))), Verdict::Count);
    }

    #[test]
    fn a_condition_rule_names_the_condition() {
        let j = json!({"spec": {"podFailurePolicy": {"rules": [
            {"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue", "status": "True"}]}]}}});
        let pod = failed(1, json!([{"type": "ConfigIssue", "status": "True"}]));
        assert_eq!(
            fail_job_message(&j, [&pod]).as_deref(),
            Some("Pod default/p has condition ConfigIssue matching FailJob rule at index 0")
        );
        assert_eq!(fail_job_message(&json!({}), [&pod]), None);
    }
}

//! What an update may change in a Job's spec (upstream `ValidateJobSpecUpdate`): not its
//! selector, completion mode, podFailurePolicy, backoffLimitPerIndex, managedBy or
//! successPolicy; its completions only for an Indexed Job, in tandem with parallelism (elastic
//! Indexed Jobs); and its pod template not at all — except, while the Job is suspended and has
//! never started, the template's scheduling directives (labels, annotations, node selector,
//! tolerations, scheduling gates and node affinity: `validatePodTemplateUpdate`, as queueing
//! controllers such as Kueue use it).

use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::go_selector;
use crate::apiserver::request::status::Cause;
use crate::apiserver::util::At;

const IMMUTABLE: &str = "field is immutable";

/// The fields that never change, with their field paths.
const FIXED: [(&str, &str); 6] = [
    ("/spec/selector", "spec.selector"),
    ("/spec/completionMode", "spec.completionMode"),
    ("/spec/podFailurePolicy", "spec.podFailurePolicy"),
    ("/spec/backoffLimitPerIndex", "spec.backoffLimitPerIndex"),
    ("/spec/managedBy", "spec.managedBy"),
    ("/spec/successPolicy", "spec.successPolicy"),
];

pub(crate) fn validate(next: &Value, current: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let at = |o: &'_ Value, p: &str| -> Value { o.at(p).cloned().unwrap_or(Value::Null) };
    validate_completions(next, current, &mut out);
    for (p, f) in FIXED {
        let v = at(next, p);
        if v != at(current, p) {
            let shown = if f == "spec.selector" {
                json!(go_selector(&v))
            } else {
                v
            };
            out.push(Cause::invalid(f, &shown, IMMUTABLE));
        }
    }
    let (mut new_t, mut old_t) = (at(next, "/spec/template"), at(current, "/spec/template"));
    let shown = new_t.clone();
    if scheduling_may_change(next, current) {
        without_scheduling_directives(&mut new_t);
        without_scheduling_directives(&mut old_t);
    }
    if new_t != old_t {
        out.push(Cause::invalid("spec.template", &shown, IMMUTABLE));
    }
    out
}

/// `validateCompletions`: fixed, except an Indexed Job's, which may change only to equal the
/// new parallelism.
fn validate_completions(next: &Value, current: &Value, out: &mut Vec<Cause>) {
    let (new_c, old_c) = (
        next.at("/spec/completions"),
        current.at("/spec/completions"),
    );
    if new_c == old_c {
        return;
    }
    let shown = new_c.cloned().unwrap_or(Value::Null);
    let indexed = next.at("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    if !indexed {
        out.push(Cause::invalid("spec.completions", &shown, IMMUTABLE));
    } else if new_c.is_some_and(|c| !c.is_null()) && new_c != next.at("/spec/parallelism") {
        out.push(Cause::invalid(
            "spec.completions",
            &shown,
            "can only be modified in tandem with spec.parallelism",
        ));
    }
}

/// `AllowMutableSchedulingDirectives`: the Job is suspended now and had not started before.
fn scheduling_may_change(next: &Value, current: &Value) -> bool {
    next.at("/spec/suspend") == Some(&json!(true))
        && current.at("/status/startTime").is_none_or(Value::is_null)
}

/// The template less what a suspended, never-started Job may change.
fn without_scheduling_directives(template: &mut Value) {
    if let Some(meta) = template.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("labels");
        meta.remove("annotations");
    }
    let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for f in ["nodeSelector", "tolerations", "schedulingGates"] {
        spec.remove(f);
    }
    if let Some(affinity) = spec.get_mut("affinity").and_then(Value::as_object_mut) {
        affinity.remove("nodeAffinity");
        if affinity.is_empty() {
            spec.remove("affinity");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(suspend: bool, started: bool, image: &str, selector: Value) -> Value {
        let mut j = json!({"spec": {"suspend": suspend, "completions": 2, "parallelism": 1,
            "completionMode": "NonIndexed",
            "template": {"metadata": {"labels": {"a": "1"}},
                "spec": {"restartPolicy": "Never", "nodeSelector": selector,
                         "containers": [{"name": "c", "image": image}]}}},
            "status": {}});
        if started {
            j["status"]["startTime"] = json!("2026-01-01T00:00:00Z");
        }
        j
    }

    fn rendered(next: &Value, current: &Value) -> Vec<String> {
        validate(next, current)
            .iter()
            .map(|c| {
                let r = c.rendered();
                match r.split_once(": Invalid value: {") {
                    Some((field, _)) => format!("{field}: {IMMUTABLE}"),
                    None => r,
                }
            })
            .collect()
    }

    #[test]
    fn the_template_is_fixed_but_for_a_suspended_jobs_scheduling() {
        let old = job(true, false, "busybox", json!({"zone": "a"}));
        // Suspended, never started: node selector and labels may change, not the image.
        let mut moved = job(true, false, "busybox", json!({"zone": "b"}));
        moved["spec"]["template"]["metadata"]["labels"]["queue"] = json!("q");
        assert!(rendered(&moved, &old).is_empty());
        let image = job(true, false, "nginx", json!({"zone": "a"}));
        assert_eq!(
            rendered(&image, &old),
            ["spec.template: field is immutable"]
        );
        // Started once, or resumed by this very update: nothing in the template changes.
        let started = job(true, true, "busybox", json!({"zone": "a"}));
        let mut moved_after = moved.clone();
        moved_after["status"] = started["status"].clone();
        assert_eq!(
            rendered(&moved_after, &started),
            ["spec.template: field is immutable"]
        );
        let resumed = job(false, false, "busybox", json!({"zone": "b"}));
        assert_eq!(
            rendered(&resumed, &old),
            ["spec.template: field is immutable"]
        );
    }

    #[test]
    fn fixed_fields_and_completions() {
        let old = job(false, true, "busybox", json!({}));
        let mut next = old.clone();
        next["spec"]["completions"] = json!(3);
        next["spec"]["podFailurePolicy"] = json!({"rules": []});
        assert_eq!(
            rendered(&next, &old),
            [
                "spec.completions: Invalid value: 3: field is immutable",
                "spec.podFailurePolicy: field is immutable",
            ]
        );
        let mut indexed = old.clone();
        indexed["spec"]["completionMode"] = json!("Indexed");
        let mut grown = indexed.clone();
        grown["spec"]["completions"] = json!(4);
        assert_eq!(
            rendered(&grown, &indexed),
            [
                "spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"
            ]
        );
        grown["spec"]["parallelism"] = json!(4);
        assert!(rendered(&grown, &indexed).is_empty());
    }
}

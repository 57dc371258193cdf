//! An Indexed Job's `successPolicy` (upstream `success_policy.go`): the Job has succeeded as
//! soon as one rule holds — every index its `succeededIndexes` names succeeded, or at least its
//! `succeededCount` of them, or, with only a count, that many indexes at all. The first rule
//! that holds is named in the SuccessCriteriaMet and Complete conditions, and the Job's other
//! pods are stopped.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::apiserver::controllers::job_indexed;
use crate::apiserver::util::At;

/// The finishing conditions' reason when a rule held.
pub(crate) const REASON: &str = "SuccessPolicy";

/// `matchSuccessPolicy`: the message naming the first rule that holds.
pub(crate) fn matched(job: &Value, completions: i64, succeeded: &BTreeSet<i64>) -> Option<String> {
    if succeeded.is_empty() {
        return None;
    }
    let rules = job
        .at("/spec/successPolicy/rules")
        .and_then(Value::as_array)?;
    let have = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    rules.iter().enumerate().find_map(|(i, rule)| {
        let count = rule.get("succeededCount").and_then(Value::as_i64);
        let holds = match rule.get("succeededIndexes").and_then(Value::as_str) {
            Some(indexes) => {
                let required = job_indexed::parse(indexes, completions);
                // A rule whose indexes cannot be read matches nothing.
                let met = required.intersection(succeeded).count();
                !required.is_empty()
                    && match count {
                        None => met == required.len(),
                        Some(n) => n <= have(met),
                    }
            }
            None => count.is_some_and(|n| have(succeeded.len()) >= n),
        };
        holds.then(|| format!("Matched rules at index {i}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(rules: Value) -> Value {
        json!({"spec": {"successPolicy": {"rules": rules}}})
    }

    fn set(v: &[i64]) -> BTreeSet<i64> {
        v.iter().copied().collect()
    }

    /// Upstream's `TestMatchSuccessPolicy` cases, in this shape.
    #[test]
    fn the_first_rule_that_holds_is_named() {
        let by_indexes = job(json!([{"succeededIndexes": "0-2"}]));
        assert_eq!(
            matched(&by_indexes, 10, &set(&[0, 1, 2, 4, 5])).as_deref(),
            Some("Matched rules at index 0")
        );
        assert_eq!(matched(&by_indexes, 10, &set(&[0, 2])), None);
        let by_count = job(json!([{"succeededIndexes": "3"}, {"succeededCount": 2}]));
        assert_eq!(
            matched(&by_count, 10, &set(&[0, 1])).as_deref(),
            Some("Matched rules at index 1")
        );
        let both = job(json!([{"succeededIndexes": "0-4", "succeededCount": 2}]));
        assert_eq!(matched(&both, 10, &set(&[0, 7, 8])), None);
        assert_eq!(
            matched(&both, 10, &set(&[1, 3, 8])).as_deref(),
            Some("Matched rules at index 0")
        );
        let unreadable = job(json!([{"succeededIndexes": "invalid-form"}]));
        assert_eq!(matched(&unreadable, 10, &set(&[0])), None);
        assert_eq!(matched(&by_count, 10, &set(&[])), None);
        assert_eq!(matched(&json!({"spec": {}}), 10, &set(&[0])), None);
    }
}

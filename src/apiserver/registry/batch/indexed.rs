//! What a Job's spec may say about its indexes (upstream `validateJobSpec` and
//! `validateSuccessPolicy`): an Indexed Job needs `completions` and runs at most 100,000 pods at
//! a time; `backoffLimitPerIndex` and `maxFailedIndexes` (at most `completions`, and past
//! 100,000 completions required and at most 10,000) and `successPolicy` (1 to 20 rules, each with
//! `succeededIndexes` in the `0,2-4` form within `completions`, `succeededCount`, or both) need
//! the Indexed mode.

use serde_json::{Value, json};

use crate::apiserver::request::status::Cause;

/// `maxParallelismForIndexedJob` and `maxFailedIndexesForIndexedJob`.
const MAX_INDEXED: i64 = 100_000;
/// `completionsSoftLimit`: past it, a per-index backoff needs `maxFailedIndexes`.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
/// `parallelismLimitForHighCompletions` and `maxFailedIndexesLimitForHighCompletions`.
const HIGH_COMPLETIONS_LIMIT: i64 = 10_000;
/// `maxSuccessPolicyRule` and `maxJobSuccessPolicySucceededIndexesLimit`.
const MAX_SUCCESS_RULES: usize = 20;
const MAX_SUCCEEDED_INDEXES_BYTES: usize = 64 * 1024;

fn int(spec: &Value, key: &str) -> Option<i64> {
    spec.get(key).and_then(Value::as_i64)
}

fn set(spec: &Value, key: &str) -> bool {
    spec.get(key).is_some_and(|v| !v.is_null())
}

/// The Indexed-mode checks of `validateJobSpec`, fields under `path`.
pub(crate) fn validate(spec: &Value, path: &str, out: &mut Vec<Cause>) {
    let indexed = spec.get("completionMode").and_then(Value::as_str) == Some("Indexed");
    let completions = int(spec, "completions");
    let parallelism = int(spec, "parallelism");
    let max_failed = int(spec, "maxFailedIndexes");
    let per_index = set(spec, "backoffLimitPerIndex");
    let invalid =
        |f: &str, n: i64, detail: &str| Cause::invalid(&format!("{path}.{f}"), &json!(n), detail);
    if set(spec, "maxFailedIndexes") && !per_index {
        out.push(Cause::required(
            &format!("{path}.backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    if !indexed {
        for f in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(n) = int(spec, f) {
                out.push(invalid(f, n, "requires indexed completion mode"));
            }
        }
        if let Some(p) = spec.get("successPolicy").filter(|p| !p.is_null()) {
            out.push(Cause::invalid(
                &format!("{path}.successPolicy"),
                p,
                "requires indexed completion mode",
            ));
        }
        return;
    }
    if !set(spec, "completions") {
        out.push(Cause::required(
            &format!("{path}.completions"),
            "when completion mode is Indexed",
        ));
    }
    if let Some(p) = parallelism.filter(|p| *p > MAX_INDEXED) {
        out.push(invalid(
            "parallelism",
            p,
            &format!("must be less than or equal to {MAX_INDEXED} when completion mode is Indexed"),
        ));
    }
    if let (Some(c), Some(m)) = (completions, max_failed)
        && m > c
    {
        out.push(invalid(
            "maxFailedIndexes",
            m,
            "must be less than or equal to completions",
        ));
    }
    if let Some(m) = max_failed.filter(|m| *m > MAX_INDEXED) {
        out.push(invalid(
            "maxFailedIndexes",
            m,
            &format!("must be less than or equal to {MAX_INDEXED}"),
        ));
    }
    if per_index && completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) {
        let high = format!(
            "must be less than or equal to {HIGH_COMPLETIONS_LIMIT} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
        );
        if max_failed.is_none() {
            out.push(Cause::required(
                &format!("{path}.maxFailedIndexes"),
                &format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
            ));
        }
        if let Some(p) = parallelism.filter(|p| *p > HIGH_COMPLETIONS_LIMIT) {
            out.push(invalid("parallelism", p, &high));
        }
        if let Some(m) = max_failed.filter(|m| *m > HIGH_COMPLETIONS_LIMIT) {
            out.push(invalid("maxFailedIndexes", m, &high));
        }
    }
    if let Some(p) = spec.get("successPolicy").filter(|p| !p.is_null()) {
        validate_success_policy(p, completions, &format!("{path}.successPolicy"), out);
    }
}

fn validate_success_policy(
    policy: &Value,
    completions: Option<i64>,
    at: &str,
    out: &mut Vec<Cause>,
) {
    let rules = policy
        .get("rules")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let rules_at = format!("{at}.rules");
    if rules.is_empty() {
        out.push(Cause::required(
            &rules_at,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > MAX_SUCCESS_RULES {
        out.push(Cause::too_many(&rules_at, rules.len(), MAX_SUCCESS_RULES));
    }
    // Upstream reads completions here unchecked; without them the Job is refused already.
    let Some(completions) = completions else {
        return;
    };
    for (i, rule) in rules.iter().enumerate() {
        let rule_at = format!("{rules_at}[{i}]");
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        let count = rule.get("succeededCount").and_then(Value::as_i64);
        if indexes.is_none() && count.is_none() {
            out.push(Cause::required(
                &rule_at,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(ix) = indexes {
            let ix_at = format!("{rule_at}.succeededIndexes");
            if ix.len() > MAX_SUCCEEDED_INDEXES_BYTES {
                out.push(Cause::too_long(&ix_at, MAX_SUCCEEDED_INDEXES_BYTES));
            }
            match indexes_total(ix, completions) {
                Ok(t) => total = t,
                Err(e) => out.push(Cause::invalid(
                    &ix_at,
                    &json!(ix),
                    &format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(n) = count {
            let count_at = format!("{rule_at}.succeededCount");
            if n < 0 {
                out.push(Cause::invalid(
                    &count_at,
                    &json!(n),
                    "must be greater than or equal to 0",
                ));
            }
            if n > completions {
                out.push(Cause::invalid(
                    &count_at,
                    &json!(n),
                    &format!(
                        "must be less than or equal to {completions} (the number of specified completions)"
                    ),
                ));
            }
            if indexes.is_some() && n > total {
                out.push(Cause::invalid(
                    &count_at,
                    &json!(n),
                    &format!(
                        "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                    ),
                ));
            }
        }
    }
}

/// `validateIndexesFormat`: how many indexes `0,2-4` names, each interval increasing and below
/// `completions`, or why it cannot be read, in upstream's words.
pub(crate) fn indexes_total(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let (first, end) = interval_bounds(interval, completions)?;
        if let Some(l) = last.filter(|l| *l >= first) {
            return Err(format!(
                "non-increasing order, previous: {l}, current: {first}"
            ));
        }
        total += end - first + 1;
        last = Some(end);
    }
    Ok(total)
}

/// `parseIndexInterval`.
fn interval_bounds(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {interval:?} violates the requirement that an index interval can have at most two parts separated by '-'"
        ));
    }
    let bound = |s: &str| -> Result<i64, String> {
        let n = s
            .parse::<i64>()
            .map_err(|_| format!("cannot convert string to integer for index: {s:?}"))?;
        if n >= completions {
            return Err(format!("too large index: {s:?}"));
        }
        Ok(n)
    };
    let first = bound(limits[0])?;
    let Some(last) = limits.get(1) else {
        return Ok((first, first));
    };
    let last = bound(last)?;
    if first >= last {
        return Err(format!(
            "non-increasing order, previous: {first}, current: {last}"
        ));
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(spec: Value) -> Vec<String> {
        let mut out = Vec::new();
        validate(&spec, "spec", &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    /// Upstream's `TestValidateIndexesFormat` cases.
    #[test]
    fn index_intervals_read_as_upstream() {
        assert_eq!(indexes_total("", 10), Ok(0));
        assert_eq!(indexes_total("0,2-4,7", 10), Ok(5));
        assert_eq!(
            indexes_total("0,4-2", 10),
            Err("non-increasing order, previous: 4, current: 2".into())
        );
        assert_eq!(
            indexes_total("1-3,2", 10),
            Err("non-increasing order, previous: 3, current: 2".into())
        );
        assert_eq!(
            indexes_total("1-2-3", 10),
            Err("the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'".into())
        );
        assert_eq!(
            indexes_total("a", 10),
            Err("cannot convert string to integer for index: \"a\"".into())
        );
        assert_eq!(
            indexes_total("0-10", 10),
            Err("too large index: \"10\"".into())
        );
    }

    #[test]
    fn per_index_backoff_in_upstreams_words() {
        assert_eq!(
            causes(json!({"backoffLimitPerIndex": 1, "maxFailedIndexes": 2})),
            [
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                "spec.maxFailedIndexes: Invalid value: 2: requires indexed completion mode",
            ]
        );
        assert_eq!(
            causes(json!({"completionMode": "Indexed", "completions": 10, "maxFailedIndexes": 11})),
            [
                "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                "spec.maxFailedIndexes: Invalid value: 11: must be less than or equal to completions",
            ]
        );
        assert_eq!(
            causes(json!({"completionMode": "Indexed", "completions": 200_000,
                          "parallelism": 20_000, "backoffLimitPerIndex": 0})),
            [
                "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
                "spec.parallelism: Invalid value: 20000: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index",
            ]
        );
        // Completions past 100,000 are allowed, as since upstream 1.28.
        assert!(
            causes(json!({"completionMode": "Indexed", "completions": 200_000, "parallelism": 10}))
                .is_empty()
        );
    }

    #[test]
    fn success_policy_in_upstreams_words() {
        let indexed = |policy: Value| {
            causes(json!({"completionMode": "Indexed", "completions": 5, "successPolicy": policy}))
        };
        assert!(
            indexed(json!({"rules": [{"succeededIndexes": "0,2-4", "succeededCount": 2}]}))
                .is_empty()
        );
        assert_eq!(
            indexed(json!({"rules": []})),
            [
                "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified"
            ]
        );
        assert_eq!(
            indexed(
                json!({"rules": [{}, {"succeededIndexes": "3-5"}, {"succeededIndexes": "1-2", "succeededCount": 3}]})
            ),
            [
                "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
                "spec.successPolicy.rules[1].succeededIndexes: Invalid value: \"3-5\": error parsing succeededIndexes: too large index: \"5\"",
                "spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)",
            ]
        );
        assert_eq!(
            indexed(json!({"rules": [{"succeededCount": 6}]})),
            [
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)"
            ]
        );
        assert_eq!(
            causes(json!({"successPolicy": {"rules": [{"succeededCount": 1}]}})),
            [
                "spec.successPolicy: Invalid value: {\"rules\":[{\"succeededCount\":1}]}: requires indexed completion mode"
            ]
        );
    }
}

//! A Job's `podFailurePolicy` as upstream's `validatePodFailurePolicy` checks it: at most 20
//! rules, each with a known action and exactly one of `onExitCodes` (an operator, 1 to 255
//! distinct exit codes in order, 0 not with `In`, a container the template has) or
//! `onPodConditions` (at most 20, each a qualified condition type and a status); and the
//! template's restartPolicy `Never`.

use serde_json::{Value, json};

use crate::apiserver::registry::formats;
use crate::apiserver::request::status::Cause;

const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
const OPERATORS: [&str; 2] = ["In", "NotIn"];
const STATUSES: [&str; 3] = ["False", "True", "Unknown"];
const MAX_RULES: usize = 20;
const MAX_EXIT_CODES: usize = 255;
const MAX_CONDITIONS: usize = 20;

/// Go's `%q` of a string list: `["In" "NotIn"]`.
fn quoted(values: &[&str]) -> String {
    let q: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", q.join(" "))
}

/// Required, with upstream's list of valid values, when empty; NotSupported when unknown.
fn one_of(value: &str, at: &str, supported: &[&str], out: &mut Vec<Cause>) {
    if value.is_empty() {
        out.push(Cause::required(
            at,
            &format!("valid values: {}", quoted(supported)),
        ));
    } else if !supported.contains(&value) {
        out.push(Cause::not_supported(at, &json!(value), supported));
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

pub(crate) fn validate(spec: &Value, path: &str, out: &mut Vec<Cause>) {
    let Some(policy) = spec.get("podFailurePolicy").filter(|p| !p.is_null()) else {
        return;
    };
    let at = format!("{path}.podFailurePolicy");
    let rules = policy
        .get("rules")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if rules.len() > MAX_RULES {
        out.push(Cause::too_many(
            &format!("{at}.rules"),
            rules.len(),
            MAX_RULES,
        ));
    }
    let containers: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .filter_map(|l| spec.pointer(&format!("/template/spec/{l}")))
        .filter_map(Value::as_array)
        .flatten()
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        validate_rule(spec, rule, &format!("{at}.rules[{i}]"), &containers, out);
    }
    let restart = spec
        .pointer("/template/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if restart != "Never" {
        out.push(Cause::invalid(
            &format!("{path}.template.spec.restartPolicy"),
            &json!(restart),
            r#"only "Never" is supported when podFailurePolicy is specified"#,
        ));
    }
}

fn validate_rule(spec: &Value, rule: &Value, at: &str, containers: &[&str], out: &mut Vec<Cause>) {
    let action_at = format!("{at}.action");
    let action = str_of(rule, "action");
    if action == "FailIndex" && spec.get("backoffLimitPerIndex").is_none_or(Value::is_null) {
        out.push(Cause::invalid(
            &action_at,
            &json!(action),
            "requires the backoffLimitPerIndex to be set",
        ));
    } else {
        one_of(action, &action_at, &ACTIONS, out);
    }
    let exit_codes = rule.get("onExitCodes").filter(|e| !e.is_null());
    let conditions = rule
        .get("onPodConditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    if let Some(e) = exit_codes {
        validate_exit_codes(e, &format!("{at}.onExitCodes"), containers, out);
    }
    if let Some(c) = conditions {
        validate_conditions(c, &format!("{at}.onPodConditions"), out);
    }
    match (exit_codes.is_some(), conditions.is_some()) {
        (true, true) => out.push(Cause::invalid_omitted(
            at,
            "specifying both OnExitCodes and OnPodConditions is not supported",
        )),
        (false, false) => out.push(Cause::invalid_omitted(
            at,
            "specifying one of OnExitCodes and OnPodConditions is required",
        )),
        _ => {}
    }
}

fn validate_exit_codes(e: &Value, at: &str, containers: &[&str], out: &mut Vec<Cause>) {
    let operator = str_of(e, "operator");
    one_of(operator, &format!("{at}.operator"), &OPERATORS, out);
    if let Some(name) = e.get("containerName").and_then(Value::as_str)
        && !containers.contains(&name)
    {
        out.push(Cause::invalid(
            &format!("{at}.containerName"),
            &json!(name),
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_at = format!("{at}.values");
    let values: Vec<i64> = e
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    if values.is_empty() {
        out.push(Cause::invalid(
            &values_at,
            &json!(values),
            "at least one value is required",
        ));
        return;
    }
    if values.len() > MAX_EXIT_CODES {
        out.push(Cause::too_many(&values_at, values.len(), MAX_EXIT_CODES));
        return;
    }
    let mut seen = std::collections::HashSet::new();
    for (j, v) in values.iter().enumerate() {
        let v_at = format!("{values_at}[{j}]");
        if operator == "In" && *v == 0 {
            out.push(Cause::invalid(
                &v_at,
                &json!(v),
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(*v) {
            out.push(Cause::duplicate(&v_at, &json!(v)));
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        out.push(Cause::invalid(
            &values_at,
            &json!(values),
            "must be ordered",
        ));
    }
}

fn validate_conditions(conditions: &[Value], at: &str, out: &mut Vec<Cause>) {
    if conditions.len() > MAX_CONDITIONS {
        out.push(Cause::too_many(at, conditions.len(), MAX_CONDITIONS));
        return;
    }
    for (j, c) in conditions.iter().enumerate() {
        let c_at = format!("{at}[{j}]");
        let ty = str_of(c, "type");
        for msg in formats::qualified_name(ty) {
            out.push(Cause::invalid(&format!("{c_at}.type"), &json!(ty), &msg));
        }
        one_of(
            str_of(c, "status"),
            &format!("{c_at}.status"),
            &STATUSES,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(policy: Value, restart: &str) -> Vec<String> {
        let spec = json!({"podFailurePolicy": policy, "template": {"spec": {
            "restartPolicy": restart, "containers": [{"name": "main"}]}}});
        let mut out = Vec::new();
        validate(&spec, "spec", &mut out);
        out.iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn a_valid_policy_passes() {
        let p = json!({"rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1, 42]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]});
        assert_eq!(causes(p, "Never"), Vec::<String>::new());
    }

    #[test]
    fn upstreams_words_for_each_mistake() {
        let p = json!({"rules": [
            {"action": "Retry", "onExitCodes": {"containerName": "side", "operator": "Is", "values": [3, 0, 3]}},
            {"action": "FailIndex", "onPodConditions": [{"type": "Bad Type", "status": "Maybe"}]},
            {"onExitCodes": {"operator": "In", "values": []}, "onPodConditions": [{"type": "Ready", "status": "True"}]},
            {"action": "Count"}]});
        let got = causes(p, "OnFailure");
        for want in [
            r#"spec.podFailurePolicy.rules[0].action: Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore""#,
            r#"spec.podFailurePolicy.rules[0].onExitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn""#,
            r#"spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "side": must be one of the container or initContainer names in the pod template"#,
            "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,0,3]: must be ordered",
            r#"spec.podFailurePolicy.rules[1].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set"#,
            r#"spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown""#,
            "spec.podFailurePolicy.rules[2].action: Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            "spec.podFailurePolicy.rules[2].onExitCodes.values: Invalid value: []: at least one value is required",
            "spec.podFailurePolicy.rules[2]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
            "spec.podFailurePolicy.rules[3]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            r#"spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#,
        ] {
            assert!(got.iter().any(|g| g == want), "{want}\n{got:#?}");
        }
        assert!(
            got.iter().any(|g| g.starts_with("spec.podFailurePolicy.rules[1].onPodConditions[0].type: Invalid value: \"Bad Type\"")),
            "{got:#?}"
        );
    }
}

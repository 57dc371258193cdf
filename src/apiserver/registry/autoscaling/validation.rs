//! `ValidateHorizontalPodAutoscaler` (upstream `pkg/apis/autoscaling/validation`), on the
//! stored autoscaling/v2 form: what an autoscaling/v1 body becomes after its conversion is
//! checked by the same rules, at the v2 paths, as upstream checks its internal form.

use serde_json::{Value, json};

use crate::apiserver::registry::formats;
use crate::apiserver::registry::validation::parse_quantity;
use crate::apiserver::request::status::Cause;

/// `MaxPeriodSeconds` and `MaxStabilizationWindowSeconds`.
const MAX_PERIOD_SECONDS: i64 = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

/// `validMetricSourceTypesList`, sorted as Go's `sets.String.List()` sorts it.
const METRIC_SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
const SELECT_POLICIES: [&str; 3] = ["Disabled", "Max", "Min"];
const POLICY_TYPES: [&str; 2] = ["Percent", "Pods"];

fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// `validateHorizontalPodAutoscalerSpec` with the HPAScaleToZero gate off (upstream's
/// default): minReplicas at least 1, or 0 when the object being updated already had 0.
pub(crate) fn validate_spec(spec: &Value, min_lower_bound: i64) -> Vec<Cause> {
    let mut out = Vec::new();
    let min = int(spec, "minReplicas");
    let max = int(spec, "maxReplicas").unwrap_or(0);
    if let Some(m) = min.filter(|m| *m < min_lower_bound) {
        out.push(Cause::invalid(
            "spec.minReplicas",
            &json!(m),
            &format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        out.push(Cause::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|m| max < m) {
        out.push(Cause::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec.get("scaleTargetRef").cloned().unwrap_or(json!({}));
    cross_version_reference(&target, "spec.scaleTargetRef", &mut out);
    validate_metrics(spec, min, &mut out);
    if let Some(b) = spec.get("behavior").filter(|b| b.is_object()) {
        for side in ["scaleUp", "scaleDown"] {
            if let Some(rules) = b.get(side).filter(|r| r.is_object()) {
                scaling_rules(rules, &format!("spec.behavior.{side}"), &mut out);
            }
        }
    }
    out
}

/// `ValidateCrossVersionObjectReference`: kind and name required path segment names.
fn cross_version_reference(r: &Value, f: &str, out: &mut Vec<Cause>) {
    for key in ["kind", "name"] {
        let v = text(r, key);
        if v.is_empty() {
            out.push(Cause::required(&format!("{f}.{key}"), ""));
        }
        for m in formats::path_segment_name(v) {
            out.push(Cause::invalid(&format!("{f}.{key}"), &json!(v), &m));
        }
    }
}

fn validate_metrics(spec: &Value, min: Option<i64>, out: &mut Vec<Cause>) {
    let metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut object_or_external = false;
    for (i, m) in metrics.iter().enumerate() {
        metric_spec(m, &format!("spec.metrics[{i}]"), out);
        object_or_external |= matches!(text(m, "type"), "Object" | "External");
    }
    if min == Some(0) && !object_or_external {
        out.push(Cause::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
}

/// The member of a MetricSpec each source type fills (`object`, `containerResource`, …).
fn member(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => return None,
    })
}

/// `validateMetricSpec`: a known type, its member filled, and no other.
fn metric_spec(m: &Value, f: &str, out: &mut Vec<Cause>) {
    let ty = text(m, "type");
    if ty.is_empty() {
        out.push(Cause::required(
            &format!("{f}.type"),
            "must specify a metric source type",
        ));
    }
    if member(ty).is_none() {
        out.push(Cause::not_supported(
            &format!("{f}.type"),
            &json!(ty),
            &METRIC_SOURCE_TYPES,
        ));
    }
    // Upstream checks the first member present, in this order.
    let members = [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ];
    let filled: Vec<&str> = members.into_iter().filter(|k| present(m, k)).collect();
    if let Some(first) = filled.first() {
        let src = &m[*first];
        let at = format!("{f}.{first}");
        match *first {
            "object" => object_source(src, &at, out),
            "external" => external_source(src, &at, out),
            "pods" => pods_source(src, &at, out),
            "resource" => resource_source(src, &at, out),
            _ => container_resource_source(src, &at, out),
        }
    }
    let expected = member(ty);
    match expected {
        Some(k) if !present(m, k) => out.push(Cause::required(
            &format!("{f}.{k}"),
            "must populate information for the given metric source",
        )),
        Some(_) => {}
        // An unknown type is reported twice upstream: once by the set check, once here.
        None => out.push(Cause::not_supported(
            &format!("{f}.type"),
            &json!(ty),
            &METRIC_SOURCE_TYPES,
        )),
    }
    if filled.len() > 1 {
        for k in filled.iter().filter(|k| Some(**k) != expected) {
            out.push(Cause::forbidden(
                &format!("{f}.{k}"),
                "must populate the given metric source only",
            ));
        }
    }
}

fn object_source(src: &Value, f: &str, out: &mut Vec<Cause>) {
    let described = src.get("describedObject").cloned().unwrap_or(json!({}));
    cross_version_reference(&described, &format!("{f}.describedObject"), out);
    metric_identifier(src, f, out);
    let t = metric_target(src, f, out);
    if !present(&t, "value") && !present(&t, "averageValue") {
        out.push(Cause::required(
            &format!("{f}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
}

fn external_source(src: &Value, f: &str, out: &mut Vec<Cause>) {
    metric_identifier(src, f, out);
    let t = metric_target(src, f, out);
    let (value, average) = (present(&t, "value"), present(&t, "averageValue"));
    if !value && !average {
        out.push(Cause::required(
            &format!("{f}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        out.push(Cause::forbidden(
            &format!("{f}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
}

fn pods_source(src: &Value, f: &str, out: &mut Vec<Cause>) {
    metric_identifier(src, f, out);
    let t = metric_target(src, f, out);
    if !present(&t, "averageValue") {
        out.push(Cause::required(
            &format!("{f}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
}

fn resource_source(src: &Value, f: &str, out: &mut Vec<Cause>) {
    if text(src, "name").is_empty() {
        out.push(Cause::required(
            &format!("{f}.name"),
            "must specify a resource name",
        ));
    }
    let t = metric_target(src, f, out);
    utilization_or_value(&t, f, out);
}

fn container_resource_source(src: &Value, f: &str, out: &mut Vec<Cause>) {
    if text(src, "name").is_empty() {
        out.push(Cause::required(
            &format!("{f}.name"),
            "must specify a resource name",
        ));
    }
    let container = text(src, "container");
    if container.is_empty() {
        out.push(Cause::required(
            &format!("{f}.container"),
            "must specify a container",
        ));
    } else {
        for m in formats::dns1123_label(container) {
            out.push(Cause::invalid(
                &format!("{f}.container"),
                &json!(container),
                &m,
            ));
        }
    }
    let t = metric_target(src, f, out);
    utilization_or_value(&t, f, out);
}

/// A Resource or ContainerResource target: a utilization or an average value, not both.
fn utilization_or_value(t: &Value, f: &str, out: &mut Vec<Cause>) {
    let (utilization, average) = (present(t, "averageUtilization"), present(t, "averageValue"));
    if !utilization && !average {
        out.push(Cause::required(
            &format!("{f}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        out.push(Cause::forbidden(
            &format!("{f}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

/// `validateMetricTarget`; returns the target for the source's own checks.
fn metric_target(src: &Value, f: &str, out: &mut Vec<Cause>) -> Value {
    let t = src.get("target").cloned().unwrap_or(json!({}));
    let f = format!("{f}.target");
    let ty = text(&t, "type");
    if ty.is_empty() {
        out.push(Cause::required(
            &format!("{f}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        out.push(Cause::invalid(
            &format!("{f}.type"),
            &json!(ty),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        if let Some(q) = t.get(key).and_then(Value::as_str)
            && parse_quantity(q).is_some_and(|n| n <= 0.0)
        {
            out.push(Cause::invalid(
                &format!("{f}.{key}"),
                &json!(q),
                "must be positive",
            ));
        }
    }
    if let Some(u) = int(&t, "averageUtilization").filter(|u| *u < 1) {
        out.push(Cause::invalid(
            &format!("{f}.averageUtilization"),
            &json!(u),
            "must be greater than 0",
        ));
    }
    t
}

/// `validateMetricIdentifier`: the metric's name, a path segment name.
fn metric_identifier(src: &Value, f: &str, out: &mut Vec<Cause>) {
    let name = src.pointer("/metric/name").and_then(Value::as_str);
    let at = format!("{f}.metric.name");
    match name.filter(|n| !n.is_empty()) {
        None => out.push(Cause::required(&at, "must specify a metric name")),
        Some(n) => {
            for m in formats::path_segment_name(n) {
                out.push(Cause::invalid(&at, &json!(n), &m));
            }
        }
    }
}

/// `validateScalingRules` and `validateScalingPolicy`.
fn scaling_rules(rules: &Value, f: &str, out: &mut Vec<Cause>) {
    if let Some(w) = int(rules, "stabilizationWindowSeconds") {
        if w < 0 {
            out.push(Cause::invalid(
                &format!("{f}.stabilizationWindowSeconds"),
                &json!(w),
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            out.push(Cause::invalid(
                &format!("{f}.stabilizationWindowSeconds"),
                &json!(w),
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(p) = rules.get("selectPolicy").and_then(Value::as_str)
        && !SELECT_POLICIES.contains(&p)
    {
        out.push(Cause::not_supported(
            &format!("{f}.selectPolicy"),
            &json!(p),
            &SELECT_POLICIES,
        ));
    }
    let policies = rules
        .get("policies")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if policies.is_empty() {
        out.push(Cause::required(
            &format!("{f}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, p) in policies.iter().enumerate() {
        let at = format!("{f}.policies[{i}]");
        let ty = text(p, "type");
        if !POLICY_TYPES.contains(&ty) {
            out.push(Cause::not_supported(
                &format!("{at}.type"),
                &json!(ty),
                &POLICY_TYPES,
            ));
        }
        let value = int(p, "value").unwrap_or(0);
        if value <= 0 {
            out.push(Cause::invalid(
                &format!("{at}.value"),
                &json!(value),
                "must be greater than zero",
            ));
        }
        let period = int(p, "periodSeconds").unwrap_or(0);
        if period <= 0 {
            out.push(Cause::invalid(
                &format!("{at}.periodSeconds"),
                &json!(period),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            out.push(Cause::invalid(
                &format!("{at}.periodSeconds"),
                &json!(period),
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(extra: Value) -> Value {
        let mut s = json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}],
        });
        if let (Value::Object(s), Value::Object(e)) = (&mut s, extra) {
            s.extend(e);
        }
        s
    }

    fn rendered(s: &Value) -> Vec<String> {
        validate_spec(s, 1).iter().map(Cause::rendered).collect()
    }

    #[test]
    fn a_valid_spec_has_no_causes() {
        assert!(rendered(&spec(json!({}))).is_empty());
    }

    /// Upstream's validation_test.go cases for the replica bounds and the target.
    #[test]
    fn replica_bounds_and_the_target_are_checked_as_upstream() {
        let cases = [
            (
                json!({"minReplicas": 0}),
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            ),
            (
                json!({"maxReplicas": 0, "minReplicas": 1}),
                "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            ),
            (
                json!({"minReplicas": 7, "maxReplicas": 5}),
                "spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`",
            ),
            (
                json!({"scaleTargetRef": {"name": "web"}}),
                "spec.scaleTargetRef.kind: Required value",
            ),
            (
                json!({"scaleTargetRef": {"kind": "..", "name": "web"}}),
                "spec.scaleTargetRef.kind: Invalid value: \"..\": may not be '..'",
            ),
            (
                json!({"scaleTargetRef": {"kind": "Deployment", "name": "a/b"}}),
                "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
            ),
        ];
        for (extra, want) in cases {
            let got = rendered(&spec(extra.clone()));
            assert!(got.iter().any(|g| g == want), "{extra}: {got:?}");
        }
    }

    #[test]
    fn metrics_are_checked_as_upstream() {
        let cases = [
            (
                json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}}),
                "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
            ),
            (
                json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}),
                "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
            ),
            (
                json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Percent", "averageUtilization": 5}}}),
                "spec.metrics[0].resource.target.type: Invalid value: \"Percent\": must be either Utilization, Value, or AverageValue",
            ),
            (
                json!({"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 5}}}),
                "spec.metrics[0].pods: Required value: must populate information for the given metric source",
            ),
            (
                json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "-1"}}}),
                "spec.metrics[0].pods.target.averageValue: Invalid value: \"-1\": must be positive",
            ),
            (
                json!({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value"}}}),
                "spec.metrics[0].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target",
            ),
            (
                json!({"type": "Foo"}),
                "spec.metrics[0].type: Unsupported value: \"Foo\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            ),
        ];
        for (metric, want) in cases {
            let got = rendered(&spec(json!({ "metrics": [metric.clone()] })));
            assert!(got.iter().any(|g| g == want), "{metric}: {got:?}");
        }
    }

    #[test]
    fn scaling_rules_are_checked_as_upstream() {
        let got = rendered(&spec(json!({"behavior": {"scaleDown": {
            "stabilizationWindowSeconds": 3601, "selectPolicy": "Sometimes",
            "policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}})));
        for want in [
            "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
            "spec.behavior.scaleDown.selectPolicy: Unsupported value: \"Sometimes\": supported values: \"Disabled\", \"Max\", \"Min\"",
            "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
            "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
        ] {
            assert!(got.iter().any(|g| g == want), "{want}: {got:?}");
        }
        let got = rendered(&spec(json!({"behavior": {"scaleUp": {"policies": []}}})));
        assert_eq!(
            got,
            ["spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"]
        );
    }
}

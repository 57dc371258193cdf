//! autoscaling/v2 HorizontalPodAutoscaler, the form it is stored in (upstream
//! `pkg/registry/autoscaling/horizontalpodautoscaler` with autoscaling/v2 as the storage
//! version): create clears status, the v2 scheme's defaults, validation, and the printer
//! (NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE).

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler as HpaV2;
use serde_json::{Value, json};

use crate::apiserver::registry::autoscaling::{GROUP, validation};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct HorizontalPodAutoscaler;

pub(crate) const KIND: &str = "HorizontalPodAutoscaler";

/// `autoscaling.DefaultCPUUtilization`: the target when no metric is named.
pub(crate) const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// The metric every HPA without metrics gets (v2 defaulting; the v1 conversion does the same).
pub(crate) fn default_cpu_metric() -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}})
}

/// `SetDefaults_HorizontalPodAutoscaler` (autoscaling/v2): minReplicas 1, the CPU metric, and
/// when a behavior is given, every field of both its rules.
fn set_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert("metrics".into(), json!([default_cpu_metric()]));
    }
    if let Some(b) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        // GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the given fields over these.
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (side, mut rules) in [("scaleUp", up), ("scaleDown", down)] {
            if let Some(Value::Object(given)) = b.get(side) {
                for (k, v) in given {
                    if !v.is_null() {
                        rules[k] = v.clone();
                    }
                }
            }
            b.insert(side.into(), rules);
        }
    }
}

/// printers.go `formatHPAMetrics`: each metric `current/target`, `<unknown>` until measured,
/// two at most then `+ N more...`.
fn targets(o: &Value) -> String {
    let specs = o
        .pointer("/spec/metrics")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = o
        .pointer("/status/currentMetrics")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let current = |i: usize, p: &str| {
        statuses
            .get(i)
            .and_then(|s| s.pointer(p))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => format!("{other}%"),
            })
            .unwrap_or_else(|| "<unknown>".into())
    };
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let ty = str_at(m, "/type");
            let member = match ty {
                "External" => "external",
                "Pods" => "pods",
                "Object" => "object",
                "Resource" => "resource",
                "ContainerResource" => "containerResource",
                _ => return "<unknown type>".to_string(),
            };
            let t = |k: &str| str_at(m, &format!("/{member}/target/{k}")).to_string();
            match ty {
                "External" | "Object" if !t("averageValue").is_empty() => format!(
                    "{}/{} (avg)",
                    current(i, &format!("/{member}/current/averageValue")),
                    t("averageValue")
                ),
                "External" | "Object" => format!(
                    "{}/{}",
                    current(i, &format!("/{member}/current/value")),
                    t("value")
                ),
                "Pods" => format!(
                    "{}/{}",
                    current(i, "/pods/current/averageValue"),
                    t("averageValue")
                ),
                _ => {
                    let name = str_at(m, &format!("/{member}/name"));
                    if !t("averageValue").is_empty() {
                        format!(
                            "{name}: {}/{}",
                            current(i, &format!("/{member}/current/averageValue")),
                            t("averageValue")
                        )
                    } else {
                        let target = m
                            .pointer(&format!("/{member}/target/averageUtilization"))
                            .and_then(Value::as_i64)
                            .map_or("<auto>".to_string(), |u| format!("{u}%"));
                        format!(
                            "{name}: {}/{target}",
                            current(i, &format!("/{member}/current/averageUtilization"))
                        )
                    }
                }
            }
        })
        .collect();
    if list.len() > 2 {
        format!("{} + {} more...", list[..2].join(", "), list.len() - 2)
    } else {
        list.join(", ")
    }
}

impl Strategy for HorizontalPodAutoscaler {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn version(&self) -> &'static str {
        "v2"
    }
    fn kind(&self) -> &'static str {
        KIND
    }
    kind_type!(HpaV2);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Reference",
                "string",
                0,
                "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
            ),
            column(
                "Targets",
                "string",
                0,
                "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).",
            ),
            column(
                "MinPods",
                "string",
                0,
                "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.",
            ),
            column(
                "MaxPods",
                "integer",
                0,
                "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.",
            ),
            column(
                "Replicas",
                "integer",
                0,
                "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let min = o
            .pointer("/spec/minReplicas")
            .and_then(Value::as_i64)
            .map_or("<unset>".to_string(), |m| m.to_string());
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(format!(
                "{}/{}",
                str_at(o, "/spec/scaleTargetRef/kind"),
                str_at(o, "/spec/scaleTargetRef/name")
            )),
            json!(targets(o)),
            json!(min),
            json!(
                o.pointer("/spec/maxReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            ),
            json!(
                o.pointer("/status/currentReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            ),
            json!(age_of(o)),
        ]
    }
    fn defaults(&self, obj: &mut Value) {
        set_defaults(obj);
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        // PrepareForCreate: create cannot set status.
        obj["status"] = json!({"desiredReplicas": 0});
        set_defaults(obj);
        let causes = validation::validate_spec(&obj["spec"], 1);
        validate_into_trace(GROUP, KIND, obj, trace, causes)
    }
    /// `ValidateHorizontalPodAutoscalerUpdate`, and for status `ValidateNonnegativeField` of
    /// both replica counts.
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return ["currentReplicas", "desiredReplicas"]
                .into_iter()
                .filter_map(|k| {
                    let n = next.pointer(&format!("/status/{k}"))?.as_i64()?;
                    (n < 0).then(|| {
                        Cause::invalid(
                            &format!("status.{k}"),
                            &json!(n),
                            "must be greater than or equal to 0",
                        )
                    })
                })
                .collect();
        }
        let had_zero = current.pointer("/spec/minReplicas").and_then(Value::as_i64) == Some(0);
        validation::validate_spec(&next["spec"], if had_zero { 0 } else { 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_min_replicas_the_cpu_metric_and_both_scaling_rules() {
        let mut o = json!({"spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        set_defaults(&mut o);
        assert_eq!(o["spec"]["minReplicas"], 1);
        assert_eq!(o["spec"]["metrics"], json!([default_cpu_metric()]));
        let b = &o["spec"]["behavior"];
        assert_eq!(b["scaleDown"]["stabilizationWindowSeconds"], 60);
        assert_eq!(b["scaleDown"]["policies"][0]["type"], "Percent");
        assert_eq!(b["scaleUp"]["policies"][0]["value"], 4);
        assert_eq!(b["scaleUp"]["selectPolicy"], "Max");
        // No behavior given: none is made up.
        let mut o = json!({"spec": {"maxReplicas": 3}});
        set_defaults(&mut o);
        assert!(o["spec"].get("behavior").is_none());
    }

    #[test]
    fn the_targets_column_reads_as_kubectls() {
        let hpa = |metrics: Value, current: Value| json!({"spec": {"metrics": metrics}, "status": {"currentMetrics": current}});
        let cpu = default_cpu_metric();
        assert_eq!(
            targets(&hpa(json!([cpu]), json!(null))),
            "cpu: <unknown>/80%"
        );
        let measured = json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 31, "averageValue": "31m"}}}]);
        assert_eq!(targets(&hpa(json!([cpu]), measured)), "cpu: 31%/80%");
        let memory = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}}});
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}});
        assert_eq!(
            targets(&hpa(json!([cpu, memory, pods]), json!([]))),
            "cpu: <unknown>/80%, memory: <unknown>/500Mi + 1 more..."
        );
        assert_eq!(targets(&hpa(json!([]), json!([]))), "<none>");
    }
}

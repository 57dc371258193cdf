//! policy/v1 PodDisruptionBudget (upstream `pkg/registry/policy/poddisruptionbudget` and
//! `ValidatePodDisruptionBudgetSpec`): minAvailable or maxUnavailable (never both, each a
//! non-negative int or a percentage ≤ 100%), the selector, the unhealthy-pod policy, and the
//! printer (NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE).

use k8s_openapi::api::policy::v1::PodDisruptionBudget as PdbType;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::{int_at, validate_int_or_percent};
use crate::apiserver::registry::label_selector;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

pub(crate) const GROUP: &str = "policy";

pub(crate) struct PodDisruptionBudget;

fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".into(),
    }
}

fn present<'a>(o: &'a Value, p: &str) -> Option<&'a Value> {
    o.pointer(p).filter(|v| !v.is_null())
}

/// `ValidatePodDisruptionBudgetSpec`.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let min = present(o, "/spec/minAvailable");
    let max = present(o, "/spec/maxUnavailable");
    if min.is_some() && max.is_some() {
        out.push(Cause {
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {}: minAvailable and maxUnavailable cannot be both set",
                o.get("spec").cloned().unwrap_or(Value::Null)
            ),
            field: "spec".into(),
        });
    }
    validate_int_or_percent(min, "spec.minAvailable", &mut out);
    validate_int_or_percent(max, "spec.maxUnavailable", &mut out);
    // A selector that does not decode was refused by the typed decode already.
    if let Some(sel) = present(o, "/spec/selector")
        .and_then(|s| serde_json::from_value::<LabelSelector>(s.clone()).ok())
    {
        label_selector::validate(&sel, "spec.selector", &mut out);
    }
    if let Some(p) = present(o, "/spec/unhealthyPodEvictionPolicy") {
        let p = p.as_str().unwrap_or_default();
        if !["IfHealthyBudget", "AlwaysAllow"].contains(&p) {
            out.push(Cause::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                &json!(p),
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    out
}

/// `UpdateDisruptionAllowedCondition`: True/SufficientPods while disruptions are allowed,
/// False/InsufficientPods otherwise (the transition time kept while the status holds).
pub(crate) fn disruption_allowed_condition(
    old: Option<&Value>,
    allowed: bool,
    generation: &Value,
) -> Value {
    let (status, reason) = if allowed {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    disruption_condition(old, status, reason, "", generation)
}

pub(crate) fn disruption_condition(
    old: Option<&Value>,
    status: &str,
    reason: &str,
    message: &str,
    generation: &Value,
) -> Value {
    let since = old
        .and_then(|c| c.as_array())
        .and_then(|cs| {
            cs.iter()
                .find(|c| str_at(c, "/type") == "DisruptionAllowed")
        })
        .filter(|c| str_at(c, "/status") == status)
        .map(|c| str_at(c, "/lastTransitionTime").to_string())
        .unwrap_or_else(util::now);
    json!([{"type": "DisruptionAllowed", "status": status, "observedGeneration": generation,
            "lastTransitionTime": since, "reason": reason, "message": message}])
}

impl Strategy for PodDisruptionBudget {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "PodDisruptionBudget"
    }
    kind_type!(PdbType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Min Available",
                "string",
                0,
                "An eviction is allowed if at least \"minAvailable\" pods selected by \"selector\" will still be available after the eviction, i.e. even in the absence of the evicted pod.  So for example you can prevent all voluntary evictions by specifying \"100%\".",
            ),
            column(
                "Max Unavailable",
                "string",
                0,
                "An eviction is allowed if at most \"maxUnavailable\" pods selected by \"selector\" are unavailable after the eviction, i.e. even in absence of the evicted pod. For example, one can prevent all voluntary evictions by specifying 0. This is a mutually exclusive setting with \"minAvailable\".",
            ),
            column(
                "Allowed Disruptions",
                "integer",
                0,
                "Number of pod disruptions that are currently allowed.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(int_or_string(present(o, "/spec/minAvailable"))),
            json!(int_or_string(present(o, "/spec/maxUnavailable"))),
            json!(int_at(o, "/status/disruptionsAllowed")),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        // PrepareForCreate clears status; the disruption controller fills it.
        obj["status"] = json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0});
        validate_into_trace(GROUP, "PodDisruptionBudget", obj, trace, validate(obj))
    }
    fn validate_update(&self, sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        validate(next)
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_set_or_over_100_percent_is_refused() {
        let p = json!({"spec": {"minAvailable": 1, "maxUnavailable": "120%"}});
        let causes: Vec<String> = validate(&p).iter().map(|c| c.rendered()).collect();
        assert_eq!(causes.len(), 2, "{causes:?}");
        assert!(causes[0].ends_with("minAvailable and maxUnavailable cannot be both set"));
        assert_eq!(
            causes[1],
            r#"spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%"#
        );
        let ok = json!({"metadata": {"name": "x"}, "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 2}});
        assert_eq!(PodDisruptionBudget.cells(&ok)[1], "50%");
        assert_eq!(PodDisruptionBudget.cells(&ok)[2], "N/A");
        assert_eq!(PodDisruptionBudget.cells(&ok)[3], 2);
    }
}

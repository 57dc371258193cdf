//! apps/v1 Deployment (upstream `pkg/registry/apps/deployment`, `pkg/apis/apps/v1/defaults.go`,
//! `ValidateDeployment`): defaults, validation, the kubectl columns.

use k8s_openapi::api::apps::v1::Deployment as DeploymentType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::{
    containers_and_images, containers_column, default_field, default_template, format_selector,
    images_column, int_at, nonnegative, scaled, validate_int_or_percent,
    validate_selector_and_template, validate_selector_unchanged,
};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct Deployment;

pub(crate) const GROUP: &str = "apps";

/// `SetDefaults_Deployment` (apps/v1).
fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    let spec = &mut o["spec"];
    default_field(spec, "replicas", json!(1));
    default_field(spec, "strategy", json!({}));
    default_field(&mut spec["strategy"], "type", json!("RollingUpdate"));
    if spec["strategy"]["type"] == "RollingUpdate" {
        default_field(&mut spec["strategy"], "rollingUpdate", json!({}));
        let ru = &mut spec["strategy"]["rollingUpdate"];
        default_field(ru, "maxUnavailable", json!("25%"));
        default_field(ru, "maxSurge", json!("25%"));
    }
    default_field(spec, "revisionHistoryLimit", json!(10));
    default_field(spec, "progressDeadlineSeconds", json!(600));
    default_template(spec);
}

/// `ValidateDeploymentSpec`.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    nonnegative(o, "/spec/replicas", "spec.replicas", &mut out);
    validate_selector_and_template(o, "deployment", true, &mut out);
    let ty = str_at(o, "/spec/strategy/type");
    match ty {
        "Recreate" => {
            if o.pointer("/spec/strategy/rollingUpdate")
                .is_some_and(|v| !v.is_null())
            {
                out.push(Cause::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => {
            let surge = o.pointer("/spec/strategy/rollingUpdate/maxSurge");
            let unavail = o.pointer("/spec/strategy/rollingUpdate/maxUnavailable");
            validate_int_or_percent(surge, "spec.strategy.rollingUpdate.maxSurge", &mut out);
            validate_int_or_percent(
                unavail,
                "spec.strategy.rollingUpdate.maxUnavailable",
                &mut out,
            );
            if scaled(surge, 100, true) == 0 && scaled(unavail, 100, false) == 0 {
                out.push(Cause::invalid(
                    "spec.strategy.rollingUpdate.maxUnavailable",
                    unavail.unwrap_or(&json!(0)),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
        }
        other => out.push(Cause::not_supported(
            "spec.strategy.type",
            &json!(other),
            &["Recreate", "RollingUpdate"],
        )),
    }
    nonnegative(o, "/spec/minReadySeconds", "spec.minReadySeconds", &mut out);
    nonnegative(
        o,
        "/spec/revisionHistoryLimit",
        "spec.revisionHistoryLimit",
        &mut out,
    );
    if let Some(p) = o
        .pointer("/spec/progressDeadlineSeconds")
        .and_then(Value::as_i64)
    {
        nonnegative(
            o,
            "/spec/progressDeadlineSeconds",
            "spec.progressDeadlineSeconds",
            &mut out,
        );
        if p <= int_at(o, "/spec/minReadySeconds") {
            out.push(Cause::invalid(
                "spec.progressDeadlineSeconds",
                &json!(p),
                "must be greater than minReadySeconds",
            ));
        }
    }
    out
}

impl Strategy for Deployment {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "Deployment"
    }
    kind_type!(DeploymentType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Ready", "string", 0, "Number of the pod with ready state"),
            column(
                "Up-to-date",
                "string",
                0,
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            column(
                "Available",
                "string",
                0,
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            containers_column(),
            images_column(),
            column(
                "Selector",
                "string",
                1,
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let (containers, images) = containers_and_images(o);
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(format!(
                "{}/{}",
                int_at(o, "/status/readyReplicas"),
                int_at(o, "/spec/replicas")
            )),
            json!(int_at(o, "/status/updatedReplicas")),
            json!(int_at(o, "/status/availableReplicas")),
            json!(age_of(o)),
            json!(containers),
            json!(images),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    }
    fn defaults(&self, obj: &mut Value) {
        default(obj);
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        default(obj);
        obj["status"] = json!({});
        validate_into_trace(GROUP, "Deployment", obj, trace, validate(obj))
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut out = validate(next);
        validate_selector_unchanged(next, current, &mut out);
        out
    }
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::workload_on_create(obj, true, "/spec/template", "spec.template")
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        pod_warnings::workload_on_update(next, current, "/spec/template", "spec.template")
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn web() -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}})
    }

    #[test]
    fn defaults_are_upstreams() {
        let mut d = web();
        default(&mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "Always"
        );
        assert!(validate(&d).is_empty(), "{:?}", validate(&d));
    }

    #[test]
    fn negative_replicas_and_zero_surge_and_unavailable_are_refused() {
        let mut d = web();
        d["spec"]["replicas"] = json!(-1);
        d["spec"]["strategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
        default(&mut d);
        let got: Vec<String> = validate(&d).iter().map(Cause::rendered).collect();
        assert_eq!(
            got,
            vec![
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
            ]
        );
    }
}

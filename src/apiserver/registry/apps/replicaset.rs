//! apps/v1 ReplicaSet (upstream `pkg/registry/apps/replicaset`, `ValidateReplicaSet`).

use k8s_openapi::api::apps::v1::ReplicaSet as ReplicaSetType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::deployment::GROUP;
use crate::apiserver::registry::apps::workload::{
    default_field, default_template, format_selector, nonnegative, replicas_cells,
    replicas_columns, validate_selector_and_template, validate_selector_unchanged,
};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{Strategy, kind_type, validate_into_trace};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct ReplicaSet;

fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    default_field(&mut o["spec"], "replicas", json!(1));
    default_template(&mut o["spec"]);
}

/// `ValidateReplicaSetSpec` (its empty-selector cause names deployments, as upstream's does).
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    nonnegative(o, "/spec/replicas", "spec.replicas", &mut out);
    nonnegative(o, "/spec/minReadySeconds", "spec.minReadySeconds", &mut out);
    validate_selector_and_template(o, "deployment", true, &mut out);
    out
}

impl Strategy for ReplicaSet {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "ReplicaSet"
    }
    kind_type!(ReplicaSetType);
    fn columns(&self) -> Vec<Value> {
        replicas_columns(
            "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1.",
            "Replicas is the most recently observed number of replicas.",
            "The number of ready replicas for this replica set.",
            "Selector is a label query over pods that should match the replica count.",
        )
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        replicas_cells(o, format_selector(o.pointer("/spec/selector")))
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
        obj["status"] = json!({"replicas": 0});
        validate_into_trace(GROUP, "ReplicaSet", obj, trace, validate(obj))
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

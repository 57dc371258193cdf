//! core/v1 ReplicationController (upstream `pkg/registry/core/replicationcontroller`,
//! `SetDefaults_ReplicationController`, `ValidateReplicationController`): the ReplicaSet before
//! label selectors, whose `spec.selector` is a plain map that defaults to the template's labels
//! and may change after creation.

use k8s_openapi::api::core::v1::ReplicationController as ReplicationControllerType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::{
    default_field, default_template, format_labels, int_at, label_selector, nonnegative,
    replicas_cells, replicas_columns, validate_template,
};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{Strategy, kind_type, validate_into_trace};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util::At;

const KIND: &str = "ReplicationController";

pub(crate) struct ReplicationController;

/// `SetDefaults_ReplicationController`: the template's labels, when it has some, become the
/// selector and the object's labels where those are empty; one replica.
fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    let template_labels = o
        .at("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = template_labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(|m| m.is_empty());
        if empty(o.at("/spec/selector")) {
            o["spec"]["selector"] = labels.clone();
        }
        if o.get("metadata").is_some_and(Value::is_object) && empty(o.at("/metadata/labels")) {
            o["metadata"]["labels"] = labels;
        }
    }
    default_field(&mut o["spec"], "replicas", json!(1));
    default_template(&mut o["spec"]);
}

/// `ValidateReplicationControllerSpec`, in upstream's order.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    nonnegative(o, "/spec/minReadySeconds", "spec.minReadySeconds", &mut out);
    // ValidateNonEmptySelector.
    if o.at("/spec/selector")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty())
    {
        out.push(Cause::required("spec.selector", ""));
    }
    nonnegative(o, "/spec/replicas", "spec.replicas", &mut out);
    validate_template(o, label_selector(o).as_deref(), KIND, &mut out);
    out
}

impl Strategy for ReplicationController {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        KIND
    }
    kind_type!(ReplicationControllerType);
    fn columns(&self) -> Vec<Value> {
        replicas_columns(
            "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            "The number of ready replicas for this replication controller.",
            "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        )
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        replicas_cells(o, format_labels(o.at("/spec/selector")))
    }
    /// `ControllerToSelectableFields`: `status.replicas` beside the metadata.
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        (field == "status.replicas").then(|| Some(int_at(o, "/status/replicas").to_string()))
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
        validate_into_trace("", KIND, obj, trace, validate(obj))
    }
    /// `ValidateReplicationControllerUpdate`: the spec as on create; unlike apps/v1, the
    /// selector may change.
    fn validate_update(&self, sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        validate(next)
    }
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::workload_on_create(obj, true, "/spec/template", "spec.template")
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        let mut out = Vec::new();
        // Upstream passes the two templates in swapped order here (kubernetes#142443, open),
        // so what it warns of on a changed ReplicationController is the template replaced.
        if pod_warnings::generation_moved(next, current) {
            pod_warnings::template(&mut out, current, "/spec/template", "spec.template");
        }
        out
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc(spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": KIND, "metadata": {"name": "web"}, "spec": spec})
    }

    fn template(labels: Value) -> Value {
        json!({"metadata": {"labels": labels},
               "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
    }

    #[test]
    fn the_template_labels_default_the_selector_and_the_labels() {
        let mut o = rc(json!({"template": template(json!({"app": "web"}))}));
        default(&mut o);
        assert_eq!(o["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(o["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(o["spec"]["replicas"], json!(1));
        // What the client set is kept.
        let mut o = rc(json!({"selector": {"tier": "a"}, "replicas": 0,
                              "template": template(json!({"app": "web", "tier": "a"}))}));
        o["metadata"]["labels"] = json!({"team": "x"});
        default(&mut o);
        assert_eq!(o["spec"]["selector"], json!({"tier": "a"}));
        assert_eq!(o["metadata"]["labels"], json!({"team": "x"}));
        assert_eq!(o["spec"]["replicas"], json!(0));
    }

    #[test]
    fn upstream_causes_in_upstream_order() {
        let fields = |o: &Value| -> Vec<String> {
            validate(o)
                .into_iter()
                .map(|c| format!("{} {}", c.field, c.message))
                .collect()
        };
        // No template and nothing to default the selector from.
        assert_eq!(
            fields(&rc(json!({"replicas": -1, "minReadySeconds": -2}))),
            [
                "spec.minReadySeconds Invalid value: -2: must be greater than or equal to 0",
                "spec.selector Required value",
                "spec.replicas Invalid value: -1: must be greater than or equal to 0",
                "spec.template Required value",
            ]
        );
        let mut o =
            rc(json!({"selector": {"app": "db"}, "template": template(json!({"app": "web"}))}));
        o["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        o["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
        assert_eq!(
            fields(&o),
            [
                "spec.template.metadata.labels Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy Unsupported value: \"Never\": supported values: \"Always\"",
                "spec.template.spec.activeDeadlineSeconds Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
            ]
        );
        let mut ok = rc(json!({"template": template(json!({"app": "web"}))}));
        default(&mut ok);
        assert!(validate(&ok).is_empty(), "{:?}", fields(&ok));
    }

    #[test]
    fn its_selector_is_a_map_and_may_change() {
        let mut a = rc(json!({"template": template(json!({"app": "web", "v": "1"}))}));
        default(&mut a);
        let mut b = a.clone();
        b["spec"]["selector"] = json!({"app": "web", "v": "1"});
        assert!(ReplicationController.validate_update("", &b, &a).is_empty());
        assert_eq!(
            label_selector(&b).as_deref(),
            Some(&json!({"matchLabels": {"app": "web", "v": "1"}}))
        );
        assert_eq!(
            ReplicationController.cells(&b)[7],
            json!("app=web,v=1"),
            "the wide Selector column"
        );
    }
}

//! apps/v1 DaemonSet (upstream `pkg/registry/apps/daemonset`, `ValidateDaemonSet`).

use k8s_openapi::api::apps::v1::DaemonSet as DaemonSetType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::deployment::GROUP;
use crate::apiserver::registry::apps::workload::{
    containers_and_images, containers_column, default_field, default_template, format_labels,
    format_selector, images_column, int_at, nonnegative, validate_selector_and_template,
    validate_selector_unchanged,
};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct DaemonSet;

/// `SetDefaults_DaemonSet`: RollingUpdate with maxUnavailable 1 and maxSurge 0.
fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    let spec = &mut o["spec"];
    default_field(spec, "updateStrategy", json!({}));
    default_field(&mut spec["updateStrategy"], "type", json!("RollingUpdate"));
    if spec["updateStrategy"]["type"] == "RollingUpdate" {
        default_field(&mut spec["updateStrategy"], "rollingUpdate", json!({}));
        let ru = &mut spec["updateStrategy"]["rollingUpdate"];
        default_field(ru, "maxUnavailable", json!(1));
        default_field(ru, "maxSurge", json!(0));
    }
    default_field(spec, "revisionHistoryLimit", json!(10));
    default_template(spec);
}

fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    validate_selector_and_template(o, "daemonset", true, &mut out);
    nonnegative(o, "/spec/minReadySeconds", "spec.minReadySeconds", &mut out);
    nonnegative(
        o,
        "/spec/revisionHistoryLimit",
        "spec.revisionHistoryLimit",
        &mut out,
    );
    let ty = str_at(o, "/spec/updateStrategy/type");
    if !["RollingUpdate", "OnDelete"].contains(&ty) {
        out.push(Cause::not_supported(
            "spec.updateStrategy.type",
            &json!(ty),
            &["OnDelete", "RollingUpdate"],
        ));
    }
    out
}

impl Strategy for DaemonSet {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "DaemonSet"
    }
    kind_type!(DaemonSetType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Desired",
                "integer",
                0,
                "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).",
            ),
            column(
                "Current",
                "integer",
                0,
                "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
            ),
            column(
                "Ready",
                "integer",
                0,
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
            ),
            column(
                "Up-to-date",
                "integer",
                0,
                "The total number of nodes that are running updated daemon pod",
            ),
            column(
                "Available",
                "integer",
                0,
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
            ),
            column(
                "Node Selector",
                "string",
                0,
                "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            containers_column(),
            images_column(),
            column(
                "Selector",
                "string",
                1,
                "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let (containers, images) = containers_and_images(o);
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(int_at(o, "/status/desiredNumberScheduled")),
            json!(int_at(o, "/status/currentNumberScheduled")),
            json!(int_at(o, "/status/numberReady")),
            json!(int_at(o, "/status/updatedNumberScheduled")),
            json!(int_at(o, "/status/numberAvailable")),
            json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
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
        obj["status"] = json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0});
        validate_into_trace(GROUP, "DaemonSet", obj, trace, validate(obj))
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
        pod_warnings::workload_on_create(obj, false, "/spec/template", "spec.template")
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        let mut out = Vec::new();
        // Upstream warns when the templateGeneration moved, which it does with the template.
        if pod_warnings::template_changed(next, current, "/spec/template") {
            pod_warnings::template(&mut out, next, "/spec/template", "spec.template");
        }
        out
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

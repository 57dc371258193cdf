//! apps/v1 StatefulSet (upstream `pkg/registry/apps/statefulset`, `ValidateStatefulSet`).

use k8s_openapi::api::apps::v1::StatefulSet as StatefulSetType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::deployment::GROUP;
use crate::apiserver::registry::apps::workload::{
    containers_and_images, containers_column, default_field, default_template, images_column,
    int_at, nonnegative, validate_selector_and_template, validate_selector_unchanged,
};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct StatefulSet;

/// `SetDefaults_StatefulSet`.
fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    let spec = &mut o["spec"];
    default_field(spec, "replicas", json!(1));
    default_field(spec, "podManagementPolicy", json!("OrderedReady"));
    default_field(spec, "updateStrategy", json!({}));
    default_field(&mut spec["updateStrategy"], "type", json!("RollingUpdate"));
    if spec["updateStrategy"]["type"] == "RollingUpdate" {
        default_field(&mut spec["updateStrategy"], "rollingUpdate", json!({}));
        default_field(
            &mut spec["updateStrategy"]["rollingUpdate"],
            "partition",
            json!(0),
        );
    }
    default_field(spec, "revisionHistoryLimit", json!(10));
    default_field(
        spec,
        "persistentVolumeClaimRetentionPolicy",
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
    );
    // The claim templates get a claim's defaults (the generated defaulter calls
    // SetDefaults_PersistentVolumeClaim and ..._PersistentVolumeClaimSpec on each).
    for claim in spec
        .get_mut("volumeClaimTemplates")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter(|c| c.is_object())
    {
        if claim.get("spec").is_some_and(Value::is_object) {
            default_field(&mut claim["spec"], "volumeMode", json!("Filesystem"));
        }
        default_field(claim, "status", json!({}));
        if claim["status"].is_object() && str_at(claim, "/status/phase").is_empty() {
            claim["status"]["phase"] = json!("Pending");
        }
    }
    default_template(spec);
}

/// `ValidateStatefulSetUpdate`: the spec fields an update may change; the rest — the claim
/// templates, the service name, the pod management policy — are fixed once created.
const MUTABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

const SPEC_FORBIDDEN: &str = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

/// The spec less what an update may change (and less nulls, Go's zero values).
fn fixed_spec(o: &Value) -> Value {
    let mut spec = o.get("spec").cloned().unwrap_or_default();
    if let Some(m) = spec.as_object_mut() {
        m.retain(|k, v| !MUTABLE.contains(&k.as_str()) && !v.is_null());
    }
    spec
}

fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    nonnegative(o, "/spec/replicas", "spec.replicas", &mut out);
    validate_selector_and_template(o, "statefulset", true, &mut out);
    let policy = str_at(o, "/spec/podManagementPolicy");
    if !["OrderedReady", "Parallel"].contains(&policy) {
        out.push(Cause::not_supported(
            "spec.podManagementPolicy",
            &json!(policy),
            &["OrderedReady", "Parallel"],
        ));
    }
    out
}

impl Strategy for StatefulSet {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "StatefulSet"
    }
    kind_type!(StatefulSetType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Ready", "string", 0, "Number of the pod with ready state"),
            column("Age", "string", 0, AGE_DESCRIPTION),
            containers_column(),
            images_column(),
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
            json!(age_of(o)),
            json!(containers),
            json!(images),
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
        obj["status"] = json!({"replicas": 0, "availableReplicas": 0});
        validate_into_trace(GROUP, "StatefulSet", obj, trace, validate(obj))
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut out = validate(next);
        validate_selector_unchanged(next, current, &mut out);
        // Defaulted as a read from storage is upstream: an object stored before a default
        // existed compares with one.
        let mut current = current.clone();
        default(&mut current);
        if fixed_spec(next) != fixed_spec(&current) {
            out.push(Cause::forbidden("spec", SPEC_FORBIDDEN));
        }
        out
    }
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::workload_on_create(obj, false, "/spec/template", "spec.template")
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        pod_warnings::workload_on_update(next, current, "/spec/template", "spec.template")
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

//! core/v1 Namespace (upstream `pkg/registry/core/namespace`): the name label, the
//! `kubernetes` finalizer and phase Active on create.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, field_at, kind_type, str_at, validate_into_trace,
};
use crate::apiserver::registry::validation_meta;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct Namespace;

impl Strategy for Namespace {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Namespace"
    }
    kind_type!(k8s_openapi::api::core::v1::Namespace);
    fn columns(&self) -> Vec<Value> {
        vec![
            column(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            column("Status", "string", 0, "The status of the namespace"),
            column(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/status/phase")),
            json!(age_of(o)),
        ]
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        (field == "status.phase").then(|| field_at(o, "/status/phase"))
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        name_label(obj);
        // The client's finalizers stay; the namespace controller's is added after them.
        let mut finalizers = spec_finalizers(obj);
        if !finalizers.iter().any(|f| f == FINALIZER) {
            finalizers.push(FINALIZER.to_string());
        }
        obj["spec"] = json!({"finalizers": finalizers});
        obj["status"] = json!({"phase": "Active"});
        let causes = finalizer_causes(obj);
        validate_into_trace("", "Namespace", obj, trace, causes)
    }
    /// A namespace's finalizers change only through `finalize` (upstream's PrepareForUpdate).
    fn prepare_update(&self, next: &mut Value, current: &Value) {
        match (current.pointer("/spec/finalizers"), next.as_object_mut()) {
            (Some(f), Some(o)) => {
                let spec = o.entry("spec").or_insert_with(|| json!({}));
                if spec.is_object() {
                    spec["finalizers"] = f.clone();
                }
            }
            (None, Some(o)) => {
                if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.remove("finalizers");
                }
            }
            _ => {}
        }
    }
    /// `finalize` writes the finalizers and nothing else of the namespace, the recipe for one
    /// stuck Terminating (`kubectl replace --raw /api/v1/namespaces/<ns>/finalize -f -`).
    /// Upstream's also takes the body's metadata; here that goes through the main resource.
    fn merge_subresource(&self, sub: &str, current: &Value, incoming: &Value) -> Option<Value> {
        (sub == FINALIZE).then(|| {
            let mut next = current.clone();
            next["spec"] = json!({"finalizers": spec_finalizers(incoming)});
            next
        })
    }
    fn validate_update(&self, sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        if sub == FINALIZE {
            finalizer_causes(next)
        } else {
            Vec::new()
        }
    }
}

/// SetDefaults_Namespace: every named namespace carries its name as the
/// `kubernetes.io/metadata.name` label (left alone when `labels` is not an object: decoding
/// reports that).
pub(crate) fn name_label(obj: &mut Value) {
    let name = str_at(obj, "/metadata/name").to_string();
    let labels_ok = obj
        .pointer("/metadata/labels")
        .is_none_or(|l| l.is_object() || l.is_null());
    if !name.is_empty() && labels_ok {
        obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
    }
}

/// The subresource that writes a namespace's `spec.finalizers`.
pub(crate) const FINALIZE: &str = "finalize";

/// The finalizer kube-apiserver puts in every namespace's `spec.finalizers`.
pub(crate) const FINALIZER: &str = "kubernetes";

fn spec_finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

fn finalizer_causes(obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    for f in spec_finalizers(obj) {
        validation_meta::finalizer_name(&f, "spec.finalizers", &mut out);
    }
    out
}

//! core/v1 Namespace (upstream `pkg/registry/core/namespace`): the name label, the
//! `kubernetes` finalizer and phase Active on create.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, field_at, kind_type, str_at, validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
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
        let name = str_at(obj, "/metadata/name").to_string();
        obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
        validate_into_trace("", "Namespace", obj, trace, Vec::new())
    }
}

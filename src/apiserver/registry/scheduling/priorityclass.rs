//! scheduling.k8s.io/v1 PriorityClass (upstream `pkg/registry/scheduling/priorityclass`):
//! preemptionPolicy defaults to PreemptLowerPriority.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, kind_type, str_at, validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct PriorityClass;

impl Strategy for PriorityClass {
    fn group(&self) -> &'static str {
        "scheduling.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "PriorityClass"
    }
    kind_type!(k8s_openapi::api::scheduling::v1::PriorityClass);
    fn columns(&self) -> Vec<Value> {
        vec![
            column(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            column("Value", "integer", 0, "The value of this priority class."),
            column(
                "Global-Default",
                "boolean",
                0,
                "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
            ),
            column(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            column(
                "PreemptionPolicy",
                "string",
                0,
                "PreemptionPolicy is the Policy for preempting pods with lower priority.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(o.get("value").and_then(Value::as_i64).unwrap_or(0)),
            json!(
                o.get("globalDefault")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            json!(age_of(o)),
            json!(str_at(o, "/preemptionPolicy")),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        if obj.get("preemptionPolicy").is_none() {
            obj["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
        validate_into_trace("scheduling.k8s.io", "PriorityClass", obj, trace, Vec::new())
    }
}

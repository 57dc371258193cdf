//! apps/v1 ControllerRevision (upstream `pkg/registry/apps/controllerrevision`): an immutable
//! snapshot of a DaemonSet's or StatefulSet's template, numbered by `revision`.

use k8s_openapi::api::apps::v1::ControllerRevision as ControllerRevisionType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::deployment::GROUP;
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct ControllerRevision;

fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    if o.get("data").is_none_or(Value::is_null) {
        out.push(Cause::required("data", "data is mandatory"));
    }
    crate::apiserver::registry::apps::workload::nonnegative(o, "/revision", "revision", &mut out);
    out
}

/// The CONTROLLER cell: `<kind>.<group>/<name>` of the controlling owner, `<none>` without.
fn controller_of(o: &Value) -> String {
    o.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|refs| {
            refs.iter()
                .find(|r| r.get("controller") == Some(&json!(true)))
        })
        .map(|r| {
            let kind = str_at(r, "/kind").to_lowercase();
            let group = str_at(r, "/apiVersion")
                .split_once('/')
                .map(|(g, _)| g)
                .unwrap_or("");
            let name = str_at(r, "/name");
            if group.is_empty() {
                format!("{kind}/{name}")
            } else {
                format!("{kind}.{group}/{name}")
            }
        })
        .unwrap_or_else(|| "<none>".into())
}

impl Strategy for ControllerRevision {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "ControllerRevision"
    }
    kind_type!(ControllerRevisionType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Controller", "string", 0, "Controller of the object"),
            column(
                "Revision",
                "integer",
                0,
                "Revision indicates the revision of the state represented by Data.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(controller_of(o)),
            json!(int_at(o, "/revision")),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace(GROUP, "ControllerRevision", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut out = validate(next);
        if next.get("data") != current.get("data") {
            out.push(Cause::invalid("data", &Value::Null, "field is immutable"));
        }
        out
    }
}

//! core/v1 ResourceQuota (upstream `pkg/registry/core/resourcequota`, `printResourceQuota`):
//! created with its status already counted (`status.hard` from the spec, `status.used` from the
//! namespace), then kept current by the quota controller (`controllers/resourcequota.rs`);
//! enforced by `admission/resource_quota.rs`.

use serde_json::{Value, json};

use crate::apiserver::admission::resource_quota::{namespace_usage, render};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::registry::validation;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::scheduler::quantity::Quantity;

pub(crate) struct ResourceQuota;

fn validate(o: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (k, v) in o
        .pointer("/spec/hard")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let text = v.as_str().unwrap_or_default();
        if Quantity::parse(text).is_err() {
            causes.push(Cause::invalid(
                &format!("spec.hard[{k}]"),
                &json!(text),
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ));
        } else if validation::parse_quantity(text).is_some_and(|q| q < 0.0) {
            // `ValidateNonnegativeQuantity`: a negative limit would refuse every object.
            causes.push(Cause::invalid(
                &format!("spec.hard[{k}]"),
                &json!(text),
                "must be greater than or equal to 0",
            ));
        }
    }
    causes
}

/// The status a quota reports: its hard limits and what the namespace uses of each.
pub(crate) fn status(api: &Api, o: &Value) -> Value {
    let hard = o
        .pointer("/spec/hard")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let used = namespace_usage(api, str_at(o, "/metadata/namespace"), &hard);
    let used: serde_json::Map<String, Value> = used
        .into_iter()
        .map(|(k, v)| {
            let text = render(&k, v);
            (k, json!(text))
        })
        .collect();
    json!({"hard": hard, "used": used})
}

/// `printResourceQuota`: `resource: used/hard`, requests and limits apart.
fn cell(o: &Value, limits: bool) -> String {
    let mut parts: Vec<String> = o
        .pointer("/status/hard")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("limits.") == limits)
        .map(|(k, h)| {
            let used = o
                .pointer("/status/used")
                .and_then(|u| u.get(k))
                .and_then(Value::as_str)
                .unwrap_or("0");
            format!("{k}: {used}/{}", h.as_str().unwrap_or_default())
        })
        .collect();
    parts.sort();
    parts.join(", ")
}

impl Strategy for ResourceQuota {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "ResourceQuota"
    }
    kind_type!(k8s_openapi::api::core::v1::ResourceQuota);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Age", "string", 0, AGE_DESCRIPTION),
            column(
                "Request",
                "string",
                0,
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            column(
                "Limit",
                "string",
                0,
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(age_of(o)),
            json!(cell(o, false)),
            json!(cell(o, true)),
        ]
    }
    fn prepare_create(
        &self,
        api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace("", "ResourceQuota", obj, trace, validate(obj))?;
        obj["status"] = status(api, obj);
        Ok(())
    }
    fn validate_update(&self, sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        validate(next)
    }
}

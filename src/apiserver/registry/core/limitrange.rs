//! core/v1 LimitRange (upstream `pkg/registry/core/limitrange`, `ValidateLimitRange`): what
//! the LimitRanger admission plugin (`admission/limit_ranger.rs`) defaults and enforces.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{Strategy, kind_type, validate_into_trace};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::scheduler::quantity::Quantity;

pub(crate) struct LimitRange;

const TYPES: [&str; 3] = ["Container", "PersistentVolumeClaim", "Pod"];

fn validate(o: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let limits = o.pointer("/spec/limits").and_then(Value::as_array);
    for (i, l) in limits.into_iter().flatten().enumerate() {
        let t = l.get("type").and_then(Value::as_str).unwrap_or_default();
        if !TYPES.contains(&t) {
            causes.push(Cause::not_supported(
                &format!("spec.limits[{i}].type"),
                &json!(t),
                &TYPES,
            ));
        }
        for field in [
            "max",
            "min",
            "default",
            "defaultRequest",
            "maxLimitRequestRatio",
        ] {
            for (k, v) in l
                .get(field)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let text = v.as_str().unwrap_or_default();
                if Quantity::parse(text).is_err() {
                    causes.push(Cause::invalid(
                        &format!("spec.limits[{i}].{field}[{k}]"),
                        &json!(text),
                        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                    ));
                }
            }
        }
    }
    causes
}

/// `SetDefaults_LimitRangeItem`, for Container items: the default limit from max, the default
/// request from the default limit, else from min.
fn default(o: &mut Value) {
    let Some(items) = o.pointer_mut("/spec/limits").and_then(Value::as_array_mut) else {
        return;
    };
    for l in items {
        if l.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        let get = |l: &Value, f: &str| {
            l.get(f)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = get(l, "default");
        let mut request = get(l, "defaultRequest");
        for (k, v) in get(l, "max") {
            default.entry(k).or_insert(v);
        }
        for (k, v) in default.clone() {
            request.entry(k).or_insert(v);
        }
        for (k, v) in get(l, "min") {
            request.entry(k).or_insert(v);
        }
        l["default"] = Value::Object(default);
        l["defaultRequest"] = Value::Object(request);
    }
}

impl Strategy for LimitRange {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "LimitRange"
    }
    kind_type!(k8s_openapi::api::core::v1::LimitRange);
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
        validate_into_trace("", "LimitRange", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        validate(next)
    }
}

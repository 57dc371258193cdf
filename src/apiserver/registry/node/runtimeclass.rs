//! node.k8s.io/v1 RuntimeClass (upstream `pkg/registry/node/runtimeclass` and
//! `pkg/apis/node/validation`): which container runtime handler a pod's sandbox runs under,
//! the overhead that sandbox costs on top of the containers' requests, and where such pods may
//! be scheduled. Its pods are admitted by `admission/runtime_class.rs`; the simulated kubelets
//! know the handlers `kubelet_sandbox.rs` says.

use k8s_openapi::api::core::v1::Toleration;
use serde_json::{Value, json};

use crate::apiserver::registry::label_selector;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::registry::validation::{
    DNS1123_LABEL, is_dns1123_label, parse_quantity, validate_tolerations,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct RuntimeClass;

impl Strategy for RuntimeClass {
    fn group(&self) -> &'static str {
        "node.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "RuntimeClass"
    }
    kind_type!(k8s_openapi::api::node::v1::RuntimeClass);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Handler",
                "string",
                0,
                "Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/handler")),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace("node.k8s.io", "RuntimeClass", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut out = validate(next);
        if next.get("handler") != current.get("handler") {
            out.push(Cause::invalid(
                "handler",
                next.get("handler").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        out
    }
}

/// `ValidateRuntimeClass`: the handler a DNS label, the overhead's quantities as a container's
/// limits, the scheduling's node selector as labels and its tolerations as a pod's.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let handler = str_at(o, "/handler");
    if !is_dns1123_label(handler) {
        out.push(Cause::invalid("handler", &json!(handler), DNS1123_LABEL));
    } else if handler.len() > 63 {
        out.push(Cause::invalid(
            "handler",
            &json!(handler),
            "must be no more than 63 characters",
        ));
    }
    // Upstream reuses ValidateResourceRequirements with the podFixed list as its limits, and
    // so names the fields `overhead.limits[…]`.
    for (name, q) in o
        .pointer("/overhead/podFixed")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = format!("overhead.limits[{name}]");
        let standard = matches!(name.as_str(), "cpu" | "memory" | "ephemeral-storage")
            || name.starts_with("hugepages-");
        if !standard && !name.contains('/') {
            out.push(Cause::invalid(
                &path,
                &json!(name),
                "must be a standard resource type or fully qualified",
            ));
        }
        let text = q.as_str().map_or_else(|| q.to_string(), String::from);
        if parse_quantity(&text).is_some_and(|v| v < 0.0) {
            out.push(Cause::invalid(
                &path,
                &json!(text),
                "must be greater than or equal to 0",
            ));
        }
    }
    let node_selector = o
        .pointer("/scheduling/nodeSelector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()));
    label_selector::validate_labels(node_selector, "scheduling.nodeSelector", &mut out);
    if let Some(Ok(tolerations)) = o
        .pointer("/scheduling/tolerations")
        .map(|t| serde_json::from_value::<Vec<Toleration>>(t.clone()))
    {
        validate_tolerations(&tolerations, "scheduling.tolerations", &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(o: Value) -> Vec<String> {
        validate(&o).iter().map(|c| c.rendered()).collect()
    }

    #[test]
    fn a_runtime_class_is_checked_as_upstream() {
        assert!(messages(json!({"handler": "runsc"})).is_empty());
        assert_eq!(
            messages(json!({"handler": "Run_sc"})),
            vec![format!(
                "handler: Invalid value: \"Run_sc\": {DNS1123_LABEL}"
            )]
        );
        assert_eq!(
            messages(json!({"handler": "runsc", "overhead": {"podFixed": {"cpu": "-1", "gpu": "1"}}})),
            vec![
                "overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"
                    .to_string(),
                "overhead.limits[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified"
                    .to_string(),
            ]
        );
        assert_eq!(
            messages(json!({"handler": "runsc", "scheduling": {"tolerations": [
                {"key": "sandbox", "operator": "Exists", "tolerationSeconds": 5, "effect": "NoSchedule"}]}})),
            vec![
                "scheduling.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
                    .to_string()
            ]
        );
    }
}

//! networking.k8s.io/v1 IngressClass (upstream `pkg/registry/networking/ingressclass` and
//! `ValidateIngressClass`): a controller named by a domain-prefixed path that never changes,
//! parameters that say where they live (`scope` defaults to Cluster), and the printer
//! (NAME CONTROLLER PARAMETERS AGE).

use k8s_openapi::api::networking::v1::{IngressClass as IngressClassType, IngressClassSpec};
use serde_json::{Value, json};

use crate::apiserver::registry::formats;
use crate::apiserver::registry::networking::{GROUP, validate_typed_reference};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct IngressClass;

/// `maxLenIngressClassController`.
const MAX_CONTROLLER: usize = 250;
const SCOPES: [&str; 2] = ["Cluster", "Namespace"];

fn spec_of(o: &Value) -> Option<IngressClassSpec> {
    // A body that does not decode was refused before the strategy runs.
    serde_json::from_value::<IngressClassType>(o.clone())
        .ok()
        .map(|c| c.spec.unwrap_or_default())
}

/// `validateIngressClassSpec`.
fn validate(o: &Value) -> Vec<Cause> {
    let Some(spec) = spec_of(o) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let controller = spec.controller.as_deref().unwrap_or_default();
    if controller.is_empty() {
        out.push(Cause::required("spec.controller", ""));
    } else {
        if controller.len() > MAX_CONTROLLER {
            out.push(Cause::too_long("spec.controller", MAX_CONTROLLER));
        }
        formats::domain_prefixed_path("spec.controller", controller, &mut out);
    }
    let Some(p) = spec.parameters else {
        return out;
    };
    let f = "spec.parameters";
    let reference = (p.api_group.as_deref(), p.kind.as_str(), p.name.as_str());
    validate_typed_reference(f, reference, &mut out);
    match p.scope.as_deref() {
        None => out.push(Cause::required(&format!("{f}.scope"), "")),
        Some("Namespace") => match &p.namespace {
            None => out.push(Cause::required(
                &format!("{f}.namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => {
                for m in formats::dns1123_label(ns) {
                    out.push(Cause::invalid(&format!("{f}.namespace"), &json!(ns), &m));
                }
            }
        },
        Some("Cluster") => {
            if p.namespace.is_some() {
                out.push(Cause::forbidden(
                    &format!("{f}.namespace"),
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        Some(other) => out.push(Cause::not_supported(
            &format!("{f}.scope"),
            &json!(other),
            &SCOPES,
        )),
    }
    out
}

/// printers.go `printIngressClass`: `Kind[.apiGroup]/name`, `<none>` without parameters.
fn parameters(o: &Value) -> String {
    let Some(p) = o.pointer("/spec/parameters").filter(|p| p.is_object()) else {
        return "<none>".into();
    };
    let mut out = str_at(p, "/kind").to_string();
    if let Some(g) = p.get("apiGroup").and_then(Value::as_str) {
        out = format!("{out}.{g}");
    }
    format!("{out}/{}", str_at(p, "/name"))
}

impl Strategy for IngressClass {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "IngressClass"
    }
    kind_type!(IngressClassType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Controller",
                "string",
                0,
                "Controller that is responsible for handling this class",
            ),
            column(
                "Parameters",
                "string",
                0,
                "A reference to a resource with additional parameters",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/spec/controller")),
            json!(parameters(o)),
            json!(age_of(o)),
        ]
    }
    /// `SetDefaults_IngressClass`: parameters without a scope are the cluster's.
    fn defaults(&self, obj: &mut Value) {
        if let Some(p) = obj
            .pointer_mut("/spec/parameters")
            .and_then(Value::as_object_mut)
            && p.get("scope").is_none_or(Value::is_null)
        {
            p.insert("scope".into(), json!("Cluster"));
        }
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        self.defaults(obj);
        validate_into_trace(GROUP, "IngressClass", obj, trace, validate(obj))
    }
    /// `ValidateIngressClassUpdate`: the controller is immutable, then the whole class again.
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut out = Vec::new();
        let controller = next.pointer("/spec/controller").cloned();
        if controller != current.pointer("/spec/controller").cloned() {
            out.push(Cause::invalid(
                "spec.controller",
                &controller.unwrap_or(json!("")),
                "field is immutable",
            ));
        }
        out.extend(validate(next));
        out
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(spec: Value) -> Vec<String> {
        let mut o = json!({"metadata": {"name": "nginx"}, "spec": spec});
        IngressClass.defaults(&mut o);
        validate(&o).iter().map(Cause::rendered).collect()
    }

    #[test]
    fn upstreams_table() {
        assert!(causes(json!({"controller": "k8s.io/ingress-nginx"})).is_empty());
        assert!(
            causes(json!({"controller": "example.com/c", "parameters": {"apiGroup": "example.com", "kind": "Params", "name": "p"}}))
                .is_empty(),
            "scope defaults to Cluster"
        );
        let cases = [
            (json!({}), "spec.controller: Required value"),
            (
                json!({"controller": "nginx"}),
                r#"spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")"#,
            ),
            (
                json!({"controller": "Example.com/c"}),
                r#"spec.controller: Invalid value: "Example.com": a lowercase RFC 1123 subdomain"#,
            ),
            (
                json!({"controller": "example.com/a b"}),
                r#"spec.controller: Invalid value: "a b": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')"#,
            ),
            (
                json!({"controller": format!("example.com/{}", "a".repeat(250))}),
                "spec.controller: Too long: may not be more than 250 bytes",
            ),
            (
                json!({"controller": "example.com/c", "parameters": {"kind": "", "name": "p"}}),
                "spec.parameters.kind: Required value",
            ),
            (
                json!({"controller": "example.com/c", "parameters": {"kind": "K", "name": "p", "scope": "Namespace"}}),
                "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
            ),
            (
                json!({"controller": "example.com/c", "parameters": {"kind": "K", "name": "p", "scope": "Cluster", "namespace": "x"}}),
                "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'",
            ),
            (
                json!({"controller": "example.com/c", "parameters": {"kind": "K", "name": "p", "scope": "Node"}}),
                r#"spec.parameters.scope: Unsupported value: "Node": supported values: "Cluster", "Namespace""#,
            ),
        ];
        for (spec, want) in cases {
            let got = causes(spec.clone());
            assert!(
                got.first().is_some_and(|c| c.starts_with(want)),
                "{spec}: {got:?}"
            );
        }
    }

    #[test]
    fn the_controller_is_immutable() {
        let old = json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/a"}});
        let new = json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/b"}});
        let got: Vec<String> = IngressClass
            .validate_update("", &new, &old)
            .iter()
            .map(Cause::rendered)
            .collect();
        assert_eq!(
            got,
            [r#"spec.controller: Invalid value: "example.com/b": field is immutable"#]
        );
        assert!(IngressClass.validate_update("", &old, &old).is_empty());
    }

    #[test]
    fn the_printer_is_upstreams() {
        let o = json!({"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}});
        assert_eq!(
            IngressClass.cells(&o)[..3],
            [
                json!("nginx"),
                json!("k8s.io/ingress-nginx"),
                json!("IngressParameters.k8s.example.com/external-lb")
            ]
        );
        let bare = json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/c"}});
        assert_eq!(IngressClass.cells(&bare)[2], json!("<none>"));
    }
}

//! storage.k8s.io/v1 StorageClass (upstream `pkg/registry/storage/storageclass`,
//! `ValidateStorageClass`, `printStorageClass`): a provisioner named once and for good, the
//! reclaim policy and binding mode its volumes get (Delete and Immediate by default), and the
//! `(default)` mark of the class a claim without one is given.

use serde_json::{Value, json};

use crate::apiserver::registry::formats;
use crate::apiserver::registry::storage::GROUP;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::scheduler::plugins::volume_binding::WAIT_FOR_FIRST_CONSUMER;

pub(crate) struct StorageClass;

/// `storageclass.kubernetes.io/is-default-class`: the class the DefaultStorageClass admission
/// plugin gives a claim that names none.
pub(crate) const DEFAULT_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", WAIT_FOR_FIRST_CONSUMER];

/// Whether the class is marked as the default (the annotation, case-insensitively "true").
pub(crate) fn is_default(o: &Value) -> bool {
    o.pointer("/metadata/annotations")
        .and_then(|a| a.get(DEFAULT_ANNOTATION))
        .and_then(Value::as_str)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// `ValidateStorageClass`.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let provisioner = str_at(o, "/provisioner");
    if provisioner.is_empty() {
        out.push(Cause::required("provisioner", ""));
    } else {
        let lower = provisioner.to_lowercase();
        for m in formats::qualified_name(&lower) {
            out.push(Cause::invalid("provisioner", &json!(lower), &m));
        }
    }
    let policy = str_at(o, "/reclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        out.push(Cause::not_supported(
            "reclaimPolicy",
            &json!(policy),
            &RECLAIM_POLICIES,
        ));
    }
    match o.get("volumeBindingMode").and_then(Value::as_str) {
        None => out.push(Cause::required("volumeBindingMode", "")),
        Some(m) if !BINDING_MODES.contains(&m) => out.push(Cause::not_supported(
            "volumeBindingMode",
            &json!(m),
            &BINDING_MODES,
        )),
        Some(_) => {}
    }
    out
}

impl Strategy for StorageClass {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "StorageClass"
    }
    kind_type!(k8s_openapi::api::storage::v1::StorageClass);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Provisioner",
                "string",
                0,
                "provisioner indicates the type of the provisioner.",
            ),
            column(
                "ReclaimPolicy",
                "string",
                0,
                "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
            ),
            column(
                "VolumeBindingMode",
                "string",
                0,
                "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
            ),
            column(
                "AllowVolumeExpansion",
                "string",
                0,
                "allowVolumeExpansion shows whether the storage class allow volume expand.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    /// `printStorageClass`: the name marked `(default)`, and false for an unset expansion.
    fn cells(&self, o: &Value) -> Vec<Value> {
        let mut name = str_at(o, "/metadata/name").to_string();
        if is_default(o) {
            name.push_str(" (default)");
        }
        let or = |p: &str, d: &str| match str_at(o, p) {
            "" => d.to_string(),
            s => s.to_string(),
        };
        let expansion = o
            .get("allowVolumeExpansion")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        vec![
            json!(name),
            json!(str_at(o, "/provisioner")),
            json!(or("/reclaimPolicy", "Delete")),
            json!(or("/volumeBindingMode", "Immediate")),
            json!(expansion.to_string()),
            json!(age_of(o)),
        ]
    }
    /// `SetDefaults_StorageClass`.
    fn defaults(&self, obj: &mut Value) {
        let Some(o) = obj.as_object_mut() else {
            return;
        };
        for (field, default) in [
            ("reclaimPolicy", "Delete"),
            ("volumeBindingMode", "Immediate"),
        ] {
            if o.get(field).is_none_or(Value::is_null) {
                o.insert(field.into(), json!(default));
            }
        }
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        self.defaults(obj);
        validate_into_trace(GROUP, "StorageClass", obj, trace, validate(obj))
    }
    /// `ValidateStorageClassUpdate`: parameters, provisioner, reclaim policy and binding mode
    /// are fixed once the class exists.
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut out = validate(next);
        let same = |f: &str| next.get(f) == current.get(f);
        for field in ["parameters", "provisioner", "reclaimPolicy"] {
            if !same(field) {
                let msg = format!("updates to {field} are forbidden.");
                out.push(Cause::forbidden(field, &msg));
            }
        }
        if !same("volumeBindingMode") {
            out.push(Cause::invalid(
                "volumeBindingMode",
                next.get("volumeBindingMode").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(mut o: Value) -> Vec<String> {
        StorageClass.defaults(&mut o);
        validate(&o).iter().map(Cause::rendered).collect()
    }

    #[test]
    fn upstreams_table() {
        assert!(
            causes(json!({"metadata": {"name": "fast"}, "provisioner": "ebs.csi.aws.com"}))
                .is_empty()
        );
        assert_eq!(
            causes(json!({"metadata": {"name": "x"}})),
            ["provisioner: Required value"]
        );
        assert_eq!(
            causes(json!({"provisioner": "a/b/c"}))[0],
            r#"provisioner: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"#
        );
        assert_eq!(
            causes(
                json!({"provisioner": "p.io/x", "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"})
            ),
            [
                r#"reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain""#,
                r#"volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer""#,
            ]
        );
    }

    #[test]
    fn what_a_class_is_made_with_is_fixed() {
        let old = json!({"provisioner": "p.io/x", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
        let mut new = old.clone();
        new["provisioner"] = json!("p.io/y");
        new["volumeBindingMode"] = json!("WaitForFirstConsumer");
        let got: Vec<String> = StorageClass
            .validate_update("", &new, &old)
            .iter()
            .map(Cause::rendered)
            .collect();
        assert_eq!(
            got,
            [
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                r#"volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable"#,
            ]
        );
        let mut labelled = old.clone();
        labelled["metadata"] = json!({"labels": {"a": "b"}});
        assert!(StorageClass.validate_update("", &labelled, &old).is_empty());
    }

    #[test]
    fn the_printer_marks_the_default() {
        let o = json!({"metadata": {"name": "standard", "annotations": {DEFAULT_ANNOTATION: "true"}},
            "provisioner": "p.io/x", "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"});
        assert_eq!(
            StorageClass.cells(&o)[..5],
            [
                json!("standard (default)"),
                json!("p.io/x"),
                json!("Retain"),
                json!("WaitForFirstConsumer"),
                json!("false")
            ]
        );
    }
}

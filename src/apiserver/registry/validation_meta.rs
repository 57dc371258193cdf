//! ObjectMeta's rules beyond the name (upstream apimachinery's `ValidateObjectMetaAccessor` and
//! `ValidateObjectMetaAccessorUpdate`, then `pkg/apis/core/validation`'s finalizer-name check):
//! label keys and values, annotation keys and their total size, owner references, finalizer
//! names. Without them a label `bad key!`, an owner reference naming nothing or a finalizer
//! `bad name!` were stored as sent, where kube-apiserver answers 422.
//!
//! Two rules report owner references whole (an Event as an owner; two owner references with
//! `controller: true`). kube-apiserver 1.33 prints such a value as a Go struct literal with
//! pointer addresses (`Controller:(*bool)(0xc00…)`), which no other server can reproduce; they
//! are printed here as JSON in the struct's field order, as newer kube-apiservers print them.
//!
//! Not modelled: `managedFields` sent by a client (the server writes its own).

use serde_json::{Value, json};

use crate::apiserver::registry::{formats, label_selector};
use crate::apiserver::request::status::Cause;

/// `TotalAnnotationSizeLimitB`: keys and values of all annotations together.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// The finalizers that need no domain prefix (`kubernetes`, `orphan`, `foregroundDeletion`).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// What a create's metadata must hold besides its name, in upstream's order.
pub(crate) fn on_create(meta: Option<&Value>, out: &mut Vec<Cause>) {
    common(meta, out);
    let finalizers = strings(meta.and_then(|m| m.get("finalizers")));
    for f in &finalizers {
        for m in formats::qualified_name(f) {
            out.push(Cause::invalid("metadata.finalizers", &json!(f), &m));
        }
    }
    if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
        let shown: Vec<String> = finalizers.iter().map(|f| format!("{f:?}")).collect();
        out.push(Cause {
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: []string{{{}}}: finalizer orphan and foregroundDeletion cannot be both set",
                shown.join(", ")
            ),
            field: "metadata.finalizers".into(),
        });
    }
    kube_finalizer_names(meta, out);
}

/// Labels, annotations and owner references, checked on create and on every update.
pub(crate) fn common(meta: Option<&Value>, out: &mut Vec<Cause>) {
    labels_and_annotations(meta, "metadata", out);
    let refs = meta
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array);
    let mut first_controller: Option<String> = None;
    for r in refs.into_iter().flatten() {
        owner_reference(r, out);
        if r.get("controller").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let current = format!("{}/{}", s("kind"), s("name"));
        match &first_controller {
            Some(first) => {
                let all: Vec<String> = refs.into_iter().flatten().map(owner_json).collect();
                out.push(Cause {
                    reason: "FieldValueInvalid",
                    message: format!(
                        "Invalid value: [{}]: Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}",
                        all.join(",")
                    ),
                    field: "metadata.ownerReferences".into(),
                });
            }
            None => first_controller = Some(current),
        }
    }
}

/// An owner reference as JSON in `metav1.OwnerReference`'s field order.
fn owner_json(r: &Value) -> String {
    let mut fields = Vec::new();
    for key in ["apiVersion", "kind", "name", "uid"] {
        let v = r.get(key).and_then(Value::as_str).unwrap_or_default();
        fields.push(format!("{key:?}:{}", json!(v)));
    }
    for key in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = r.get(key).and_then(Value::as_bool) {
            fields.push(format!("{key:?}:{b}"));
        }
    }
    format!("{{{}}}", fields.join(","))
}

/// A pod template's labels and annotations (`ValidatePodTemplateSpec`), reported at
/// `<path>.labels` and `<path>.annotations`: `spec.template.labels`, as upstream names them.
pub(crate) fn template(template: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    labels_and_annotations(template.and_then(|t| t.get("metadata")), path, out);
}

fn labels_and_annotations(meta: Option<&Value>, path: &str, out: &mut Vec<Cause>) {
    let map = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_object);
    if let Some(labels) = map("labels") {
        let pairs = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()));
        label_selector::validate_labels(pairs, &format!("{path}.labels"), out);
    }
    if let Some(annotations) = map("annotations") {
        let field = format!("{path}.annotations");
        let mut size = 0;
        for (k, v) in annotations {
            // Case does not matter in an annotation's key.
            for m in formats::qualified_name(&k.to_lowercase()) {
                out.push(Cause::invalid(&field, &json!(k), &m));
            }
            size += k.len() + v.as_str().map_or(0, str::len);
        }
        if size > ANNOTATIONS_MAX_BYTES {
            out.push(Cause::too_long(&field, ANNOTATIONS_MAX_BYTES));
        }
    }
}

fn owner_reference(r: &Value, out: &mut Vec<Cause>) {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
    let path = "metadata.ownerReferences";
    // schema.FromAPIVersionAndKind: `v1` or `group/v1`; anything else parses to no version.
    let version = match s("apiVersion").split('/').collect::<Vec<_>>().as_slice() {
        [v] | [_, v] => *v,
        _ => "",
    };
    let checks = [
        ("apiVersion", version, "version must not be empty"),
        ("kind", s("kind"), "kind must not be empty"),
        ("name", s("name"), "name must not be empty"),
        ("uid", s("uid"), "uid must not be empty"),
    ];
    for (field, value, detail) in checks {
        if value.is_empty() {
            let sent = s(field);
            out.push(Cause::invalid(
                &format!("{path}.{field}"),
                &json!(sent),
                detail,
            ));
        }
    }
    // `BannedOwners`: a core v1 Event may own nothing (events.k8s.io's may).
    if s("apiVersion") == "v1" && s("kind") == "Event" {
        out.push(Cause {
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {}: /v1, Kind=Event is disallowed from being an owner",
                owner_json(r)
            ),
            field: path.into(),
        });
    }
}

/// Core's check on every built-in kind's create and update: a finalizer without a domain
/// prefix must be one of the standard three.
pub(crate) fn kube_finalizer_names(meta: Option<&Value>, out: &mut Vec<Cause>) {
    let finalizers = strings(meta.and_then(|m| m.get("finalizers")));
    for (i, f) in finalizers.iter().enumerate() {
        if !f.contains('/') && !STANDARD_FINALIZERS.contains(f) {
            out.push(Cause::invalid(
                &format!("metadata.finalizers[{i}]"),
                &json!(f),
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
}

/// A namespace's `spec.finalizers` entry (core's `validateFinalizerName`, reported at `path`
/// without an index, as upstream).
pub(crate) fn finalizer_name(f: &str, path: &str, out: &mut Vec<Cause>) {
    for m in formats::qualified_name(f) {
        out.push(Cause::invalid(path, &json!(f), &m));
    }
    if !f.contains('/') && !STANDARD_FINALIZERS.contains(&f) {
        out.push(Cause::invalid(
            path,
            &json!(f),
            "name is neither a standard finalizer name nor is it fully qualified",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(meta: Value) -> Vec<String> {
        let mut out = Vec::new();
        on_create(Some(&meta), &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    #[test]
    fn labels_annotations_owners_and_finalizers_are_checked_as_upstream() {
        let got = said(json!({
            "labels": {"bad key!": "v", "ok": "bad value!"},
            "annotations": {"Example.COM/Mixed-Case": "fine", "a b": "x"},
            "ownerReferences": [{"apiVersion": "apps/", "kind": "ReplicaSet", "name": "", "uid": "u"}],
            "finalizers": ["bad name!", "plain", "orphan", "foregroundDeletion"],
        }));
        let qualified = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        assert_eq!(
            got,
            vec![
                format!("metadata.labels: Invalid value: \"bad key!\": {qualified}"),
                "metadata.labels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string(),
                format!("metadata.annotations: Invalid value: \"a b\": {qualified}"),
                "metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty".to_string(),
                "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty".to_string(),
                format!("metadata.finalizers: Invalid value: \"bad name!\": {qualified}"),
                "metadata.finalizers: Invalid value: []string{\"bad name!\", \"plain\", \"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set".to_string(),
                "metadata.finalizers[0]: Invalid value: \"bad name!\": name is neither a standard finalizer name nor is it fully qualified".to_string(),
                "metadata.finalizers[1]: Invalid value: \"plain\": name is neither a standard finalizer name nor is it fully qualified".to_string(),
            ]
        );
    }

    #[test]
    fn what_kubectl_and_the_controllers_send_passes() {
        assert!(
            said(json!({
                "labels": {"app.kubernetes.io/name": "web", "empty": ""},
                "annotations": {"deployment.kubernetes.io/revision": "1"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u"}],
                "finalizers": ["kubernetes.io/pvc-protection", "foregroundDeletion"],
            }))
            .is_empty()
        );
        assert!(said(json!({})).is_empty());
    }

    #[test]
    fn an_event_owns_nothing_and_one_owner_at_most_is_the_controller() {
        let event = json!({"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u1"});
        assert_eq!(
            said(json!({"ownerReferences": [event]})),
            vec![
                "metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u1\"}: /v1, Kind=Event is disallowed from being an owner"
            ]
        );
        let events_k8s_io =
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "name": "e", "uid": "u1"});
        assert!(said(json!({"ownerReferences": [events_k8s_io]})).is_empty());

        let owner = |name: &str, controller: Option<bool>| {
            let mut r = json!({"uid": format!("u-{name}"), "name": name, "kind": "ReplicaSet", "apiVersion": "apps/v1"});
            if let Some(c) = controller {
                r["controller"] = json!(c);
            }
            r
        };
        let refs = json!([
            owner("a", Some(true)),
            owner("b", None),
            owner("c", Some(false)),
            owner("d", Some(true)),
            owner("e", Some(true))
        ]);
        let got = said(json!({"ownerReferences": refs}));
        let value = r#"[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"u-a","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"u-b"},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"c","uid":"u-c","controller":false},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"d","uid":"u-d","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"e","uid":"u-e","controller":true}]"#;
        assert_eq!(
            got,
            vec![
                format!(
                    "metadata.ownerReferences: Invalid value: {value}: Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and ReplicaSet/d"
                ),
                format!(
                    "metadata.ownerReferences: Invalid value: {value}: Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and ReplicaSet/e"
                ),
            ]
        );
        let one = json!([owner("a", Some(true)), owner("b", Some(false))]);
        assert!(said(json!({"ownerReferences": one})).is_empty());
    }

    #[test]
    fn a_templates_labels_are_reported_where_upstream_reports_them() {
        let mut out = Vec::new();
        let t = json!({"metadata": {"labels": {"app": "-web"}, "annotations": {"ok/x": "1"}}});
        template(Some(&t), "spec.template", &mut out);
        let said: Vec<String> = out.iter().map(Cause::rendered).collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("spec.template.labels: Invalid value: \"-web\": a valid label"),
            "{said:?}"
        );
    }

    #[test]
    fn annotations_over_256_kib_are_too_long() {
        let big = "x".repeat(ANNOTATIONS_MAX_BYTES);
        assert_eq!(
            said(json!({"annotations": {"k": big}})),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}

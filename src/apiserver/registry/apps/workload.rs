//! What the apps/v1 workload kinds share (upstream `pkg/apis/apps/validation` and
//! `pkg/apis/apps/v1/defaults.go`): the pod template's defaults, the selector and template
//! checks with upstream's causes, label selectors as Go prints and matches them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::apiserver::registry::defaults;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, age_of, column, str_at,
};
use crate::apiserver::registry::validation;
use crate::apiserver::registry::validation_meta;
use crate::apiserver::request::status::Cause;
use crate::apiserver::util::At;

/// Set `obj[key]` to `v` unless present (and not null).
pub(crate) fn default_field(obj: &mut Value, key: &str, v: Value) {
    if obj.get(key).is_none_or(Value::is_null) && obj.is_object() {
        obj[key] = v;
    }
}

/// The pod template gets a pod spec's defaults (upstream defaults the embedded PodTemplateSpec
/// with the same functions), without the pod-only ones: a template's limits do not become its
/// requests, nor is enableServiceLinks set; each pod created from it gets those.
pub(crate) fn default_template(spec: &mut Value) {
    let Some(t) = spec.get_mut("template") else {
        return;
    };
    let pod = json!({"metadata": t.get("metadata").cloned().unwrap_or(json!({})),
                     "spec": t.get("spec").cloned().unwrap_or(json!({}))});
    let Ok(mut pod) = serde_json::from_value::<Pod>(pod) else {
        return; // validation reports what is wrong with it
    };
    defaults::default_pod_template(&mut pod);
    // Through the typed ObjectMeta too: a `creationTimestamp: null` (kubectl's rollback sends
    // one) is the zero value upstream compares templates with, so it is not kept.
    if let Ok(Value::Object(mut m)) = serde_json::to_value(&pod) {
        for k in ["metadata", "spec"] {
            if let Some(v) = m.remove(k) {
                t[k] = v;
            }
        }
    }
}

/// Go's `%#v` of a `map[string]string`, as upstream's causes print template labels.
pub(crate) fn go_map(m: Option<&Value>) -> String {
    match m.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            let kv: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{k:?}:{:?}", v.as_str().unwrap_or_default()))
                .collect();
            format!("map[string]string{{{}}}", kv.join(", "))
        }
    }
}

/// Go's `%#v` of a `v1.LabelSelector` (the value field errors print for a selector).
pub(crate) fn go_selector(sel: &Value) -> String {
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|r| {
                    let values = match r.get("values").and_then(Value::as_array) {
                        None => "[]string(nil)".to_string(),
                        Some(vs) => format!(
                            "[]string{{{}}}",
                            vs.iter()
                                .map(|v| format!("{:?}", v.as_str().unwrap_or_default()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
                        str_of(r, "key"),
                        str_of(r, "operator")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{exprs}}}",
        go_map(sel.get("matchLabels"))
    )
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn invalid_raw(field: &str, rendered: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {rendered}: {detail}"),
        field: field.to_string(),
    }
}

/// The pods an object picks, as a `metav1.LabelSelector`. The core/v1 kinds (a
/// ReplicationController, a Service) hold a plain map (`labels.SelectorFromSet`); the kinds of
/// the named groups (apps, batch, policy) a LabelSelector already.
pub(crate) fn label_selector(o: &Value) -> Option<Cow<'_, Value>> {
    let sel = o.at("/spec/selector").filter(|s| !s.is_null())?;
    Some(
        if o.get("apiVersion").and_then(Value::as_str) == Some("v1") {
            Cow::Owned(json!({ "matchLabels": sel }))
        } else {
            Cow::Borrowed(sel)
        },
    )
}

/// Whether a `metav1.LabelSelector` matches `labels` (upstream `LabelSelectorAsSelector`):
/// an empty selector matches everything; `None` (no selector) matches nothing.
pub(crate) fn selector_matches(sel: Option<&Value>, labels: Option<&Value>) -> bool {
    let Some(sel) = sel.filter(|s| s.is_object()) else {
        return false;
    };
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    let all_labels = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    all_labels
        && sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .is_none_or(|a| {
                a.iter().all(|r| {
                    let key = str_of(r, "key");
                    let values: Vec<&str> = r
                        .get("values")
                        .and_then(Value::as_array)
                        .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    match str_of(r, "operator") {
                        "In" => label(key).is_some_and(|v| values.contains(&v)),
                        "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                        "Exists" => label(key).is_some(),
                        "DoesNotExist" => label(key).is_none(),
                        _ => false,
                    }
                })
            })
}

/// `metav1.FormatLabelSelector`: `app=web,tier in (a,b)`, `<none>` when empty.
pub(crate) fn format_selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel else {
        return "<none>".into();
    };
    let mut parts: Vec<String> = sel
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m| {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            sorted
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    for r in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = str_of(r, "key");
        let values: Vec<&str> = r
            .get("values")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        parts.push(match str_of(r, "operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            op => format!("{key} {op}"),
        });
    }
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

/// `labels.FormatLabels` of a plain map (a nodeSelector): `k=v,…`, `<none>` when empty.
pub(crate) fn format_labels(m: Option<&Value>) -> String {
    format_selector(m.map(|m| json!({"matchLabels": m})).as_ref())
}

/// The wide CONTAINERS column every kind with a pod template prints (upstream's printers.go).
pub(crate) fn containers_column() -> Value {
    column(
        "Containers",
        "string",
        1,
        "Names of each container in the template.",
    )
}

/// The wide IMAGES column beside it.
pub(crate) fn images_column() -> Value {
    column(
        "Images",
        "string",
        1,
        "Images referenced by each container in the template.",
    )
}

/// The Table of a kind that keeps replicas of a template (ReplicaSet, ReplicationController):
/// upstream's printers give both these columns, each with its kind's field descriptions.
pub(crate) fn replicas_columns(
    desired: &str,
    current: &str,
    ready: &str,
    selector: &str,
) -> Vec<Value> {
    vec![
        column("Name", "string", 0, NAME_DESCRIPTION),
        column("Desired", "integer", 0, desired),
        column("Current", "integer", 0, current),
        column("Ready", "integer", 0, ready),
        column("Age", "string", 0, AGE_DESCRIPTION),
        containers_column(),
        images_column(),
        column("Selector", "string", 1, selector),
    ]
}

/// A row of [`replicas_columns`], the selector printed as the kind prints it.
pub(crate) fn replicas_cells(o: &Value, selector: String) -> Vec<Value> {
    let (containers, images) = containers_and_images(o);
    vec![
        json!(str_at(o, "/metadata/name")),
        json!(int_at(o, "/spec/replicas")),
        json!(int_at(o, "/status/replicas")),
        json!(int_at(o, "/status/readyReplicas")),
        json!(age_of(o)),
        json!(containers),
        json!(images),
        json!(selector),
    ]
}

/// The template's container names and images, comma-joined (the wide CONTAINERS/IMAGES cells).
pub(crate) fn containers_and_images(o: &Value) -> (String, String) {
    let cs = o
        .at("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = cs.iter().map(|c| str_of(c, "name")).collect();
    let images: Vec<&str> = cs.iter().map(|c| str_of(c, "image")).collect();
    (names.join(","), images.join(","))
}

/// An int64 at `pointer`, 0 when absent (status counts are omitempty).
pub(crate) fn int_at(o: &Value, pointer: &str) -> i64 {
    o.at(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// `ValidateNonnegativeField`.
pub(crate) fn nonnegative(o: &Value, pointer: &str, field: &str, out: &mut Vec<Cause>) {
    if let Some(n) = o.at(pointer).and_then(Value::as_i64)
        && n < 0
    {
        out.push(Cause::invalid(
            field,
            &json!(n),
            "must be greater than or equal to 0",
        ));
    }
}

/// The selector and template checks every workload spec makes (upstream
/// `ValidatePodTemplateSpecForReplicaSet` and its siblings): the selector is required and not
/// empty, matches the template's labels, and the template is a valid pod that restarts
/// `Always`. `what` names the kind in the empty-selector cause (`deployment`, `daemonset`, …).
pub(crate) fn validate_selector_and_template(
    o: &Value,
    what: &str,
    required: bool,
    out: &mut Vec<Cause>,
) {
    let sel = o.at("/spec/selector").filter(|s| !s.is_null());
    match sel {
        None if required => out.push(Cause::required("spec.selector", "")),
        None => {}
        Some(s) => {
            let n = |k: &str| {
                s.get(k).and_then(Value::as_object).map_or(0, |m| m.len())
                    + s.get(k).and_then(Value::as_array).map_or(0, Vec::len)
            };
            if n("matchLabels") + n("matchExpressions") == 0 {
                out.push(invalid_raw(
                    "spec.selector",
                    &go_selector(s),
                    &format!("empty selector is invalid for {what}"),
                ));
            }
        }
    }
    let kind = if what == "statefulset" {
        "StatefulSet"
    } else {
        "ReplicaSet"
    };
    validate_template(o, sel, kind, out);
}

/// The template checks of `validate_selector_and_template`: present, labelled as `sel` picks
/// (unless `sel` is empty), a valid pod spec (but a StatefulSet's) that restarts `Always`, no
/// activeDeadlineSeconds (its
/// cause names `kind`, as upstream's `ValidatePodTemplateSpecFor<kind>` does).
pub(crate) fn validate_template(o: &Value, sel: Option<&Value>, kind: &str, out: &mut Vec<Cause>) {
    let Some(template) = o.at("/spec/template").filter(|t| t.is_object()) else {
        out.push(Cause::required("spec.template", ""));
        return;
    };
    let labels = template.at("/metadata/labels");
    let empty = sel.is_some_and(|s| {
        s.as_object().is_some_and(|m| {
            m.values().all(|v| {
                v.as_object().is_some_and(|x| x.is_empty())
                    || v.as_array().is_some_and(Vec::is_empty)
            })
        })
    });
    if !empty && !selector_matches(sel, labels) {
        out.push(invalid_raw(
            "spec.template.metadata.labels",
            &go_map(labels),
            "`selector` does not match template `labels`",
        ));
    }
    validation_meta::template(Some(template), "spec.template", out);
    // Upstream leaves a StatefulSet's pod spec unchecked (`ValidatePodTemplateSpecForStatefulSet`):
    // its mounts name volumeClaimTemplates, not volumes, and its pods are checked when made.
    if kind != "StatefulSet" {
        template_pod_spec(template, out);
    }
    let rp = template
        .at("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("Always");
    if rp != "Always" {
        out.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            &json!(rp),
            &["Always"],
        ));
    }
    if template.at("/spec/activeDeadlineSeconds").is_some() {
        out.push(Cause::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

/// `ValidatePodSpec` of the template, with its causes under `spec.template.spec`.
fn template_pod_spec(template: &Value, out: &mut Vec<Cause>) {
    let pod = json!({"metadata": {"name": "template"}, "spec": template.get("spec").cloned().unwrap_or(json!({}))});
    match serde_json::from_value::<Pod>(pod) {
        Ok(p) => {
            for mut c in validation::validate_pod(&p) {
                if let Some(rest) = c.field.strip_prefix("spec.") {
                    c.field = format!("spec.template.spec.{rest}");
                }
                if c.field != "spec.template.spec.restartPolicy" {
                    out.push(c);
                }
            }
        }
        Err(e) => out.push(Cause::invalid(
            "spec.template.spec",
            &Value::Null,
            &e.to_string(),
        )),
    }
}

/// apps/v1 selectors are immutable (`ValidateImmutableField` on spec.selector).
pub(crate) fn validate_selector_unchanged(next: &Value, cur: &Value, out: &mut Vec<Cause>) {
    let n = next.at("/spec/selector");
    if n != cur.at("/spec/selector") {
        let rendered = n.map_or_else(|| "null".to_string(), go_selector);
        out.push(invalid_raw(
            "spec.selector",
            &rendered,
            "field is immutable",
        ));
    }
}

/// Resolve an IntOrString (`3`, `"25%"`) against `total`, rounding up or down
/// (upstream `intstr.GetScaledValueFromIntOrPercent`). Malformed → 0.
pub(crate) fn scaled(v: Option<&Value>, total: i64, round_up: bool) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(p) if round_up => (p * total + 99) / 100,
            Some(p) => p * total / 100,
            None => s.parse().unwrap_or(0),
        },
        _ => 0,
    }
}

/// An IntOrString that must be a non-negative int or a percentage ≤ 100% (upstream
/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`).
pub(crate) fn validate_int_or_percent(v: Option<&Value>, field: &str, out: &mut Vec<Cause>) {
    match v {
        Some(Value::Number(n)) if n.as_i64().is_some_and(|i| i < 0) => out.push(Cause::invalid(
            field,
            &Value::Number(n.clone()),
            "must be greater than or equal to 0",
        )),
        Some(Value::String(s)) => match s.strip_suffix('%').map(str::parse::<i64>) {
            Some(Ok(p)) if p > 100 => {
                out.push(Cause::invalid(field, &json!(s), "must not be greater than 100%"))
            }
            Some(Ok(p)) if p < 0 => out.push(Cause::invalid(
                field,
                &json!(s),
                "must be greater than or equal to 0",
            )),
            Some(Ok(_)) => {}
            _ => out.push(Cause::invalid(
                field,
                &json!(s),
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )),
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_and_print_as_upstream() {
        let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]});
        assert!(selector_matches(
            Some(&sel),
            Some(&json!({"app": "web", "tier": "a"}))
        ));
        assert!(!selector_matches(Some(&sel), Some(&json!({"app": "web"}))));
        assert!(!selector_matches(None, Some(&json!({"app": "web"}))));
        assert_eq!(format_selector(Some(&sel)), "app=web,tier in (a,b)");
        assert_eq!(format_selector(None), "<none>");
        assert_eq!(
            go_map(Some(&json!({"b": "2", "a": "1"}))),
            r#"map[string]string{"a":"1", "b":"2"}"#
        );
    }

    #[test]
    fn only_a_statefulsets_template_may_mount_what_it_does_not_declare() {
        // A StatefulSet's mounts name its volumeClaimTemplates; its controller adds the volumes.
        let o = json!({"spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {
            "metadata": {"labels": {"app": "w"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "volumeMounts": [{"name": "www", "mountPath": "/www"}]}]}}}});
        let causes = |what| {
            let mut out = Vec::new();
            validate_selector_and_template(&o, what, true, &mut out);
            out.iter().map(Cause::rendered).collect::<Vec<_>>()
        };
        assert!(causes("statefulset").is_empty());
        assert_eq!(
            causes("deployment"),
            ["spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"www\""]
        );
    }

    #[test]
    fn a_selector_not_matching_the_labels_is_refused_with_upstreams_cause() {
        let d = json!({"spec": {"selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        let mut out = Vec::new();
        validate_selector_and_template(&d, "deployment", true, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            out[0].rendered(),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`"
        );
    }

    #[test]
    fn rounding_of_surge_and_unavailable() {
        assert_eq!(scaled(Some(&json!("25%")), 6, true), 2);
        assert_eq!(scaled(Some(&json!("25%")), 6, false), 1);
        assert_eq!(scaled(Some(&json!(3)), 6, false), 3);
    }
}

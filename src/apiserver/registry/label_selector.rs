//! `metav1validation.ValidateLabelSelector`: a selector's matchLabels (keys are qualified
//! names, values label values) and each matchExpressions requirement (an operator that takes
//! or refuses values, a qualified key, label values), with upstream's field paths.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::json;

use crate::apiserver::registry::formats;
use crate::apiserver::request::status::Cause;

/// `ValidateLabels`: each key a qualified name, each value a label value, both reported at
/// `path` (a selector's matchLabels, a RuntimeClass's node selector).
pub(crate) fn validate_labels<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    path: &str,
    out: &mut Vec<Cause>,
) {
    for (k, v) in labels {
        for m in formats::qualified_name(k) {
            out.push(Cause::invalid(path, &json!(k), &m));
        }
        for m in formats::label_value(v) {
            out.push(Cause::invalid(path, &json!(v), &m));
        }
    }
}

/// Every cause of `sel` at `path` (`spec.podSelector`).
pub(crate) fn validate(sel: &LabelSelector, path: &str, out: &mut Vec<Cause>) {
    let labels = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()));
    validate_labels(labels, &format!("{path}.matchLabels"), out);
    for (i, r) in sel.match_expressions.iter().flatten().enumerate() {
        let f = format!("{path}.matchExpressions[{i}]");
        let values = r.values.as_deref().unwrap_or_default();
        match r.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => out.push(Cause::required(
                &format!("{f}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => out.push(Cause::forbidden(
                &format!("{f}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => out.push(Cause::invalid(
                &format!("{f}.operator"),
                &json!(op),
                "not a valid selector operator",
            )),
        }
        for m in formats::qualified_name(&r.key) {
            out.push(Cause::invalid(&format!("{f}.key"), &json!(r.key), &m));
        }
        for (j, v) in values.iter().enumerate() {
            for m in formats::label_value(v) {
                out.push(Cause::invalid(&format!("{f}.values[{j}]"), &json!(v), &m));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(sel: serde_json::Value) -> Vec<String> {
        let sel: LabelSelector = serde_json::from_value(sel).unwrap();
        let mut out = Vec::new();
        validate(&sel, "spec.podSelector", &mut out);
        out.iter().map(Cause::rendered).collect()
    }

    #[test]
    fn upstreams_cases() {
        assert!(causes(json!({})).is_empty());
        assert!(
            causes(json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}))
                .is_empty()
        );
        assert_eq!(
            causes(json!({"matchExpressions": [{"key": "tier", "operator": "In"}]})),
            [
                "spec.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
        assert_eq!(
            causes(
                json!({"matchExpressions": [{"key": "tier", "operator": "Exists", "values": ["a"]}]})
            ),
            [
                "spec.podSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ]
        );
        assert_eq!(
            causes(json!({"matchExpressions": [{"key": "tier", "operator": "Near"}]})),
            [
                r#"spec.podSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator"#
            ]
        );
        let bad_value = causes(json!({"matchLabels": {"app": "-web"}}));
        assert!(
            bad_value[0].starts_with(
                r#"spec.podSelector.matchLabels: Invalid value: "-web": a valid label must be an empty string"#
            ),
            "{bad_value:?}"
        );
    }
}

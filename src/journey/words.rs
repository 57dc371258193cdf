//! A stage detail's values as sentences: the text output and view 4 say them alike.

use serde_json::Value;

/// A filter verdict's `reasons`, joined as kube-scheduler's FitError lists them.
pub fn reasons(verdict: &Value) -> String {
    verdict["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A kubelet step's detail as `key=value` pairs (strings bare); none as nothing, anything else
/// as JSON.
pub fn key_values(detail: &Value) -> String {
    match detail.as_object() {
        Some(o) => o
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(t) => format!("{k}={t}"),
                None => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        None if detail.is_null() => String::new(),
        None => detail.to_string(),
    }
}

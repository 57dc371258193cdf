//! Events are stored once as core/v1 and served both as core/v1 (what `kubectl describe` lists)
//! and as events.k8s.io/v1 (what the scheduler writes): the conversion between the two.

use serde_json::{Value, json};

/// core/v1 → events.k8s.io/v1 (field renames per specs/apiserver.md §9.3).
pub fn to_events_v1(e: &Value) -> Value {
    let mut out = json!({
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": e.get("metadata").cloned().unwrap_or(json!({})),
        "eventTime": e.get("eventTime").cloned().unwrap_or(Value::Null),
        "regarding": e.get("involvedObject").cloned().unwrap_or(json!({})),
        "note": e.get("message").cloned().unwrap_or(Value::Null),
        "reason": e.get("reason").cloned().unwrap_or(Value::Null),
        "type": e.get("type").cloned().unwrap_or(Value::Null),
        "action": e.get("action").cloned().unwrap_or(Value::Null),
        "reportingController": e.get("reportingComponent").cloned().unwrap_or(Value::Null),
        "reportingInstance": e.get("reportingInstance").cloned().unwrap_or(Value::Null),
    });
    for (from, to) in [
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
    ] {
        if let Some(v) = e.get(from).filter(|v| !v.is_null()) {
            out[to] = v.clone();
        }
    }
    if let Value::Object(m) = &mut out {
        m.retain(|_, v| !v.is_null());
    }
    out
}

/// events.k8s.io/v1 → core/v1, for writes through the events.k8s.io API.
pub fn from_events_v1(e: &Value) -> Value {
    let mut out = json!({
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": e.get("metadata").cloned().unwrap_or(json!({})),
        "involvedObject": e.get("regarding").cloned().unwrap_or(json!({})),
        "message": e.get("note").cloned().unwrap_or(Value::Null),
        "reason": e.get("reason").cloned().unwrap_or(Value::Null),
        "type": e.get("type").cloned().unwrap_or(Value::Null),
        "action": e.get("action").cloned().unwrap_or(Value::Null),
        "eventTime": e.get("eventTime").cloned().unwrap_or(Value::Null),
        "reportingComponent": e.get("reportingController").cloned().unwrap_or(Value::Null),
        "reportingInstance": e.get("reportingInstance").cloned().unwrap_or(Value::Null),
        "source": e.get("deprecatedSource").cloned().unwrap_or(json!({})),
        "firstTimestamp": e.get("deprecatedFirstTimestamp").cloned().unwrap_or(Value::Null),
        "lastTimestamp": e.get("deprecatedLastTimestamp").cloned().unwrap_or(Value::Null),
    });
    if let Some(c) = e.get("deprecatedCount") {
        out["count"] = c.clone();
    }
    out
}

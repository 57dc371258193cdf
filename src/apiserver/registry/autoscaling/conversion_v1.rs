//! autoscaling/v1 ⇄ autoscaling/v2 HorizontalPodAutoscalers (upstream
//! `pkg/apis/autoscaling/v1/conversion.go`). v1 holds one metric, a CPU utilization target; the
//! other metrics, the measured ones and the conditions travel in annotations, so an object
//! read and written back through v1 loses none of them.

use serde_json::{Map, Value, json};

use crate::apiserver::registry::autoscaling::horizontalpodautoscaler::default_cpu_metric;

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Copies the keys of `from` that are set into `to`, renamed.
fn carry(from: &Value, to: &mut Map<String, Value>, keys: &[(&str, &str)]) {
    for (src, dst) in keys {
        if let Some(v) = from.pointer(src).filter(|v| !v.is_null()) {
            to.insert((*dst).into(), v.clone());
        }
    }
}

fn is_cpu_utilization(m: &Value) -> bool {
    m["type"] == "Resource"
        && m.pointer("/resource/name") == Some(&json!("cpu"))
        && m.pointer("/resource/target/averageUtilization")
            .is_some_and(|u| !u.is_null())
}

/// A v2 MetricSpec as v1's (`Convert_autoscaling_MetricSpec_To_v1_MetricSpec`).
fn spec_to_v1(m: &Value) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let mut src = Map::new();
    let member = match ty {
        "Resource" | "ContainerResource" => {
            let member = if ty == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let at = |k: &str| format!("/{member}/{k}");
            carry(
                m,
                &mut src,
                &[
                    (at("name").as_str(), "name"),
                    (at("container").as_str(), "container"),
                    (
                        at("target/averageUtilization").as_str(),
                        "targetAverageUtilization",
                    ),
                    (at("target/averageValue").as_str(), "targetAverageValue"),
                ],
            );
            member
        }
        "Pods" => {
            carry(
                m,
                &mut src,
                &[
                    ("/pods/metric/name", "metricName"),
                    ("/pods/target/averageValue", "targetAverageValue"),
                    ("/pods/metric/selector", "selector"),
                ],
            );
            "pods"
        }
        "Object" => {
            carry(
                m,
                &mut src,
                &[
                    ("/object/describedObject", "target"),
                    ("/object/metric/name", "metricName"),
                    ("/object/target/value", "targetValue"),
                    ("/object/metric/selector", "selector"),
                    ("/object/target/averageValue", "averageValue"),
                ],
            );
            "object"
        }
        "External" => {
            carry(
                m,
                &mut src,
                &[
                    ("/external/metric/name", "metricName"),
                    ("/external/metric/selector", "metricSelector"),
                    ("/external/target/value", "targetValue"),
                    ("/external/target/averageValue", "targetAverageValue"),
                ],
            );
            "external"
        }
        _ => return json!({"type": ty}),
    };
    json!({"type": ty, member: src})
}

/// A v1 MetricSpec as v2's; the target type follows from which target is set, as upstream.
fn spec_from_v1(m: &Value) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let get = |p: &str| m.pointer(p).filter(|v| !v.is_null()).cloned();
    let mut metric = Map::new();
    let mut target = Map::new();
    let member = match ty {
        "Resource" | "ContainerResource" => {
            let member = if ty == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let utilization = get(&format!("/{member}/targetAverageUtilization"));
            let average = get(&format!("/{member}/targetAverageValue"));
            let kind = if utilization.is_some() {
                "Utilization"
            } else {
                "AverageValue"
            };
            target.insert("type".into(), json!(kind));
            if let Some(u) = utilization {
                target.insert("averageUtilization".into(), u);
            }
            if let Some(a) = average {
                target.insert("averageValue".into(), a);
            }
            let mut src = Map::new();
            carry(
                m,
                &mut src,
                &[
                    (format!("/{member}/name").as_str(), "name"),
                    (format!("/{member}/container").as_str(), "container"),
                ],
            );
            src.insert("target".into(), Value::Object(target));
            return json!({"type": ty, member: src});
        }
        "Pods" => {
            carry(
                m,
                &mut metric,
                &[("/pods/metricName", "name"), ("/pods/selector", "selector")],
            );
            target.insert("type".into(), json!("AverageValue"));
            carry(
                m,
                &mut target,
                &[("/pods/targetAverageValue", "averageValue")],
            );
            "pods"
        }
        "Object" => {
            carry(
                m,
                &mut metric,
                &[
                    ("/object/metricName", "name"),
                    ("/object/selector", "selector"),
                ],
            );
            let kind = if get("/object/averageValue").is_some() {
                "AverageValue"
            } else {
                "Value"
            };
            target.insert("type".into(), json!(kind));
            carry(
                m,
                &mut target,
                &[
                    ("/object/targetValue", "value"),
                    ("/object/averageValue", "averageValue"),
                ],
            );
            let described = get("/object/target").unwrap_or(json!({}));
            return json!({"type": ty, "object": {"describedObject": described,
                "metric": metric, "target": target}});
        }
        "External" => {
            carry(
                m,
                &mut metric,
                &[
                    ("/external/metricName", "name"),
                    ("/external/metricSelector", "selector"),
                ],
            );
            let kind = if get("/external/targetValue").is_some() {
                "Value"
            } else {
                "AverageValue"
            };
            target.insert("type".into(), json!(kind));
            carry(
                m,
                &mut target,
                &[
                    ("/external/targetValue", "value"),
                    ("/external/targetAverageValue", "averageValue"),
                ],
            );
            "external"
        }
        _ => return json!({"type": ty}),
    };
    json!({"type": ty, member: {"metric": metric, "target": target}})
}

/// The field renames between a v2 MetricStatus and v1's, per source (`(v2 path, v1 path)`,
/// both under the source's member).
fn status_fields(ty: &str) -> Option<(&'static str, &'static [(&'static str, &'static str)])> {
    Some(match ty {
        "Resource" => (
            "resource",
            &[
                ("name", "name"),
                ("current/averageUtilization", "currentAverageUtilization"),
                ("current/averageValue", "currentAverageValue"),
            ],
        ),
        "ContainerResource" => (
            "containerResource",
            &[
                ("name", "name"),
                ("container", "container"),
                ("current/averageUtilization", "currentAverageUtilization"),
                ("current/averageValue", "currentAverageValue"),
            ],
        ),
        "Pods" => (
            "pods",
            &[
                ("metric/name", "metricName"),
                ("current/averageValue", "currentAverageValue"),
                ("metric/selector", "selector"),
            ],
        ),
        "Object" => (
            "object",
            &[
                ("describedObject", "target"),
                ("metric/name", "metricName"),
                ("current/value", "currentValue"),
                ("metric/selector", "selector"),
                ("current/averageValue", "averageValue"),
            ],
        ),
        "External" => (
            "external",
            &[
                ("metric/name", "metricName"),
                ("metric/selector", "metricSelector"),
                ("current/value", "currentValue"),
                ("current/averageValue", "currentAverageValue"),
            ],
        ),
        _ => return None,
    })
}

fn status_to_v1(m: &Value) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let Some((member, fields)) = status_fields(ty) else {
        return json!({"type": ty});
    };
    let mut out = Map::new();
    for (v2, v1) in fields {
        if let Some(v) = m
            .pointer(&format!("/{member}/{v2}"))
            .filter(|v| !v.is_null())
        {
            out.insert((*v1).into(), v.clone());
        }
    }
    json!({"type": ty, member: out})
}

fn status_from_v1(m: &Value) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let Some((member, fields)) = status_fields(ty) else {
        return json!({"type": ty});
    };
    let mut out = json!({});
    for (v2, v1) in fields {
        if let Some(v) = m
            .get(member)
            .and_then(|s| s.get(*v1))
            .filter(|v| !v.is_null())
        {
            let mut at = &mut out;
            let mut parts = v2.split('/').peekable();
            while let Some(p) = parts.next() {
                if parts.peek().is_none() {
                    at[p] = v.clone();
                } else {
                    if at.get(p).is_none() {
                        at[p] = json!({});
                    }
                    at = &mut at[p];
                }
            }
        }
    }
    json!({"type": ty, member: out})
}

fn annotations(o: &mut Value) -> &mut Map<String, Value> {
    if !o["metadata"]["annotations"].is_object() {
        o["metadata"]["annotations"] = json!({});
    }
    match o["metadata"]["annotations"].as_object_mut() {
        Some(m) => m,
        None => unreachable!("set to an object above"),
    }
}

/// The stored v2 object as autoscaling/v1 serves it.
pub(crate) fn to_v1(v2: &Value) -> Value {
    let mut out = json!({
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": "autoscaling/v1",
        "metadata": v2.get("metadata").cloned().unwrap_or(json!({})),
    });
    let spec = &v2["spec"];
    let mut s = Map::new();
    carry(
        spec,
        &mut s,
        &[
            ("/scaleTargetRef", "scaleTargetRef"),
            ("/minReplicas", "minReplicas"),
            ("/maxReplicas", "maxReplicas"),
        ],
    );
    let metrics = spec["metrics"].as_array().cloned().unwrap_or_default();
    // The first CPU metric, if a utilization, is v1's one field; every other metric is kept.
    if let Some(cpu) = metrics
        .iter()
        .find(|m| m["type"] == "Resource" && m.pointer("/resource/name") == Some(&json!("cpu")))
        && let Some(u) = cpu.pointer("/resource/target/averageUtilization")
    {
        s.insert("targetCPUUtilizationPercentage".into(), u.clone());
    }
    out["spec"] = Value::Object(s);
    let other: Vec<Value> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(spec_to_v1)
        .collect();
    let status = &v2["status"];
    let current: Vec<Value> = status["currentMetrics"]
        .as_array()
        .map(|c| c.iter().map(status_to_v1).collect())
        .unwrap_or_default();
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    for (key, list) in [
        (METRICS, &other),
        (CURRENT_METRICS, &current),
        (CONDITIONS, &conditions),
    ] {
        if !list.is_empty() {
            annotations(&mut out).insert(key.into(), json!(Value::Array(list.clone()).to_string()));
        }
    }
    let mut st = Map::new();
    carry(
        status,
        &mut st,
        &[
            ("/observedGeneration", "observedGeneration"),
            ("/lastScaleTime", "lastScaleTime"),
        ],
    );
    for k in ["currentReplicas", "desiredReplicas"] {
        st.insert(k.into(), json!(status[k].as_i64().unwrap_or(0)));
    }
    if let Some(u) = status["currentMetrics"].as_array().and_then(|c| {
        c.iter()
            .filter(|m| {
                m["type"] == "Resource" && m.pointer("/resource/name") == Some(&json!("cpu"))
            })
            .find_map(|m| m.pointer("/resource/current/averageUtilization").cloned())
    }) {
        st.insert("currentCPUUtilizationPercentage".into(), u);
    }
    out["status"] = Value::Object(st);
    out
}

/// Takes an annotation's JSON list off `o`, if it is there.
fn take_list(o: &mut Value, key: &str) -> Option<Vec<Value>> {
    let text = o
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)?
        .remove(key)?;
    serde_json::from_str(text.as_str()?).ok()
}

/// An autoscaling/v1 body in the stored v2 form.
pub(crate) fn from_v1(v1: &Value) -> Value {
    let mut meta_holder = json!({"metadata": v1.get("metadata").cloned().unwrap_or(json!({}))});
    let other = take_list(&mut meta_holder, METRICS);
    let current = take_list(&mut meta_holder, CURRENT_METRICS);
    let conditions = take_list(&mut meta_holder, CONDITIONS);
    // An annotation map the conversion emptied is left out, as Go's omitempty leaves it.
    if meta_holder
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
        && let Some(m) = meta_holder["metadata"].as_object_mut()
    {
        m.remove("annotations");
    }
    let spec = &v1["spec"];
    let mut s = Map::new();
    carry(
        spec,
        &mut s,
        &[
            ("/scaleTargetRef", "scaleTargetRef"),
            ("/minReplicas", "minReplicas"),
            ("/maxReplicas", "maxReplicas"),
        ],
    );
    let mut metrics: Vec<Value> = other.unwrap_or_default().iter().map(spec_from_v1).collect();
    if let Some(u) = spec
        .get("targetCPUUtilizationPercentage")
        .filter(|u| !u.is_null())
    {
        let mut cpu = default_cpu_metric();
        cpu["resource"]["target"]["averageUtilization"] = u.clone();
        metrics.push(cpu);
    }
    // v1's implicit default, made explicit here as upstream does.
    if metrics.is_empty() {
        metrics.push(default_cpu_metric());
    }
    s.insert("metrics".into(), Value::Array(metrics));
    let status = &v1["status"];
    let mut st = Map::new();
    carry(
        status,
        &mut st,
        &[
            ("/observedGeneration", "observedGeneration"),
            ("/lastScaleTime", "lastScaleTime"),
            ("/currentReplicas", "currentReplicas"),
            ("/desiredReplicas", "desiredReplicas"),
        ],
    );
    match current {
        Some(c) => {
            st.insert(
                "currentMetrics".into(),
                Value::Array(c.iter().map(status_from_v1).collect()),
            );
        }
        None => {
            if let Some(u) = status
                .get("currentCPUUtilizationPercentage")
                .filter(|u| !u.is_null())
            {
                st.insert(
                    "currentMetrics".into(),
                    json!([{"type": "Resource", "resource": {"name": "cpu",
                        "current": {"averageUtilization": u}}}]),
                );
            }
        }
    }
    if let Some(c) = conditions {
        st.insert("conditions".into(), Value::Array(c));
    }
    let mut out = json!({
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": "autoscaling/v2",
        "metadata": meta_holder["metadata"].take(),
        "spec": s,
    });
    if v1.get("status").is_some_and(|s| !s.is_null()) {
        out["status"] = Value::Object(st);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(metrics: Value, status: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 5, "metrics": metrics},
            "status": status})
    }

    #[test]
    fn a_cpu_target_is_v1s_one_field_and_defaults_to_80_percent() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5,
                "targetCPUUtilizationPercentage": 50}});
        let stored = from_v1(&v1);
        assert_eq!(stored["apiVersion"], "autoscaling/v2");
        assert_eq!(
            stored["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            50
        );
        assert!(stored.get("status").is_none());
        let mut bare = v1.clone();
        bare["spec"]
            .as_object_mut()
            .unwrap()
            .remove("targetCPUUtilizationPercentage");
        assert_eq!(
            from_v1(&bare)["spec"]["metrics"],
            json!([default_cpu_metric()])
        );
        let served = to_v1(&stored);
        assert_eq!(served["spec"]["targetCPUUtilizationPercentage"], 50);
        assert!(served.pointer("/metadata/annotations").is_none());
        assert_eq!(
            served["status"],
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        );
    }

    /// Upstream's round trip: other metrics, measured metrics and conditions ride in
    /// annotations and come back whole.
    #[test]
    fn what_v1_cannot_hold_survives_a_round_trip_through_annotations() {
        let memory = json!({"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "500Mi"}}});
        let object = json!({"type": "Object", "object": {
            "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
            "metric": {"name": "requests-per-second"},
            "target": {"type": "Value", "value": "2k"}}});
        let external = json!({"type": "External", "external": {
            "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
            "target": {"type": "AverageValue", "averageValue": "30"}}});
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "10"}}});
        let cpu = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}});
        let conditions = json!([{"type": "ScalingActive", "status": "False",
            "lastTransitionTime": "2026-11-29T10:00:00Z", "reason": "FailedGetResourceMetric",
            "message": "the HPA was unable to compute the replica count"}]);
        let current = json!([{"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 31, "averageValue": "31m"}}}]);
        let stored = v2(
            json!([memory, object, external, pods, cpu]),
            json!({"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": current,
                "conditions": conditions}),
        );
        let served = to_v1(&stored);
        assert_eq!(served["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(served["status"]["currentCPUUtilizationPercentage"], 31);
        let notes = served["metadata"]["annotations"].as_object().unwrap();
        assert_eq!(notes.len(), 3);
        let back = from_v1(&served);
        // The CPU metric goes last, as upstream appends it after the annotation's.
        assert_eq!(
            back["spec"]["metrics"],
            json!([memory, object, external, pods, cpu])
        );
        assert_eq!(back["status"], stored["status"]);
        assert!(back["metadata"].get("annotations").is_none());
    }
}

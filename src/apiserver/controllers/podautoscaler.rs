//! The horizontal pod autoscaler controller (upstream `pkg/controller/podautoscaler`,
//! `horizontal.go`): every 15 s (`--horizontal-pod-autoscaler-sync-period`) each HPA reads its
//! target's Scale, holds the replica count within minReplicas and maxReplicas, and asks the
//! metrics APIs for the rest. This cluster serves no metrics API (no metrics-server, no custom
//! or external metrics adapter), so every metric fails as it does on a cluster without one:
//! TARGETS stays `<unknown>`, ScalingActive is False with upstream's reason and message, and
//! the HPA scales only to come back within its bounds.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s};
use crate::apiserver::endpoints::managed_fields;
use crate::apiserver::endpoints::scale::{scale_of, with_replicas};
use crate::apiserver::registry::resources::{self, ResourceDef};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;

/// The event source upstream's recorder names.
const COMPONENT: &str = "horizontal-pod-autoscaler";

/// What the metrics clients answer on a cluster that serves none of the metrics APIs.
const NO_RESOURCE_METRICS: &str = "unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)";
const NO_CUSTOM_METRICS: &str = "unable to fetch metrics from custom metrics API: the server could not find the requested resource (get pods.custom.metrics.k8s.io)";
const NO_EXTERNAL_METRICS: &str = "unable to fetch metrics from external metrics API: the server could not find the requested resource (get external.metrics.k8s.io)";

pub(crate) struct HorizontalController {
    /// `--horizontal-pod-autoscaler-sync-period`. A new HPA is first looked at one period after
    /// it appears, as upstream's rate-limited queue adds it.
    period: Duration,
    /// When each HPA is next reconciled.
    due: HashMap<(String, String), Instant>,
}

impl HorizontalController {
    pub(crate) fn new(period: Duration) -> Self {
        HorizontalController {
            period,
            due: HashMap::new(),
        }
    }
}

fn hpa_def() -> &'static ResourceDef {
    match resources::lookup("autoscaling", "v2", "horizontalpodautoscalers") {
        Some(d) => d,
        None => unreachable!("autoscaling/v2 horizontalpodautoscalers is in RESOURCES"),
    }
}

impl Controller for HorizontalController {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/horizontalpodautoscalers/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        out.extend(ns_name(&ev.key));
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, hpa_def())
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let key = (ns.to_string(), name.to_string());
        let Some(hpa) = api.store.get(&hpa_def().key_for(ns, name)) else {
            self.due.remove(&key);
            return true;
        };
        let now = Instant::now();
        let due = *self.due.entry(key.clone()).or_insert(now + self.period);
        if now < due {
            return true;
        }
        self.due.insert(key, now + self.period);
        reconcile(api, &hpa)
    }
}

/// One metric's failure: the reason of its event and condition, and the message.
struct MetricError {
    reason: &'static str,
    message: String,
    /// The message as the loop over all metrics reports the first failure.
    wrapped: String,
}

/// `computeReplicasForMetric` without any metrics API to ask.
fn metric_error(ns: &str, m: &Value) -> MetricError {
    let ty = s(m, "/type");
    match ty {
        "Resource" | "ContainerResource" => {
            let member = if ty == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let name = s(m, &format!("/{member}/name"));
            let what = if m
                .pointer(&format!("/{member}/target/averageValue"))
                .is_some()
            {
                "usage"
            } else {
                "utilization"
            };
            let message = format!(
                "failed to get {name} {what}: unable to get metrics for resource {name}: {NO_RESOURCE_METRICS}"
            );
            let (reason, source) = if ty == "Resource" {
                ("FailedGetResourceMetric", "resource")
            } else {
                ("FailedGetContainerResourceMetric", "container resource")
            };
            MetricError {
                reason,
                wrapped: format!("failed to get {name} {source} metric value: {message}"),
                message,
            }
        }
        "Pods" | "Object" => {
            let member = if ty == "Pods" { "pods" } else { "object" };
            let name = s(m, &format!("/{member}/metric/name"));
            let message = format!("unable to get metric {name}: {NO_CUSTOM_METRICS}");
            MetricError {
                reason: if ty == "Pods" {
                    "FailedGetPodsMetric"
                } else {
                    "FailedGetObjectMetric"
                },
                wrapped: format!("failed to get {member} metric value: {message}"),
                message,
            }
        }
        "External" => {
            let name = s(m, "/external/metric/name");
            let message =
                format!("unable to get external metric {ns}/{name}: {NO_EXTERNAL_METRICS}");
            MetricError {
                reason: "FailedGetExternalMetric",
                wrapped: format!("failed to get {name} external metric value: {message}"),
                message,
            }
        }
        other => {
            let message = format!("unknown metric source type {other:?}");
            MetricError {
                reason: "InvalidMetricSourceType",
                wrapped: message.clone(),
                message,
            }
        }
    }
}

/// `setCondition`: a condition's transition time moves only when its status does.
fn set_condition(conditions: &mut Vec<Value>, ty: &str, status: &str, reason: &str, msg: &str) {
    util::set_condition(
        conditions,
        json!({"type": ty, "status": status, "lastTransitionTime": util::now(),
            "reason": reason, "message": msg}),
    );
}

/// The target's resource, from its apiVersion and kind, as upstream's REST mapper finds it.
fn target_def(target: &Value) -> Result<&'static ResourceDef, String> {
    let api_version = s(target, "/apiVersion");
    let group = match api_version.split_once('/') {
        Some((g, _)) => g,
        None => "",
    };
    let kind = s(target, "/kind");
    resources::by_kind(group, kind)
        .filter(|d| d.subresources.contains(&"scale"))
        .ok_or_else(|| format!("no matches for kind {kind:?} in group {group:?}"))
}

/// `reconcileAutoscaler`; false when a write failed.
fn reconcile(api: &Api, hpa: &Value) -> bool {
    let ns = s(hpa, "/metadata/namespace");
    let spec = &hpa["spec"];
    let mut status = hpa.get("status").cloned().unwrap_or(json!({}));
    let mut conditions: Vec<Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    let target_ref = &spec["scaleTargetRef"];
    let name = s(target_ref, "/name");
    let target = target_def(target_ref).and_then(|def| {
        api.store
            .get(&def.key_for(ns, name))
            .map(|o| (def, o))
            .ok_or_else(|| format!("{}.{} {name:?} not found", def.plural, def.group))
    });
    let (def, obj) = match target {
        Ok(t) => t,
        Err(e) => {
            workload::event(api, COMPONENT, hpa, "Warning", "FailedGetScale", &e);
            set_condition(
                &mut conditions,
                "AbleToScale",
                "False",
                "FailedGetScale",
                &format!("the HPA controller was unable to get the target's current scale: {e}"),
            );
            status["conditions"] = json!(conditions);
            return write_status(api, hpa, status);
        }
    };
    set_condition(
        &mut conditions,
        "AbleToScale",
        "True",
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
    );
    let scale = scale_of(&obj);
    let current = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let min = spec["minReplicas"].as_i64().unwrap_or(1);
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    let (desired, reason) = if current == 0 && min != 0 {
        set_condition(
            &mut conditions,
            "ScalingActive",
            "False",
            "ScalingDisabled",
            "scaling is disabled since the replica count of the target is zero",
        );
        (current, None)
    } else if current > max {
        (
            max,
            Some("Current number of replicas above Spec.MaxReplicas"),
        )
    } else if current < min {
        (
            min,
            Some("Current number of replicas below Spec.MinReplicas"),
        )
    } else {
        // computeReplicasForMetrics: every metric fails without a metrics API.
        if s(&scale, "/status/selector").is_empty() {
            workload::event(
                api,
                COMPONENT,
                hpa,
                "Warning",
                "SelectorRequired",
                "selector is required",
            );
            set_condition(
                &mut conditions,
                "ScalingActive",
                "False",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            );
        } else {
            let metrics = spec["metrics"].as_array().cloned().unwrap_or_default();
            let errors: Vec<MetricError> = metrics.iter().map(|m| metric_error(ns, m)).collect();
            for e in &errors {
                workload::event(api, COMPONENT, hpa, "Warning", e.reason, &e.message);
            }
            if let Some(first) = errors.first() {
                set_condition(
                    &mut conditions,
                    "ScalingActive",
                    "False",
                    first.reason,
                    &format!(
                        "the HPA was unable to compute the replica count: {}",
                        first.message
                    ),
                );
                let n = errors.len();
                workload::event(
                    api,
                    COMPONENT,
                    hpa,
                    "Warning",
                    "FailedComputeMetricsReplicas",
                    &format!(
                        "invalid metrics ({n} invalid out of {n}), first error is: {}",
                        first.wrapped
                    ),
                );
            }
        }
        // setCurrentReplicasInStatus, and nothing else changes.
        status["currentReplicas"] = json!(current);
        status["conditions"] = json!(conditions);
        return write_status(api, hpa, status);
    };
    let mut last_scale = status.get("lastScaleTime").cloned();
    if let Some(reason) = reason {
        let target_name = name.to_string();
        // Through the scale subresource, as upstream's scale client writes: the count is owned
        // by kube-controller-manager's Update entry with subresource `scale`.
        if let Err(e) = client::update(api, def, ns, &target_name, |o| {
            let mut next = with_replicas(o, desired);
            managed_fields::record_scale(def, o, &mut next, client::MANAGER, &util::now());
            *o = next;
        }) {
            let msg = e.message;
            workload::event(
                api,
                COMPONENT,
                hpa,
                "Warning",
                "FailedRescale",
                &format!("New size: {desired}; reason: {reason}; error: {msg}"),
            );
            set_condition(
                &mut conditions,
                "AbleToScale",
                "False",
                "FailedUpdateScale",
                &format!("the HPA controller was unable to update the target scale: {msg}"),
            );
            status["currentReplicas"] = json!(current);
            status["conditions"] = json!(conditions);
            write_status(api, hpa, status);
            return false;
        }
        set_condition(
            &mut conditions,
            "AbleToScale",
            "True",
            "SucceededRescale",
            &format!("the HPA controller was able to update the target scale to {desired}"),
        );
        workload::event(
            api,
            COMPONENT,
            hpa,
            "Normal",
            "SuccessfulRescale",
            &format!("New size: {desired}; reason: {reason}"),
        );
        last_scale = Some(json!(util::now()));
    }
    // setStatus: the counts, no measured metrics, the last scale time.
    let mut next = json!({"currentReplicas": current, "desiredReplicas": desired,
        "conditions": conditions});
    if let Some(t) = last_scale.filter(|t| !t.is_null()) {
        next["lastScaleTime"] = t;
    }
    write_status(api, hpa, next)
}

/// `updateStatusIfNeeded`: only a changed status is written, over the HPA it was computed from.
fn write_status(api: &Api, hpa: &Value, status: Value) -> bool {
    if hpa.get("status") == Some(&status) {
        return true;
    }
    let rv = s(hpa, "/metadata/resourceVersion").to_string();
    client::update(
        api,
        hpa_def(),
        s(hpa, "/metadata/namespace"),
        s(hpa, "/metadata/name"),
        |o| {
            if s(o, "/metadata/resourceVersion") == rv {
                o["status"] = status.clone();
            }
        },
    )
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_metric_fails_as_on_a_cluster_without_metrics_server() {
        let cpu = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}});
        let e = metric_error("default", &cpu);
        assert_eq!(e.reason, "FailedGetResourceMetric");
        assert_eq!(
            e.message,
            "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
        );
        assert!(
            e.wrapped.starts_with(
                "failed to get cpu resource metric value: failed to get cpu utilization"
            )
        );
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let mut c = vec![json!({"type": "AbleToScale", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "SucceededGetScale", "message": ""})];
        set_condition(&mut c, "AbleToScale", "True", "SucceededRescale", "m");
        assert_eq!(c[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert_eq!(c[0]["reason"], "SucceededRescale");
        set_condition(&mut c, "AbleToScale", "False", "FailedGetScale", "m");
        assert_ne!(c[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        set_condition(
            &mut c,
            "ScalingActive",
            "False",
            "FailedGetResourceMetric",
            "m",
        );
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn the_target_is_found_by_group_and_kind_with_a_scale() {
        let d = target_def(&json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}));
        assert_eq!(d.map(|d| d.plural), Ok("deployments"));
        assert_eq!(
            target_def(&json!({"apiVersion": "apps/v1", "kind": "DaemonSet"})).err(),
            Some("no matches for kind \"DaemonSet\" in group \"apps\"".to_string())
        );
    }
}

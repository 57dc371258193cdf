//! core/v1 Pod (upstream `pkg/registry/core/pod`, printers `printPod`): defaults, mutating
//! admission and validation on create, ValidatePodUpdate on update, the columns `kubectl get
//! pods` prints and the field selectors kubelets and kubectl use.

use k8s_openapi::api::core::v1::Pod as PodType;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::apiserver::admission::plugins;
use crate::apiserver::registry::defaults;
use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, field_at, kind_type, or_none, str_at,
};
use crate::apiserver::registry::validation;
use crate::apiserver::registry::validation_update;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};

pub(crate) struct Pod;

/// The pod STATUS column, as kubectl's printPod computes it.
pub(crate) fn pod_status(p: &Value) -> String {
    let mut reason = str_at(p, "/status/phase").to_string();
    if !str_at(p, "/status/reason").is_empty() {
        reason = str_at(p, "/status/reason").to_string();
    }
    let statuses = p
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for cs in statuses.iter().rev() {
        if let Some(r) = cs
            .pointer("/state/waiting/reason")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            reason = r.to_string();
        } else if let Some(t) = cs.pointer("/state/terminated") {
            reason = match t.get("reason").and_then(Value::as_str) {
                Some(r) if !r.is_empty() => r.to_string(),
                _ => format!(
                    "ExitCode:{}",
                    t.get("exitCode")
                        .and_then(Value::as_i64)
                        .unwrap_or_default()
                ),
            };
        }
    }
    if !str_at(p, "/metadata/deletionTimestamp").is_empty()
        && reason != "Succeeded"
        && reason != "Failed"
    {
        reason = "Terminating".into();
    }
    if reason.is_empty() {
        "Pending".into()
    } else {
        reason
    }
}

fn pod_cells(p: &Value) -> Vec<Value> {
    let containers = p
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let statuses = p
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ready = statuses
        .iter()
        .filter(|c| c.get("ready").and_then(Value::as_bool) == Some(true))
        .count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .sum();
    let gates = p
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    vec![
        json!(str_at(p, "/metadata/name")),
        json!(format!("{ready}/{containers}")),
        json!(pod_status(p)),
        json!(restarts.to_string()),
        json!(age_of(p)),
        json!(or_none(str_at(p, "/status/podIP"))),
        json!(or_none(str_at(p, "/spec/nodeName"))),
        json!(or_none(str_at(p, "/status/nominatedNodeName"))),
        json!(if gates == 0 {
            "<none>".to_string()
        } else {
            format!("0/{gates}")
        }),
    ]
}

impl Strategy for Pod {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Pod"
    }
    kind_type!(PodType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            column(
                "Ready",
                "string",
                0,
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            column(
                "Status",
                "string",
                0,
                "The aggregate status of the containers in this pod.",
            ),
            column(
                "Restarts",
                "string",
                0,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            column(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            column(
                "IP",
                "string",
                1,
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            ),
            column(
                "Node",
                "string",
                1,
                "NodeName indicates in which node this pod is scheduled.",
            ),
            column(
                "Nominated Node",
                "string",
                1,
                "nominatedNodeName is set when this pod preempts other pods on the node.",
            ),
            column(
                "Readiness Gates",
                "string",
                1,
                "If specified, all readiness gates will be evaluated for pod readiness.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        pod_cells(o)
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        Some(match field {
            "spec.nodeName" | "spec.host" => field_at(o, "/spec/nodeName"),
            "spec.restartPolicy" => field_at(o, "/spec/restartPolicy"),
            "spec.schedulerName" => field_at(o, "/spec/schedulerName"),
            "spec.serviceAccountName" => field_at(o, "/spec/serviceAccountName"),
            "spec.hostNetwork" => {
                Some(field_at(o, "/spec/hostNetwork").unwrap_or_else(|| "false".into()))
            }
            "status.phase" => field_at(o, "/status/phase"),
            "status.podIP" => field_at(o, "/status/podIP"),
            "status.nominatedNodeName" => field_at(o, "/status/nominatedNodeName"),
            _ => return None,
        })
    }
    /// Decode-time defaults, mutating admission, validation, then PrepareForCreate.
    fn prepare_create(
        &self,
        api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut pod = PodType::deserialize(&*obj).map_err(|e| {
            ApiError::bad_request(format!(
                "Pod in version \"v1\" cannot be handled as a Pod: {e}"
            ))
        })?;
        // Mutating admission (after decode-time defaults), then validation.
        let (records, res) = plugins::mutate_pod(&mut pod, &ns, &*api.store);
        let status = if res.is_ok() {
            Status::Ok
        } else {
            Status::Failed
        };
        trace.stage(
            Stage::Admission,
            status,
            plugins::Admission {
                phase: "mutating",
                plugins: &records,
            },
        );
        let mut v = res?;
        let causes = validation::validate_pod(&pod);
        trace.stage(
            Stage::Validation,
            if causes.is_empty() { Status::Ok } else { Status::Failed },
            json!({"causes": causes.iter().map(|c| json!({"field": c.field, "reason": c.reason, "message": c.message})).collect::<Vec<_>>()}),
        );
        if !causes.is_empty() {
            return Err(ApiError::invalid("", "Pod", &name, causes));
        }
        // PrepareForCreate: status is the server's, generation starts at 1 (1.33), and the
        // deprecated serviceAccount mirrors serviceAccountName.
        let qos = defaults::qos_class(&pod);
        if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut)
            && let Some(sa) = spec.get("serviceAccountName").cloned()
        {
            spec.insert("serviceAccount".into(), sa);
        }
        v["status"] = json!({"phase": "Pending", "qosClass": qos});
        v["metadata"]["generation"] = json!(1);
        *obj = v;
        Ok(())
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        if sub == "status" {
            causes.extend(validation_update::validate_pod_status_update(next, current));
        } else {
            if let Ok(p) = serde_json::from_value::<PodType>(next.clone()) {
                causes.extend(validation::validate_pod(&p));
            }
            causes.extend(validation_update::validate_pod_annotation_updates(
                next, current,
            ));
            causes.extend(validation_update::validate_pod_spec_update(next, current));
        }
        causes
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

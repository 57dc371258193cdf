//! core/v1 Pod (upstream `pkg/registry/core/pod`, printers `printPod`): defaults, mutating
//! admission and validation on create, ValidatePodUpdate on update, the columns `kubectl get
//! pods` prints and the field selectors kubelets and kubectl use.

use k8s_openapi::api::core::v1::Pod as PodType;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::apiserver::admission::plugins;
use crate::apiserver::registry::core::ephemeral_containers;
use crate::apiserver::registry::defaults;
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, field_at, kind_type, or_none, str_at,
};
use crate::apiserver::registry::validation;
use crate::apiserver::registry::validation_meta;
use crate::apiserver::registry::validation_update;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};

pub(crate) struct Pod;

/// A restartable init container (`restartPolicy: Always`, a sidecar): started, then left
/// running beside the app containers, and counted among them.
pub(crate) fn restartable_init(c: &Value) -> bool {
    str_at(c, "/restartPolicy") == "Always"
}

/// The READY and STATUS columns and the restarts, as upstream's `printPod` computes them
/// (kube-apiserver's table printer: `kubectl get pods` shows what the server says): the first
/// init container not done decides while the pod initializes (`Init:1/3`,
/// `Init:CreateContainerConfigError`), then the last app container with a reason; sidecars
/// (restartable init containers) count among the containers.
fn pod_columns(p: &Value) -> (usize, usize, String, i64) {
    // Borrowed, not cloned: a table of 150,000 pods reads every one.
    let list = |ptr: &str| -> &[Value] {
        p.pointer(ptr)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    };
    let (spec_inits, statuses, init_statuses) = (
        list("/spec/initContainers"),
        list("/status/containerStatuses"),
        list("/status/initContainerStatuses"),
    );
    let sidecar = |name: &Value| {
        spec_inits
            .iter()
            .any(|c| &c["name"] == name && restartable_init(c))
    };
    let restarts_of = |c: &Value| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0);
    let total =
        list("/spec/containers").len() + spec_inits.iter().filter(|c| restartable_init(c)).count();
    let mut ready = 0;
    let phase = str_at(p, "/status/phase");
    let mut reason = match str_at(p, "/status/reason") {
        "" => phase.to_string(),
        r => r.to_string(),
    };
    let gated = list("/status/conditions")
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".into();
    }
    let mut restarts: i64 = init_statuses.iter().map(restarts_of).sum();
    let sidecar_restarts: i64 = init_statuses
        .iter()
        .filter(|c| sidecar(&c["name"]))
        .map(restarts_of)
        .sum();
    let mut initializing = false;
    for (i, c) in init_statuses.iter().enumerate() {
        let terminated = c.pointer("/state/terminated");
        let waiting = str_at(c, "/state/waiting/reason");
        if terminated.is_some_and(|t| t["exitCode"].as_i64() == Some(0)) {
            continue;
        }
        if sidecar(&c["name"]) && c["started"] == true {
            if c["ready"] == true {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            match t.get("reason").and_then(Value::as_str).unwrap_or_default() {
                "" if t["signal"].as_i64().unwrap_or(0) != 0 => {
                    format!("Init:Signal:{}", t["signal"])
                }
                "" => format!("Init:ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
                r => format!("Init:{r}"),
            }
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", spec_inits.len())
        };
        initializing = true;
        break;
    }
    let initialized = list("/status/conditions")
        .iter()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        let mut has_running = false;
        for c in statuses.iter().rev() {
            restarts += restarts_of(c);
            let waiting = str_at(c, "/state/waiting/reason");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if let Some(t) = c.pointer("/state/terminated") {
                reason = match t.get("reason").and_then(Value::as_str).unwrap_or_default() {
                    "" if t["signal"].as_i64().unwrap_or(0) != 0 => {
                        format!("Signal:{}", t["signal"])
                    }
                    "" => format!("ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
                    r => r.to_string(),
                };
            } else if c["ready"] == true && c.pointer("/state/running").is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = list("/status/conditions")
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }
    let terminal = matches!(phase, "Succeeded" | "Failed");
    if !str_at(p, "/metadata/deletionTimestamp").is_empty() {
        if str_at(p, "/status/reason") == "NodeLost" {
            reason = "Unknown".into();
        } else if !terminal {
            reason = "Terminating".into();
        }
    }
    (ready, total, reason, restarts)
}

fn pod_cells(p: &Value) -> Vec<Value> {
    let (ready, total, status, restarts) = pod_columns(p);
    let gates: Vec<&str> = p
        .pointer("/spec/readinessGates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|g| str_at(g, "/conditionType"))
        .collect();
    let gates_true = gates
        .iter()
        .filter(|t| {
            p.pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|c| c["type"] == **t))
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    vec![
        json!(str_at(p, "/metadata/name")),
        json!(format!("{ready}/{total}")),
        json!(status),
        json!(restarts.to_string()),
        json!(age_of(p)),
        json!(or_none(str_at(p, "/status/podIP"))),
        json!(or_none(str_at(p, "/spec/nodeName"))),
        json!(or_none(str_at(p, "/status/nominatedNodeName"))),
        json!(if gates.is_empty() {
            "<none>".to_string()
        } else {
            format!("{gates_true}/{}", gates.len())
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
        let mut causes = validation::validate_pod(&pod);
        // The rest of ObjectMeta's rules, after the name's and before the spec's, as upstream.
        let mut meta = Vec::new();
        validation_meta::on_create(obj.get("metadata"), &mut meta);
        let at = causes
            .iter()
            .take_while(|c| c.field.starts_with("metadata."))
            .count();
        causes.splice(at..at, meta);
        causes.extend(ephemeral_containers::refused_on_create(pod.spec.as_ref()));
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
    /// The ephemeral containers' subresource writes only them.
    fn merge_subresource(&self, sub: &str, current: &Value, incoming: &Value) -> Option<Value> {
        (sub == ephemeral_containers::SUBRESOURCE)
            .then(|| ephemeral_containers::merge(current, incoming))
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        if sub == "status" {
            causes.extend(validation_update::validate_pod_status_update(next, current));
        } else if sub == ephemeral_containers::SUBRESOURCE {
            if let Ok(p) = serde_json::from_value::<PodType>(next.clone()) {
                causes.extend(validation::validate_pod(&p));
                if let Some(spec) = &p.spec {
                    causes.extend(ephemeral_containers::validate(spec));
                }
            }
            causes.extend(ephemeral_containers::validate_update(next, current));
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
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::on_pod_create(obj)
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(spec: Value, status: Value) -> (String, String) {
        let (ready, total, reason, _) =
            pod_columns(&json!({"metadata": {"name": "p"}, "spec": spec, "status": status}));
        (format!("{ready}/{total}"), reason)
    }

    fn running(name: &str, ready: bool) -> Value {
        json!({"name": name, "ready": ready, "started": true, "state": {"running": {}}})
    }

    fn waiting(name: &str, reason: &str) -> Value {
        json!({"name": name, "ready": false, "state": {"waiting": {"reason": reason}}})
    }

    fn completed(name: &str) -> Value {
        json!({"name": name, "ready": true, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}})
    }

    /// Cases of upstream's printPod (`TestPrintPod*` in printers_test.go): init containers
    /// decide while the pod initializes, sidecars count as containers.
    #[test]
    fn ready_and_status_as_upstream_prints_them() {
        let spec = json!({"initContainers": [{"name": "a"}, {"name": "side", "restartPolicy": "Always"}, {"name": "b"}],
            "containers": [{"name": "app"}]});
        let initialized = |s: &str| json!([{"type": "Initialized", "status": s}]);
        assert_eq!(
            columns(
                spec.clone(),
                json!({"phase": "Pending", "conditions": initialized("False"),
                "initContainerStatuses": [waiting("a", "PodInitializing"), waiting("side", "PodInitializing"), waiting("b", "PodInitializing")],
                "containerStatuses": [waiting("app", "PodInitializing")]})
            ),
            ("0/2".into(), "Init:0/3".into())
        );
        assert_eq!(
            columns(
                spec.clone(),
                json!({"phase": "Pending", "conditions": initialized("False"),
                "initContainerStatuses": [completed("a"), running("side", true), running("b", false)],
                "containerStatuses": [waiting("app", "PodInitializing")]})
            ),
            ("1/2".into(), "Init:2/3".into())
        );
        assert_eq!(
            columns(
                spec.clone(),
                json!({"phase": "Pending", "conditions": initialized("False"),
                "initContainerStatuses": [waiting("a", "CreateContainerConfigError")],
                "containerStatuses": [waiting("app", "PodInitializing")]})
            ),
            ("0/2".into(), "Init:CreateContainerConfigError".into())
        );
        assert_eq!(
            columns(
                spec.clone(),
                json!({"phase": "Pending", "conditions": initialized("True"),
                "initContainerStatuses": [completed("a"), running("side", true), completed("b")],
                "containerStatuses": [waiting("app", "PodInitializing")]})
            ),
            ("1/2".into(), "PodInitializing".into())
        );
        assert_eq!(
            columns(
                spec,
                json!({"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
                "initContainerStatuses": [completed("a"), running("side", true), completed("b")],
                "containerStatuses": [running("app", true)]})
            ),
            ("2/2".into(), "Running".into())
        );
        // A completed container beside a running one: Running, or NotReady without Ready.
        let two = json!({"containers": [{"name": "x"}, {"name": "y"}]});
        assert_eq!(
            columns(
                two.clone(),
                json!({"phase": "Running",
                "containerStatuses": [completed("x"), running("y", true)]})
            ),
            ("1/2".into(), "NotReady".into())
        );
        assert_eq!(
            columns(
                json!({"containers": [{"name": "x"}]}),
                json!({"phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]})
            ),
            ("0/1".into(), "SchedulingGated".into())
        );
    }
}

//! core/v1 Node (upstream `pkg/registry/core/node`, printer `printNode`).

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    Strategy, age_of, column, field_at, kind_type, str_at, validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct Node;

fn node_cells(n: &Value) -> Vec<Value> {
    let conds = n
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut status = match conds
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
    {
        Some(c) if c.get("status").and_then(Value::as_str) == Some("True") => "Ready".to_string(),
        // printNode: any other status of Ready (False, Unknown) prints as NotReady; only a
        // node without the condition is Unknown.
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if n.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = n
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("node-role.kubernetes.io/")
                        .map(String::from)
                        .or_else(|| {
                            (k == "kubernetes.io/role")
                                .then(|| v.as_str().unwrap_or_default().to_string())
                        })
                })
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    let addr = |t: &str| {
        n.pointer("/status/addresses")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .find(|x| x.get("type").and_then(Value::as_str) == Some(t))
            })
            .and_then(|x| x.get("address").and_then(Value::as_str))
            .unwrap_or("<none>")
            .to_string()
    };
    let unknown = |x: &str| {
        if x.is_empty() {
            "<unknown>".to_string()
        } else {
            x.to_string()
        }
    };
    vec![
        json!(str_at(n, "/metadata/name")),
        json!(status),
        json!(if roles.is_empty() {
            "<none>".into()
        } else {
            roles.join(",")
        }),
        json!(age_of(n)),
        json!(str_at(n, "/status/nodeInfo/kubeletVersion")),
        json!(addr("InternalIP")),
        json!(addr("ExternalIP")),
        json!(unknown(str_at(n, "/status/nodeInfo/osImage"))),
        json!(unknown(str_at(n, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(str_at(
            n,
            "/status/nodeInfo/containerRuntimeVersion"
        ))),
    ]
}

impl Strategy for Node {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Node"
    }
    kind_type!(k8s_openapi::api::core::v1::Node);
    fn columns(&self) -> Vec<Value> {
        vec![
            column(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            column("Status", "string", 0, "The status of the node"),
            column("Roles", "string", 0, "The roles of the node"),
            column(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            column(
                "Version",
                "string",
                0,
                "Kubelet Version reported by the node.",
            ),
            column("Internal-IP", "string", 1, "List of internal IPs."),
            column("External-IP", "string", 1, "List of external IPs."),
            column(
                "OS-Image",
                "string",
                1,
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            ),
            column(
                "Kernel-Version",
                "string",
                1,
                "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            ),
            column(
                "Container-Runtime",
                "string",
                1,
                "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        node_cells(o)
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        (field == "spec.unschedulable")
            .then(|| Some(field_at(o, "/spec/unschedulable").unwrap_or_else(|| "false".into())))
    }
    /// A node registered without allocatable advertises its capacity, as a kubelet would.
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        if obj.pointer("/status/allocatable").is_none()
            && let Some(c) = obj.pointer("/status/capacity").cloned()
        {
            obj["status"]["allocatable"] = c;
        }
        validate_into_trace("", "Node", obj, trace, Vec::new())
    }
}

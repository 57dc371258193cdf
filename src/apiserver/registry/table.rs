//! Server-side printing: `meta.k8s.io/v1` Table responses for `kubectl get`, with the columns
//! kube-apiserver's printers produce (`pkg/printers/internalversion`, specs/apiserver.md §10).

use serde_json::{Value, json};

use crate::apiserver::registry::strategy;
use crate::apiserver::registry::table_columns::columns;
use crate::apiserver::util::age;

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.to_string()
    }
}

/// The pod STATUS column, as kubectl's printPod computes it.
pub fn pod_status(p: &Value) -> String {
    let mut reason = s(p, "/status/phase").to_string();
    if !s(p, "/status/reason").is_empty() {
        reason = s(p, "/status/reason").to_string();
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
    if !s(p, "/metadata/deletionTimestamp").is_empty()
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
        json!(s(p, "/metadata/name")),
        json!(format!("{ready}/{containers}")),
        json!(pod_status(p)),
        json!(restarts.to_string()),
        json!(age(p
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str))),
        json!(or_none(s(p, "/status/podIP"))),
        json!(or_none(s(p, "/spec/nodeName"))),
        json!(or_none(s(p, "/status/nominatedNodeName"))),
        json!(if gates == 0 {
            "<none>".to_string()
        } else {
            format!("0/{gates}")
        }),
    ]
}

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
        Some(c) if c.get("status").and_then(Value::as_str) == Some("False") => {
            "NotReady".to_string()
        }
        _ => "Unknown".to_string(),
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
        json!(s(n, "/metadata/name")),
        json!(status),
        json!(if roles.is_empty() {
            "<none>".into()
        } else {
            roles.join(",")
        }),
        json!(age(n
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str))),
        json!(s(n, "/status/nodeInfo/kubeletVersion")),
        json!(addr("InternalIP")),
        json!(addr("ExternalIP")),
        json!(unknown(s(n, "/status/nodeInfo/osImage"))),
        json!(unknown(s(n, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(s(n, "/status/nodeInfo/containerRuntimeVersion"))),
    ]
}

fn event_cells(e: &Value) -> Vec<Value> {
    let last = [
        s(e, "/lastTimestamp"),
        s(e, "/eventTime"),
        s(e, "/metadata/creationTimestamp"),
    ]
    .into_iter()
    .find(|x| !x.is_empty())
    .map(|x| age(Some(x)))
    .unwrap_or_else(|| "<unknown>".into());
    let first = [s(e, "/firstTimestamp"), s(e, "/eventTime")]
        .into_iter()
        .find(|x| !x.is_empty())
        .map(|x| age(Some(x)));
    let obj = format!(
        "{}/{}",
        s(e, "/involvedObject/kind").to_lowercase(),
        s(e, "/involvedObject/name")
    );
    let source = if s(e, "/source/component").is_empty() {
        s(e, "/reportingComponent")
    } else {
        s(e, "/source/component")
    };
    vec![
        json!(last),
        json!(s(e, "/type")),
        json!(s(e, "/reason")),
        json!(obj),
        json!(s(e, "/involvedObject/fieldPath")),
        json!(source),
        json!(s(e, "/message").trim()),
        json!(first.unwrap_or_else(|| "<unknown>".into())),
        json!(e.get("count").and_then(Value::as_i64).unwrap_or(1)),
        json!(s(e, "/metadata/name")),
    ]
}

fn binding_cells(b: &Value) -> Vec<Value> {
    let subjects = b
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let of = |k: &str| {
        subjects
            .iter()
            .filter(|x| x.get("kind").and_then(Value::as_str) == Some(k))
            .map(|x| {
                if k == "ServiceAccount" {
                    format!("{}/{}", s(x, "/namespace"), s(x, "/name"))
                } else {
                    s(x, "/name").to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        json!(s(b, "/metadata/name")),
        json!(format!(
            "{}/{}",
            s(b, "/roleRef/kind"),
            s(b, "/roleRef/name")
        )),
        json!(age(b
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str))),
        json!(of("User")),
        json!(of("Group")),
        json!(of("ServiceAccount")),
    ]
}

pub fn cells(kind: &str, o: &Value) -> Vec<Value> {
    match kind {
        "Pod" => pod_cells(o),
        "Node" => node_cells(o),
        "Namespace" => vec![
            json!(s(o, "/metadata/name")),
            json!(s(o, "/status/phase")),
            json!(age(o
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str))),
        ],
        "Event" => event_cells(o),
        "PriorityClass" => vec![
            json!(s(o, "/metadata/name")),
            json!(o.get("value").and_then(Value::as_i64).unwrap_or(0)),
            json!(
                o.get("globalDefault")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            json!(age(o
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str))),
            json!(s(o, "/preemptionPolicy")),
        ],
        "ClusterRoleBinding" | "RoleBinding" => binding_cells(o),
        _ if let Some(k) = strategy::of_kind(kind) => k.cells(o),
        _ => vec![
            json!(s(o, "/metadata/name")),
            json!(s(o, "/metadata/creationTimestamp")),
        ],
    }
}

/// PartialObjectMetadata for a row (`includeObject=Metadata`, the default).
fn row_object(o: &Value, include: &str, table_v1beta1: bool) -> Option<Value> {
    match include {
        "None" => None,
        "Object" => Some(o.clone()),
        _ => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": if table_v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
            "metadata": o.get("metadata").cloned().unwrap_or(json!({})),
        })),
    }
}

/// A Table of `items`; `with_columns` false for watch events after the first.
pub fn table(
    kind: &str,
    items: &[&Value],
    rv: &str,
    include: &str,
    v1beta1: bool,
    with_columns: bool,
) -> Value {
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(kind, o)});
            if let Some(obj) = row_object(o, include, v1beta1) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    let mut t = json!({
        "kind": "Table",
        "apiVersion": if v1beta1 { "meta.k8s.io/v1beta1" } else { "meta.k8s.io/v1" },
        "metadata": {"resourceVersion": rv},
    });
    if with_columns {
        t["columnDefinitions"] = Value::Array(columns(kind));
    } else {
        t["columnDefinitions"] = Value::Null;
    }
    t["rows"] = Value::Array(rows);
    t
}

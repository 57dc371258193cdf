//! The column definitions of server-side Tables, per kind: names, types, priorities (priority 1
//! shows only with `-o wide`) and the field descriptions upstream's printers attach.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy;

fn col(name: &str, ty: &str, priority: i32, description: &str) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

pub fn columns(kind: &str) -> Vec<Value> {
    match kind {
        "Pod" => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            col(
                "Ready",
                "string",
                0,
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            col(
                "Status",
                "string",
                0,
                "The aggregate status of the containers in this pod.",
            ),
            col(
                "Restarts",
                "string",
                0,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            col(
                "IP",
                "string",
                1,
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            ),
            col(
                "Node",
                "string",
                1,
                "NodeName indicates in which node this pod is scheduled.",
            ),
            col(
                "Nominated Node",
                "string",
                1,
                "nominatedNodeName is set when this pod preempts other pods on the node.",
            ),
            col(
                "Readiness Gates",
                "string",
                1,
                "If specified, all readiness gates will be evaluated for pod readiness.",
            ),
        ],
        "Node" => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            col("Status", "string", 0, "The status of the node"),
            col("Roles", "string", 0, "The roles of the node"),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            col(
                "Version",
                "string",
                0,
                "Kubelet Version reported by the node.",
            ),
            col("Internal-IP", "string", 1, "List of internal IPs."),
            col("External-IP", "string", 1, "List of external IPs."),
            col(
                "OS-Image",
                "string",
                1,
                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            ),
            col(
                "Kernel-Version",
                "string",
                1,
                "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            ),
            col(
                "Container-Runtime",
                "string",
                1,
                "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            ),
        ],
        "Namespace" => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            col("Status", "string", 0, "The status of the namespace"),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
        ],
        "Event" => vec![
            col(
                "Last Seen",
                "string",
                0,
                "The last time the event was seen.",
            ),
            col(
                "Type",
                "string",
                0,
                "Type of this event (Normal, Warning), new types could be added in the future.",
            ),
            col(
                "Reason",
                "string",
                0,
                "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
            ),
            col(
                "Object",
                "string",
                0,
                "The object that this event is about.",
            ),
            col(
                "Subobject",
                "string",
                1,
                "The subobject (field path) that this event is about.",
            ),
            col("Source", "string", 1, "The component reporting this event."),
            col(
                "Message",
                "string",
                0,
                "A human-readable description of the status of this operation.",
            ),
            col(
                "First Seen",
                "string",
                1,
                "The first time the event was seen.",
            ),
            col(
                "Count",
                "integer",
                1,
                "The number of times this event has occurred.",
            ),
            col(
                "Name",
                "string",
                1,
                "Name must be unique within a namespace.",
            ),
        ],
        "PriorityClass" => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            col("Value", "integer", 0, "The value of this priority class."),
            col(
                "Global-Default",
                "boolean",
                0,
                "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
            ),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            col(
                "PreemptionPolicy",
                "string",
                0,
                "PreemptionPolicy is the Policy for preempting pods with lower priority.",
            ),
        ],
        "ClusterRoleBinding" | "RoleBinding" => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            col("Role", "string", 0, "RoleRef is the reference to the role."),
            col(
                "Age",
                "string",
                0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
            ),
            col("Users", "string", 1, "Users in the roleBinding"),
            col("Groups", "string", 1, "Groups in the roleBinding"),
            col(
                "ServiceAccounts",
                "string",
                1,
                "ServiceAccounts in the roleBinding",
            ),
        ],
        _ if let Some(k) = strategy::of_kind(kind) => k.columns(),
        _ => vec![
            col(
                "Name",
                "string",
                0,
                "Name must be unique within a namespace.",
            ),
            json!({"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0}),
        ],
    }
}

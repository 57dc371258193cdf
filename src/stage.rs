//! One vocabulary for the stages a request and a pod go through: the embedded server's request
//! trace records them, the journey orders them, the TUI and lessons name them. On the wire (the
//! trace's and `journey -o json`'s JSON) a stage is its kebab-case name, as CONTRACT.md says.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A stage of a request through the API server, or of a pod through the control loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    TlsHandshake,
    /// The server's first filter: verb, resource and namespace read from the URL.
    RequestInfo,
    Authentication,
    Impersonation,
    PriorityAndFairness,
    Authorization,
    /// A watch refused for asking too much (the server's own limit on open watches).
    WatchLimit,
    Admission,
    Validation,
    Allocation,
    Storage,
    Response,
    Watch,
    Filter,
    Score,
    Binding,
    Kubelet,
    DeploymentController,
    ReplicasetController,
    DaemonsetController,
    StatefulsetController,
}

/// Every stage, for parsing names.
const ALL: [Stage; 21] = [
    Stage::TlsHandshake,
    Stage::RequestInfo,
    Stage::Authentication,
    Stage::Impersonation,
    Stage::PriorityAndFairness,
    Stage::Authorization,
    Stage::WatchLimit,
    Stage::Admission,
    Stage::Validation,
    Stage::Allocation,
    Stage::Storage,
    Stage::Response,
    Stage::Watch,
    Stage::Filter,
    Stage::Score,
    Stage::Binding,
    Stage::Kubelet,
    Stage::DeploymentController,
    Stage::ReplicasetController,
    Stage::DaemonsetController,
    Stage::StatefulsetController,
];

impl Stage {
    /// A pod's journey, in the contract's order.
    pub const JOURNEY: [Stage; 12] = [
        Stage::TlsHandshake,
        Stage::Authentication,
        Stage::Authorization,
        Stage::Admission,
        Stage::Validation,
        Stage::Storage,
        Stage::Response,
        Stage::Watch,
        Stage::Filter,
        Stage::Score,
        Stage::Binding,
        Stage::Kubelet,
    ];

    /// The wire name (`tls-handshake`, `priority-and-fairness`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Stage::TlsHandshake => "tls-handshake",
            Stage::RequestInfo => "request-info",
            Stage::Authentication => "authentication",
            Stage::Impersonation => "impersonation",
            Stage::PriorityAndFairness => "priority-and-fairness",
            Stage::Authorization => "authorization",
            Stage::WatchLimit => "watch-limit",
            Stage::Admission => "admission",
            Stage::Validation => "validation",
            Stage::Allocation => "allocation",
            Stage::Storage => "storage",
            Stage::Response => "response",
            Stage::Watch => "watch",
            Stage::Filter => "filter",
            Stage::Score => "score",
            Stage::Binding => "binding",
            Stage::Kubelet => "kubelet",
            Stage::DeploymentController => "deployment-controller",
            Stage::ReplicasetController => "replicaset-controller",
            Stage::DaemonsetController => "daemonset-controller",
            Stage::StatefulsetController => "statefulset-controller",
        }
    }

    /// The name a person reads on screen.
    pub const fn title(self) -> &'static str {
        match self {
            Stage::TlsHandshake => "TLS handshake",
            Stage::RequestInfo => "Request info",
            Stage::Authentication => "Authentication",
            Stage::Impersonation => "Impersonation",
            Stage::PriorityAndFairness => "Priority and fairness",
            Stage::Authorization => "Authorization",
            Stage::WatchLimit => "Watch limit",
            Stage::Admission => "Admission",
            Stage::Validation => "Validation",
            Stage::Allocation => "ClusterIP / NodePort allocation",
            // etcd on a real cluster, and with `serve --etcd`; the embedded server's memory
            // otherwise: the detail says which.
            Stage::Storage => "Storage",
            // The answer's code is in the detail: a refused create is no 201.
            Stage::Response => "Response",
            Stage::Watch => "Watch event",
            Stage::Filter => "Filter",
            Stage::Score => "Score",
            Stage::Binding => "Binding",
            Stage::Kubelet => "Kubelet",
            Stage::DeploymentController => "Deployment controller",
            Stage::ReplicasetController => "ReplicaSet controller",
            Stage::DaemonsetController => "DaemonSet controller",
            Stage::StatefulsetController => "StatefulSet controller",
        }
    }

    /// Every stage's wire name, for an error that lists what is accepted.
    /// A kube-controller-manager loop's step in a workload's journey.
    pub const fn is_controller(self) -> bool {
        matches!(
            self,
            Stage::DeploymentController
                | Stage::ReplicasetController
                | Stage::DaemonsetController
                | Stage::StatefulsetController
        )
    }

    pub fn names() -> impl Iterator<Item = &'static str> {
        ALL.iter().map(|s| s.as_str())
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Stage {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL.iter()
            .copied()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| format!("unknown stage {s:?}"))
    }
}

impl PartialEq<Stage> for serde_json::Value {
    fn eq(&self, other: &Stage) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

/// How a stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Skipped,
}

impl Status {
    /// Read a trace's or journey's `"status"` string; anything else is `None`.
    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "ok" => Some(Status::Ok),
            "failed" => Some(Status::Failed),
            "skipped" => Some(Status::Skipped),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_through_serde_and_from_str() {
        for s in ALL {
            let json = serde_json::to_value(s).unwrap_or_default();
            assert_eq!(json, serde_json::Value::String(s.as_str().into()));
            assert_eq!(s.as_str().parse::<Stage>(), Ok(s));
        }
        assert!("filtering".parse::<Stage>().is_err());
    }

    #[test]
    fn the_journey_is_in_contract_order() {
        let names: Vec<_> = Stage::JOURNEY.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "tls-handshake",
                "authentication",
                "authorization",
                "admission",
                "validation",
                "storage",
                "response",
                "watch",
                "filter",
                "score",
                "binding",
                "kubelet"
            ]
        );
    }
}

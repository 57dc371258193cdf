//! The seam between the scheduler loop and a scheduling engine. The loop hands over a snapshot
//! (k8s-openapi Nodes and Pods) and one pending pod; the engine returns where it goes and its
//! own trace. `KubeScheduler` runs the `scheduler` module's simulation of kube-scheduler.

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use crate::scheduler::preemption::DisruptionBudget;

/// One scheduling cycle's verdict.
#[derive(Debug, Clone)]
pub struct Placement {
    pub selected: Option<String>,
    /// The FitError text when no node fits (`0/4 nodes are available: ...`).
    pub message: Option<String>,
    /// Filter and score detail per node, in the contract's shape.
    pub filter: Value,
    pub score: Value,
    /// The engine's full trace (PodTrace for `KubeScheduler`).
    pub trace: Option<Value>,
    /// Which engine decided, for the trace.
    pub engine: &'static str,
    /// When no node fits: where evicting lower-priority pods makes room, and which.
    pub preemption: Option<crate::scheduler::trace::Preemption>,
    /// PodTopologySpread's reasoning (`scheduler::spread_why`), null when it did not apply.
    pub spread: Value,
}

/// The workload controllers' selectors, keyed (namespace, kind, name): PodTopologySpread's
/// system defaults spread a pod among the pods its owner selects.
pub type Controllers = Vec<((String, String, String), LabelSelector)>;

pub trait Engine: Send + Sync {
    fn schedule(
        &self,
        nodes: &[Node],
        pods: &[Pod],
        controllers: &Controllers,
        budgets: &[DisruptionBudget],
        pod: &Pod,
    ) -> Placement;
}

/// kube-scheduler as the `scheduler` module simulates it, at the release this server reports.
pub struct KubeScheduler {
    version: crate::scheduler::KubeVersion,
    inner: std::sync::Mutex<crate::scheduler::Scheduler>,
}

impl KubeScheduler {
    pub fn new() -> Self {
        // The release `/version` reports, mapped as every client maps it.
        let reported = crate::apiserver::registry::discovery::version();
        let version =
            crate::scheduler::release::Modelling::for_server(reported["gitVersion"].as_str())
                .version;
        KubeScheduler {
            version,
            inner: std::sync::Mutex::new(crate::scheduler::Scheduler::new(version, None, 0)),
        }
    }
}

impl Default for KubeScheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Engine for KubeScheduler {
    fn schedule(
        &self,
        nodes: &[Node],
        pods: &[Pod],
        controllers: &Controllers,
        budgets: &[DisruptionBudget],
        pod: &Pod,
    ) -> Placement {
        let failed = |message: String| Placement {
            selected: None,
            message: Some(message),
            filter: json!([]),
            score: json!([]),
            trace: None,
            engine: "kube-scheduler simulation (kexplore scheduler module)",
            preemption: None,
            spread: Value::Null,
        };
        let mut snap = match crate::scheduler::Snapshot::build(
            nodes,
            pods,
            self.version.pod_level_resources(),
        ) {
            Ok(s) => s,
            Err(e) => return failed(format!("snapshot: {} {}: {}", e.object, e.field, e.message)),
        };
        snap.disruption_budgets = budgets.to_vec();
        for (key, sel) in controllers {
            snap.controllers.insert(
                key.clone(),
                crate::scheduler::selector::Selector::from_label_selector(Some(sel)),
            );
        }
        let info = match snap.pod_info(pod) {
            Ok(i) => i,
            Err(e) => return failed(format!("pod: {} {}: {}", e.object, e.field, e.message)),
        };
        let trace = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .schedule_one(&snap, &info);
        let spread = spread_json(&snap, &info, &trace, controllers);
        Placement {
            spread,
            selected: trace.selected.clone(),
            message: trace.message.clone(),
            filter: serde_json::to_value(&trace.filter).unwrap_or(Value::Null),
            score: serde_json::to_value(&trace.score).unwrap_or(Value::Null),
            trace: serde_json::to_value(&trace).ok(),
            engine: "kube-scheduler simulation (kexplore scheduler module)",
            preemption: trace.preemption.clone(),
        }
    }
}

/// The spread explanation with the owner's selector as kubectl prints one (`app=web,…`).
fn spread_json(
    snap: &crate::scheduler::Snapshot,
    info: &crate::scheduler::podinfo::PodInfo,
    trace: &crate::scheduler::trace::PodTrace,
    controllers: &Controllers,
) -> Value {
    let args = crate::scheduler::plugins::pod_topology_spread::SpreadArgs::default();
    let Some(why) = crate::scheduler::spread_why::explain(snap, info, trace, &args) else {
        return Value::Null;
    };
    let mut v = serde_json::to_value(&why).unwrap_or(Value::Null);
    if let Some(o) = &why.owner
        && let Some((_, sel)) = controllers.iter().find(|((ns, kind, name), _)| {
            *ns == info.namespace && *kind == o.kind && *name == o.name
        })
    {
        v["owner"]["selector"] = json!(selector_text(sel));
    }
    v
}

fn selector_text(sel: &LabelSelector) -> String {
    let mut parts: Vec<String> = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in sel.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            op => format!("{} {op} ({values})", e.key),
        });
    }
    parts.join(",")
}

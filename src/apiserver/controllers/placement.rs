//! The seam between the scheduler loop and a scheduling engine. The loop hands over a snapshot
//! (k8s-openapi Nodes and Pods) and one pending pod; the engine returns where it goes and its
//! own trace. `KubeScheduler` runs the `scheduler` module's simulation of kube-scheduler (the
//! default); `BasicFit` is a small stand-in (NodeUnschedulable, TaintToleration,
//! NodeResourcesFit, LeastAllocated) kept for tests of the loop itself.

use crate::scheduler::plugins::{node_resources_fit, node_unschedulable, taint_toleration};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

use crate::apiserver::registry::validation::parse_quantity;

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
}

pub trait Engine: Send + Sync {
    fn schedule(&self, nodes: &[Node], pods: &[Pod], pod: &Pod) -> Placement;
}

pub struct BasicFit;

fn requests(p: &Pod) -> (f64, f64) {
    let mut cpu = 0.0;
    let mut mem = 0.0;
    for c in p.spec.iter().flat_map(|s| s.containers.iter()) {
        if let Some(r) = c.resources.as_ref().and_then(|r| r.requests.as_ref()) {
            cpu += r
                .get("cpu")
                .and_then(|q| parse_quantity(&q.0))
                .unwrap_or(0.0);
            mem += r
                .get("memory")
                .and_then(|q| parse_quantity(&q.0))
                .unwrap_or(0.0);
        }
    }
    (cpu, mem)
}

fn allocatable(n: &Node, r: &str) -> f64 {
    n.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get(r))
        .and_then(|q| parse_quantity(&q.0))
        .unwrap_or(0.0)
}

/// FitError's histogram: `<count> <reason>` strings sorted as whole strings.
fn histogram(reasons: Vec<String>) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for r in reasons {
        *counts.entry(r).or_default() += 1;
    }
    let mut hist: Vec<String> = counts.iter().map(|(r, c)| format!("{c} {r}")).collect();
    hist.sort();
    hist.join(", ")
}

impl Engine for BasicFit {
    fn schedule(&self, nodes: &[Node], pods: &[Pod], pod: &Pod) -> Placement {
        let (pcpu, pmem) = requests(pod);
        let tolerations = pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.clone())
            .unwrap_or_default();
        let mut filter = Vec::new();
        let mut feasible = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        let mut preemption: Vec<String> = Vec::new();
        for n in nodes {
            let name = n.metadata.name.clone().unwrap_or_default();
            let spec = n.spec.clone().unwrap_or_default();
            let mut fail: Option<(&str, Vec<String>)> = None;
            if spec.unschedulable == Some(true) {
                fail = Some((
                    node_unschedulable::NAME,
                    vec!["node(s) were unschedulable".into()],
                ));
            }
            if fail.is_none() {
                for t in spec
                    .taints
                    .iter()
                    .flatten()
                    .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
                {
                    let tolerated = tolerations.iter().any(|tol| {
                        let key_ok = tol
                            .key
                            .as_deref()
                            .is_none_or(|k| k.is_empty() || k == t.key);
                        let op_ok = tol.operator.as_deref() == Some("Exists")
                            || tol.value.as_deref().unwrap_or_default()
                                == t.value.as_deref().unwrap_or_default();
                        let eff_ok = tol
                            .effect
                            .as_deref()
                            .is_none_or(|e| e.is_empty() || e == t.effect);
                        key_ok
                            && op_ok
                            && eff_ok
                            && (tol.key.is_some() || tol.operator.as_deref() == Some("Exists"))
                    });
                    if !tolerated {
                        let text = format!(
                            "node(s) had untolerated taint {{{}: {}}}",
                            t.key,
                            t.value.clone().unwrap_or_default()
                        );
                        fail = Some((taint_toleration::NAME, vec![text]));
                        break;
                    }
                }
            }
            let on_node: Vec<&Pod> = pods
                .iter()
                .filter(|p| {
                    p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(name.as_str())
                })
                .collect();
            let (ucpu, umem) = on_node
                .iter()
                .map(|p| requests(p))
                .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
            let (acpu, amem) = (allocatable(n, "cpu"), allocatable(n, "memory"));
            if fail.is_none() {
                let mut r = Vec::new();
                if on_node.len() + 1 > allocatable(n, "pods").max(1.0) as usize
                    && allocatable(n, "pods") > 0.0
                {
                    r.push("Too many pods".to_string());
                }
                if pcpu > 0.0 && ucpu + pcpu > acpu + 1e-9 {
                    r.push("Insufficient cpu".into());
                }
                if pmem > 0.0 && umem + pmem > amem {
                    r.push("Insufficient memory".into());
                }
                if !r.is_empty() {
                    fail = Some((node_resources_fit::NAME, r));
                }
            }
            match fail {
                Some((plugin, rs)) => {
                    reasons.extend(rs.iter().cloned());
                    // Resource shortfalls could be preempted away only with lower-priority victims.
                    preemption.push(if plugin == node_resources_fit::NAME {
                        "No preemption victims found for incoming pod".into()
                    } else {
                        "Preemption is not helpful for scheduling".into()
                    });
                    filter.push(
                        json!({"node": name, "passed": false, "plugin": plugin, "reasons": rs}),
                    );
                }
                None => {
                    filter.push(
                        json!({"node": name, "passed": true, "plugin": null, "reasons": null}),
                    );
                    // LeastAllocated with the scheduler's defaults for requestless pods (100m, 200Mi).
                    let rc = if pcpu > 0.0 { pcpu } else { 0.1 };
                    let rm = if pmem > 0.0 {
                        pmem
                    } else {
                        200.0 * 1024.0 * 1024.0
                    };
                    let free = |used: f64, req: f64, cap: f64| {
                        if cap <= 0.0 {
                            0.0
                        } else {
                            ((cap - used - req).max(0.0) * 100.0 / cap).floor()
                        }
                    };
                    let s = ((free(ucpu, rc, acpu) + free(umem, rm, amem)) / 2.0).floor() as i64;
                    feasible.push((name, s));
                }
            }
        }
        let score: Vec<Value> = feasible
            .iter()
            .map(|(n, s)| json!({"node": n, "total": s, "plugins": [{"name": node_resources_fit::NAME, "raw": s, "normalized": s, "weight": 1, "weighted": s}]}))
            .collect();
        let best = feasible
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(n, _)| n.clone());
        let message = if best.is_none() {
            let n = nodes.len();
            Some(format!(
                "0/{n} nodes are available: {}. preemption: 0/{n} nodes are available: {}.",
                histogram(reasons),
                histogram(preemption)
            ))
        } else {
            None
        };
        Placement {
            selected: best,
            message,
            filter: Value::Array(filter),
            score: Value::Array(score),
            trace: None,
            engine: "kexplore BasicFit (NodeUnschedulable, TaintToleration, NodeResourcesFit, LeastAllocated)",
        }
    }
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
    fn schedule(&self, nodes: &[Node], pods: &[Pod], pod: &Pod) -> Placement {
        let failed = |message: String| Placement {
            selected: None,
            message: Some(message),
            filter: json!([]),
            score: json!([]),
            trace: None,
            engine: "kube-scheduler simulation (kexplore scheduler module)",
        };
        let mut snap = match crate::scheduler::Snapshot::build(
            nodes,
            pods,
            self.version.pod_level_resources(),
        ) {
            Ok(s) => s,
            Err(e) => return failed(format!("snapshot: {} {}: {}", e.object, e.field, e.message)),
        };
        let info = match snap.pod_info(pod) {
            Ok(i) => i,
            Err(e) => return failed(format!("pod: {} {}: {}", e.object, e.field, e.message)),
        };
        let trace = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .schedule_one(&snap, &info);
        Placement {
            selected: trace.selected.clone(),
            message: trace.message.clone(),
            filter: serde_json::to_value(&trace.filter).unwrap_or(Value::Null),
            score: serde_json::to_value(&trace.score).unwrap_or(Value::Null),
            trace: serde_json::to_value(&trace).ok(),
            engine: "kube-scheduler simulation (kexplore scheduler module)",
        }
    }
}

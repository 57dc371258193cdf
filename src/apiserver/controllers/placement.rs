//! The seam between the scheduler loop and a scheduling engine. The loop hands over a snapshot
//! (its live cache, `scheduler_cache.rs`) and one pending pod at a time; the engine returns
//! where it goes and its own trace. `KubeScheduler` runs the `scheduler` module's simulation of kube-scheduler.

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use crate::scheduler::Snapshot;
use crate::scheduler::preemption::DisruptionBudget;

/// One scheduling cycle's verdict.
#[derive(Debug, Clone)]
pub struct Placement {
    pub selected: Option<String>,
    /// The FitError text when no node fits (`0/4 nodes are available: ...`).
    pub message: Option<String>,
    /// The engine's whole trace: filter and score per node, in the contract's shape, and how
    /// the choice was made. None when the pod could not even be compiled.
    pub trace: Option<crate::scheduler::trace::PodTrace>,
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
    /// A snapshot built from these nodes and pods: for a pod that must see other pods'
    /// nominations as placed (the scheduler loop otherwise schedules on its live cache).
    fn snapshot(
        &self,
        nodes: &[Node],
        pods: &[Pod],
        controllers: &Controllers,
        budgets: &[DisruptionBudget],
    ) -> Result<Snapshot, String>;
    fn schedule(&self, snap: &mut Snapshot, controllers: &Controllers, pod: &Pod) -> Placement;
    /// Whether pods' resources are read at pod level (`spec.resources`), as the modelled
    /// release does: the scheduler cache compiles pods the same way.
    fn pod_level_resources(&self) -> bool;
    /// The schedulerNames whose pods it places (its profiles'); other pods are left alone.
    fn scheduler_names(&self) -> Vec<String>;
}

/// The owners' selectors (system-default spreading) and the disruption budgets (preemption),
/// as they are this cycle.
pub(crate) fn set_owners(
    snap: &mut Snapshot,
    controllers: &Controllers,
    budgets: &[DisruptionBudget],
) {
    snap.disruption_budgets = budgets.to_vec();
    snap.controllers.clear();
    for (key, sel) in controllers {
        snap.controllers.insert(
            key.clone(),
            crate::scheduler::selector::Selector::from_label_selector(Some(sel)),
        );
    }
}

/// kube-scheduler as the `scheduler` module simulates it, at the release this server reports.
pub struct KubeScheduler {
    version: crate::scheduler::KubeVersion,
    inner: std::sync::Mutex<crate::scheduler::Scheduler>,
}

impl KubeScheduler {
    pub fn new() -> Self {
        Self::with_profiles(None)
    }

    /// kube-scheduler with these profiles (`--scheduler-config`); `None`: the default one.
    pub fn with_profiles(profiles: Option<Vec<crate::scheduler::Profile>>) -> Self {
        let version = Self::version();
        KubeScheduler {
            version,
            inner: std::sync::Mutex::new(crate::scheduler::Scheduler::new(version, profiles, 0)),
        }
    }

    /// The profiles of a KubeSchedulerConfiguration file, as this release reads it; the
    /// error names the file.
    pub fn profiles_from_file(
        path: &std::path::Path,
    ) -> Result<Vec<crate::scheduler::Profile>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        crate::scheduler::profile::config::load(&text, Self::version())
            .map_err(|e| format!("{}: {}", path.display(), e.0))
    }

    /// The release `/version` reports, mapped as every client maps it: the one whose
    /// behaviour (and configuration API) the embedded scheduler models.
    pub fn version() -> crate::scheduler::KubeVersion {
        let reported = crate::apiserver::registry::discovery::version();
        crate::scheduler::release::Modelling::for_server(reported["gitVersion"].as_str()).version
    }
}

impl Default for KubeScheduler {
    fn default() -> Self {
        Self::new()
    }
}

const ENGINE: &str = "kube-scheduler simulation (kexplore scheduler module)";

impl Engine for KubeScheduler {
    fn snapshot(
        &self,
        nodes: &[Node],
        pods: &[Pod],
        controllers: &Controllers,
        budgets: &[DisruptionBudget],
    ) -> Result<Snapshot, String> {
        let mut snap = Snapshot::build(nodes, pods, self.version.pod_level_resources())
            .map_err(|e| format!("snapshot: {e}"))?;
        set_owners(&mut snap, controllers, budgets);
        Ok(snap)
    }

    fn schedule(&self, snap: &mut Snapshot, controllers: &Controllers, pod: &Pod) -> Placement {
        let info = match snap.pod_info(pod) {
            Ok(i) => i,
            Err(e) => {
                return Placement::failed(format!("pod: {e}"));
            }
        };
        let trace = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .schedule_one(snap, &info);
        let spread = spread_json(snap, &info, &trace, controllers);
        Placement {
            spread,
            selected: trace.selected.clone(),
            message: trace.message.clone(),
            preemption: trace.preemption.clone(),
            trace: Some(trace),
            engine: ENGINE,
        }
    }

    fn pod_level_resources(&self) -> bool {
        self.version.pod_level_resources()
    }

    fn scheduler_names(&self) -> Vec<String> {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if s.profiles.is_empty() {
            // The legacy (1.13) scheduler has no profiles: it is the default scheduler.
            return vec![crate::scheduler::DEFAULT_SCHEDULER.to_string()];
        }
        s.profiles
            .iter()
            .map(|p| p.scheduler_name.clone())
            .collect()
    }
}

impl Placement {
    /// No decision: the pod or the snapshot could not be read, said in `message`.
    pub(crate) fn failed(message: String) -> Placement {
        Placement {
            selected: None,
            message: Some(message),
            trace: None,
            engine: ENGINE,
            preemption: None,
            spread: Value::Null,
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

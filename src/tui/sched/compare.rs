//! `b`: the same pod on the same cluster placed by two profiles side by side — kube-scheduler's
//! default (NodeResourcesFit scoring LeastAllocated: spread) and bin-packing (MostAllocated:
//! fill the fullest node that fits), the profile upstream documents for packing workloads
//! tightly. Only the scoring strategy differs, so any difference in the winner is its doing.

use crate::scheduler::profile::config;
use crate::scheduler::{KubeVersion, PodInfo, PodTrace, Scheduler, Snapshot};

/// The bin-packing profile as a user would write it in a KubeSchedulerConfiguration.
pub const BIN_PACKING: &str = "\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
";

/// The pod's cycle under the bin-packing profile (under the pod's own schedulerName, so the
/// profile applies to it as the default one does).
pub fn bin_packing(
    snap: &Snapshot,
    pod: &PodInfo,
    version: KubeVersion,
) -> Result<PodTrace, String> {
    let mut profiles = config::load(BIN_PACKING, version).map_err(|e| e.0)?;
    for p in &mut profiles {
        p.scheduler_name = pod.scheduler_name.clone();
    }
    Ok(Scheduler::new(version, Some(profiles), 0).schedule_one(snap, pod))
}

/// One side of the comparison, ready to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub title: &'static str,
    pub winner: Option<String>,
    /// Scored nodes, best total first: (node, total).
    pub rows: Vec<(String, i64)>,
    /// Nodes the filter phase left out.
    pub infeasible: usize,
    /// Why there is no winner (the FitError), or why the profile could not run.
    pub message: Option<String>,
}

pub fn column(title: &'static str, trace: &Result<PodTrace, String>) -> Column {
    match trace {
        Err(e) => Column {
            title,
            winner: None,
            rows: Vec::new(),
            infeasible: 0,
            message: Some(e.clone()),
        },
        Ok(t) => {
            let mut rows: Vec<(String, i64)> = t
                .score
                .iter()
                .map(|s| (s.node.to_string(), s.total))
                .collect();
            rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            Column {
                title,
                winner: t.selected.clone(),
                rows,
                infeasible: t.nodes_total.saturating_sub(t.nodes_feasible),
                message: t.message.clone(),
            }
        }
    }
}

pub const DEFAULT_TITLE: &str = "default: LeastAllocated (spread)";
pub const BIN_PACKING_TITLE: &str = "bin-packing: MostAllocated";

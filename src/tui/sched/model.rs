//! View 5's data: a cluster (nodes and the pods bound to them), one pod to place, the what-if
//! changes a presenter makes to it, and the scheduler's trace for the result. Re-running is a
//! pure computation on the kept snapshot (no I/O), so `update` can do it on every keypress.
//! The scheduler is the same one `kexplore schedule` runs, with the same version and seed.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Node, Pod, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::scheduler::quantity::resource_value;
use crate::scheduler::release::Modelling;
use crate::scheduler::{KubeVersion, PodInfo, PodTrace, Scheduler, Snapshot};

/// The cluster as fetched (or read from a file), before any what-if.
#[derive(Debug, Clone)]
pub struct ClusterData {
    /// Where it came from, e.g. `embedded cluster https://127.0.0.1:41234`.
    pub source: String,
    pub nodes: Vec<Node>,
    /// Pods bound to nodes (pending ones are left out: they do not use capacity).
    pub running: Vec<Pod>,
    /// The pod to place, without `spec.nodeName`.
    pub pod: Pod,
    /// The kube-scheduler release to model and why: the server's, for a live cluster.
    pub release: Modelling,
}

/// Which request `+` and `-` change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resource {
    #[default]
    Cpu,
    Memory,
}

/// A presenter's changes to the pod; each re-runs the cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WhatIf {
    pub resource: Resource,
    /// Added to every app container's request (may be negative; a request never goes below
    /// zero). Init containers keep theirs: they run before, not beside, the app containers.
    pub cpu_milli: i64,
    pub memory_bytes: i64,
    /// Add a toleration of every taint (`operator: Exists`).
    pub tolerate_all: bool,
    /// Index into `Model::labels` of the nodeSelector label to add.
    pub selector: Option<usize>,
}

pub const CPU_STEP: i64 = 500;
pub const MEMORY_STEP: i64 = 512 * 1024 * 1024;

impl WhatIf {
    pub fn is_empty(&self) -> bool {
        self.cpu_milli == 0
            && self.memory_bytes == 0
            && !self.tolerate_all
            && self.selector.is_none()
    }
}

/// The cluster, the pod as changed, and the cycle's outcome.
pub struct Model {
    pub data: ClusterData,
    pub whatif: WhatIf,
    pub snapshot: Snapshot,
    pub pod: PodInfo,
    pub trace: PodTrace,
    /// The cycle for the pod without any what-if: what a bound pod's real node is compared
    /// with, since a what-if changes the pod, not the cluster.
    pub unmodified: PodTrace,
    /// Filter plugins of the profile, in order.
    pub filters: Vec<String>,
    /// Score plugins with weights, in order.
    pub scores: Vec<(String, i64)>,
    /// Every `key=value` label on the nodes, sorted: what `s` cycles through.
    pub labels: Vec<(String, String)>,
    /// Set when the changed pod could not be compiled (a bad quantity, say).
    pub error: Option<String>,
    /// Per snapshot node: its index in `trace.filter` / `trace.score`, if any.
    pub verdict_of: Vec<Option<usize>>,
    pub score_of: Vec<Option<usize>>,
    /// `b`: the same pod's cycle under the bin-packing profile, while the comparison is shown.
    pub bin_packing: Option<Result<PodTrace, String>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("source", &self.data.source)
            .field("pod", &self.trace.pod)
            .field("selected", &self.trace.selected)
            .finish()
    }
}

/// The scheduler `kexplore schedule` would build for this version (seed 0).
fn scheduler(version: KubeVersion) -> Scheduler {
    Scheduler::new(version, None, 0)
}

impl Model {
    pub fn new(data: ClusterData) -> Result<Model, String> {
        let snapshot = Snapshot::build(
            &data.nodes,
            &data.running,
            data.release.version.pod_level_resources(),
        )
        .map_err(|e| e.to_string())?;
        Model::from_snapshot(data, snapshot)
    }

    /// The model on a snapshot already made (a live cluster's, kept by watch events); `data`'s
    /// nodes and pods are then not read.
    pub fn from_snapshot(data: ClusterData, mut snapshot: Snapshot) -> Result<Model, String> {
        let mut labels: BTreeSet<(String, String)> = BTreeSet::new();
        for n in &snapshot.nodes {
            for (k, v) in &n.labels {
                labels.insert((k.clone(), v.clone()));
            }
        }
        let s = scheduler(data.release.version);
        let (filters, scores) = s
            .profiles
            .first()
            .map(|p| (p.filters.clone(), p.scores.clone()))
            .unwrap_or_default();
        let labels: Vec<(String, String)> = labels.into_iter().collect();
        let pod = snapshot
            .pod_info(&apply(&data.pod, &WhatIf::default(), &labels))
            .map_err(|e| e.to_string())?;
        let mut m = Model {
            pod,
            trace: PodTrace::new(String::new(), "", String::new(), 0),
            unmodified: PodTrace::new(String::new(), "", String::new(), 0),
            snapshot,
            data,
            whatif: WhatIf::default(),
            filters,
            scores,
            labels,
            error: None,
            verdict_of: Vec::new(),
            score_of: Vec::new(),
            bin_packing: None,
        };
        m.rerun();
        m.unmodified = m.trace.clone();
        Ok(m)
    }

    /// The pod as the what-if changes make it.
    pub fn changed_pod(&self) -> Pod {
        apply(&self.data.pod, &self.whatif, &self.labels)
    }

    /// Re-runs the cycle with the current what-if; on a bad pod keeps the last trace.
    pub fn rerun(&mut self) {
        let pod = self.changed_pod();
        match self.snapshot.pod_info(&pod) {
            Ok(info) => {
                self.pod = info;
                self.trace =
                    scheduler(self.data.release.version).schedule_one(&self.snapshot, &self.pod);
                self.error = None;
                self.index_trace();
                if self.bin_packing.is_some() {
                    self.compare(true);
                }
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// `b`: runs (or drops) the bin-packing profile's cycle for the pod as it is now.
    pub fn compare(&mut self, on: bool) {
        self.bin_packing = on.then(|| {
            super::compare::bin_packing(&self.snapshot, &self.pod, self.data.release.version)
        });
    }

    fn index_trace(&mut self) {
        let n = self.snapshot.nodes.len();
        self.verdict_of = vec![None; n];
        self.score_of = vec![None; n];
        for (i, v) in self.trace.filter.iter().enumerate() {
            if let Some(&k) = self.snapshot.node_index.get(&*v.node) {
                self.verdict_of[k] = Some(i);
            }
        }
        for (i, s) in self.trace.score.iter().enumerate() {
            if let Some(&k) = self.snapshot.node_index.get(&*s.node) {
                self.score_of[k] = Some(i);
            }
        }
    }

    /// `+` / `-`: one step more or less of the chosen resource on every app container. Below
    /// the point where every container is at zero, further `-` presses change nothing.
    pub fn bump(&mut self, up: bool) {
        let (name, step) = match self.whatif.resource {
            Resource::Cpu => ("cpu", CPU_STEP),
            Resource::Memory => ("memory", MEMORY_STEP),
        };
        let floor = -container_requests(&self.data.pod, name)
            .into_iter()
            .max()
            .unwrap_or(0);
        let delta = match self.whatif.resource {
            Resource::Cpu => &mut self.whatif.cpu_milli,
            Resource::Memory => &mut self.whatif.memory_bytes,
        };
        *delta = if up {
            *delta + step
        } else {
            (*delta - step).max(floor)
        };
    }

    /// How many app containers a what-if request change applies to.
    pub fn containers(&self) -> usize {
        self.data
            .pod
            .spec
            .as_ref()
            .map_or(0, |s| s.containers.len())
    }

    /// The pod's requests as the Fit filter sees them: (milli-cpu, memory bytes).
    pub fn pod_request(&self) -> (i64, i64) {
        let a = &self.pod.requests.actual;
        (a.milli_cpu, a.memory)
    }
}

/// Each app container's request of `resource` (0 when it has none), in spec order.
fn container_requests(pod: &Pod, resource: &str) -> Vec<i64> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| {
            c.resources
                .as_ref()
                .and_then(|r| r.requests.as_ref())
                .and_then(|r| r.get(resource))
                .and_then(|q| resource_value(resource, &q.0).ok())
                .unwrap_or(0)
        })
        .collect()
}

/// Applies the what-if to a copy of `base`: the same change to every app container's
/// requests, a toleration, a nodeSelector label. `spec.nodeName` is always cleared: the pod
/// is to be placed.
pub fn apply(base: &Pod, w: &WhatIf, labels: &[(String, String)]) -> Pod {
    let mut pod = base.clone();
    let cpus = container_requests(base, "cpu");
    let memories = container_requests(base, "memory");
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.node_name = None;
    for (i, c) in spec.containers.iter_mut().enumerate() {
        let cpu = (cpus[i] + w.cpu_milli).max(0);
        let memory = (memories[i] + w.memory_bytes).max(0);
        let res = c.resources.get_or_insert_with(Default::default);
        let req = res.requests.get_or_insert_with(Default::default);
        if w.cpu_milli != 0 {
            req.insert("cpu".into(), Quantity(format!("{cpu}m")));
        }
        if w.memory_bytes != 0 {
            req.insert("memory".into(), Quantity(memory.to_string()));
        }
        // A limit below the new request would make the pod invalid; the scheduler ignores
        // limits, so drop the ones the what-if overtook.
        if let Some(limits) = res.limits.as_mut() {
            for (name, v) in [("cpu", cpu), ("memory", memory)] {
                if limits
                    .get(name)
                    .and_then(|q| resource_value(name, &q.0).ok())
                    .is_some_and(|l| l < v)
                {
                    limits.remove(name);
                }
            }
        }
    }
    if w.tolerate_all {
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .push(Toleration {
                operator: Some("Exists".into()),
                ..Default::default()
            });
    }
    if let Some((k, v)) = w.selector.and_then(|i| labels.get(i)) {
        spec.node_selector
            .get_or_insert_with(Default::default)
            .insert(k.clone(), v.clone());
    }
    pod
}

/// "2", "1.5", "250m" — cpu as a person reads it.
pub fn cpu_text(milli: i64) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else if milli >= 1000 {
        let s = format!("{:.2}", milli as f64 / 1000.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{milli}m")
    }
}

/// "4Gi", "3.5Gi", "512Mi" — memory as a person reads it.
pub fn memory_text(bytes: i64) -> String {
    const MI: i64 = 1024 * 1024;
    const GI: i64 = 1024 * MI;
    if bytes.abs() >= GI {
        let s = format!("{:.2}", bytes as f64 / GI as f64);
        format!("{}Gi", s.trim_end_matches('0').trim_end_matches('.'))
    } else if bytes.abs() >= MI || bytes == 0 {
        format!("{}Mi", bytes / MI)
    } else {
        format!("{bytes}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_like_the_seed() {
        assert_eq!(cpu_text(2000), "2");
        assert_eq!(cpu_text(1500), "1.5");
        assert_eq!(cpu_text(250), "250m");
        assert_eq!(memory_text(3584 * 1024 * 1024), "3.5Gi");
        assert_eq!(memory_text(512 * 1024 * 1024), "512Mi");
    }
}

//! Pod resource requests exactly as component-helpers' `PodRequests` computes them (spec §7):
//! app containers summed, init containers as a running maximum with restartable sidecars
//! accumulating, pod-level requests replacing cpu/memory/hugepages, overhead added. Also the
//! "non-zero" view (100m cpu / 200Mi memory for a container that names neither) used by the
//! NodeResourcesFit scoring strategies.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::quantity::{QuantityError, resource_value};

/// cpu default for a container without a cpu request, in milli-cpu (`DefaultMilliCPURequest`).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// memory default for a container without a memory request (`DefaultMemoryRequest`, 200Mi).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// A resource vector in the scheduler's integer units: cpu in milli, the rest in whole units.
/// Scalar (extended, hugepages, `*/...`) resources are kept sorted by name so that iteration
/// and serialization are deterministic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    pub milli_cpu: i64,
    pub memory: i64,
    pub ephemeral_storage: i64,
    pub scalars: Vec<(String, i64)>,
}

impl Resources {
    pub fn scalar(&self, name: &str) -> i64 {
        match self.scalars.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => self.scalars[i].1,
            Err(_) => 0,
        }
    }

    fn scalar_mut(&mut self, name: &str) -> &mut i64 {
        let i = match self.scalars.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => i,
            Err(i) => {
                self.scalars.insert(i, (name.to_string(), 0));
                i
            }
        };
        &mut self.scalars[i].1
    }

    /// The amount of `name` ("cpu" in milli).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            "cpu" => self.milli_cpu,
            "memory" => self.memory,
            "ephemeral-storage" => self.ephemeral_storage,
            _ => self.scalar(name),
        }
    }

    pub fn set(&mut self, name: &str, v: i64) {
        match name {
            "cpu" => self.milli_cpu = v,
            "memory" => self.memory = v,
            "ephemeral-storage" => self.ephemeral_storage = v,
            _ if is_scalar_resource(name) => *self.scalar_mut(name) = v,
            _ => {}
        }
    }

    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        for (n, v) in &other.scalars {
            *self.scalar_mut(n) += v;
        }
    }

    pub fn sub(&mut self, other: &Resources) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        for (n, v) in &other.scalars {
            *self.scalar_mut(n) -= v;
        }
    }

    fn max_with(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        for (n, v) in &other.scalars {
            let s = self.scalar_mut(n);
            *s = (*s).max(*v);
        }
    }

    /// True when every request is zero (the Fit filter's early exit, spec §3.6 step 2).
    pub fn is_zero(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.scalars.iter().all(|(_, v)| *v == 0)
    }
}

/// Scalar resources: extended (`example.com/foo`), prefixed native (`kubernetes.io/...`),
/// hugepages and attachable volumes — everything the Fit filter checks after cpu, memory and
/// ephemeral-storage. `pods` and `storage` are not requests.
pub fn is_scalar_resource(name: &str) -> bool {
    name.contains('/') || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

/// The pod's requests in both views.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodRequests {
    /// What the Fit filter and BalancedAllocation use.
    pub actual: Resources,
    /// cpu/memory with the per-container defaults, for LeastAllocated & co.
    pub non_zero_milli_cpu: i64,
    pub non_zero_memory: i64,
    /// v1.13's view: app containers only, with defaults (spec §8.2).
    pub legacy_non_zero_milli_cpu: i64,
    pub legacy_non_zero_memory: i64,
}

/// A quantity that failed to parse, with the field path it came from.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{field}: {error}")]
pub struct FieldError {
    pub field: String,
    pub error: QuantityError,
}

type Reqs = BTreeMap<String, K8sQuantity>;

/// The requests a container effectively has once the API server defaulted them: a resource
/// with a limit but no request gets the limit as request (SetDefaults_Pod). Manifests written
/// by hand have not been through the API server, so the simulation applies it here.
fn effective_requests(r: Option<&ResourceRequirements>) -> Reqs {
    let Some(r) = r else { return Reqs::new() };
    let mut out = r.requests.clone().unwrap_or_default();
    if let Some(limits) = &r.limits {
        for (k, v) in limits {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    out
}

fn to_resources(reqs: &Reqs, field: &str) -> Result<Resources, FieldError> {
    let mut out = Resources::default();
    for (name, q) in reqs {
        if !(matches!(name.as_str(), "cpu" | "memory" | "ephemeral-storage")
            || is_scalar_resource(name))
        {
            continue;
        }
        let v = resource_value(name, &q.0).map_err(|error| FieldError {
            field: format!("{field}.{name}"),
            error,
        })?;
        // Requests, overhead and allocatable alike: kube-apiserver refuses a negative one.
        if v < 0 {
            return Err(FieldError {
                field: format!("{field}.{name}"),
                error: QuantityError::Negative(q.0.clone()),
            });
        }
        out.set(name, v);
    }
    Ok(out)
}

struct ContainerReqs {
    actual: Resources,
    non_zero_cpu: i64,
    non_zero_mem: i64,
}

fn container_reqs(c: &Container, field: &str) -> Result<ContainerReqs, FieldError> {
    let reqs = effective_requests(c.resources.as_ref());
    let actual = to_resources(&reqs, &format!("{field}.resources.requests"))?;
    let non_zero_cpu = if reqs.contains_key("cpu") {
        actual.milli_cpu
    } else {
        DEFAULT_MILLI_CPU_REQUEST
    };
    let non_zero_mem = if reqs.contains_key("memory") {
        actual.memory
    } else {
        DEFAULT_MEMORY_REQUEST
    };
    Ok(ContainerReqs {
        actual,
        non_zero_cpu,
        non_zero_mem,
    })
}

/// Computes a pod's requests. `pod_level_resources` says whether the modelled version honours
/// `spec.resources` (PodLevelResources, on by default from v1.34).
pub fn pod_requests(pod: &Pod, pod_level_resources: bool) -> Result<PodRequests, FieldError> {
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(PodRequests::default());
    };
    let mut reqs = Resources::default();
    let (mut nz_cpu, mut nz_mem) = (0i64, 0i64);
    for (i, c) in spec.containers.iter().enumerate() {
        let cr = container_reqs(c, &format!("spec.containers[{i}]"))?;
        reqs.add(&cr.actual);
        nz_cpu += cr.non_zero_cpu;
        nz_mem += cr.non_zero_mem;
    }
    let (legacy_cpu, legacy_mem) = (nz_cpu, nz_mem);

    let mut init_max = Resources::default();
    let (mut init_max_cpu, mut init_max_mem) = (0i64, 0i64);
    let mut sidecars = Resources::default();
    let (mut sidecar_cpu, mut sidecar_mem) = (0i64, 0i64);
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let cr = container_reqs(c, &format!("spec.initContainers[{i}]"))?;
        let (footprint, fp_cpu, fp_mem) = if c.restart_policy.as_deref() == Some("Always") {
            // A sidecar runs for the pod's whole life: it adds to the steady state too.
            reqs.add(&cr.actual);
            nz_cpu += cr.non_zero_cpu;
            nz_mem += cr.non_zero_mem;
            sidecars.add(&cr.actual);
            sidecar_cpu += cr.non_zero_cpu;
            sidecar_mem += cr.non_zero_mem;
            (sidecars.clone(), sidecar_cpu, sidecar_mem)
        } else {
            let mut fp = cr.actual;
            fp.add(&sidecars);
            (
                fp,
                cr.non_zero_cpu + sidecar_cpu,
                cr.non_zero_mem + sidecar_mem,
            )
        };
        init_max.max_with(&footprint);
        init_max_cpu = init_max_cpu.max(fp_cpu);
        init_max_mem = init_max_mem.max(fp_mem);
    }
    reqs.max_with(&init_max);
    nz_cpu = nz_cpu.max(init_max_cpu);
    nz_mem = nz_mem.max(init_max_mem);

    if pod_level_resources && let Some(pl) = spec.resources.as_ref() {
        let pl_reqs = effective_requests(Some(pl));
        let parsed = to_resources(&pl_reqs, "spec.resources.requests")?;
        for name in pl_reqs.keys() {
            let supported = name == "cpu" || name == "memory" || name.starts_with("hugepages-");
            if !supported {
                continue;
            }
            let v = parsed.get(name);
            reqs.set(name, v);
            if name == "cpu" {
                nz_cpu = v;
            } else if name == "memory" {
                nz_mem = v;
            }
        }
    }

    if let Some(overhead) = spec.overhead.as_ref() {
        let oh = to_resources(overhead, "spec.overhead")?;
        reqs.add(&oh);
        nz_cpu += oh.milli_cpu;
        nz_mem += oh.memory;
    }

    Ok(PodRequests {
        actual: reqs,
        non_zero_milli_cpu: nz_cpu,
        non_zero_memory: nz_mem,
        legacy_non_zero_milli_cpu: legacy_cpu,
        legacy_non_zero_memory: legacy_mem,
    })
}

/// Parses a node's `status.allocatable` into the resource vector and the pod capacity.
pub fn node_allocatable(
    alloc: &BTreeMap<String, K8sQuantity>,
) -> Result<(Resources, i64), FieldError> {
    let res = to_resources(alloc, "status.allocatable")?;
    let pods = match alloc.get("pods") {
        Some(q) => {
            let field = || "status.allocatable.pods".to_string();
            let n = resource_value("pods", &q.0).map_err(|error| FieldError {
                field: field(),
                error,
            })?;
            if n < 0 {
                return Err(FieldError {
                    field: field(),
                    error: QuantityError::Negative(q.0.clone()),
                });
            }
            n
        }
        None => 0,
    };
    Ok((res, pods))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap()
    }

    fn c(name: &str, req: serde_json::Value) -> serde_json::Value {
        json!({"name": name, "resources": {"requests": req}})
    }

    #[test]
    fn containers_sum_and_init_max() {
        let p = pod(json!({
            "containers": [c("a", json!({"cpu": "1", "memory": "1Gi"})), c("b", json!({"cpu": "500m"}))],
            "initContainers": [c("i", json!({"cpu": "3", "memory": "100Mi"}))],
        }));
        let r = pod_requests(&p, true).unwrap();
        assert_eq!(r.actual.milli_cpu, 3000);
        assert_eq!(r.actual.memory, 1 << 30);
        // b has no memory request: counts 200Mi in the non-zero view.
        assert_eq!(r.non_zero_memory, (1 << 30) + DEFAULT_MEMORY_REQUEST);
        assert_eq!(r.non_zero_milli_cpu, 3000);
    }

    #[test]
    fn sidecars_accumulate() {
        // sidecar 1 cpu, then a 2 cpu init (footprint 3), app 1 cpu + sidecar = 2 → max 3.
        let p = pod(json!({
            "containers": [c("app", json!({"cpu": "1"}))],
            "initContainers": [
                {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                c("i", json!({"cpu": "2"})),
            ],
        }));
        assert_eq!(pod_requests(&p, true).unwrap().actual.milli_cpu, 3000);
    }

    #[test]
    fn overhead_and_pod_level_and_limits_default() {
        let p = pod(json!({
            "containers": [{"name": "a", "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}}}],
            "overhead": {"cpu": "250m"},
            "resources": {"requests": {"memory": "1Gi"}},
        }));
        let r = pod_requests(&p, true).unwrap();
        assert_eq!(r.actual.milli_cpu, 2250);
        assert_eq!(r.actual.memory, 1 << 30);
        assert_eq!(r.actual.scalar("nvidia.com/gpu"), 1);
        let old = pod_requests(&p, false).unwrap();
        assert_eq!(old.actual.memory, 0);
        assert_eq!(old.non_zero_memory, DEFAULT_MEMORY_REQUEST);
    }

    #[test]
    fn bad_quantity_names_the_field() {
        let p = pod(json!({"containers": [c("a", json!({"cpu": "lots"}))]}));
        let e = pod_requests(&p, true).unwrap_err();
        assert_eq!(e.field, "spec.containers[0].resources.requests.cpu");
    }
}

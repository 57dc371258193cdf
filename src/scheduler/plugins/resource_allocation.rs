//! What NodeResourcesFit's scoring strategies and NodeResourcesBalancedAllocation share
//! (upstream's `resourceAllocationScorer`): per configured resource, the node's allocatable and
//! its requested amount including the pod, in the actual or the non-zero view (spec §4.2).

use crate::scheduler::podinfo::PodInfo;
use crate::scheduler::requests::is_scalar_resource;
use crate::scheduler::snapshot::NodeInfo;

/// A resource with its weight (`ResourceSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    pub name: String,
    pub weight: i64,
}

pub fn default_resources() -> Vec<ResourceSpec> {
    vec![
        ResourceSpec {
            name: "cpu".into(),
            weight: 1,
        },
        ResourceSpec {
            name: "memory".into(),
            weight: 1,
        },
    ]
}

/// The pod's request for `resource`; cpu/memory in the non-zero view unless `use_requested`.
pub fn pod_request(pod: &PodInfo, resource: &str, use_requested: bool) -> i64 {
    let r = &pod.requests;
    match resource {
        "cpu" if !use_requested => r.non_zero_milli_cpu,
        "memory" if !use_requested => r.non_zero_memory,
        _ => r.actual.get(resource),
    }
}

/// (allocatable, node requested + `pod_request`) for one resource; (0, 0) means "skip it".
pub fn allocatable_and_requested(
    node: &NodeInfo,
    resource: &str,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    if pod_request == 0 && is_scalar_resource(resource) {
        return (0, 0);
    }
    match resource {
        "cpu" => {
            let used = if use_requested {
                node.requested.milli_cpu
            } else {
                node.non_zero_milli_cpu
            };
            (node.allocatable.milli_cpu, used + pod_request)
        }
        "memory" => {
            let used = if use_requested {
                node.requested.memory
            } else {
                node.non_zero_memory
            };
            (node.allocatable.memory, used + pod_request)
        }
        "ephemeral-storage" => (
            node.allocatable.ephemeral_storage,
            node.requested.ephemeral_storage + pod_request,
        ),
        r if is_scalar_resource(r) => (
            node.allocatable.scalar(r),
            node.requested.scalar(r) + pod_request,
        ),
        _ => (0, 0),
    }
}

/// Most profiles score 2 resources; up to this many are handled on the stack.
pub const INLINE: usize = 8;

/// Fills `requested`/`allocatable` (as long as `resources`) for the configured resources,
/// leaving entries with allocatable 0 at (0, 0) so scorers skip them.
pub fn fill(
    node: &NodeInfo,
    resources: &[ResourceSpec],
    pod_requests: &[i64],
    use_requested: bool,
    include_pod: bool,
    requested: &mut [i64],
    allocatable: &mut [i64],
) {
    for (i, r) in resources.iter().enumerate() {
        requested[i] = 0;
        allocatable[i] = 0;
        let (alloc, req) = allocatable_and_requested(node, &r.name, pod_requests[i], use_requested);
        if alloc == 0 {
            continue;
        }
        allocatable[i] = alloc;
        requested[i] = if include_pod {
            req
        } else {
            req - pod_requests[i]
        };
    }
}

/// Runs `f(requested, allocatable)` on the filled vectors, on the stack when they are short.
pub fn with_vectors<T>(
    node: &NodeInfo,
    resources: &[ResourceSpec],
    pod_requests: &[i64],
    use_requested: bool,
    include_pod: bool,
    f: impl FnOnce(&[i64], &[i64]) -> T,
) -> T {
    let n = resources.len();
    if n <= INLINE {
        let (mut req, mut alloc) = ([0i64; INLINE], [0i64; INLINE]);
        fill(
            node,
            resources,
            pod_requests,
            use_requested,
            include_pod,
            &mut req[..n],
            &mut alloc[..n],
        );
        f(&req[..n], &alloc[..n])
    } else {
        let (mut req, mut alloc) = (vec![0i64; n], vec![0i64; n]);
        fill(
            node,
            resources,
            pod_requests,
            use_requested,
            include_pod,
            &mut req,
            &mut alloc,
        );
        f(&req, &alloc)
    }
}

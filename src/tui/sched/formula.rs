//! The arithmetic behind a score, with the pod's and the node's actual numbers (`f` in view 5),
//! and a FitError turned around into one line per node ("node-1: Insufficient cpu (needs 2,
//! has 1.5 free)"). Each formula is recomputed from the snapshot and checked against the
//! scheduler's own number, so a mismatch would show instead of hiding.

use super::model::{Model, cpu_text, memory_text};
use super::{formula_node, formula_pods};
use crate::scheduler::plugins;
use crate::scheduler::trace::PluginScore;

/// Non-zero defaults for containers without requests (spec §7.2).
const DEFAULT_MILLI_CPU: i64 = 100;
const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

/// Lines explaining plugin `p`'s score on snapshot node `k`.
pub fn lines(m: &Model, k: usize, p: &PluginScore) -> Vec<String> {
    let node = &m.snapshot.nodes[k];
    let mut out = vec![format!("{} on {}", p.name, node.name)];
    let check = |computed: i64| {
        if computed == p.raw {
            format!("= {computed} ✓ (the scheduler's raw score)")
        } else {
            format!("= {computed} ! the scheduler says {}", p.raw)
        }
    };
    match p.name {
        plugins::node_resources_fit::NAME => {
            let (pc, pm) = (
                m.pod.requests.non_zero_milli_cpu,
                m.pod.requests.non_zero_memory,
            );
            let (ac, am) = (node.allocatable.milli_cpu, node.allocatable.memory);
            let (rc, rm) = (node.non_zero_milli_cpu + pc, node.non_zero_memory + pm);
            let least = |a: i64, r: i64| {
                if a == 0 || r > a {
                    0
                } else {
                    (a - r) * 100 / a
                }
            };
            let (sc, sm) = (least(ac, rc), least(am, rm));
            out.push("LeastAllocated: the more stays free after the pod, the higher".into());
            out.push(format!(
                "cpu     ({} − {}) × 100 / {} = {sc}",
                cpu_text(ac),
                cpu_text(rc),
                cpu_text(ac)
            ));
            out.push(format!(
                "memory  ({} − {}) × 100 / {} = {sm}",
                memory_text(am),
                memory_text(rm),
                memory_text(am)
            ));
            out.push(format!(
                "score   ({sc} + {sm}) / 2 {}",
                check((sc + sm) / 2)
            ));
            if m.pod.requests.actual.milli_cpu == 0 || m.pod.requests.actual.memory == 0 {
                out.push(format!(
                    "note    a container without a request counts as {} cpu / {} here",
                    cpu_text(DEFAULT_MILLI_CPU),
                    memory_text(DEFAULT_MEMORY)
                ));
            }
        }
        plugins::node_resources_balanced_allocation::NAME => {
            let (pc, pm) = m.pod_request();
            let (ac, am) = (node.allocatable.milli_cpu, node.allocatable.memory);
            let fc = ((node.requested.milli_cpu + pc) as f64 / ac.max(1) as f64).min(1.0);
            let fm = ((node.requested.memory + pm) as f64 / am.max(1) as f64).min(1.0);
            let std = (fc - fm).abs() / 2.0;
            out.push(
                "BalancedAllocation: cpu and memory used in the same proportion score high".into(),
            );
            out.push(format!(
                "cpu     {} / {} = {fc:.3}",
                cpu_text(node.requested.milli_cpu + pc),
                cpu_text(ac)
            ));
            out.push(format!(
                "memory  {} / {} = {fm:.3}",
                memory_text(node.requested.memory + pm),
                memory_text(am)
            ));
            out.push(format!("std     |{fc:.3} − {fm:.3}| / 2 = {std:.3}"));
            let computed = ((1.0 - std) * 100.0) as i64;
            if pc == 0 && pm == 0 {
                out.push("the pod requests nothing (best-effort): PreScore skips, 0".into());
                out.push(format!("score   0 {}", check(0)));
            } else if m.data.release.version.balanced_with_and_without_pod() {
                let bc = (node.requested.milli_cpu as f64 / ac.max(1) as f64).min(1.0);
                let bm = (node.requested.memory as f64 / am.max(1) as f64).min(1.0);
                let without = ((1.0 - (bc - bm).abs() / 2.0) * 100.0) as i64;
                out.push(format!(
                    "with pod (1 − {std:.3}) × 100 = {computed}; without |{bc:.3} − {bm:.3}| → {without}"
                ));
                out.push(format!(
                    "score   50 + (50 + {computed} − {without}) / 2 {}",
                    check(50 + (50 + computed - without) / 2)
                ));
            } else {
                out.push(format!("score   (1 − {std:.3}) × 100 {}", check(computed)));
            }
        }
        plugins::taint_toleration::NAME => formula_node::taint_toleration(m, k, p, &mut out),
        plugins::node_affinity::NAME => formula_node::node_affinity(m, k, p, &mut out),
        plugins::image_locality::NAME => formula_node::image_locality(m, k, p, &mut out),
        plugins::pod_topology_spread::NAME => formula_pods::topology_spread(m, k, p, &mut out),
        plugins::inter_pod_affinity::NAME => formula_pods::inter_pod_affinity(m, k, p, &mut out),
        other => out.push(format!("{other}: not modelled by this view")),
    }
    out.push(format!(
        "total   raw {} → normalized {} × weight {} = {}",
        p.raw, p.normalized, p.weight, p.weighted
    ));
    out
}

/// One node's failure in plain words with the numbers: the FitError turned around.
pub fn inverted(m: &Model, k: usize, reasons: &[String]) -> String {
    let node = &m.snapshot.nodes[k];
    let (pc, pm) = m.pod_request();
    let parts: Vec<String> = reasons
        .iter()
        .map(|r| match r.as_str() {
            "Insufficient cpu" => format!(
                "{r} (needs {}, has {} free)",
                cpu_text(pc),
                cpu_text(node.allocatable.milli_cpu - node.requested.milli_cpu)
            ),
            "Insufficient memory" => format!(
                "{r} (needs {}, has {} free)",
                memory_text(pm),
                memory_text(node.allocatable.memory - node.requested.memory)
            ),
            // A pod capacity the node never reported is a zero the user should see named.
            "Too many pods" if node.unreported.covers("pods") => {
                format!("{r} (no allocatable pods reported: treated as 0)")
            }
            "Too many pods" => format!(
                "{r} ({} of {} pods already)",
                node.pods.len(),
                node.allowed_pod_number
            ),
            _ => r.clone(),
        })
        .collect();
    format!("{}: {}", node.name, parts.join(", "))
}

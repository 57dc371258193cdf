//! A bound pod's real node beside the simulation's, in words for view 5. The cluster placed the
//! pod as it is, so that is what its node is compared with (`Model::unmodified`); a what-if
//! changes the pod, not the cluster, and is said apart — never blamed on the cluster.

use super::model::Model;
use crate::scheduler::why::{self, BoundPod};

/// The seed of the simulation's tie-break, as `kexplore schedule` uses by default.
const SEED: u64 = 0;

/// The head line and the result panel's lines; `agrees` when the simulation of the pod as it
/// is picks the cluster's node. The head gives the first reason, the panel the next, so the
/// few rows of an 80×24 screen never say the same thing twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versus {
    pub agrees: bool,
    pub head: String,
    /// Empty when the simulation agrees and no what-if moves the pod.
    pub panel: Vec<String>,
}

fn picked(node: Option<&str>) -> String {
    node.map_or("no node fits".to_string(), str::to_string)
}

pub fn versus(m: &Model, bound: &BoundPod) -> Versus {
    let node = bound.node.as_str();
    let base = why::compare(&m.unmodified, bound, SEED);
    let first = base.reasons.first().map_or("", String::as_str);
    if m.whatif.is_empty() {
        let head = match &base.simulated {
            Some(s) if base.agrees => {
                format!("✓ scheduled by the cluster to {node}; the simulation picks {s} too")
            }
            Some(s) => {
                format!("! scheduled by the cluster to {node}; the simulation picks {s} — {first}")
            }
            None => format!(
                "! scheduled by the cluster to {node}; in the simulation no node fits now — {first}"
            ),
        };
        let panel = if base.agrees {
            Vec::new()
        } else {
            let mut p = vec![format!(
                "! the cluster chose {node}: here it is {}",
                base.actual_in_simulation
            )];
            p.extend(
                base.reasons
                    .iter()
                    .skip(1)
                    .take(1)
                    .map(|r| format!("  · {r}")),
            );
            p
        };
        return Versus {
            agrees: base.agrees,
            head,
            panel,
        };
    }
    // With a what-if: the cluster is judged on the pod as it is; the what-if's effect is its own.
    let changed = why::compare(&m.trace, bound, SEED);
    let with = picked(m.trace.selected.as_deref());
    let without = picked(base.simulated.as_deref());
    let head = if base.agrees && changed.agrees {
        format!(
            "✓ scheduled by the cluster to {node}; the simulation picks {node} too, with or without the what-if"
        )
    } else if base.agrees {
        format!(
            "✓ scheduled by the cluster to {node}; the simulation of the pod as it is picks {node} too — the what-if changes the pick to {with}"
        )
    } else {
        format!(
            "! scheduled by the cluster to {node}; the simulation of the pod as it is picks {without} — {first}; with the what-if: {with}"
        )
    };
    let mut panel = Vec::new();
    if !base.agrees {
        panel.push(format!(
            "! the cluster chose {node}: without the what-if it is {} here",
            base.actual_in_simulation
        ));
        panel.extend(
            base.reasons
                .iter()
                .skip(1)
                .take(1)
                .map(|r| format!("  · {r}")),
        );
    }
    if !changed.agrees {
        panel.push(format!(
            "the what-if, not the cluster, moves the pod: with it {node} is {}",
            changed.actual_in_simulation
        ));
    }
    Versus {
        agrees: base.agrees,
        head,
        panel,
    }
}

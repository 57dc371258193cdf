//! What happens when no node fits (spec §5): the PostFilter plugins (DynamicResources, then
//! DefaultPreemption) and the FitError text, byte for byte: "0/N nodes are available: " + the
//! reason histogram (each reason counted, "count reason" strings sorted as strings) + "." +
//! " " + the PostFilter message.

use std::collections::BTreeMap;

use super::cycle::Filters;
use super::framework::{Code, CycleContext, Status};
use super::plugins::volumes;
use super::preemption;
use super::profile::Profile;
use super::trace::FilterVerdict;

/// The plugin whose PostFilter this file implements; it has no file of its own.
pub const DEFAULT_PREEMPTION: &str = "DefaultPreemption";

pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
pub const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
pub const NO_NEW_CLAIMS: &str = "no new claims to deallocate";
/// `PodEligibleToPreemptOthers`: a pod whose earlier preemption is still under way waits.
pub const TERMINATING_ON_NOMINATED: &str =
    "not eligible due to a terminating pod on the nominated node.";

/// The sorted "count reason" entries of a NodeToStatus: each recorded status's reasons, plus
/// the absent-nodes status counted once per node without a recorded status.
pub fn histogram<'a>(
    num_all_nodes: usize,
    statuses: impl Iterator<Item = &'a [String]>,
    absent: Option<&Status>,
) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut recorded = 0;
    for reasons in statuses {
        recorded += 1;
        for r in reasons {
            *counts.entry(r.as_str()).or_default() += 1;
        }
    }
    let missing = num_all_nodes.saturating_sub(recorded);
    if let Some(a) = absent
        && missing > 0
    {
        for r in &a.reasons {
            *counts.entry(r.as_str()).or_default() += missing;
        }
    }
    let mut entries: Vec<String> = counts.iter().map(|(r, c)| format!("{c} {r}")).collect();
    entries.sort();
    entries.join(", ")
}

/// `FitError.Error()`.
pub fn fit_error(
    num_all_nodes: usize,
    pre_filter_msg: Option<&str>,
    verdicts: &[FilterVerdict],
    absent: Option<&Status>,
    post_filter_msg: String,
) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    match pre_filter_msg {
        Some(m) if !m.is_empty() => msg.push_str(&format!(" {m}.")),
        _ => {
            let failed = verdicts.iter().filter(|v| !v.passed).map(|v| v.reasons());
            msg.push_str(&format!(" {}.", histogram(num_all_nodes, failed, absent)));
        }
    }
    if !post_filter_msg.is_empty() {
        msg.push(' ');
        msg.push_str(&post_filter_msg);
    }
    msg
}

/// What the PostFilter phase produced.
pub struct PostFilterOutcome {
    /// `PostFilterMsg` for the FitError (empty when a plugin succeeded).
    pub message: String,
    /// DefaultPreemption found a node where evicting lower-priority pods makes room.
    pub nominated: Option<String>,
    /// The pods (`namespace/name`) to evict there.
    pub victims: Vec<String>,
}

/// Runs the profile's PostFilter plugins in order: the first Success or
/// UnschedulableAndUnresolvable ends the phase; Unschedulable reasons accumulate.
pub fn run(
    profile: &Profile,
    cx: &CycleContext,
    filters: &Filters,
    verdicts: &[FilterVerdict],
    absent: Option<&Status>,
) -> PostFilterOutcome {
    let mut reasons: Vec<String> = Vec::new();
    let mut nominated = None;
    let mut victims = Vec::new();
    for name in &profile.post_filters {
        let status = match name.as_str() {
            volumes::DYNAMIC_RESOURCES => {
                if cx.pod.has_resource_claims {
                    // Deallocating claims is not simulated; nothing to say about it.
                    continue;
                }
                Status::unschedulable(NO_NEW_CLAIMS)
            }
            DEFAULT_PREEMPTION => {
                let (status, chosen) = preemption(cx, filters, verdicts, absent);
                if let Some(c) = chosen {
                    nominated = Some(c.node);
                    victims = c
                        .victims
                        .iter()
                        .map(|&id| cx.snapshot.pods[id].key())
                        .collect();
                }
                status
            }
            _ => continue,
        };
        match status.code {
            Code::Success => {
                return PostFilterOutcome {
                    message: String::new(),
                    nominated,
                    victims,
                };
            }
            Code::UnschedulableAndUnresolvable => {
                return PostFilterOutcome {
                    message: status.message(),
                    nominated,
                    victims,
                };
            }
            _ => reasons.extend(status.reasons),
        }
    }
    PostFilterOutcome {
        message: reasons.join(", "),
        nominated,
        victims,
    }
}

/// DefaultPreemption's verdict: Success with the chosen node and its victims when evicting
/// lower-priority pods would make the pod fit somewhere, else "preemption: 0/N nodes are
/// available: ...".
fn preemption(
    cx: &CycleContext,
    filters: &Filters,
    verdicts: &[FilterVerdict],
    _absent: Option<&Status>,
) -> (Status, Option<preemption::Candidate>) {
    if cx.pod.preemption_never {
        return (
            Status::unschedulable("preemption: not eligible due to preemptionPolicy=Never."),
            None,
        );
    }
    let snap = cx.snapshot;
    if let Some(node) = cx
        .pod
        .nominated_node_name
        .as_deref()
        .and_then(|n| snap.node(n))
        && node.pods.iter().any(|&id| {
            let p = &snap.pods[id];
            p.terminating && p.priority < cx.pod.priority
        })
    {
        return (
            Status::unschedulable(format!("preemption: {TERMINATING_ON_NOMINATED}")),
            None,
        );
    }
    let mut per_node: Vec<Vec<String>> = Vec::new();
    let mut candidates = Vec::new();
    for v in verdicts.iter().filter(|v| v.code == Code::Unschedulable) {
        let Some(node) = snap.node(&v.node) else {
            continue;
        };
        // Cluster-wide plugin state (spreading, inter-pod affinity) is not recomputed without
        // the victims; node-local checks (resources, ports) are exact.
        match preemption::select_victims_on_node(cx, filters, node) {
            Ok(c) => candidates.push(c),
            Err(reasons) => per_node.push(reasons),
        }
    }
    if let Some(c) = preemption::pick_one(cx, candidates) {
        return (Status::success(), Some(c));
    }
    let absent = Status::unresolvable(PREEMPTION_NOT_HELPFUL);
    let hist = histogram(
        snap.num_nodes(),
        per_node.iter().map(|v| v.as_slice()),
        Some(&absent),
    );
    (
        Status::unschedulable(format!(
            "preemption: 0/{} nodes are available: {hist}.",
            snap.num_nodes()
        )),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_sorts_whole_strings() {
        let a = vec!["Insufficient cpu".to_string()];
        let b = vec!["node(s) had untolerated taint(s)".to_string()];
        let list: Vec<&[String]> = vec![&a, &a, &b, &a, &a, &a, &a, &a, &a, &a, &a];
        let h = histogram(11, list.into_iter(), None);
        assert_eq!(h, "1 node(s) had untolerated taint(s), 10 Insufficient cpu");
    }
}

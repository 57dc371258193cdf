//! The record of one pod's scheduling cycle: plain data, in evaluation order, that the text
//! and JSON outputs print and the TUI steps through. Field names follow CONTRACT.md.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use super::framework::Code;

/// A node name shared between the snapshot and every trace that mentions it: cloning it is a
/// reference-count bump, not an allocation (a 5,000-node cycle names thousands of nodes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(Arc<str>);

impl Name {
    pub fn new(s: &str) -> Name {
        Name(Arc::from(s))
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: tables format names with `{:<w$}`.
        f.pad(&self.0)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A run of nodes in the cycle's (rotated) node order, e.g. those sampling never reached:
/// one shared list and a window, so recording 4,000 skipped nodes costs nothing per node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeRun {
    order: Option<Arc<[Name]>>,
    first: usize,
    count: usize,
}

impl NodeRun {
    /// `count` nodes of `order` starting at `first`, wrapping around.
    pub fn new(order: Arc<[Name]>, first: usize, count: usize) -> NodeRun {
        NodeRun {
            order: Some(order),
            first,
            count,
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &Name> {
        let order: &[Name] = self.order.as_deref().unwrap_or(&[]);
        let n = order.len().max(1);
        (0..self.count).map(move |i| &order[(self.first + i) % n])
    }
}

impl Serialize for NodeRun {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// One node's Filter verdict: the first failing plugin and its reasons, or a pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilterVerdict {
    pub node: Name,
    pub passed: bool,
    pub plugin: Option<&'static str>,
    pub reasons: Option<Vec<String>>,
    pub code: Code,
    /// The verdict came from PreFilter, not from running Filter on this node: a PreFilter
    /// rejection (every node), or the node lay outside the PreFilterResult (upstream's
    /// absent-nodes status).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pre_filter: bool,
}

impl FilterVerdict {
    pub fn reasons(&self) -> &[String] {
        self.reasons.as_deref().unwrap_or(&[])
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginScore {
    pub name: &'static str,
    pub raw: i64,
    pub normalized: i64,
    pub weight: i64,
    pub weighted: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeScore {
    pub node: Name,
    pub total: i64,
    pub plugins: Vec<PluginScore>,
}

/// What a PreFilter or PreScore plugin said about the pod as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseRecord {
    pub plugin: &'static str,
    pub code: Code,
    pub reasons: Vec<String>,
    /// PreFilterResult: the only nodes worth filtering, when the plugin narrowed them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_names: Option<Vec<String>>,
}

/// Extra evaluation done only for display: every node's verdict and, over all feasible nodes,
/// the scores. It never influences `selected`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Breakdown {
    pub filter: Vec<FilterVerdict>,
    pub score: Vec<NodeScore>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodTrace {
    pub pod: String,
    pub nodes_total: usize,
    pub nodes_feasible: usize,
    pub nodes_scored: usize,
    /// One entry per node the scheduler evaluated, in evaluation order.
    pub filter: Vec<FilterVerdict>,
    /// One entry per scored node, in the order scored.
    pub score: Vec<NodeScore>,
    pub selected: Option<String>,
    /// The scheduler's FitError text when no node fits.
    pub message: Option<String>,
    // --- beyond the contract's minimum ---
    pub profile: String,
    pub kube_version: String,
    pub priority: i32,
    /// How many feasible nodes the scheduler looked for before stopping (sampling).
    pub num_feasible_nodes_to_find: usize,
    /// Where the round-robin search started.
    pub start_index: usize,
    pub prefilter: Vec<PhaseRecord>,
    pub prescore: Vec<PhaseRecord>,
    /// Nodes never evaluated because enough feasible nodes were found first.
    pub skipped_by_sampling: NodeRun,
    /// The nodes sharing the best total; `selected` is one of them.
    pub tied: Vec<Name>,
    /// How the choice among `tied` was made.
    pub tie_break: Option<String>,
    /// Things the simulation does not model for this pod, said plainly.
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
    /// DefaultPreemption's plan when no node fits but evicting lower-priority pods would.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<Preemption>,
}

/// Where preemption would make room, and the pods (`namespace/name`) it would evict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preemption {
    pub node: String,
    pub victims: Vec<String>,
}

impl PodTrace {
    pub fn new(pod: String, profile: &str, kube_version: String, nodes_total: usize) -> Self {
        PodTrace {
            pod,
            nodes_total,
            nodes_feasible: 0,
            nodes_scored: 0,
            filter: Vec::new(),
            score: Vec::new(),
            selected: None,
            message: None,
            profile: profile.to_string(),
            kube_version,
            priority: 0,
            num_feasible_nodes_to_find: 0,
            start_index: 0,
            prefilter: Vec::new(),
            prescore: Vec::new(),
            skipped_by_sampling: NodeRun::default(),
            tied: Vec::new(),
            tie_break: None,
            notes: Vec::new(),
            breakdown: None,
            preemption: None,
        }
    }
}

//! Formulas of the score plugins that look at the node alone (spec §4.7–4.9): TaintToleration,
//! NodeAffinity and ImageLocality, each recomputed from the snapshot with the pod's and the
//! node's own numbers and checked against the scheduler's raw score, then the normalization
//! over the scored nodes checked against the normalized score.

use super::model::Model;
use crate::scheduler::plugins::taint_toleration::tolerates;
use crate::scheduler::trace::PluginScore;

const MAX: i64 = 100;
const MB: i64 = 1024 * 1024;
const MIN_THRESHOLD: i64 = 23 * MB;
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// `= n ✓` when `computed` is the scheduler's number, else `= n ! the scheduler says m`.
pub fn check(computed: i64, theirs: i64, what: &str) -> String {
    if computed == theirs {
        format!("= {computed} ✓ (the scheduler's {what})")
    } else {
        format!("= {computed} ! the scheduler says {theirs}")
    }
}

/// This plugin's raw score on every scored node, as the trace has it.
pub fn raws(m: &Model, name: &str) -> Vec<i64> {
    m.trace
        .score
        .iter()
        .filter_map(|s| s.plugins.iter().find(|q| q.name == name))
        .map(|q| q.raw)
        .collect()
}

/// DefaultNormalizeScore (spec §4.1), shown with its numbers.
fn default_normalize(m: &Model, p: &PluginScore, reverse: bool, out: &mut Vec<String>) {
    let max = raws(m, p.name).into_iter().fold(0, i64::max);
    let (text, value) = match (max, reverse) {
        (0, true) => (
            "no scored node has any: every node gets 100".to_string(),
            MAX,
        ),
        (0, false) => ("every raw score is 0: they stay 0".to_string(), p.raw),
        (_, false) => (
            format!("100 × {} / {max} (max raw)", p.raw),
            MAX * p.raw / max,
        ),
        (_, true) => (
            format!("100 − 100 × {} / {max} (max raw)", p.raw),
            MAX - MAX * p.raw / max,
        ),
    };
    out.push(format!(
        "normal. {text} {}",
        check(value, p.normalized, "normalized score")
    ));
}

pub fn taint_toleration(m: &Model, k: usize, p: &PluginScore, out: &mut Vec<String>) {
    let node = &m.snapshot.nodes[k];
    // PreScore keeps the tolerations whose effect is empty or PreferNoSchedule.
    let prefer: Vec<_> = m
        .pod
        .tolerations
        .iter()
        .filter(|t| matches!(t.effect.as_deref().unwrap_or(""), "" | "PreferNoSchedule"))
        .collect();
    let soft: Vec<_> = node
        .taints
        .iter()
        .filter(|t| t.effect == "PreferNoSchedule")
        .collect();
    let untolerated = soft
        .iter()
        .filter(|t| !prefer.iter().any(|tol| tolerates(tol, t)))
        .count() as i64;
    out.push("raw = the node's PreferNoSchedule taints no pod toleration tolerates".into());
    out.push(format!(
        "raw     {} PreferNoSchedule taint(s), {} tolerated {}",
        soft.len(),
        soft.len() as i64 - untolerated,
        check(untolerated, p.raw, "raw score")
    ));
    default_normalize(m, p, true, out);
}

pub fn node_affinity(m: &Model, k: usize, p: &PluginScore, out: &mut Vec<String>) {
    let node = &m.snapshot.nodes[k];
    let terms = &m.pod.preferred_node_affinity;
    if terms.is_empty() {
        out.push("the pod has no preferred node affinity: PreScore skips the plugin".into());
        out.push(format!(
            "raw     0 everywhere {}",
            check(0, p.raw, "raw score")
        ));
        return;
    }
    out.push("raw = Σ weights of the preferred terms that match the node's labels".into());
    let mut sum = 0;
    for (i, (w, t)) in terms.iter().enumerate() {
        let hit = t.matches(&node.name, &node.labels);
        if hit {
            sum += w;
        }
        out.push(format!(
            "term {}  weight {w:>3}  {}",
            i + 1,
            if hit {
                "✓ matches"
            } else {
                "✗ does not match"
            }
        ));
    }
    out.push(format!("raw     {sum} {}", check(sum, p.raw, "raw score")));
    default_normalize(m, p, false, out);
}

pub fn image_locality(m: &Model, k: usize, p: &PluginScore, out: &mut Vec<String>) {
    let node = &m.snapshot.nodes[k];
    let total = m.snapshot.num_nodes() as i64;
    let containers = m.pod.images.len() as i64;
    out.push("raw = 100 × (clamp(Σ size × spread) − 23Mi) / (1000Mi × containers − 23Mi)".into());
    let mut sum = 0;
    for image in &m.pod.images {
        let spread = m.snapshot.image_num_nodes.get(image).copied().unwrap_or(0) as i64;
        match node.images.get(image) {
            Some(&size) => {
                let part = (size as f64 * spread as f64 / total as f64) as i64;
                sum += part;
                out.push(format!(
                    "image   {image}: {} MiB × {spread}/{total} nodes = {} MiB",
                    size / MB,
                    part / MB
                ));
            }
            // What the scheduler reads is the node's status.images, not what its kubelet
            // pulled since (kexplore's kubelets do not add their pulls to it).
            None => out.push(format!(
                "image   {image}: not in the node's status.images, 0"
            )),
        }
    }
    let max_threshold = MAX_CONTAINER_THRESHOLD * containers;
    let clamped = sum.clamp(MIN_THRESHOLD, max_threshold.max(MIN_THRESHOLD));
    let score = if max_threshold <= MIN_THRESHOLD {
        0
    } else {
        MAX * (clamped - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
    };
    out.push(format!(
        "sum     {} MiB, clamped to [23, {}] MiB: {} MiB",
        sum / MB,
        max_threshold / MB,
        clamped / MB
    ));
    out.push(format!(
        "raw     100 × ({} − 23) / ({} − 23) {}",
        clamped / MB,
        max_threshold / MB,
        check(score, p.raw, "raw score")
    ));
    out.push("normal. none: the raw score is the score".into());
}

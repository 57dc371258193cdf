//! Label and node selectors compiled once per pod, so matching in the hot loops is a few
//! string comparisons instead of re-reading API objects.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

pub type Labels = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
}

impl Requirement {
    fn matches(&self, labels: &Labels) -> bool {
        let v = labels.get(&self.key);
        match (&self.op, v) {
            (Op::In(vals), Some(v)) => vals.iter().any(|x| x == v),
            (Op::In(_), None) => false,
            (Op::NotIn(vals), Some(v)) => !vals.iter().any(|x| x == v),
            (Op::NotIn(_), None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::DoesNotExist, v) => v.is_none(),
            (Op::Gt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x > *n),
            (Op::Lt(n), Some(v)) => v.parse::<i64>().is_ok_and(|x| x < *n),
            (Op::Gt(_) | Op::Lt(_), None) => false,
        }
    }
}

/// A compiled `metav1.LabelSelector`. `None` in the API means "nothing"; `{}` means
/// "everything" (LabelSelectorAsSelector).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    nothing: bool,
    reqs: Vec<Requirement>,
}

impl Selector {
    pub fn nothing() -> Selector {
        Selector {
            nothing: true,
            reqs: Vec::new(),
        }
    }

    pub fn everything() -> Selector {
        Selector {
            nothing: false,
            reqs: Vec::new(),
        }
    }

    pub fn from_label_selector(sel: Option<&LabelSelector>) -> Selector {
        let Some(sel) = sel else {
            return Selector::nothing();
        };
        let mut reqs = Vec::new();
        for (k, v) in sel.match_labels.iter().flatten() {
            reqs.push(Requirement {
                key: k.clone(),
                op: Op::In(vec![v.clone()]),
            });
        }
        for e in sel.match_expressions.iter().flatten() {
            let vals = e.values.clone().unwrap_or_default();
            let op = match e.operator.as_str() {
                "In" if !vals.is_empty() => Op::In(vals),
                "NotIn" if !vals.is_empty() => Op::NotIn(vals),
                "Exists" if vals.is_empty() => Op::Exists,
                "DoesNotExist" if vals.is_empty() => Op::DoesNotExist,
                // An invalid selector converts with an error; the scheduler then matches nothing.
                _ => return Selector::nothing(),
            };
            reqs.push(Requirement {
                key: e.key.clone(),
                op,
            });
        }
        Selector {
            nothing: false,
            reqs,
        }
    }

    /// Adds `key In [value]` (matchLabelKeys) or `key NotIn [value]` (mismatchLabelKeys).
    pub fn add_label_key(&mut self, key: &str, value: &str, mismatch: bool) {
        let vals = vec![value.to_string()];
        self.reqs.push(Requirement {
            key: key.to_string(),
            op: if mismatch {
                Op::NotIn(vals)
            } else {
                Op::In(vals)
            },
        });
    }

    /// Both selectors at once (requirements ANDed).
    pub fn and(mut self, other: &Selector) -> Selector {
        self.nothing |= other.nothing;
        self.reqs.extend(other.reqs.iter().cloned());
        self
    }

    /// `labels.Set(...).AsSelector()`: every pair must be present.
    pub fn from_labels(set: &Labels) -> Selector {
        Selector {
            nothing: false,
            reqs: set
                .iter()
                .map(|(k, v)| Requirement {
                    key: k.clone(),
                    op: Op::In(vec![v.clone()]),
                })
                .collect(),
        }
    }

    pub fn matches(&self, labels: &Labels) -> bool {
        !self.nothing && self.reqs.iter().all(|r| r.matches(labels))
    }

    pub fn is_empty(&self) -> bool {
        !self.nothing && self.reqs.is_empty()
    }

    pub fn is_nothing(&self) -> bool {
        self.nothing
    }

    /// True when the selector is exactly one `key = value` requirement: a label-index lookup
    /// then finds precisely the labels it matches, with nothing left to test.
    pub fn is_single_pair(&self) -> bool {
        !self.nothing
            && self.reqs.len() == 1
            && matches!(&self.reqs[0].op, Op::In(v) if v.len() == 1)
    }

    /// A `key = value` every matching set must contain, if the selector has one: lets callers
    /// look candidates up in a label index instead of testing every pod.
    pub fn index_hint(&self) -> Option<(&str, &str)> {
        self.reqs.iter().find_map(|r| match &r.op {
            Op::In(v) if v.len() == 1 => Some((r.key.as_str(), v[0].as_str())),
            _ => None,
        })
    }
}

/// One compiled `NodeSelectorTerm`: label expressions AND `metadata.name` field expressions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTerm {
    /// A term that failed to compile, or has no requirements at all, matches nothing.
    valid: bool,
    labels: Vec<Requirement>,
    names: Vec<Requirement>,
    /// Raw `metadata.name In [...]` value lists, as NodeAffinity's PreFilter reads them.
    raw_name_sets: Vec<Vec<String>>,
}

/// `validation.IsValidLabelValue`: empty, or ≤ 63 of [A-Za-z0-9._-] starting and ending
/// alphanumeric.
pub fn is_valid_label_value(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let b = v.as_bytes();
    v.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `validation.IsQualifiedName`: an optional DNS-subdomain prefix and "/", then a non-empty
/// name with the label-value rules.
pub fn is_qualified_name(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    });
    prefix_ok && !name.is_empty() && is_valid_label_value(name)
}

fn compile_requirement(r: &NodeSelectorRequirement, field: bool) -> Option<Requirement> {
    let vals = r.values.clone().unwrap_or_default();
    // A requirement that does not parse (bad key or value) makes its term match nothing.
    if !field && (!is_qualified_name(&r.key) || !vals.iter().all(|v| is_valid_label_value(v))) {
        return None;
    }
    let op = match r.operator.as_str() {
        "In" if !vals.is_empty() => Op::In(vals),
        "NotIn" if !vals.is_empty() => Op::NotIn(vals),
        "Exists" if !field && vals.is_empty() => Op::Exists,
        "DoesNotExist" if !field && vals.is_empty() => Op::DoesNotExist,
        "Gt" if !field && vals.len() == 1 => Op::Gt(vals[0].parse().ok()?),
        "Lt" if !field && vals.len() == 1 => Op::Lt(vals[0].parse().ok()?),
        _ => return None,
    };
    if field && r.key != "metadata.name" {
        return None;
    }
    if field && matches!(&op, Op::In(v) | Op::NotIn(v) if v.len() != 1) {
        // Field selectors on metadata.name accept exactly one value.
        return None;
    }
    Some(Requirement {
        key: r.key.clone(),
        op,
    })
}

impl NodeTerm {
    pub fn compile(t: &NodeSelectorTerm) -> NodeTerm {
        let mut out = NodeTerm {
            valid: true,
            labels: Vec::new(),
            names: Vec::new(),
            raw_name_sets: Vec::new(),
        };
        for r in t.match_expressions.iter().flatten() {
            match compile_requirement(r, false) {
                Some(req) => out.labels.push(req),
                None => out.valid = false,
            }
        }
        for r in t.match_fields.iter().flatten() {
            if r.key == "metadata.name" && r.operator == "In" {
                out.raw_name_sets.push(r.values.clone().unwrap_or_default());
            }
            match compile_requirement(r, true) {
                Some(req) => out.names.push(req),
                None => out.valid = false,
            }
        }
        if out.labels.is_empty() && out.names.is_empty() {
            out.valid = false;
        }
        out
    }

    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        if !self.valid {
            return false;
        }
        if !self.labels.iter().all(|r| r.matches(labels)) {
            return false;
        }
        if self.names.is_empty() {
            return true;
        }
        let mut name_labels = Labels::new();
        name_labels.insert("metadata.name".into(), node_name.to_string());
        self.names.iter().all(|r| r.matches(&name_labels))
    }

    /// The node names this term can match when it constrains `metadata.name` with `In`
    /// (NodeAffinity's PreFilterResult); `None` when it does not pin names.
    pub fn pinned_names(&self) -> Option<Vec<String>> {
        let mut set: Option<Vec<String>> = None;
        for v in &self.raw_name_sets {
            set = Some(match set {
                None => v.clone(),
                Some(prev) => prev.into_iter().filter(|n| v.contains(n)).collect(),
            });
        }
        set
    }
}

/// Compiled required node affinity: terms ORed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSelectorTerms {
    pub terms: Vec<NodeTerm>,
}

impl NodeSelectorTerms {
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        self.terms.iter().any(|t| t.matches(node_name, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selector_nil_vs_empty() {
        let l = labels(&[("app", "web")]);
        assert!(!Selector::from_label_selector(None).matches(&l));
        assert!(Selector::from_label_selector(Some(&LabelSelector::default())).matches(&l));
    }

    #[test]
    fn node_term_gt_lt_and_fields() {
        let t: NodeSelectorTerm = serde_json::from_value(json!({
            "matchExpressions": [{"key": "v", "operator": "Gt", "values": ["0204"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]
        }))
        .unwrap();
        let t = NodeTerm::compile(&t);
        assert!(t.matches("n1", &labels(&[("v", "0206")])));
        assert!(!t.matches("n2", &labels(&[("v", "0206")])));
        assert!(!t.matches("n1", &labels(&[("v", "x")])));
        assert_eq!(t.pinned_names(), Some(vec!["n1".to_string()]));
        let empty = NodeTerm::compile(&NodeSelectorTerm::default());
        assert!(!empty.matches("n1", &Labels::new()));
    }
}

//! Existing pods' inter-pod affinity terms, bucketed by a `key = value` their selector requires,
//! so "which existing terms select this incoming pod?" looks at the few terms keyed by the
//! pod's own labels instead of every term in the cluster.

use std::collections::HashMap;

use super::podinfo::AffinityTerm;
use super::selector::Labels;
use super::snapshot::PodId;

#[derive(Debug, Clone, Default)]
pub struct TermIndex {
    by_hint: HashMap<String, HashMap<String, Vec<(PodId, u32)>>>,
    unhinted: Vec<(PodId, u32)>,
}

impl TermIndex {
    /// Records term `index` of pod `id`. A selector that matches nothing is left out.
    pub fn insert(&mut self, id: PodId, index: usize, term: &AffinityTerm) {
        if term.selector.is_nothing() {
            return;
        }
        let entry = (id, index as u32);
        match term.selector.index_hint() {
            Some((k, v)) => self
                .by_hint
                .entry(k.to_string())
                .or_default()
                .entry(v.to_string())
                .or_default()
                .push(entry),
            None => self.unhinted.push(entry),
        }
    }

    /// Calls `f(pod, term index)` for every term that may select a pod labelled `labels`
    /// (callers still test `AffinityTerm::matches`). Each term is visited at most once.
    pub fn for_each_candidate(&self, labels: &Labels, mut f: impl FnMut(PodId, usize)) {
        for (k, v) in labels {
            if let Some(list) = self.by_hint.get(k).and_then(|m| m.get(v)) {
                list.iter().for_each(|&(id, i)| f(id, i as usize));
            }
        }
        self.unhinted.iter().for_each(|&(id, i)| f(id, i as usize));
    }
}

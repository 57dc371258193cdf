//! Existing pods' inter-pod affinity terms, bucketed by a `key = value` their selector requires,
//! so "which existing terms select this incoming pod?" looks at the few terms keyed by the
//! pod's own labels instead of every term in the cluster.

use std::collections::HashMap;

use super::podinfo::AffinityTerm;
use super::selector::Labels;
use super::snapshot::PodId;

/// One indexed term: the `key = value` it is bucketed under (if any), its pod, its index.
pub type Entry = (Option<(String, String)>, PodId, u32);

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

    /// Takes out term `index` of pod `id` (the term it was inserted with), and any bucket it
    /// leaves empty, so an index kept by deltas holds what one built afresh would.
    pub fn remove(&mut self, id: PodId, index: usize, term: &AffinityTerm) {
        self.edit(id, index, term, None);
    }

    /// Pod `from`'s term `index` now belongs to pod `to` (ids stay dense after a removal).
    pub fn renumber(&mut self, from: PodId, to: PodId, index: usize, term: &AffinityTerm) {
        self.edit(from, index, term, Some(to));
    }

    fn edit(&mut self, id: PodId, index: usize, term: &AffinityTerm, to: Option<PodId>) {
        if term.selector.is_nothing() {
            return;
        }
        let entry = (id, index as u32);
        let change = |list: &mut Vec<(PodId, u32)>| match to {
            Some(to) => {
                if let Some(e) = list.iter_mut().find(|e| **e == entry) {
                    e.0 = to;
                }
            }
            None => list.retain(|e| *e != entry),
        };
        match term.selector.index_hint() {
            Some((k, v)) => {
                let Some(values) = self.by_hint.get_mut(k) else {
                    return;
                };
                if let Some(list) = values.get_mut(v) {
                    change(list);
                    if list.is_empty() {
                        values.remove(v);
                    }
                }
                if values.is_empty() {
                    self.by_hint.remove(k);
                }
            }
            None => change(&mut self.unhinted),
        }
    }

    /// Every entry as (hint, pod, term index), for comparing two indexes.
    pub fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<_> = self
            .by_hint
            .iter()
            .flat_map(|(k, m)| {
                m.iter().flat_map(move |(v, list)| {
                    list.iter()
                        .map(move |&(id, i)| (Some((k.clone(), v.clone())), id, i))
                })
            })
            .collect();
        out.extend(self.unhinted.iter().map(|&(id, i)| (None, id, i)));
        out
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

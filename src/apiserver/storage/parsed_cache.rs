//! The store keeps every object encoded (what watchers, the history and lists send) and the
//! parsed trees of some of them, for the control loops that read the same objects pass after
//! pass (whole objects, or for pods the control loops' view: `controller_view`). A parsed pod
//! is ~10 times its JSON (serde_json's maps are B-tree nodes of 640 bytes; a running pod has
//! twenty of them): 150,000 of them were 2.3 GB, most never read again once their kubelet had
//! started them. So the trees are a cache with a byte budget: a tree read or written is marked
//! used, and when the budget is passed a clock hand goes round the keys, clearing marks and
//! dropping the trees not used since it last passed (CLOCK, the usual approximation of
//! least-recently-used). A dropped tree is parsed again when read.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// Measured on running pods (16,160 bytes of tree for 1,656 of JSON; a Deployment's pod 37.8 KB
/// for 3,446): whole trees are counted as this many times their encoded length.
const TREE_BYTES_PER_JSON_BYTE: usize = 10;
/// The view (`controller_view`) of a Deployment's pod: 7.8 KB for 3,382 bytes of JSON (the
/// whole tree of the same pod 33 KB).
const VIEW_BYTES_PER_JSON_BYTE: usize = 2;

/// What the parsed trees may take, as estimated: ~30,000 small running objects parsed whole,
/// or the views of ~50,000 pods of a Deployment (3.4 KB of JSON each). A 10,000-pod
/// Deployment's pod views all stay parsed: its controllers list them on every pass (when each
/// pass had to parse thousands again, scaling to 10,000 took 176 s instead of 54).
pub(crate) const DEFAULT_BUDGET: usize = 512 << 20;

/// What a tree parsed from `json_len` bytes is counted as: whole, or a view.
pub(crate) fn cost(json_len: usize, view: bool) -> usize {
    let per = if view {
        VIEW_BYTES_PER_JSON_BYTE
    } else {
        TREE_BYTES_PER_JSON_BYTE
    };
    json_len.saturating_mul(per)
}

/// The trees' estimated bytes against the budget, and where the clock hand stopped.
pub(crate) struct Budget {
    bytes: AtomicUsize,
    limit: usize,
    pub(crate) hand: Mutex<String>,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Budget {
        Budget {
            bytes: AtomicUsize::new(0),
            limit,
            hand: Mutex::new(String::new()),
        }
    }

    pub(crate) fn over(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) > self.limit
    }

    /// Where a sweep stops: an eighth under the limit, so sweeps are not one per read.
    pub(crate) fn swept(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) <= self.limit - self.limit / 8
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// One object's parsed tree, when it is cached.
pub(crate) struct Parsed {
    /// The tree and what it counts against the budget.
    tree: Mutex<Option<(Arc<Value>, usize)>>,
    used: AtomicBool,
}

impl Parsed {
    pub(crate) fn empty() -> Parsed {
        Parsed {
            tree: Mutex::new(None),
            used: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Arc<Value>, usize)>> {
        self.tree.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached tree, marked used.
    pub(crate) fn get(&self) -> Option<Arc<Value>> {
        let t = self.lock().as_ref().map(|(t, _)| t.clone());
        if t.is_some() {
            self.used.store(true, Ordering::Relaxed);
        }
        t
    }

    /// The cached tree, not marked used (a reader that may not look at it).
    pub(crate) fn peek(&self) -> Option<Arc<Value>> {
        self.lock().as_ref().map(|(t, _)| t.clone())
    }

    /// Cache `tree` (counted as `cost`), unless one already is.
    pub(crate) fn fill(&self, tree: Arc<Value>, budget: &Budget, cost: usize) {
        let mut t = self.lock();
        if t.is_none() {
            *t = Some((tree, cost));
            budget.bytes.fetch_add(cost, Ordering::Relaxed);
        }
        self.used.store(true, Ordering::Relaxed);
    }

    /// The clock hand passing: a tree used since it last passed is kept (its mark cleared),
    /// one not used is dropped.
    pub(crate) fn sweep(&self, budget: &Budget) {
        if self.used.swap(false, Ordering::Relaxed) {
            return;
        }
        self.release(budget);
    }

    /// The object is replaced or gone: its tree no longer counts.
    pub(crate) fn release(&self, budget: &Budget) {
        if let Some((_, cost)) = self.lock().take() {
            budget.bytes.fetch_sub(cost, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_used_since_the_hand_last_passed_survives_one_pass_and_not_two() {
        let budget = Budget::new(1000);
        let p = Parsed::empty();
        p.fill(Arc::new(Value::Null), &budget, 500);
        assert_eq!(budget.bytes(), 500);
        assert!(!budget.over());
        p.sweep(&budget);
        assert!(p.get().is_some(), "used when filled: kept");
        p.sweep(&budget);
        assert!(p.get().is_some(), "read again since: kept");
        p.sweep(&budget);
        p.sweep(&budget);
        assert!(p.get().is_none(), "not read for a whole turn: dropped");
        assert_eq!(budget.bytes(), 0);
        p.release(&budget);
        assert_eq!(budget.bytes(), 0, "released once only");
    }
}

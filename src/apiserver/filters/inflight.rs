//! The max-in-flight limiter (`--max-requests-inflight` 400, `--max-mutating-requests-inflight`
//! 200): over the limit a request gets a plain-text 429 with `Retry-After: 1`, as kube-apiserver
//! answers it. Watches are exempt (long-running), and so are members of `system:masters`.
//! Watches have their own cap (`--max-watches`, kexplore's): each holds a stream and a queue
//! for as long as it lasts, whoever asked for it. A limit of 0 means no limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug)]
pub struct Limiter {
    readonly: Arc<AtomicUsize>,
    mutating: Arc<AtomicUsize>,
    watches: Arc<AtomicUsize>,
    pub(crate) max_readonly: usize,
    pub(crate) max_mutating: usize,
    pub(crate) max_watches: usize,
}

impl Default for Limiter {
    fn default() -> Self {
        Limiter::new(400, 200)
    }
}

/// Holds a slot until dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn take(counter: &Arc<AtomicUsize>, max: usize) -> Option<Slot> {
    let prev = counter.fetch_add(1, Ordering::SeqCst);
    let slot = Slot(counter.clone());
    (max == 0 || prev < max).then_some(slot)
}

impl Limiter {
    pub fn new(max_readonly: usize, max_mutating: usize) -> Self {
        Limiter {
            readonly: Arc::default(),
            mutating: Arc::default(),
            watches: Arc::default(),
            max_readonly,
            max_mutating,
            max_watches: crate::apiserver::transport::limits::Limits::default().max_watches,
        }
    }

    /// A slot for a request with this verb, or None when the server is at its limit.
    pub(crate) fn acquire(&self, verb: &str) -> Option<Slot> {
        let mutating = matches!(
            verb,
            "create" | "update" | "patch" | "delete" | "deletecollection"
        );
        if mutating {
            take(&self.mutating, self.max_mutating)
        } else {
            take(&self.readonly, self.max_readonly)
        }
    }

    /// A slot for one watch stream, held for the stream's lifetime; None at `max_watches`.
    pub(crate) fn acquire_watch(&self) -> Option<Slot> {
        take(&self.watches, self.max_watches)
    }

    pub fn in_flight(&self) -> (usize, usize) {
        (
            self.readonly.load(Ordering::SeqCst),
            self.mutating.load(Ordering::SeqCst),
        )
    }

    pub(crate) fn watches(&self) -> usize {
        self.watches.load(Ordering::SeqCst)
    }
}

pub(crate) const TOO_MANY: &str = "Too many requests, please try again later.\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_and_released() {
        let l = Limiter::new(1, 1);
        let a = l.acquire("get");
        assert!(a.is_some());
        assert!(l.acquire("list").is_none());
        assert!(l.acquire("create").is_some());
        drop(a);
        assert!(l.acquire("get").is_some());
        assert_eq!(l.in_flight(), (0, 0));
    }

    #[test]
    fn watches_have_their_own_cap_and_zero_means_no_limit() {
        let mut l = Limiter::new(0, 0);
        l.max_watches = 2;
        let w1 = l.acquire_watch();
        let w2 = l.acquire_watch();
        assert!(w1.is_some() && w2.is_some());
        assert!(l.acquire_watch().is_none());
        assert_eq!(l.watches(), 2);
        drop(w1);
        assert!(l.acquire_watch().is_some());
        let many: Vec<_> = (0..1000).map(|_| l.acquire("get")).collect();
        assert!(many.iter().all(Option::is_some));
    }
}

//! The max-in-flight limiter (`--max-requests-inflight` 400, `--max-mutating-requests-inflight`
//! 200): over the limit a request gets a plain-text 429 with `Retry-After: 1`, as kube-apiserver
//! answers it. Watches are exempt (long-running), and so are members of `system:masters`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug)]
pub struct Limiter {
    readonly: Arc<AtomicUsize>,
    mutating: Arc<AtomicUsize>,
    pub max_readonly: usize,
    pub max_mutating: usize,
}

impl Default for Limiter {
    fn default() -> Self {
        Limiter::new(400, 200)
    }
}

/// Holds a slot until dropped.
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Limiter {
    pub fn new(max_readonly: usize, max_mutating: usize) -> Self {
        Limiter {
            readonly: Arc::default(),
            mutating: Arc::default(),
            max_readonly,
            max_mutating,
        }
    }

    /// A slot for a request with this verb, or None when the server is at its limit.
    pub fn acquire(&self, verb: &str) -> Option<Slot> {
        let mutating = matches!(
            verb,
            "create" | "update" | "patch" | "delete" | "deletecollection"
        );
        let (counter, max) = if mutating {
            (&self.mutating, self.max_mutating)
        } else {
            (&self.readonly, self.max_readonly)
        };
        let prev = counter.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(counter.clone());
        (prev < max).then_some(slot)
    }

    pub fn in_flight(&self) -> (usize, usize) {
        (
            self.readonly.load(Ordering::SeqCst),
            self.mutating.load(Ordering::SeqCst),
        )
    }
}

pub const TOO_MANY: &str = "Too many requests, please try again later.\n";

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
}

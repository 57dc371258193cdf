//! One connection's activity: how many requests are in flight on it and when the last one
//! ended, so a connection with nothing in flight for the idle timeout can be closed, HTTP/1.1
//! keep-alive and HTTP/2 alike (Go's `IdleTimeout`). A request counts as in flight until its
//! response body is sent or dropped, so a watch keeps its connection busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

pub struct Activity {
    born: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds after `born` at which the connection last became idle.
    idle_since_ms: AtomicU64,
    request_ended: Notify,
}

/// A request in flight; dropping it marks the request finished.
pub struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let a = &self.0;
        a.idle_since_ms.store(a.now_ms(), Ordering::SeqCst);
        a.in_flight.fetch_sub(1, Ordering::SeqCst);
        a.request_ended.notify_waiters();
    }
}

impl Activity {
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            born: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            request_ended: Notify::new(),
        })
    }

    fn now_ms(&self) -> u64 {
        self.born.elapsed().as_millis() as u64
    }

    /// Mark a request in flight until the returned value is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Resolves once no request has been in flight for `timeout`. Requests that come and go
    /// meanwhile only move the deadline, checked when the timer fires: one wake-up per
    /// timeout, not one per request.
    pub async fn idle_for(&self, timeout: Duration) {
        loop {
            let ended = self.request_ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.in_flight() > 0 {
                ended.await;
                continue;
            }
            let since = Duration::from_millis(self.idle_since_ms.load(Ordering::SeqCst));
            let deadline = self.born + since + timeout;
            if Instant::now() >= deadline && self.in_flight() == 0 {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_only_after_the_last_request_ends() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let a = Activity::new();
            let busy = a.begin();
            let short = Duration::from_millis(20);
            let idle = tokio::time::timeout(Duration::from_millis(300), a.idle_for(short));
            assert!(idle.await.is_err(), "idle while a request was in flight");
            drop(busy);
            let idle = tokio::time::timeout(Duration::from_secs(5), a.idle_for(short));
            assert!(idle.await.is_ok(), "never idle after the request ended");
        });
    }
}

//! Which control-plane components this process runs, and whether each is alive: what the
//! API server's `componentstatuses` reports for `scheduler` and `controller-manager`. Upstream
//! probes each binary's `/healthz` on loopback; here they are loops of this process, so each
//! one's leader-election loop says how it is doing.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tokio::sync::watch;

/// How one component is doing, as its leader-election loop last said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Standing for its Lease, or leading with its loops running: healthy either way, as a
    /// kube-scheduler that is not the leader still answers `/healthz` with `ok`.
    Running,
    /// Leading, but its loops ended without being told to stop.
    LoopEnded,
}

/// A change of leadership in this process, by Lease name: what a replica's operator wants to
/// see as it happens (`serve` prints each, as kube-scheduler logs "successfully acquired
/// lease").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leadership {
    /// This replica took the Lease and started the loops it guards.
    Acquired(&'static str),
    /// Its renewals failed for the renew deadline: the loops stopped here.
    Lost(&'static str),
}

/// The components by Lease name (`kube-scheduler`, `kube-controller-manager`), and the
/// leadership changes so far, in order.
#[derive(Debug)]
pub(crate) struct Components {
    states: Mutex<BTreeMap<&'static str, State>>,
    /// Every change so far; a reader waits on it for the next.
    leadership: watch::Sender<Vec<Leadership>>,
}

impl Default for Components {
    fn default() -> Self {
        Components {
            states: Mutex::default(),
            leadership: watch::channel(Vec::new()).0,
        }
    }
}

impl Components {
    pub(crate) fn set(&self, lease: &'static str, state: State) {
        self.lock().insert(lease, state);
    }

    pub(crate) fn announce(&self, change: Leadership) {
        self.leadership.send_modify(|log| log.push(change));
    }

    /// The leadership changes after the first `seen`.
    pub(crate) fn leadership_since(&self, seen: usize) -> Vec<Leadership> {
        self.leadership
            .borrow()
            .get(seen..)
            .unwrap_or_default()
            .to_vec()
    }

    /// Changes when a leadership change is announced. Subscribe before reading
    /// [`Self::leadership_since`], so that none falls between the two.
    pub(crate) fn leadership_changes(&self) -> watch::Receiver<Vec<Leadership>> {
        self.leadership.subscribe()
    }

    /// The component no longer runs here (the server is stopping).
    pub(crate) fn remove(&self, lease: &'static str) {
        self.lock().remove(lease);
    }

    /// None when this process does not run it.
    pub(crate) fn state(&self, lease: &str) -> Option<State> {
        self.lock().get(lease).copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, State>> {
        self.states.lock().unwrap_or_else(|e| e.into_inner())
    }
}

//! Which control-plane components this process runs, and whether each is alive: what the
//! API server's `componentstatuses` reports for `scheduler` and `controller-manager`. Upstream
//! probes each binary's `/healthz` on loopback; here they are loops of this process, so each
//! one's leader-election loop says how it is doing.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// How one component is doing, as its leader-election loop last said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Standing for its Lease, or leading with its loops running: healthy either way, as a
    /// kube-scheduler that is not the leader still answers `/healthz` with `ok`.
    Running,
    /// Leading, but its loops ended without being told to stop.
    LoopEnded,
}

/// The components by Lease name (`kube-scheduler`, `kube-controller-manager`).
#[derive(Debug, Default)]
pub(crate) struct Components(Mutex<BTreeMap<&'static str, State>>);

impl Components {
    pub(crate) fn set(&self, lease: &'static str, state: State) {
        self.lock().insert(lease, state);
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
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

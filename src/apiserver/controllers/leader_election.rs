//! Leader election on coordination.k8s.io/v1 Leases in kube-system, as client-go's
//! `leaderelection` does for kube-scheduler and kube-controller-manager: one candidate holds a
//! Lease and renews it every retry period; the others watch it and take over only once they have
//! seen no change for a whole lease duration. So when several `kexplore serve` replicas share one
//! store, the scheduler loop, the controllers and the simulated kubelets run on exactly one.
//!
//! One difference, on purpose: upstream's binaries exit when they lose their lease; a replica here
//! also serves the API, so it stops its loops and stands for election again.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::events::{self, Reporter};
use crate::apiserver::registry::resources;
use crate::apiserver::request::components::{Leadership, State};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::{StoreError, Write, object_rv};
use crate::apiserver::util;

/// The Lease kube-scheduler holds (`SchedulerDefaultLockObjectName`).
pub(crate) const KUBE_SCHEDULER: &str = "kube-scheduler";
/// The Lease kube-controller-manager holds.
pub(crate) const KUBE_CONTROLLER_MANAGER: &str = "kube-controller-manager";
/// The simulated kubelets are kexplore's own: their Lease says so.
pub(crate) const SIMULATED_KUBELETS: &str = "kexplore-simulated-kubelets";

pub(crate) const NAMESPACE: &str = "kube-system";

/// What runs on the replica that holds the Lease `name`.
pub(crate) fn guards(name: &str) -> &'static str {
    match name {
        KUBE_SCHEDULER => "the scheduler loop",
        KUBE_CONTROLLER_MANAGER => "the controllers",
        SIMULATED_KUBELETS => "the simulated kubelets",
        _ => "its loops",
    }
}

/// `RecommendedDefaultLeaderElectionConfiguration`: 15 s lease, 10 s renew deadline, 2 s retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timings {
    pub(crate) lease_duration: Duration,
    pub(crate) renew_deadline: Duration,
    pub(crate) retry_period: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// `<hostname>_<uuid>`, as both components name themselves.
pub(crate) fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}_{}", util::uuid())
}

fn key(name: &str) -> String {
    format!("/registry/leases/{NAMESPACE}/{name}")
}

/// One candidate for one Lease, with what it last observed of the record.
pub(crate) struct Candidate {
    name: &'static str,
    identity: String,
    timings: Timings,
    /// The Lease's spec when this candidate last saw it change, and when (its own clock).
    observed: Option<(Value, Instant)>,
}

impl Candidate {
    pub(crate) fn new(name: &'static str, identity: String, timings: Timings) -> Self {
        Candidate {
            name,
            identity,
            timings,
            observed: None,
        }
    }

    fn spec(&self, acquire_time: &str, transitions: i64) -> Value {
        json!({
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.timings.lease_duration.as_secs(),
            "acquireTime": acquire_time,
            "renewTime": util::now_micro(),
            "leaseTransitions": transitions,
        })
    }

    /// One `tryAcquireOrRenew` at `now`: true when this candidate holds the Lease afterwards.
    /// `acquired` is set when it took the Lease over (or created it) in this call.
    pub(crate) fn try_acquire_or_renew(
        &mut self,
        api: &Api,
        now: Instant,
        acquired: &mut bool,
    ) -> bool {
        *acquired = false;
        let Some(current) = api.store.get(&key(self.name)) else {
            let def = resources::by_kind("coordination.k8s.io", "Lease");
            let Some(def) = def else { return false };
            let lease = json!({
                "metadata": {"name": self.name, "namespace": NAMESPACE},
                "spec": self.spec(&util::now_micro(), 0),
            });
            return match client::create_as(api, def, lease, self.name) {
                Ok(stored) => {
                    self.observe(&stored, now);
                    *acquired = true;
                    true
                }
                Err(_) => false, // another candidate created it first
            };
        };
        let spec = current.get("spec").cloned().unwrap_or(Value::Null);
        if self.observed.as_ref().is_none_or(|(seen, _)| *seen != spec) {
            self.observed = Some((spec.clone(), now));
        }
        let holder = spec
            .get("holderIdentity")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let held_by_me = holder == self.identity;
        let duration = spec
            .get("leaseDurationSeconds")
            .and_then(Value::as_u64)
            .map_or(self.timings.lease_duration, Duration::from_secs);
        let observed_at = self.observed.as_ref().map_or(now, |(_, t)| *t);
        if !holder.is_empty() && !held_by_me && observed_at + duration > now {
            return false; // held by someone else, and not yet expired by our clock
        }
        let transitions = spec
            .get("leaseTransitions")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let next_spec = if held_by_me {
            let acquire = spec
                .get("acquireTime")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            self.spec(&acquire, transitions)
        } else {
            self.spec(&util::now_micro(), transitions + 1)
        };
        let expected = object_rv(&current);
        let res = api
            .store
            .update(&key(self.name), expected, Write::Commit, |cur| {
                let mut next = cur.clone();
                next["spec"] = next_spec.clone();
                Ok(next)
            });
        match res {
            Ok(stored) => {
                self.observe(&stored, now);
                *acquired = !held_by_me;
                true
            }
            Err(StoreError::Conflict | StoreError::NotFound) | Err(_) => false,
        }
    }

    fn observe(&mut self, stored: &Value, now: Instant) {
        self.observed = Some((stored.get("spec").cloned().unwrap_or(Value::Null), now));
    }
}

/// Stand for the Lease `name` and run `work` while this replica holds it: started on acquiring
/// (with a Normal `LeaderElection` event `<identity> became leader` on the Lease), stopped when
/// renewals have failed for the renew deadline, and stood for again.
pub(crate) async fn lead<F, Fut>(
    api: Arc<Api>,
    name: &'static str,
    identity: String,
    timings: Timings,
    mut stop: watch::Receiver<bool>,
    work: F,
) where
    F: Fn(Arc<Api>, watch::Receiver<bool>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut candidate = Candidate::new(name, identity.clone(), timings);
    let mut leading: Option<(watch::Sender<bool>, tokio::task::JoinHandle<()>)> = None;
    let mut last_renew = Instant::now();
    api.components.set(name, State::Running);
    loop {
        let now = Instant::now();
        let mut acquired = false;
        let holds = candidate.try_acquire_or_renew(&api, now, &mut acquired);
        if holds {
            last_renew = now;
            let ended = leading.as_ref().is_some_and(|(_, task)| task.is_finished());
            api.components.set(
                name,
                if ended {
                    State::LoopEnded
                } else {
                    State::Running
                },
            );
            if leading.is_none() {
                if acquired && let Some(lease) = api.store.get(&key(name)) {
                    let message = format!("{identity} became leader");
                    events::record(
                        &api,
                        &lease,
                        Reporter::Controller { component: name },
                        "Normal",
                        "LeaderElection",
                        "",
                        &message,
                        "",
                    );
                }
                let (tx, rx) = watch::channel(false);
                leading = Some((tx, tokio::spawn(work(api.clone(), rx))));
                api.components.announce(Leadership::Acquired(name));
            }
        } else if now.duration_since(last_renew) >= timings.renew_deadline
            && let Some((tx, task)) = leading.take()
        {
            let _ = tx.send(true);
            let _ = task.await;
            api.components.set(name, State::Running);
            api.components.announce(Leadership::Lost(name));
        }
        tokio::select! {
            _ = tokio::time::sleep(jittered(timings.retry_period)) => {}
            _ = stop.changed() => {
                if let Some((tx, task)) = leading.take() {
                    let _ = tx.send(true);
                    let _ = task.await;
                }
                api.components.remove(name);
                return;
            }
        }
    }
}

/// The retry period with up to 20 % jitter, so candidates do not knock in step.
fn jittered(d: Duration) -> Duration {
    let r = util::uuid().as_bytes()[0] % 21;
    d + d * u32::from(r) / 100
}

/// Who holds the Lease `name` now, if anyone.
#[cfg(test)]
pub(crate) fn holder(
    store: &dyn crate::apiserver::storage::interface::Storage,
    name: &str,
) -> Option<String> {
    store
        .get(&key(name))
        .and_then(|l| {
            l.pointer("/spec/holderIdentity")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::filters::authn::TokenFile;

    fn api() -> Api {
        let api = Api::new(TokenFile::default(), None);
        crate::apiserver::controllers::bootstrap::system(&api);
        api
    }

    #[test]
    fn one_holder_and_a_takeover_only_after_a_whole_lease_duration_unchanged() {
        let api = api();
        let t = Timings::default();
        let mut a = Candidate::new(KUBE_SCHEDULER, "host-a_1".into(), t);
        let mut b = Candidate::new(KUBE_SCHEDULER, "host-b_2".into(), t);
        let start = Instant::now();
        let mut acquired = false;
        assert!(a.try_acquire_or_renew(&api, start, &mut acquired) && acquired);
        assert!(!b.try_acquire_or_renew(&api, start, &mut acquired));
        assert_eq!(
            holder(&*api.store, KUBE_SCHEDULER).as_deref(),
            Some("host-a_1")
        );
        // A renews: b keeps seeing changes, so the lease never expires for it.
        let later = start + Duration::from_secs(14);
        assert!(a.try_acquire_or_renew(&api, later, &mut acquired) && !acquired);
        assert!(!b.try_acquire_or_renew(&api, later, &mut acquired));
        // A stops renewing. 14 s after b last saw a change, it still waits; at 15 s it takes over.
        assert!(!b.try_acquire_or_renew(&api, later + Duration::from_secs(14), &mut acquired));
        assert!(b.try_acquire_or_renew(&api, later + Duration::from_secs(15), &mut acquired));
        assert!(acquired);
        let lease = api.store.get(&key(KUBE_SCHEDULER)).map(|l| (*l).clone());
        let spec = lease
            .and_then(|l| l.get("spec").cloned())
            .unwrap_or_default();
        assert_eq!(spec["holderIdentity"], "host-b_2");
        assert_eq!(spec["leaseTransitions"], 1);
        assert_eq!(spec["leaseDurationSeconds"], 15);
        // The old leader, back, finds the Lease renewed by b: it is not the holder.
        assert!(!a.try_acquire_or_renew(&api, later + Duration::from_secs(16), &mut acquired));
    }

    /// `lead` for `name` as host-a_1, with work that reports "started" and, once told to stop,
    /// "stopped".
    fn lead_reporting(
        api: &Arc<Api>,
        name: &'static str,
        t: Timings,
        stop_rx: watch::Receiver<bool>,
    ) -> (
        tokio::task::JoinHandle<()>,
        tokio::sync::mpsc::UnboundedReceiver<&'static str>,
    ) {
        let (ran_tx, ran_rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
        let task = tokio::spawn(lead(
            api.clone(),
            name,
            "host-a_1".into(),
            t,
            stop_rx,
            move |_api, mut stop| {
                let ran = ran_tx.clone();
                async move {
                    let _ = ran.send("started");
                    let _ = stop.changed().await;
                    let _ = ran.send("stopped");
                }
            },
        ));
        (task, ran_rx)
    }

    #[tokio::test]
    async fn the_work_runs_only_while_leading_and_stops_with_the_server() {
        let api = Arc::new(api());
        let (stop_tx, stop_rx) = watch::channel(false);
        let t = Timings {
            retry_period: Duration::from_millis(10),
            ..Timings::default()
        };
        let (task, mut ran_rx) = lead_reporting(&api, KUBE_CONTROLLER_MANAGER, t, stop_rx);
        assert_eq!(ran_rx.recv().await, Some("started"));
        let events = api.store.list("/registry/events/kube-system/").0;
        assert!(
            events.iter().any(
                |e| e["reason"] == "LeaderElection" && e["message"] == "host-a_1 became leader"
            ),
            "{events:?}"
        );
        assert_eq!(
            api.components.leadership_since(0),
            [Leadership::Acquired(KUBE_CONTROLLER_MANAGER)]
        );
        let _ = stop_tx.send(true);
        assert_eq!(ran_rx.recv().await, Some("stopped"));
        let _ = task.await;
        // Stopping with the server is not losing the Lease.
        assert_eq!(api.components.leadership_since(1), []);
    }

    /// Renewals that fail for the renew deadline stop the loops, and say so once.
    #[tokio::test]
    async fn a_lease_taken_by_another_stops_the_work_and_is_announced_lost() {
        let api = Arc::new(api());
        let (stop_tx, stop_rx) = watch::channel(false);
        let t = Timings {
            lease_duration: Duration::from_millis(300),
            renew_deadline: Duration::from_millis(200),
            retry_period: Duration::from_millis(20),
        };
        let (task, mut ran_rx) = lead_reporting(&api, KUBE_SCHEDULER, t, stop_rx);
        assert_eq!(ran_rx.recv().await, Some("started"));
        // Another holder writes itself into the Lease and keeps it fresh.
        let take = |api: &Api| {
            let current = api.store.get(&key(KUBE_SCHEDULER)).expect("the Lease");
            let _ = api.store.update(
                &key(KUBE_SCHEDULER),
                object_rv(&current),
                Write::Commit,
                |cur| {
                    let mut next = cur.clone();
                    next["spec"]["holderIdentity"] = json!("host-b_2");
                    // Whole seconds, as the field is: the candidate's 300 ms would read as 0.
                    next["spec"]["leaseDurationSeconds"] = json!(15);
                    next["spec"]["renewTime"] = json!(util::now_micro());
                    Ok(next)
                },
            );
        };
        let mut changes = api.components.leadership_changes();
        let lost = async {
            while api.components.leadership_since(1).is_empty() {
                take(&api);
                let _ = tokio::time::timeout(Duration::from_millis(20), changes.changed()).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), lost)
            .await
            .expect("the Lease lost within 10 s");
        assert_eq!(ran_rx.recv().await, Some("stopped"));
        assert_eq!(
            api.components.leadership_since(0),
            [
                Leadership::Acquired(KUBE_SCHEDULER),
                Leadership::Lost(KUBE_SCHEDULER)
            ]
        );
        let _ = stop_tx.send(true);
        let _ = task.await;
    }
}

//! Probes, as far as a kubelet that runs no process can honestly go. Nothing runs, so nothing
//! can fail a probe: each is taken to pass the first time upstream's prober may run it, and
//! that time is kept. A container with a startupProbe is not `started` before the probe's
//! initialDelaySeconds; one with a readinessProbe is not `ready` before that probe's
//! initialDelaySeconds, both counted from the container's start, nor before it has started
//! (readiness is not probed before). So
//! `kubectl get pods -w` shows `0/1 Running` then `1/1`, and a rollout waits for readiness,
//! as on a cluster. Liveness probes pass and change nothing.

use std::time::Duration;

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::apiserver::controllers::kubelet_containers::State;
use crate::apiserver::controllers::kubelet_report::s;
use crate::apiserver::util;

/// When a running container's probes first pass, after its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gate {
    pub(crate) name: String,
    /// Its startupProbe's delay: `started` is false until then.
    pub(crate) started_after: Duration,
    /// The later of its startupProbe's and readinessProbe's delays: `ready` is false until
    /// then.
    pub(crate) ready_after: Duration,
}

fn delay(c: &Value, probe: &str) -> Duration {
    let Some(p) = c.get(probe).filter(|p| p.is_object()) else {
        return Duration::ZERO;
    };
    let secs = p
        .get("initialDelaySeconds")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Duration::from_secs(secs)
}

/// The gates of the running containers that have a startup or readiness probe with a delay, with
/// the time each started.
pub(crate) fn gates(containers: &[Value], states: &[(String, State)]) -> Vec<(Gate, String)> {
    containers
        .iter()
        .filter_map(|c| {
            let name = s(c, "/name");
            let started_at = states.iter().find_map(|(n, st)| match st {
                State::Running(at) if n == name => Some(at.clone()),
                _ => None,
            })?;
            let started_after = delay(c, "startupProbe");
            let ready_after = started_after.max(delay(c, "readinessProbe"));
            (ready_after > Duration::ZERO).then(|| {
                let gate = Gate {
                    name: name.to_string(),
                    started_after,
                    ready_after,
                };
                (gate, started_at)
            })
        })
        .collect()
}

fn at(started_at: &str, after: Duration) -> Option<OffsetDateTime> {
    Some(util::parse_time(started_at)? + after)
}

/// Of the gated containers, those not started and those not ready at `now`.
pub(crate) fn pending(gates: &[(Gate, String)], now: OffsetDateTime) -> (Vec<&str>, Vec<&str>) {
    let before = |after: Duration, started_at: &str| at(started_at, after).is_some_and(|t| now < t);
    let unstarted = gates
        .iter()
        .filter(|(g, since)| before(g.started_after, since))
        .map(|(g, _)| g.name.as_str())
        .collect();
    let unready = gates
        .iter()
        .filter(|(g, since)| before(g.ready_after, since))
        .map(|(g, _)| g.name.as_str())
        .collect();
    (unstarted, unready)
}

/// The next time a gate opens after `now`, if any is still closed.
pub(crate) fn next_change(gates: &[(Gate, String)], now: OffsetDateTime) -> Option<OffsetDateTime> {
    gates
        .iter()
        .flat_map(|(g, since)| [at(since, g.started_after), at(since, g.ready_after)])
        .flatten()
        .filter(|t| *t > now)
        .min()
}

/// Marks the containers' statuses not started or not ready as `pending` says.
pub(crate) fn mark(statuses: &mut [Value], (unstarted, unready): (&[&str], &[&str])) {
    for st in statuses {
        let name = s(st, "/name").to_string();
        if unstarted.contains(&name.as_str()) {
            st["started"] = json!(false);
        }
        if unready.contains(&name.as_str()) {
            st["ready"] = json!(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(name: &str, at: &str) -> (String, State) {
        (name.to_string(), State::Running(at.to_string()))
    }

    #[test]
    fn readiness_waits_for_the_startup_and_readiness_delays() {
        let containers = [
            json!({"name": "app", "readinessProbe": {"httpGet": {"port": 80}, "initialDelaySeconds": 5},
                   "startupProbe": {"exec": {"command": ["true"]}, "initialDelaySeconds": 3}}),
            json!({"name": "plain"}),
            json!({"name": "quick", "readinessProbe": {"tcpSocket": {"port": 80}}}),
        ];
        let t0 = "2026-11-29T10:00:00Z";
        let states = [
            running("app", t0),
            running("plain", t0),
            running("quick", t0),
        ];
        let g = gates(&containers, &states);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].0.started_after, Duration::from_secs(3));
        assert_eq!(g[0].0.ready_after, Duration::from_secs(5));
        let t = |secs: i64| util::parse_time(t0).unwrap() + time::Duration::seconds(secs);
        assert_eq!(pending(&g, t(0)), (vec!["app"], vec!["app"]));
        assert_eq!(pending(&g, t(3)), (vec![], vec!["app"]));
        assert_eq!(pending(&g, t(5)), (vec![], vec![]));
        assert_eq!(next_change(&g, t(0)), Some(t(3)));
        assert_eq!(next_change(&g, t(3)), Some(t(5)));
        assert_eq!(next_change(&g, t(5)), None);
        let mut statuses = vec![
            json!({"name": "app", "ready": true, "started": true}),
            json!({"name": "plain", "ready": true, "started": true}),
        ];
        mark(&mut statuses, (&["app"], &["app"]));
        assert_eq!(
            statuses[0],
            json!({"name": "app", "ready": false, "started": false})
        );
        assert_eq!(
            statuses[1],
            json!({"name": "plain", "ready": true, "started": true})
        );
    }

    #[test]
    fn a_container_not_running_has_no_gate() {
        let containers = [json!({"name": "app", "readinessProbe": {"initialDelaySeconds": 5}})];
        let states = [(
            "app".to_string(),
            State::Waiting("CreateContainerConfigError", String::new()),
        )];
        assert!(gates(&containers, &states).is_empty());
    }
}

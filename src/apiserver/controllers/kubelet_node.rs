//! The node side of the simulated kubelets: the Lease renewals in kube-node-lease that the node
//! lifecycle controller reads, the node's own conditions, and the switch a user flips to stop a
//! kubelet or make it NotReady. kubectl has no verb for "stop the kubelet on node-2", so the
//! switch is a node annotation any client can write:
//! `kubectl annotate node node-2 kexplore.dev/kubelet=stopped` (or `=not-ready`), and
//! `kubectl annotate node node-2 kexplore.dev/kubelet-` to start it again.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::request::context::Api;
use crate::apiserver::storage::store::{StoreError, Write};
use crate::apiserver::util::{self, At};

/// The node annotation the simulated kubelet obeys.
pub(crate) const KUBELET_ANNOTATION: &str = "kexplore.dev/kubelet";
/// Its values: `stopped` (no Lease, no status, no pod started or stopped) and `not-ready`
/// (Lease renewed, Ready=False as when the container runtime is down).
pub(crate) const STOPPED: &str = "stopped";
pub(crate) const NOT_READY: &str = "not-ready";

/// kubelet's `nodeLeaseDurationSeconds` default.
const NODE_LEASE_DURATION_SECONDS: i64 = 40;
/// The kubelet renews its Lease every 0.25 × the lease duration (`nodeLeaseRenewIntervalFraction`).
const RENEW_INTERVAL: Duration = Duration::from_secs(10);
/// `nodeStatusReportFrequency`: the node's status is posted this often when nothing changed.
pub(crate) const STATUS_REPORT: Duration = Duration::from_secs(300);

/// What a kubelet does on its node, read from the annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Running,
    NotReady,
    Stopped,
}

pub(crate) fn mode(node: &Value) -> Mode {
    match node
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(KUBELET_ANNOTATION))
        .and_then(Value::as_str)
    {
        Some(STOPPED) => Mode::Stopped,
        Some(NOT_READY) => Mode::NotReady,
        _ => Mode::Running,
    }
}

/// The nodes whose kubelet is stopped: their pods are neither started nor stopped.
pub(crate) fn stopped(api: &Api) -> HashSet<String> {
    api.store
        .list("/registry/minions/")
        .0
        .iter()
        .filter(|n| mode(n) == Mode::Stopped)
        .filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// How often the simulated kubelets renew their Leases: upstream's 10 s, or faster when the
/// node lifecycle controller's grace period is shortened (`--node-monitor-grace-period`) so a
/// running kubelet is never mistaken for a stopped one.
pub(crate) fn renew_interval(grace: Duration) -> Duration {
    RENEW_INTERVAL
        .min(grace / 5)
        .max(Duration::from_millis(100))
}

const READY_REASON: &str = "KubeletReady";
const READY_MESSAGE: &str = "kubelet is posting ready status (simulated by kexplore)";
const NOT_READY_REASON: &str = "KubeletNotReady";
/// The node lifecycle controller's reason for a condition it marked Unknown.
pub(crate) const NODE_STATUS_UNKNOWN: &str = "NodeStatusUnknown";
/// The kubelet's runtime-state error when the container runtime stops answering.
const NOT_READY_MESSAGE: &str =
    "container runtime is down (simulated by kexplore: annotation kexplore.dev/kubelet=not-ready)";

/// The conditions a healthy kubelet posts, as it registers its node.
pub(crate) fn conditions(now: &str) -> Value {
    json!([
        {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"},
        {"type": "DiskPressure", "status": "False", "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure"},
        {"type": "PIDPressure", "status": "False", "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available"},
        {"type": "Ready", "status": "True", "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": READY_REASON, "message": READY_MESSAGE}
    ])
}

/// The conditions this kubelet posts in `mode`; `None` when what is stored already says so
/// (only the heartbeat times would change). A running kubelet rewrites only the conditions
/// that say it was away — what the node lifecycle controller marked Unknown, or its own
/// NotReady — so a scenario's nodes keep the conditions they were loaded with; the ones a
/// node was loaded without are added.
fn wanted(node: &Value, m: Mode, now: &str) -> Option<Value> {
    let healthy = conditions(now);
    let healthy = healthy.as_array()?;
    let mut stored = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut changed = false;
    for c in stored.iter_mut() {
        let ty = c["type"].as_str().unwrap_or_default();
        let Some(mut want) = healthy.iter().find(|h| h["type"] == ty).cloned() else {
            continue;
        };
        if ty == "Ready" && m == Mode::NotReady {
            want["status"] = json!("False");
            want["reason"] = json!(NOT_READY_REASON);
            want["message"] = json!(NOT_READY_MESSAGE);
        }
        let away = c["reason"] == NODE_STATUS_UNKNOWN
            || (c["reason"] == NOT_READY_REASON && c["message"] == NOT_READY_MESSAGE);
        let differs = c["status"] != want["status"] || c["reason"] != want["reason"];
        if differs && (away || m == Mode::NotReady && ty == "Ready") {
            *c = want;
            changed = true;
        }
    }
    // A condition the node never had is posted as a registering kubelet posts it: a node
    // loaded without status (a generated scenario's) is not left to go Unknown after the grace
    // period, with its pods then evicted, while its kubelet runs.
    for h in healthy {
        if !stored.iter().any(|c| c["type"] == h["type"]) {
            let mut want = h.clone();
            if h["type"] == "Ready" && m == Mode::NotReady {
                want["status"] = json!("False");
                want["reason"] = json!(NOT_READY_REASON);
                want["message"] = json!(NOT_READY_MESSAGE);
            }
            stored.push(want);
            changed = true;
        }
    }
    changed.then_some(Value::Array(stored))
}

/// One heartbeat of every running kubelet: its Lease renewed (created on the first beat), its
/// conditions posted when they changed (a kubelet back from a stop, or made NotReady) or when
/// `report` (every `STATUS_REPORT`). A stopped kubelet does nothing.
pub(crate) fn heartbeats(api: &Api, report: bool) {
    let (nodes, _) = api.store.list("/registry/minions/");
    let now_micro = util::now_micro();
    let now = util::now();
    let mut back_nodes = HashSet::new();
    for n in nodes.iter() {
        let m = mode(n);
        if m == Mode::Stopped {
            continue;
        }
        let name = n
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let back = m == Mode::Running && wanted(n, m, &now).is_some();
        if wanted(n, m, &now).is_some() || report {
            let _ = api.store.update(
                &format!("/registry/minions/{name}"),
                None,
                Write::Commit,
                |cur| {
                    let mut next = cur.clone();
                    let m = mode(cur);
                    match wanted(cur, m, &now) {
                        Some(conds) => next["status"]["conditions"] = conds,
                        None => {
                            if let Some(cs) = next
                                .pointer_mut("/status/conditions")
                                .and_then(Value::as_array_mut)
                            {
                                for c in cs.iter_mut() {
                                    c["lastHeartbeatTime"] = json!(now);
                                }
                            }
                        }
                    }
                    Ok(next)
                },
            );
        }
        if back {
            back_nodes.insert(name.clone());
        }
        let key = format!("/registry/leases/kube-node-lease/{name}");
        if api.store.get(&key).is_some() {
            let _ = api.store.update(&key, None, Write::Commit, |cur| {
                let mut next = cur.clone();
                next["spec"]["renewTime"] = json!(now_micro);
                Ok(next)
            });
        } else {
            let lease = json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                "metadata": {"name": name, "namespace": "kube-node-lease", "uid": util::uuid(), "creationTimestamp": now},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": NODE_LEASE_DURATION_SECONDS, "renewTime": now_micro}});
            let _ = api.store.create(&key, lease, Write::Commit);
        }
    }
    // After the nodes say Ready, so the node lifecycle controller does not undo it.
    pods_ready_again(api, &back_nodes);
}

/// The kubelets back on their nodes report their running pods Ready again (the node lifecycle
/// controller marked them not Ready while they were away). One pass over the pods for all of
/// them: a pass per node was nodes × pods, minutes of CPU when a 5,000-node scenario's
/// kubelets all posted their first status.
fn pods_ready_again(api: &Api, nodes: &HashSet<String>) {
    if nodes.is_empty() {
        return;
    }
    let str_at = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    for (_, item) in api.store.list_items("/registry/pods/").0 {
        let p = item.view();
        let containers_ready = p
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| c["ready"] == true));
        if !nodes.contains(
            p.at("/spec/nodeName")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ) || str_at(&p, "/status/phase") != "Running"
            || !containers_ready
            || p.pointer("/metadata/deletionTimestamp").is_some()
        {
            continue;
        }
        let key = format!(
            "/registry/pods/{}/{}",
            str_at(&p, "/metadata/namespace"),
            str_at(&p, "/metadata/name")
        );
        let uid = str_at(&p, "/metadata/uid");
        let _ = api.store.update(&key, None, Write::Commit, |cur| {
            let mut next = cur.clone();
            let Some(cs) = next
                .pointer_mut("/status/conditions")
                .and_then(Value::as_array_mut)
            else {
                return Err(StoreError::Rejected("no conditions".into()));
            };
            let mut changed = false;
            for c in cs.iter_mut().filter(|c| c["type"] == "Ready") {
                if c["status"] != "True" {
                    c["status"] = json!("True");
                    c["lastTransitionTime"] = json!(util::now());
                    changed = true;
                }
            }
            if !changed || str_at(cur, "/metadata/uid") != uid {
                return Err(StoreError::Rejected("nothing to report".into()));
            }
            crate::apiserver::endpoints::managed_fields::record_pod_status_write(
                cur, &mut next, "kubelet",
            );
            Ok(next)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annotation_picks_the_mode() {
        let n = |v: Value| json!({"metadata": {"annotations": v}});
        assert_eq!(
            mode(&n(json!({KUBELET_ANNOTATION: "stopped"}))),
            Mode::Stopped
        );
        assert_eq!(
            mode(&n(json!({KUBELET_ANNOTATION: "not-ready"}))),
            Mode::NotReady
        );
        assert_eq!(
            mode(&n(json!({KUBELET_ANNOTATION: "running"}))),
            Mode::Running
        );
        assert_eq!(mode(&json!({"metadata": {}})), Mode::Running);
    }

    #[test]
    fn a_returning_kubelet_posts_ready_again() {
        let now = "2026-01-01T00:00:00Z";
        let mut node = json!({"status": {"conditions": conditions(now)}});
        assert!(wanted(&node, Mode::Running, now).is_none());
        node["status"]["conditions"][3]["status"] = json!("Unknown");
        node["status"]["conditions"][3]["reason"] = json!("NodeStatusUnknown");
        let posted = wanted(&node, Mode::Running, now).unwrap_or_default();
        assert_eq!(posted[3]["status"], "True");
        assert_eq!(posted[3]["reason"], READY_REASON);
        let sick = wanted(&node, Mode::NotReady, now).unwrap_or_default();
        assert_eq!(sick[3]["status"], "False");
        assert_eq!(sick[3]["reason"], NOT_READY_REASON);
    }

    #[test]
    fn renewals_outpace_a_short_grace_period() {
        assert_eq!(renew_interval(Duration::from_secs(50)), RENEW_INTERVAL);
        assert_eq!(
            renew_interval(Duration::from_secs(4)),
            Duration::from_millis(800)
        );
    }
}

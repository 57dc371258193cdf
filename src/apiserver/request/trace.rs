//! The per-request trace: what each pipeline stage decided, in order, as plain data.
//! `journey` and the TUI read these to show a pod's path *as reported by the server*.
//! Nothing secret goes in here: identities and fingerprints, never keys or tokens.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

pub use crate::stage::{Stage, Status};

/// One stage of one request (`authentication`, `authorization`, `admission`, ...).
#[derive(Debug, Clone, Serialize)]
pub struct TraceStage {
    pub stage: Stage,
    pub status: Status,
    /// Microseconds since the request was received.
    pub(crate) at_us: u64,
    pub detail: Value,
}

/// The trace of one HTTP request through the server.
#[derive(Debug, Clone, Serialize)]
pub struct RequestTrace {
    pub(crate) audit_id: String,
    pub(crate) received: String,
    pub(crate) method: String,
    pub(crate) uri: String,
    pub(crate) verb: String,
    pub(crate) user: Option<String>,
    /// `namespace/name` of the object the request was about, when it had one.
    pub(crate) object: Option<String>,
    pub(crate) resource: String,
    pub(crate) code: u16,
    pub stages: Vec<TraceStage>,
    /// Set when the request impersonated: who actually sent it (the audit log's `user`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) impersonated_by: Option<crate::apiserver::request::user::UserInfo>,
    #[serde(skip)]
    start: Option<Instant>,
}

impl RequestTrace {
    pub fn new(audit_id: String, received: String, method: &str, uri: &str) -> Self {
        RequestTrace {
            audit_id,
            received,
            method: method.to_string(),
            uri: uri.to_string(),
            verb: String::new(),
            user: None,
            object: None,
            resource: String::new(),
            code: 0,
            stages: Vec::new(),
            impersonated_by: None,
            start: Some(Instant::now()),
        }
    }

    pub(crate) fn stage(&mut self, stage: Stage, status: Status, detail: Value) {
        let at_us = self
            .start
            .map(|s| s.elapsed().as_micros() as u64)
            .unwrap_or_default();
        self.stages.push(TraceStage {
            stage,
            status,
            at_us,
            detail,
        });
    }

    pub fn find(&self, stage: Stage) -> Option<&TraceStage> {
        self.stages.iter().find(|s| s.stage == stage)
    }
}

/// What the control loops did to one pod after it was stored (scheduling, binding, kubelet).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PodTrace {
    /// The audit ID of the request that created the pod.
    pub create_audit_id: Option<String>,
    pub(crate) uid: Option<String>,
    /// The scheduler's trace (filter/score per node), as the scheduling engine reported it.
    pub scheduling: Option<Value>,
    pub(crate) binding: Option<Value>,
    /// Kubelet steps in order: `{step, at, detail}`.
    pub kubelet: Vec<Value>,
    /// Watch events that carried this pod to watchers: `{type, resourceVersion, phase, nodeName}`.
    pub(crate) watch: Vec<Value>,
}

/// Recent request traces and per-pod control-loop traces, bounded so memory stays flat.
#[derive(Debug, Default)]
pub struct TraceLog {
    inner: Mutex<TraceInner>,
}

#[derive(Debug, Default)]
struct TraceInner {
    requests: VecDeque<Arc<RequestTrace>>,
    pods: HashMap<String, PodTrace>,
    pod_order: VecDeque<String>,
}

const MAX_REQUESTS: usize = 2000;
const MAX_PODS: usize = 2000;

impl TraceLog {
    pub(crate) fn push(&self, t: RequestTrace) {
        let t = Arc::new(t);
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if t.verb == "create"
            && t.resource == "pods"
            && t.code == 201
            && let Some(obj) = &t.object
        {
            let audit = t.audit_id.clone();
            Self::pod_entry(&mut g, obj).create_audit_id = Some(audit);
        }
        g.requests.push_back(t);
        let evicted = (g.requests.len() > MAX_REQUESTS)
            .then(|| g.requests.pop_front())
            .flatten();
        drop(g);
        // The oldest trace is freed after the lock is released: freeing its JSON tree is most
        // of the cost of a push, and every request of every connection pushes.
        drop(evicted);
    }

    fn pod_entry<'a>(g: &'a mut TraceInner, key: &str) -> &'a mut PodTrace {
        if !g.pods.contains_key(key) {
            g.pod_order.push_back(key.to_string());
            while g.pod_order.len() > MAX_PODS {
                if let Some(old) = g.pod_order.pop_front() {
                    g.pods.remove(&old);
                }
            }
        }
        g.pods.entry(key.to_string()).or_default()
    }

    /// Change the control-loop trace of pod `ns/name`.
    pub(crate) fn with_pod(&self, key: &str, f: impl FnOnce(&mut PodTrace)) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(Self::pod_entry(&mut g, key));
    }

    /// Change the control-loop trace of pod `ns/name` whose uid is `uid`: a trace left by an
    /// earlier pod of the same name is dropped first. The uid itself is left for the create
    /// handler to set, so that `reset_pod` can tell this pod's early records from old ones.
    pub(crate) fn with_pod_of(&self, key: &str, uid: &str, f: impl FnOnce(&mut PodTrace)) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let t = Self::pod_entry(&mut g, key);
        if t.uid.as_deref().is_some_and(|u| u != uid) {
            *t = PodTrace::default();
        }
        f(t);
    }

    /// Forget the trace of an earlier pod of the same name (one whose create handler set its
    /// uid), as a new pod starts afresh. A trace without a uid is this new pod's own: the
    /// scheduler can record its decision between the store's commit and this call.
    pub(crate) fn reset_pod(&self, key: &str) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.pods.get(key).is_some_and(|t| t.uid.is_some()) {
            g.pods.remove(key);
        }
    }

    pub fn pod(&self, key: &str) -> Option<PodTrace> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.pods.get(key).cloned()
    }

    pub fn request(&self, audit_id: &str) -> Option<Arc<RequestTrace>> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.requests
            .iter()
            .rev()
            .find(|t| t.audit_id == audit_id)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_scheduling_record_made_before_the_create_finishes_survives_its_reset() {
        let log = TraceLog::default();
        // An earlier pod of the same name, fully recorded.
        log.with_pod("default/app", |t| {
            t.uid = Some("old".into());
            t.binding = Some(json!({"node": "node-1"}));
        });
        // The new pod is scheduled before its create handler resets the trace.
        log.with_pod_of("default/app", "new", |t| {
            t.scheduling = Some(json!({"selected": "node-3"}))
        });
        log.reset_pod("default/app");
        log.with_pod("default/app", |t| t.uid = Some("new".into()));
        let t = log.pod("default/app").unwrap_or_default();
        assert_eq!(t.scheduling, Some(json!({"selected": "node-3"})));
        assert_eq!(t.binding, None);
        // A later pod of that name starts afresh.
        log.reset_pod("default/app");
        assert!(log.pod("default/app").is_none());
    }
}

//! The per-request trace: what each pipeline stage decided, in order, as plain data.
//! `journey` and the TUI read these to show a pod's path *as reported by the server*.
//! Nothing secret goes in here: identities and fingerprints, never keys or tokens.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::apiserver::request::packed_json::PackedJson;

pub use crate::stage::{Stage, Status};

/// One stage of one request (`authentication`, `authorization`, `admission`, ...).
#[derive(Debug, Clone, Serialize)]
pub struct TraceStage {
    pub stage: Stage,
    pub status: Status,
    /// Microseconds since the request was received.
    pub(crate) at_us: u64,
    pub detail: Detail,
}

/// A stage's detail, kept as JSON text: every request writes several and few are ever read
/// (the journey, the TUI, the audit log), and a pod's admission record as a tree was a few
/// hundred small maps to build from the typed records and to free when the trace was dropped.
#[derive(Debug, Clone)]
pub struct Detail(Box<RawValue>);

impl Detail {
    fn of(detail: &impl Serialize) -> Detail {
        let null = || RawValue::from_string("null".into()).expect("null is JSON");
        Detail(serde_json::value::to_raw_value(detail).unwrap_or_else(|_| null()))
    }

    /// The detail as a tree.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl Serialize for Detail {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
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
    /// Who the request acts as, once authenticated (and impersonation applied): what a
    /// CertificateSigningRequest records as its requester.
    #[serde(skip)]
    pub(crate) requester: Option<crate::apiserver::request::user::UserInfo>,
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
            requester: None,
            start: Some(Instant::now()),
        }
    }

    pub(crate) fn stage(&mut self, stage: Stage, status: Status, detail: impl Serialize) {
        let at_us = self
            .start
            .map(|s| s.elapsed().as_micros() as u64)
            .unwrap_or_default();
        self.stages.push(TraceStage {
            stage,
            status,
            at_us,
            detail: Detail::of(&detail),
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
    /// The scheduler's trace (filter/score per node), as the scheduling engine reported it,
    /// kept as packed JSON text: a parsed tree of a 100-node cluster's verdicts is ~0.5 MB a
    /// pod, its text ~75 KB, packed ~6 KB.
    pub(crate) scheduling: Option<PackedJson>,
    /// Why `scheduling` is no longer here (the byte budget below dropped it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scheduling_dropped: Option<&'static str>,
    #[serde(skip)]
    scheduling_seq: u64,
    pub(crate) binding: Option<Value>,
    /// Kubelet steps in order: `{step, at, detail}`.
    pub kubelet: Vec<Value>,
    /// Watch events that carried this pod to watchers: `{type, resourceVersion, phase, nodeName}`.
    pub(crate) watch: Vec<Value>,
}

impl PodTrace {
    /// The scheduler's record of this pod, parsed (None when there is none or it was dropped).
    pub fn scheduling(&self) -> Option<Value> {
        self.scheduling.as_ref().and_then(PackedJson::parse)
    }
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
    /// Pods with a scheduling record, oldest first, with the record's sequence number (a pod
    /// scheduled again has a newer one: its older queue entry then drops nothing).
    scheduling_order: VecDeque<(String, u64)>,
    scheduling_bytes: usize,
    scheduling_seq: u64,
}

const MAX_REQUESTS: usize = 2000;
const MAX_PODS: usize = 2000;
/// The scheduling records kept, in packed bytes: the newest pods keep theirs. One pod's is
/// ~6 KB packed on 100 nodes (75 KB of JSON) and ~0.3 MB on 5,000, so this is the last
/// several hundred pods on a small cluster and the last dozen on a big one, where before
/// memory grew with every pod.
const MAX_SCHEDULING_BYTES: usize = 4 << 20;
const SCHEDULING_DROPPED: &str = "the embedded server keeps the scheduler's per-node verdicts of its most recent pods only (4 MiB of them, compressed); this pod's were dropped to make room";

fn scheduling_len(t: &PodTrace) -> usize {
    t.scheduling.as_ref().map_or(0, PackedJson::len)
}

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
                if let Some(old) = g.pod_order.pop_front()
                    && let Some(t) = g.pods.remove(&old)
                {
                    g.scheduling_bytes -= scheduling_len(&t);
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
        f(Self::pod_of(&mut g, key, uid));
    }

    fn pod_of<'a>(g: &'a mut TraceInner, key: &str, uid: &str) -> &'a mut PodTrace {
        let t = Self::pod_entry(g, key);
        if t.uid.as_deref().is_some_and(|u| u != uid) {
            let old = std::mem::take(t);
            g.scheduling_bytes -= scheduling_len(&old);
        }
        Self::pod_entry(g, key)
    }

    /// Record the scheduler's verdict on pod `key` (uid `uid`, as [`Self::with_pod_of`]),
    /// within the byte budget: the oldest pods' records are dropped first.
    pub(crate) fn set_scheduling(&self, key: &str, uid: &str, detail: &impl Serialize) {
        let raw = PackedJson::pack(detail);
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.scheduling_seq += 1;
        let seq = g.scheduling_seq;
        let t = Self::pod_of(&mut g, key, uid);
        let before = scheduling_len(t);
        t.scheduling = raw;
        t.scheduling_dropped = None;
        t.scheduling_seq = seq;
        let after = scheduling_len(t);
        g.scheduling_bytes = g.scheduling_bytes - before + after;
        g.scheduling_order.push_back((key.to_string(), seq));
        while g.scheduling_bytes > MAX_SCHEDULING_BYTES {
            let Some((old, seq)) = g.scheduling_order.pop_front() else {
                break;
            };
            if let Some(t) = g.pods.get_mut(&old)
                && t.scheduling_seq == seq
                && let Some(r) = t.scheduling.take()
            {
                t.scheduling_dropped = Some(SCHEDULING_DROPPED);
                g.scheduling_bytes -= r.len();
            }
        }
    }

    /// Add a note to pod `key`'s scheduling record (what its preemption did).
    pub(crate) fn note_scheduling(&self, key: &str, uid: &str, note: &str) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let t = Self::pod_of(&mut g, key, uid);
        let Some(mut detail) = t.scheduling.as_ref().and_then(PackedJson::parse) else {
            return;
        };
        if let Some(notes) = detail.pointer_mut("/notes").and_then(Value::as_array_mut) {
            notes.push(Value::String(note.to_string()));
        }
        let before = scheduling_len(t);
        t.scheduling = PackedJson::pack(&detail);
        let after = scheduling_len(t);
        g.scheduling_bytes = g.scheduling_bytes - before + after;
    }

    /// Forget the trace of an earlier pod of the same name (one whose create handler set its
    /// uid), as a new pod starts afresh. A trace without a uid is this new pod's own: the
    /// scheduler can record its decision between the store's commit and this call.
    pub(crate) fn reset_pod(&self, key: &str) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.pods.get(key).is_some_and(|t| t.uid.is_some())
            && let Some(t) = g.pods.remove(key)
        {
            g.scheduling_bytes -= scheduling_len(&t);
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
        log.set_scheduling("default/app", "new", &json!({"selected": "node-3"}));
        log.reset_pod("default/app");
        log.with_pod("default/app", |t| t.uid = Some("new".into()));
        let t = log.pod("default/app").unwrap_or_default();
        assert_eq!(
            t.scheduling.and_then(|r| r.text()).as_deref(),
            Some(r#"{"selected":"node-3"}"#)
        );
        assert_eq!(t.binding, None);
        // A later pod of that name starts afresh.
        log.reset_pod("default/app");
        assert!(log.pod("default/app").is_none());
    }

    #[test]
    fn scheduling_records_stay_within_their_budget_newest_first() {
        let log = TraceLog::default();
        // Records that do not compress: 256 KiB of pseudo-random hex each.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut noise = || {
            (0..1 << 18)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from_digit((x % 16) as u32, 16).unwrap_or('0')
                })
                .collect::<String>()
        };
        for i in 0..40 {
            log.with_pod(&format!("default/p{i}"), |t| t.uid = Some(format!("u{i}")));
            log.set_scheduling(
                &format!("default/p{i}"),
                &format!("u{i}"),
                &json!({"pad": noise()}),
            );
        }
        let kept: Vec<usize> = (0..40)
            .filter(|i| {
                log.pod(&format!("default/p{i}"))
                    .is_some_and(|t| t.scheduling.is_some())
            })
            .collect();
        // 4 MiB of records a little over 256 KiB each: the newest 15, none older.
        assert_eq!(kept, (25..40).collect::<Vec<_>>());
        let dropped = log.pod("default/p0").unwrap_or_default();
        assert_eq!(dropped.scheduling_dropped, Some(SCHEDULING_DROPPED));
        let g = log.inner.lock().unwrap_or_else(|e| e.into_inner());
        assert!(g.scheduling_bytes <= MAX_SCHEDULING_BYTES);
        // Scheduled again: the newer record is kept and counted once.
        drop(g);
        log.set_scheduling("default/p39", "u39", &json!({"selected": "n"}));
        let t = log.pod("default/p39").unwrap_or_default();
        assert_eq!(
            t.scheduling().map(|v| v["selected"].clone()),
            Some(json!("n"))
        );
    }
}

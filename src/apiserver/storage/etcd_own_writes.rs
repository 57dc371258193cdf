//! The puts this server sent to etcd, kept until its watch brings them back. The mirror must
//! apply every change in etcd's order, so a writer cannot apply its own put; but it had the
//! object in hand, and its watch event carries the same bytes. So a writer leaves here what the
//! mirror needs (the tree the store keeps and where the revision goes in the encoding), and
//! the mirror, finding the event's bytes equal to a put left here, uses them instead of parsing
//! the value and encoding it again. Anything else (another server's write, etcdctl, a put whose
//! answer was lost) is parsed as before.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use hyper::body::Bytes;
use serde_json::Value;

use crate::apiserver::storage::controller_view::{self, Kept, kept};
use crate::apiserver::storage::store::set_rv;

/// Puts left and not yet seen are dropped past this many: they are only a shortcut, and a put
/// whose event never comes (its transaction failed unseen) must not stay forever.
const MAX_PENDING: usize = 4096;

/// Where `metadata.resourceVersion` goes in an encoding made without it, so that the encoding
/// with it is the same bytes `serde_json` writes for the object with it (keys in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RvSlot {
    at: usize,
    comma_before: bool,
    comma_after: bool,
}

/// `v` encoded without its resourceVersion (what etcd stores), and the slot for it; no slot
/// when `v` has no metadata object.
pub(crate) fn encode_for_etcd(v: &Value) -> (Vec<u8>, Option<RvSlot>) {
    let mut out = Vec::with_capacity(2048);
    let Value::Object(top) = v else {
        return (serde_json::to_vec(v).unwrap_or_default(), None);
    };
    let mut slot = None;
    out.push(b'{');
    for (i, (k, val)) in top.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut out, k);
        out.push(b':');
        match (k.as_str(), val) {
            ("metadata", Value::Object(meta)) => slot = Some(metadata(&mut out, meta)),
            _ => {
                let _ = serde_json::to_writer(&mut out, val);
            }
        }
    }
    out.push(b'}');
    (out, slot)
}

/// The metadata without its resourceVersion, and where it would have been: after the value of
/// the last key before it (or after the `{`), so the `,` that follows there is the next key's.
fn metadata(out: &mut Vec<u8>, meta: &serde_json::Map<String, Value>) -> RvSlot {
    const RV: &str = "resourceVersion";
    out.push(b'{');
    let mut slot = None;
    let mut written = 0;
    for (k, val) in meta {
        if k == RV {
            continue;
        }
        if slot.is_none() && k.as_str() > RV {
            slot = Some(RvSlot {
                at: out.len(),
                comma_before: written > 0,
                comma_after: written == 0,
            });
        }
        if written > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, k);
        out.push(b':');
        let _ = serde_json::to_writer(&mut *out, val);
        written += 1;
    }
    let slot = slot.unwrap_or(RvSlot {
        at: out.len(),
        comma_before: written > 0,
        comma_after: false,
    });
    out.push(b'}');
    slot
}

/// The encoding with `metadata.resourceVersion` set to `rev`.
pub(crate) fn with_rv(bytes: &[u8], slot: RvSlot, rev: u64) -> Bytes {
    let mut out = Vec::with_capacity(bytes.len() + 40);
    let (head, tail) = bytes.split_at(slot.at.min(bytes.len()));
    out.extend_from_slice(head);
    if slot.comma_before {
        out.push(b',');
    }
    let _ = write!(out, "\"resourceVersion\":\"{rev}\"");
    if slot.comma_after {
        out.push(b',');
    }
    out.extend_from_slice(tail);
    Bytes::from(out)
}

/// One put left for the mirror.
struct OwnWrite {
    bytes: Arc<Vec<u8>>,
    slot: RvSlot,
    /// What the store keeps of the object (`controller_view`), without a revision yet.
    tree: Option<Value>,
}

/// What the mirror takes for a put it recognised: the tree to keep and the encoding, both at
/// the put's revision.
pub(crate) struct Recognised {
    pub(crate) tree: Option<Arc<Value>>,
    pub(crate) json: Bytes,
}

#[derive(Default)]
pub(crate) struct OwnWrites {
    pending: Mutex<HashMap<String, OwnWrite>>,
}

impl OwnWrites {
    /// The bytes to put at `key` (a server key) for `value`, left here for the mirror.
    pub(crate) fn put(&self, key: &str, value: &Value) -> Arc<Vec<u8>> {
        let (bytes, slot) = encode_for_etcd(value);
        let bytes = Arc::new(bytes);
        let Some(slot) = slot else {
            return bytes;
        };
        let tree = match kept(key) {
            Kept::View => Some(controller_view::pod_view(value)),
            Kept::Whole => Some(value.clone()),
            Kept::Nothing => None,
        };
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if g.len() >= MAX_PENDING {
            g.clear();
        }
        let own = OwnWrite {
            bytes: bytes.clone(),
            slot,
            tree,
        };
        g.insert(key.to_string(), own);
        bytes
    }

    /// The put of `bytes` at `key` did not happen (the transaction failed): forget it, unless
    /// another put to the key replaced it since.
    pub(crate) fn failed(&self, key: &str, bytes: &Arc<Vec<u8>>) {
        let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if g.get(key).is_some_and(|w| Arc::ptr_eq(&w.bytes, bytes)) {
            g.remove(key);
        }
    }

    /// The mirror saw `value` put at `key` at `rev`: when it is a put left here, what to keep.
    pub(crate) fn recognise(&self, key: &str, value: &[u8], rev: u64) -> Option<Recognised> {
        let own = {
            let mut g = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            match g.get(key) {
                Some(w) if w.bytes.as_slice() == value => g.remove(key)?,
                _ => return None,
            }
        };
        let tree = own.tree.map(|mut t| {
            set_rv(&mut t, rev);
            Arc::new(t)
        });
        Some(Recognised {
            tree,
            json: with_rv(&own.bytes, own.slot, rev),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The encoding with the revision spliced in is byte for byte what serde_json writes for
    /// the object with it, wherever the key falls among the metadata's keys.
    #[test]
    fn the_revision_goes_where_serde_json_puts_it() {
        for meta in [
            json!({}),
            json!({"name": "a"}),
            json!({"uid": "u"}),
            json!({"name": "a", "uid": "u"}),
            json!({"annotations": {"x": "y"}, "name": "a", "namespace": "n", "uid": "u"}),
            json!({"name": "a", "resourceVersion": "7"}),
            json!({"a": 1, "b": 2}),
            json!({"x": 1, "y": 2}),
        ] {
            let v =
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"a": [1]}});
            let (bytes, slot) = encode_for_etcd(&v);
            let mut without = v.clone();
            without["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("resourceVersion");
            assert_eq!(bytes, serde_json::to_vec(&without).unwrap(), "{v}");
            let mut want = v.clone();
            set_rv(&mut want, 42);
            let got = with_rv(&bytes, slot.expect("slot"), 42);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&serde_json::to_vec(&want).unwrap()),
                "{v}"
            );
        }
        let (bytes, slot) = encode_for_etcd(&json!({"kind": "X"}));
        assert_eq!((bytes, slot), (br#"{"kind":"X"}"#.to_vec(), None));
    }

    #[test]
    fn a_put_is_recognised_once_and_only_by_its_bytes() {
        let own = OwnWrites::default();
        let key = "/registry/pods/default/a";
        let pod =
            json!({"metadata": {"name": "a", "managedFields": [{}]}, "spec": {"volumes": [{}]}});
        let bytes = own.put(key, &pod);
        assert!(own.recognise(key, b"{}", 5).is_none(), "other bytes");
        let r = own.recognise(key, &bytes, 5).expect("recognised");
        let tree = r.tree.expect("a pod's view");
        assert_eq!(tree["metadata"]["resourceVersion"], "5");
        assert!(tree["metadata"].get("managedFields").is_none());
        assert!(tree["spec"].get("volumes").is_none());
        let mut want = pod.clone();
        set_rv(&mut want, 5);
        assert_eq!(r.json, serde_json::to_vec(&want).unwrap());
        assert!(own.recognise(key, &bytes, 5).is_none(), "taken once");
        let bytes = own.put(key, &pod);
        own.failed(key, &bytes);
        assert!(
            own.recognise(key, &bytes, 6).is_none(),
            "a failed put is forgotten"
        );
    }
}

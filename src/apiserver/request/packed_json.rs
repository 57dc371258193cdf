//! JSON text kept compressed: the scheduler's per-node verdicts of a pod are ~75 KB of JSON on
//! 100 nodes and ~3 MB on 5,000, and so repetitive (the same plugin names and reasons node
//! after node) that LZ4 keeps them in about a tenth. They are read only when someone asks for a
//! pod's journey, so unpacking on read costs nothing the rest of the time.

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON document, LZ4-compressed (with its length in front).
#[derive(Clone)]
pub(crate) struct PackedJson(Box<[u8]>);

impl std::fmt::Debug for PackedJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PackedJson({} bytes packed)", self.0.len())
    }
}

impl PackedJson {
    /// `value` serialized and packed; None when it does not serialize.
    pub(crate) fn pack(value: &impl Serialize) -> Option<Self> {
        let text = serde_json::to_vec(value).ok()?;
        Some(PackedJson(
            lz4_flex::compress_prepend_size(&text).into_boxed_slice(),
        ))
    }

    /// The bytes this takes (what budgets count).
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The JSON text again.
    pub(crate) fn text(&self) -> Option<String> {
        let bytes = lz4_flex::decompress_size_prepended(&self.0).ok()?;
        String::from_utf8(bytes).ok()
    }

    pub(crate) fn parse(&self) -> Option<Value> {
        serde_json::from_str(&self.text()?).ok()
    }
}

/// Written out as the JSON it holds.
impl Serialize for PackedJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = self
            .text()
            .and_then(|t| RawValue::from_string(t).ok())
            .ok_or_else(|| serde::ser::Error::custom("a packed JSON record did not unpack"))?;
        raw.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_unpacks_to_the_same_json_and_takes_far_less() {
        let nodes: Vec<Value> = (0..100)
            .map(|i| json!({"node": format!("node-{i:05}"), "filter": [{"plugin": "NodeResourcesFit", "status": "Success"}, {"plugin": "TaintToleration", "status": "Success"}], "score": [{"plugin": "NodeResourcesBalancedAllocation", "score": 97}]}))
            .collect();
        let record = json!({"selected": "node-00042", "nodes": nodes});
        let packed = PackedJson::pack(&record).expect("packs");
        assert_eq!(packed.parse(), Some(record.clone()));
        assert_eq!(
            serde_json::to_value(&packed).expect("serializes"),
            record.clone()
        );
        let text = serde_json::to_vec(&record).expect("text").len();
        assert!(packed.len() * 5 < text, "{} of {text}", packed.len());
    }
}

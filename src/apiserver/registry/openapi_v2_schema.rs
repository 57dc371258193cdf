//! The v2 document's `definitions`: the same schemas as OpenAPI v3 (`openapi::all_definitions`,
//! list markers included), with `$ref`s pointing at `#/definitions/`, as Swagger 2.0 JSON and as
//! gnostic's `openapi.v2.Schema` messages (field numbers from gnostic's OpenAPIv2.proto).
//! kubectl 1.27 and 1.28 read the protobuf form for the patch merge keys of `apply`.

use serde_json::{Map, Value};

use crate::apiserver::codec::proto::ld;
use crate::apiserver::registry::openapi;

const V3_REFS: &str = "#/components/schemas/";
const V2_REFS: &str = "#/definitions/";

/// Every definition, as Swagger 2.0 JSON.
pub(crate) fn definitions_json() -> Map<String, Value> {
    openapi::all_definitions()
        .into_iter()
        .map(|(name, mut schema)| {
            rewrite_refs(&mut schema);
            (name, schema)
        })
        .collect()
}

fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                match (k.as_str(), child) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix(V3_REFS) {
                            *r = format!("{V2_REFS}{name}");
                        }
                    }
                    (_, child) => rewrite_refs(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// `Definitions` (Document field 9): one `NamedSchema` per definition.
pub(crate) fn definitions_protobuf() -> Vec<u8> {
    let mut out = Vec::new();
    for (name, schema) in definitions_json() {
        out.extend(ld(1, &named_schema(&name, &schema)));
    }
    out
}

fn named_schema(name: &str, schema: &Value) -> Vec<u8> {
    [ld(1, name.as_bytes()), ld(2, &encode(schema))].concat()
}

/// One `Schema` message: the keywords kube-openapi's proto models read.
fn encode(schema: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let Some(m) = schema.as_object() else {
        return out;
    };
    let text = |k: &str| m.get(k).and_then(Value::as_str);
    if let Some(r) = text("$ref") {
        out.extend(ld(1, r.as_bytes()));
    }
    if let Some(f) = text("format") {
        out.extend(ld(2, f.as_bytes()));
    }
    if let Some(d) = text("description") {
        out.extend(ld(4, d.as_bytes()));
    }
    for r in m
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        out.extend(ld(19, r.as_bytes()));
    }
    match m.get("additionalProperties") {
        Some(Value::Bool(b)) => out.extend(ld(21, &[0x10, u8::from(*b)])), // boolean = 2
        Some(s @ Value::Object(_)) => out.extend(ld(21, &ld(1, &encode(s)))),
        _ => {}
    }
    if let Some(t) = text("type") {
        out.extend(ld(22, &ld(1, t.as_bytes()))); // TypeItem.value
    }
    if let Some(items) = m.get("items") {
        out.extend(ld(23, &ld(1, &encode(items)))); // ItemsItem.schema
    }
    for s in m
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(ld(24, &encode(s)));
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        let named: Vec<u8> = props
            .iter()
            .flat_map(|(n, s)| ld(1, &named_schema(n, s)))
            .collect();
        out.extend(ld(25, &named)); // Properties.additional_properties
    }
    for (k, v) in m.iter().filter(|(k, _)| k.starts_with("x-")) {
        let yaml = serde_yaml::to_string(v).unwrap_or_default();
        let any = ld(2, yaml.as_bytes()); // Any.yaml
        out.extend(ld(31, &[ld(1, k.as_bytes()), ld(2, &any)].concat())); // NamedAny
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::codec::proto::{Field, Message};

    fn messages<'a>(m: &Message<'a>, num: u64) -> Vec<Message<'a>> {
        m.all(num)
            .filter_map(|f| match f {
                Field::Bytes(b) => Message::parse(b),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn pod_spec_containers_carry_their_merge_key_in_both_forms() {
        let defs = definitions_json();
        let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(
            containers["items"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.Container"
        );
        let pod = &defs["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"];
        assert_eq!(pod[0]["kind"], "Pod");

        let bytes = encode(&defs["io.k8s.api.core.v1.PodSpec"]);
        let schema = Message::parse(&bytes).unwrap_or_default();
        let props = schema.message(25).unwrap_or_default();
        let found = messages(&props, 1)
            .into_iter()
            .find(|n| n.string(1) == "containers");
        let ext = found
            .and_then(|n| n.message(2))
            .map(|s| messages(&s, 31))
            .unwrap_or_default();
        let key = ext
            .iter()
            .find(|e| e.string(1) == "x-kubernetes-patch-merge-key")
            .and_then(|e| e.message(2))
            .map(|a| a.string(2).to_string());
        assert_eq!(key.as_deref(), Some("name\n"));
    }
}

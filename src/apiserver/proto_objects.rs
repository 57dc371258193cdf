//! The stored kinds kubectl 1.32+ creates with typed clients (`kubectl create namespace`,
//! `create clusterrole`, `create rolebinding`, `create priorityclass` …) arrive as
//! `application/vnd.kubernetes.protobuf`. Each is turned into the JSON object the same command
//! would have sent as JSON, so one pipeline (defaults, validation, storage) serves both. Field
//! numbers are those of k8s.io/api's generated.proto; a field not listed is ignored, as
//! kube-apiserver ignores fields it does not know when decoding protobuf.

use serde_json::{Map, Value, json};

use super::proto::{Field, Message, unwrap_envelope};

#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Bool,
    Strings,
    StrMap,
    Msg(&'static [Def]),
    Msgs(&'static [Def]),
}

type Def = (u64, &'static str, Ty);

const LABEL_REQUIREMENT: &[Def] = &[
    (1, "key", Ty::Str),
    (2, "operator", Ty::Str),
    (3, "values", Ty::Strings),
];
const LABEL_SELECTOR: &[Def] = &[
    (1, "matchLabels", Ty::StrMap),
    (2, "matchExpressions", Ty::Msgs(LABEL_REQUIREMENT)),
];
const OWNER_REFERENCE: &[Def] = &[
    (5, "apiVersion", Ty::Str),
    (1, "kind", Ty::Str),
    (3, "name", Ty::Str),
    (4, "uid", Ty::Str),
    (6, "controller", Ty::Bool),
    (7, "blockOwnerDeletion", Ty::Bool),
];
const OBJECT_META: &[Def] = &[
    (1, "name", Ty::Str),
    (2, "generateName", Ty::Str),
    (3, "namespace", Ty::Str),
    (6, "resourceVersion", Ty::Str),
    (11, "labels", Ty::StrMap),
    (12, "annotations", Ty::StrMap),
    (13, "ownerReferences", Ty::Msgs(OWNER_REFERENCE)),
    (14, "finalizers", Ty::Strings),
];
const POLICY_RULE: &[Def] = &[
    (1, "verbs", Ty::Strings),
    (2, "apiGroups", Ty::Strings),
    (3, "resources", Ty::Strings),
    (4, "resourceNames", Ty::Strings),
    (5, "nonResourceURLs", Ty::Strings),
];
const AGGREGATION_RULE: &[Def] = &[(1, "clusterRoleSelectors", Ty::Msgs(LABEL_SELECTOR))];
const ROLE: &[Def] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "rules", Ty::Msgs(POLICY_RULE)),
];
const CLUSTER_ROLE: &[Def] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "rules", Ty::Msgs(POLICY_RULE)),
    (3, "aggregationRule", Ty::Msg(AGGREGATION_RULE)),
];
const SUBJECT: &[Def] = &[
    (1, "kind", Ty::Str),
    (2, "apiGroup", Ty::Str),
    (3, "name", Ty::Str),
    (4, "namespace", Ty::Str),
];
const ROLE_REF: &[Def] = &[
    (1, "apiGroup", Ty::Str),
    (2, "kind", Ty::Str),
    (3, "name", Ty::Str),
];
const BINDING: &[Def] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "subjects", Ty::Msgs(SUBJECT)),
    (3, "roleRef", Ty::Msg(ROLE_REF)),
];
const NAMESPACE_SPEC: &[Def] = &[(1, "finalizers", Ty::Strings)];
const NAMESPACE: &[Def] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "spec", Ty::Msg(NAMESPACE_SPEC)),
];
const PRIORITY_CLASS: &[Def] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "value", Ty::Int),
    (3, "globalDefault", Ty::Bool),
    (4, "description", Ty::Str),
    (5, "preemptionPolicy", Ty::Str),
];

fn schema(kind: &str) -> Option<&'static [Def]> {
    Some(match kind {
        "Namespace" => NAMESPACE,
        "Role" => ROLE,
        "ClusterRole" => CLUSTER_ROLE,
        "RoleBinding" | "ClusterRoleBinding" => BINDING,
        "PriorityClass" => PRIORITY_CLASS,
        _ => return None,
    })
}

/// Whether a protobuf body of this kind can be read.
pub fn supported(kind: &str) -> bool {
    schema(kind).is_some()
}

/// The envelope's object as JSON with its apiVersion and kind, or why it cannot be read.
pub fn decode(expected_kind: &str, body: &[u8]) -> Result<Value, String> {
    let (api_version, kind, raw) =
        unwrap_envelope(body).ok_or("invalid protobuf envelope (no k8s\\0 prefix)")?;
    if kind != expected_kind {
        return Err(format!(
            "unexpected kind {kind:?} in version {api_version:?}, expected {expected_kind}"
        ));
    }
    let defs = schema(&kind).ok_or_else(|| format!("{kind} is not accepted as protobuf"))?;
    let msg = Message::parse(raw).ok_or("malformed protobuf")?;
    let mut obj = object(&msg, defs, 0)?;
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

/// Nesting of the schemas above is at most four deep; anything deeper is not one of them.
const MAX_DEPTH: usize = 8;

fn object(msg: &Message<'_>, defs: &[Def], depth: usize) -> Result<Map<String, Value>, String> {
    if depth > MAX_DEPTH {
        return Err("protobuf nested too deeply".into());
    }
    let mut out = Map::new();
    for &(num, name, ty) in defs {
        let values: Vec<Field<'_>> = msg.all(num).collect();
        if values.is_empty() {
            continue;
        }
        let v = match ty {
            // Go's marshaller writes empty strings that its JSON form omits (omitempty).
            Ty::Str => match text(last_bytes(&values)?)? {
                t if t.is_empty() => continue,
                t => json!(t),
            },
            Ty::Int => json!(last_varint(&values)? as i64),
            Ty::Bool => json!(last_varint(&values)? != 0),
            Ty::Strings => Value::Array(
                values
                    .iter()
                    .map(|f| bytes(f).and_then(text).map(Value::from))
                    .collect::<Result<_, _>>()?,
            ),
            Ty::StrMap => {
                let mut m = Map::new();
                for f in &values {
                    let e = Message::parse(bytes(f)?).ok_or("malformed map entry")?;
                    let key = text(e.bytes(1).unwrap_or_default())?;
                    let value = text(e.bytes(2).unwrap_or_default())?;
                    m.insert(key, json!(value));
                }
                Value::Object(m)
            }
            Ty::Msg(inner) => {
                let m = Message::parse(last_bytes(&values)?).ok_or("malformed message")?;
                Value::Object(object(&m, inner, depth + 1)?)
            }
            Ty::Msgs(inner) => Value::Array(
                values
                    .iter()
                    .map(|f| {
                        let m = Message::parse(bytes(f)?).ok_or("malformed message")?;
                        object(&m, inner, depth + 1).map(Value::Object)
                    })
                    .collect::<Result<_, String>>()?,
            ),
        };
        out.insert(name.into(), v);
    }
    Ok(out)
}

fn bytes<'a>(f: &Field<'a>) -> Result<&'a [u8], String> {
    match f {
        Field::Bytes(b) => Ok(b),
        _ => Err("a length-delimited field has another wire type".into()),
    }
}

fn last_bytes<'a>(values: &[Field<'a>]) -> Result<&'a [u8], String> {
    bytes(values.last().ok_or("missing field")?)
}

fn last_varint(values: &[Field<'_>]) -> Result<u64, String> {
    match values.last() {
        Some(Field::Varint(v)) => Ok(*v),
        _ => Err("a varint field has another wire type".into()),
    }
}

fn text(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| "a string field is not UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(num: u64, data: &[u8]) -> Vec<u8> {
        let mut v = vec![((num << 3) | 2) as u8];
        let mut n = data.len();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                v.push(b);
                break;
            }
            v.push(b | 0x80);
        }
        v.extend_from_slice(data);
        v
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let tm = [ld(1, api_version.as_bytes()), ld(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), ld(1, &tm), ld(2, raw)].concat()
    }

    #[test]
    fn cluster_role_binding_as_kubectl_sends_it() {
        let meta = [
            ld(1, b"read-nodes"),
            ld(11, &[ld(1, b"team"), ld(2, b"a")].concat()),
        ]
        .concat();
        let subject = [
            ld(1, b"User"),
            ld(2, b"rbac.authorization.k8s.io"),
            ld(3, b"jane"),
        ]
        .concat();
        let role_ref = [
            ld(1, b"rbac.authorization.k8s.io"),
            ld(2, b"ClusterRole"),
            ld(3, b"node-reader"),
        ]
        .concat();
        let raw = [ld(1, &meta), ld(2, &subject), ld(3, &role_ref)].concat();
        let v = decode(
            "ClusterRoleBinding",
            &envelope("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &raw),
        )
        .expect("decodes");
        assert_eq!(
            v,
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "read-nodes", "labels": {"team": "a"}},
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-reader"}
            })
        );
    }

    #[test]
    fn priority_class_numbers_and_booleans() {
        // value -5 as int32 is sign-extended to ten varint bytes.
        let mut raw = ld(1, &ld(1, b"low"));
        raw.extend([
            2 << 3,
            0xfb,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0x01,
        ]);
        raw.extend([3 << 3, 1]);
        let v = decode(
            "PriorityClass",
            &envelope("scheduling.k8s.io/v1", "PriorityClass", &raw),
        )
        .expect("decodes");
        assert_eq!(v["value"], json!(-5));
        assert_eq!(v["globalDefault"], json!(true));
    }

    #[test]
    fn wrong_kind_garbage_and_bad_utf8_are_errors() {
        let raw = ld(1, &ld(1, b"x"));
        assert!(decode("Role", &envelope("v1", "Namespace", &raw)).is_err());
        assert!(decode("Role", b"not protobuf").is_err());
        assert!(
            decode(
                "Role",
                &envelope("rbac.authorization.k8s.io/v1", "Role", &[0xff])
            )
            .is_err()
        );
        let bad = ld(1, &ld(1, &[0xc3, 0x28]));
        assert!(
            decode(
                "Role",
                &envelope("rbac.authorization.k8s.io/v1", "Role", &bad)
            )
            .is_err()
        );
        assert!(!supported("Pod"));
    }
}

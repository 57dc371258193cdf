//! PATCH bodies: JSON merge patch (RFC 7386), strategic merge patch (its own module,
//! `strategic_merge`), and JSON patch (RFC 6902). Server-side apply has its own module, `apply`.

use serde_json::{Map, Value};

use crate::apiserver::endpoints::strategic_merge::{self, Level};
use crate::apiserver::registry::openapi;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::status::ApiError;

/// The patch types kube-apiserver accepts for a built-in kind, in the order its 415 names them.
const PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// RFC 7386: objects merge, `null` removes, anything else replaces.
fn merge_json(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else { return };
    for (k, pv) in p {
        match t.get_mut(k) {
            _ if pv.is_null() => {
                t.remove(k);
            }
            Some(tv) if tv.is_object() && pv.is_object() => merge_json(tv, pv),
            _ => {
                t.insert(k.clone(), pv.clone());
            }
        }
    }
}

fn pointer_parts(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect()
}

fn json_patch(doc: &Value, ops: &Value) -> Result<Value, String> {
    let mut doc = doc.clone();
    let Some(ops) = ops.as_array() else {
        return Err("json patch must be an array".into());
    };
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
        let parts = pointer_parts(path);
        let Some((last, parent)) = parts.split_last() else {
            return Err(format!("invalid path {path:?}"));
        };
        let parent_ptr: String = parent
            .iter()
            .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
            .collect();
        let value = op.get("value").cloned();
        if kind == "test" {
            if doc.pointer(path) != value.as_ref() {
                return Err(format!("testing value {path} failed"));
            }
            continue;
        }
        let from_value = match kind {
            "copy" | "move" => {
                let from = op.get("from").and_then(Value::as_str).unwrap_or_default();
                let v = doc
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| format!("missing value at {from}"))?;
                if kind == "move" {
                    let fp = pointer_parts(from);
                    if let Some((fl, fparent)) = fp.split_last() {
                        let fpp: String = fparent.iter().map(|p| format!("/{p}")).collect();
                        match doc.pointer_mut(&fpp) {
                            Some(Value::Object(m)) => {
                                m.remove(fl);
                            }
                            Some(Value::Array(a)) => {
                                if let Ok(i) = fl.parse::<usize>()
                                    && i < a.len()
                                {
                                    a.remove(i);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Some(v)
            }
            _ => None,
        };
        let target = doc
            .pointer_mut(&parent_ptr)
            .ok_or_else(|| format!("doc is missing path: {path}"))?;
        match (kind, target) {
            ("add" | "copy" | "move", Value::Object(m)) | ("replace", Value::Object(m)) => {
                let v = from_value.or(value).ok_or("missing value")?;
                if kind == "replace" && !m.contains_key(last) {
                    return Err(format!(
                        "replace operation does not apply: doc is missing key: {path}"
                    ));
                }
                m.insert(last.clone(), v);
            }
            ("add" | "copy" | "move", Value::Array(a)) => {
                let v = from_value.or(value).ok_or("missing value")?;
                if last == "-" {
                    a.push(v);
                } else {
                    let i: usize = last.parse().map_err(|_| format!("invalid index {last}"))?;
                    if i > a.len() {
                        return Err(format!("index out of range: {path}"));
                    }
                    a.insert(i, v);
                }
            }
            ("replace", Value::Array(a)) => {
                let i: usize = last.parse().map_err(|_| format!("invalid index {last}"))?;
                let slot = a
                    .get_mut(i)
                    .ok_or_else(|| format!("index out of range: {path}"))?;
                *slot = value.ok_or("missing value")?;
            }
            ("remove", Value::Object(m)) => {
                m.remove(last).ok_or_else(|| {
                    format!("remove operation does not apply: doc is missing key: {path}")
                })?;
            }
            ("remove", Value::Array(a)) => {
                let i: usize = last.parse().map_err(|_| format!("invalid index {last}"))?;
                if i >= a.len() {
                    return Err(format!("index out of range: {path}"));
                }
                a.remove(i);
            }
            (other, _) => {
                return Err(format!(
                    "unsupported json patch operation {other:?} at {path}"
                ));
            }
        }
    }
    Ok(doc)
}

/// Apply a PATCH body of the given Content-Type to the current object of kind `def`.
pub fn apply(
    def: &ResourceDef,
    content_type: &str,
    current: &Value,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mt = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let patch: Value = if mt == "application/apply-patch+yaml" {
        serde_yaml::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?
    };
    match mt.as_str() {
        "application/merge-patch+json" => {
            let mut out = current.clone();
            merge_json(&mut out, &patch);
            Ok(out)
        }
        "application/strategic-merge-patch+json" | "application/apply-patch+yaml" => {
            let mut out = current.clone();
            let schemas = openapi::kind_schemas(def);
            let root = openapi::root_schema(def);
            let level = Level {
                schemas,
                ty: Some(&root),
            };
            strategic_merge::merge(&mut out, &patch, level)?;
            Ok(out)
        }
        "application/json-patch+json" => {
            json_patch(current, &patch).map_err(ApiError::invalid_patch)
        }
        _ => Err(ApiError::unsupported_media_type(&PATCH_TYPES)),
    }
}

/// A resourceVersion a merge-style patch carries (a precondition), if any.
pub fn patch_resource_version(content_type: &str, body: &[u8]) -> Option<String> {
    if content_type.contains("json-patch") {
        return None;
    }
    let v: Value = serde_json::from_slice(body).ok()?;
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources;
    use serde_json::json;

    fn pod() -> &'static ResourceDef {
        resources::lookup("", "v1", "pods").expect("pods are served")
    }

    #[test]
    fn strategic_merge_follows_the_schema_not_the_item_shape() {
        // Ports merge by containerPort; tolerations have no strategy, so the patch replaces them
        // even though every item has a `key` (the old shape-guessing merged them).
        let cur = json!({"spec": {
            "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "name": "http"}]}],
            "tolerations": [{"key": "a", "operator": "Exists"}],
        }});
        let p = br#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"web"},{"containerPort":443}]}],"tolerations":[{"key":"b","operator":"Exists"}]}}"#;
        let out =
            apply(pod(), "application/strategic-merge-patch+json", &cur, p).unwrap_or_default();
        assert_eq!(
            out.pointer("/spec/containers/0/ports"),
            Some(&json!([{"containerPort": 80, "name": "web"}, {"containerPort": 443}]))
        );
        assert_eq!(out.pointer("/spec/containers/0/image"), Some(&json!("x")));
        assert_eq!(
            out.pointer("/spec/tolerations"),
            Some(&json!([{"key": "b", "operator": "Exists"}]))
        );
    }

    #[test]
    fn strategic_merges_containers_by_name() {
        let cur = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let p = br#"{"spec":{"containers":[{"name":"b","image":"z"}]}}"#;
        let out =
            apply(pod(), "application/strategic-merge-patch+json", &cur, p).unwrap_or_default();
        assert_eq!(out.pointer("/spec/containers/1/image"), Some(&json!("z")));
        assert_eq!(out.pointer("/spec/containers/0/image"), Some(&json!("x")));
        let out = apply(pod(), "application/merge-patch+json", &cur, p).unwrap_or_default();
        assert_eq!(
            out.pointer("/spec/containers")
                .and_then(Value::as_array)
                .map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn strategic_merge_deletes_from_a_merged_list_of_scalars() {
        let cur = json!({"metadata": {"finalizers": ["a", "b"]}});
        let p = br#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["c"]}}"#;
        let out =
            apply(pod(), "application/strategic-merge-patch+json", &cur, p).unwrap_or_default();
        // "c" is new to the live list, so upstream's order puts it before the live "b".
        assert_eq!(
            out.pointer("/metadata/finalizers"),
            Some(&json!(["c", "b"]))
        );
    }

    #[test]
    fn json_patch_ops() {
        let cur = json!({"metadata": {"labels": {"a": "1"}}});
        let p = br#"[{"op":"add","path":"/metadata/labels/b","value":"2"},{"op":"remove","path":"/metadata/labels/a"}]"#;
        let out = apply(pod(), "application/json-patch+json", &cur, p).unwrap_or_default();
        assert_eq!(out, json!({"metadata": {"labels": {"b": "2"}}}));
    }
}

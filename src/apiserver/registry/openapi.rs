//! OpenAPI v3, generated from the resource table: the index at `/openapi/v3` and one document
//! per group/version. kubectl ≥1.29 reads the PATCH operations' `fieldValidation` parameter to
//! decide that the server validates fields itself (then it sends `fieldValidation=Strict`).

use serde_json::{Map, Value, json};

use crate::apiserver::registry::conversion;
use crate::apiserver::registry::list_types;
use crate::apiserver::registry::resources::{RESOURCES, ResourceDef, group_versions};
use crate::apiserver::registry::strategies;

/// `api/v1` or `apis/<group>/<version>`.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// A stable hash of a document, used as the `hash` query kubectl caches by.
fn doc_hash(doc: &Value) -> String {
    use sha2::{Digest, Sha512};
    let d = Sha512::digest(serde_json::to_vec(doc).unwrap_or_default());
    d.iter().take(32).map(|b| format!("{b:02X}")).collect()
}

pub fn index() -> Value {
    let mut paths = Map::new();
    for (g, vs) in group_versions() {
        for v in vs {
            let p = gv_path(g, v);
            let h = doc_hash(&document(g, v).unwrap_or(Value::Null));
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={h}")}),
            );
        }
    }
    json!({"paths": paths})
}

fn schema_name(r: &ResourceDef) -> String {
    let g = if r.group.is_empty() {
        "core".to_string()
    } else {
        r.group.split('.').next().unwrap_or(r.group).to_string()
    };
    format!("io.k8s.api.{g}.{}.{}", r.version, r.kind)
}

fn gvk(r: &ResourceDef) -> Value {
    json!({"group": r.group, "version": r.version, "kind": r.kind})
}

fn param(name: &str, location: &str, description: &str) -> Value {
    json!({"name": name, "in": location, "description": description, "schema": {"type": "string", "uniqueItems": true}})
}

fn op(r: &ResourceDef, action: &str, id: &str, body: bool) -> Value {
    let mut o = json!({
        "operationId": id,
        "tags": [r.api_version()],
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(r),
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{}", schema_name(r))}}}}},
    });
    let mut params = vec![param(
        "pretty",
        "query",
        "If 'true', then the output is pretty printed.",
    )];
    if body {
        params.push(param(
            "dryRun",
            "query",
            "When present, indicates that modifications should not be persisted.",
        ));
        params.push(param("fieldManager", "query", "fieldManager is a name associated with the actor or entity that is making these changes."));
        params.push(param(
            "fieldValidation",
            "query",
            "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict",
        ));
        let types = if action == "patch" {
            vec![
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
            ]
        } else {
            vec!["application/json", "application/yaml"]
        };
        let mut content = Map::new();
        for t in types {
            content.insert(
                t.into(),
                json!({"schema": {"$ref": format!("#/components/schemas/{}", schema_name(r))}}),
            );
        }
        o["requestBody"] = json!({"content": content, "required": true});
    }
    o["parameters"] = Value::Array(params);
    o
}

/// The schemas of [`type_schemas`], built once per kind: what strategic merge patch and
/// server-side apply walk to learn each list's merge key.
pub(crate) fn kind_schemas(r: &ResourceDef) -> &'static Map<String, Value> {
    static CACHE: std::sync::OnceLock<Vec<(&'static ResourceDef, Map<String, Value>)>> =
        std::sync::OnceLock::new();
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let all = CACHE.get_or_init(|| RESOURCES.iter().map(|d| (d, type_schemas(d))).collect());
    all.iter()
        .find(|(d, _)| d.group == r.group && d.version == r.version && d.kind == r.kind)
        .map(|(_, m)| m)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// The schemas of every served kind in one map (OpenAPI v3 names and `$ref`s), each kind's own
/// schema marked with its `x-kubernetes-group-version-kind`: the v2 document's definitions.
pub(crate) fn all_definitions() -> Map<String, Value> {
    let mut out = Map::new();
    for r in RESOURCES {
        for (name, schema) in kind_schemas(r) {
            out.entry(name.clone()).or_insert_with(|| schema.clone());
        }
        if let Some(Value::Object(top)) = out.get_mut(&schema_name(r)) {
            let list = top
                .entry("x-kubernetes-group-version-kind")
                .or_insert_with(|| json!([]));
            if let Value::Array(l) = list {
                l.push(gvk(r));
            }
        }
    }
    out
}

/// The schema name of a kind (`io.k8s.api.core.v1.Pod`), where its walk starts.
pub(crate) fn root_schema(r: &ResourceDef) -> String {
    schema_name(r)
}

/// JSON schemas (OpenAPI 3 `components/schemas`) of the type behind `r` and of every type it
/// references, generated by k8s-openapi's schemars implementations — the same Rust types the
/// server decodes requests into. Named as upstream names them (`io.k8s.api.core.v1.Pod`), with
/// the list markers of [`list_types`] that kubectl's strategic merge patch reads.
pub(crate) fn type_schemas(r: &ResourceDef) -> Map<String, Value> {
    use k8s_openapi::schemars::generate::SchemaSettings;
    let mut generator = SchemaSettings::openapi3().into_generator();
    if !conversion::schemas(r, &mut generator)
        && let Some(k) = strategies::of(r.group, r.kind)
    {
        k.schemas(&mut generator);
    }
    let mut defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    list_types::annotate(&mut defs);
    metadata_optional(&mut defs);
    defs
}

/// k8s-openapi lists `metadata` as required in every kind, its Rust field not being optional;
/// upstream's documents require it only of core/v1 Event (the one kind whose Go field lacks
/// `omitempty`). kubectl validates the kinds it cannot send with `fieldValidation` (those
/// without a PATCH: the reviews, Binding) against these documents on the client, so
/// `kubectl create -f` of a SubjectAccessReview without metadata failed here and not upstream.
fn metadata_optional(defs: &mut Map<String, Value>) {
    for (name, schema) in defs.iter_mut() {
        if name == "io.k8s.api.core.v1.Event" {
            continue;
        }
        let Some(Value::Array(required)) = schema.get_mut("required") else {
            continue;
        };
        required.retain(|f| f != "metadata");
        if required.is_empty()
            && let Some(o) = schema.as_object_mut()
        {
            o.remove("required");
        }
    }
}

/// The OpenAPI v3 document of one group/version, built once per process.
pub fn document(group: &str, version: &str) -> Option<Value> {
    static DOCS: std::sync::OnceLock<Vec<(String, Value)>> = std::sync::OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        group_versions()
            .into_iter()
            .flat_map(|(g, vs)| vs.into_iter().map(move |v| (g, v)))
            .filter_map(|(g, v)| build_document(g, v).map(|d| (gv_path(g, v), d)))
            .collect()
    });
    let key = gv_path(group, version);
    docs.iter().find(|(k, _)| *k == key).map(|(_, d)| d.clone())
}

fn build_document(group: &str, version: &str) -> Option<Value> {
    let rs: Vec<&ResourceDef> = RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let base = format!("/{}", gv_path(group, version));
    for r in rs {
        let kind = r.kind;
        let ns = if r.namespaced {
            "/namespaces/{namespace}"
        } else {
            ""
        };
        let collection = format!("{base}{ns}/{}", r.plural);
        let item = format!("{collection}/{{name}}");
        let mut coll = Map::new();
        if r.verbs.contains(&"create") {
            coll.insert("post".into(), op(r, "post", &format!("create{kind}"), true));
        }
        if r.verbs.contains(&"list") {
            coll.insert("get".into(), op(r, "list", &format!("list{kind}"), false));
        }
        paths.insert(collection, Value::Object(coll));
        if r.verbs.contains(&"get") {
            let mut ops = Map::new();
            for (verb, method, name, body) in [
                ("get", "get", "read", false),
                ("update", "put", "replace", true),
                ("patch", "patch", "patch", true),
                ("delete", "delete", "delete", false),
            ] {
                if r.verbs.contains(&verb) {
                    let o = op(r, method, &format!("{name}{kind}"), body);
                    ops.insert(method.into(), o);
                }
            }
            paths.insert(item.clone(), Value::Object(ops));
            for sub in r.subresources.iter().filter(|s| **s == "status") {
                paths.insert(
                    format!("{item}/{sub}"),
                    json!({"get": op(r, "get", &format!("read{kind}Status"), false), "patch": op(r, "patch", &format!("patch{kind}Status"), true), "put": op(r, "put", &format!("replace{kind}Status"), true)}),
                );
            }
        }
        // The kind's schema and everything it references, from the k8s-openapi type itself.
        let mut defs = kind_schemas(r).clone();
        // k8s-openapi has no v1beta1 types: those kinds get an object schema naming their GVK.
        let top = defs.entry(schema_name(r)).or_insert_with(
            || json!({"type": "object", "description": format!("{kind} ({})", r.api_version())}),
        );
        if let Value::Object(top) = top {
            top.insert("x-kubernetes-group-version-kind".into(), json!([gvk(r)]));
        }
        schemas.extend(defs);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources::by_kind;

    fn required(group: &str, kind: &str, schema: &str) -> Value {
        let def = by_kind(group, kind).expect("served");
        type_schemas(def)[schema]
            .get("required")
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn only_core_events_require_metadata() {
        assert_eq!(
            required(
                "authorization.k8s.io",
                "SubjectAccessReview",
                "io.k8s.api.authorization.v1.SubjectAccessReview"
            ),
            json!(["spec"])
        );
        assert_eq!(
            required("", "ConfigMap", "io.k8s.api.core.v1.ConfigMap"),
            Value::Null
        );
        assert_eq!(
            required("", "Event", "io.k8s.api.core.v1.Event"),
            json!(["involvedObject", "metadata"])
        );
    }
}

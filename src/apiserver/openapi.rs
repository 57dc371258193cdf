//! OpenAPI v3, generated from the resource table: the index at `/openapi/v3` and one document
//! per group/version. kubectl ≥1.29 reads the PATCH operations' `fieldValidation` parameter to
//! decide that the server validates fields itself (then it sends `fieldValidation=Strict`).

use serde_json::{Map, Value, json};

use super::resources::{RESOURCES, ResourceDef, group_versions};

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

/// The OpenAPI v3 document of one group/version.
pub fn document(group: &str, version: &str) -> Option<Value> {
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
            paths.insert(
                item.clone(),
                json!({
                    "get": op(r, "get", &format!("read{kind}"), false),
                    "put": op(r, "put", &format!("replace{kind}"), true),
                    "patch": op(r, "patch", &format!("patch{kind}"), true),
                    "delete": op(r, "delete", &format!("delete{kind}"), false),
                }),
            );
            for sub in r.subresources.iter().filter(|s| **s == "status") {
                paths.insert(
                    format!("{item}/{sub}"),
                    json!({"get": op(r, "get", &format!("read{kind}Status"), false), "patch": op(r, "patch", &format!("patch{kind}Status"), true), "put": op(r, "put", &format!("replace{kind}Status"), true)}),
                );
            }
        }
        schemas.insert(
            schema_name(r),
            json!({
                "description": format!("{kind} ({}), as served by kexplore's embedded API server.", r.api_version()),
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {"type": "object"},
                    "status": {"type": "object"}
                },
                "x-kubernetes-group-version-kind": [gvk(r)],
            }),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

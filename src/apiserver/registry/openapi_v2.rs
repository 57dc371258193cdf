//! `/openapi/v2`, generated from the resource table. kubectl 1.27/1.28 load it (as gnostic
//! protobuf, `openapi.v2.Document`) before `create -f` with default validation, and look at
//! the PATCH operations' `fieldValidation` parameter to learn that the server validates fields
//! (then the server's strict decoding does the validating). The definitions are the v3
//! schemas with their list markers (`openapi_v2_schema`), which `kubectl apply` reads.

use hyper::body::Bytes;
use serde_json::{Map, Value, json};

use crate::apiserver::codec::proto::ld;
use crate::apiserver::registry::openapi::gv_path;
use crate::apiserver::registry::openapi_v2_schema;
use crate::apiserver::registry::resources::{RESOURCES, ResourceDef};
use crate::apiserver::request::context::Reply;
use crate::apiserver::request::status::ApiError;

/// What kube-openapi answers with: the Accept type with `@` replaced, because Go's
/// mime parser (used by client-go on every response) rejects `@` in a subtype.
const PROTO_MIME: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The PATCH item paths with their GVK, one per resource that can be patched.
fn patchable() -> Vec<(String, &'static ResourceDef)> {
    RESOURCES
        .iter()
        .filter(|r| r.verbs.contains(&"patch"))
        .map(|r| {
            let ns = if r.namespaced {
                "/namespaces/{namespace}"
            } else {
                ""
            };
            (
                format!("/{}{ns}/{}/{{name}}", gv_path(r.group, r.version), r.plural),
                r,
            )
        })
        .collect()
}

fn gvk_yaml(r: &ResourceDef) -> String {
    format!(
        "group: \"{}\"\nkind: {}\nversion: {}\n",
        r.group, r.kind, r.version
    )
}

/// openapi.v2.Document (gnostic) with swagger, info and one PATCH operation per resource.
pub fn document_protobuf() -> Vec<u8> {
    let mut paths = Vec::new();
    for (path, r) in patchable() {
        // QueryParameterSubSchema { in = 2, name = 4, type = 6 }
        let query = [ld(2, b"query"), ld(4, b"fieldValidation"), ld(6, b"string")].concat();
        let non_body = ld(3, &query); // NonBodyParameter.query_parameter_sub_schema
        let parameter = ld(2, &non_body); // Parameter.non_body_parameter
        let item = ld(1, &parameter); // ParametersItem.parameter
        let any = ld(2, gvk_yaml(r).as_bytes()); // Any.yaml
        let ext = [ld(1, b"x-kubernetes-group-version-kind"), ld(2, &any)].concat(); // NamedAny
        let op = [
            ld(5, format!("patch{}", r.kind).as_bytes()),
            ld(8, &item),
            ld(13, &ext),
        ]
        .concat();
        let path_item = ld(8, &op); // PathItem.patch
        paths.extend(ld(2, &[ld(1, path.as_bytes()), ld(2, &path_item)].concat())); // Paths.path
    }
    let info = [ld(1, b"Kubernetes"), ld(2, b"v1.33.1")].concat();
    let definitions = openapi_v2_schema::definitions_protobuf();
    [
        ld(1, b"2.0"),
        ld(2, &info),
        ld(8, &paths),
        ld(9, &definitions),
    ]
    .concat()
}

/// The same document as Swagger 2.0 JSON, for clients that ask for JSON.
pub fn document_json() -> Value {
    let mut paths = Map::new();
    for (path, r) in patchable() {
        paths.insert(
            path,
            json!({"patch": {
                "operationId": format!("patch{}", r.kind),
                "parameters": [{"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true}],
                "x-kubernetes-group-version-kind": {"group": r.group, "kind": r.kind, "version": r.version},
            }}),
        );
    }
    let definitions = openapi_v2_schema::definitions_json();
    json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.33.1"}, "paths": paths, "definitions": definitions})
}

/// The document, built once per process (it holds every served schema).
pub fn serve(accept: Option<&str>) -> Result<Reply, ApiError> {
    static PROTO: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
    static JSON: std::sync::OnceLock<Bytes> = std::sync::OnceLock::new();
    let accept = accept.unwrap_or_default();
    if accept.contains("protobuf") {
        return Ok(Reply::Raw {
            code: 200,
            content_type: PROTO_MIME,
            body: PROTO
                .get_or_init(|| Bytes::from(document_protobuf()))
                .clone(),
        });
    }
    let body = JSON.get_or_init(|| {
        let mut body = serde_json::to_vec(&document_json()).unwrap_or_default();
        body.push(b'\n');
        Bytes::from(body)
    });
    Ok(Reply::Raw {
        code: 200,
        content_type: "application/json",
        body: body.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::codec::proto::Message;

    #[test]
    fn protobuf_document_has_patch_with_field_validation() {
        let doc = document_protobuf();
        let m = Message::parse(&doc).unwrap_or_default();
        assert_eq!(m.string(1), "2.0");
        let paths = m.message(8).unwrap_or_default();
        let last = paths.message(2).unwrap_or_default();
        // `message` reads the last occurrence of a repeated field: the last resource's path.
        assert!(last.string(1).starts_with("/apis/"));
        let op = last
            .message(2)
            .and_then(|p| p.message(8))
            .unwrap_or_default();
        let q = op
            .message(8)
            .and_then(|i| i.message(1))
            .and_then(|p| p.message(2))
            .and_then(|n| n.message(3))
            .unwrap_or_default();
        assert_eq!(q.string(4), "fieldValidation");
    }
}

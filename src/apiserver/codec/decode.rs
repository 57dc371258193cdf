//! Request bodies → objects: media types, the 400 texts of upstream's decoder, and strict field
//! validation (an unknown field is any key the k8s-openapi type drops on a round trip).

use serde_json::Value;

use crate::apiserver::codec::decode_error;
use crate::apiserver::codec::proto_objects;
use crate::apiserver::codec::yaml_parse;
use crate::apiserver::registry::conversion;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategies;
use crate::apiserver::request::status::ApiError;

/// upstream `summarizeData`: how a body that failed to decode is quoted in the error.
fn summarize(data: &[u8]) -> String {
    const MAX: usize = 30;
    match data.first() {
        None => "<empty>".into(),
        Some(b'{') => {
            let s = String::from_utf8_lossy(&data[..data.len().min(MAX)]).into_owned();
            if data.len() > MAX {
                format!("{s} ...")
            } else {
                s
            }
        }
        Some(_) => {
            let h: String = data[..data.len().min(MAX)]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            if data.len() > MAX {
                format!("{h} ...")
            } else {
                h
            }
        }
    }
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The body media types this endpoint reads: protobuf only for kinds it has a schema for.
pub fn accepted(def: &ResourceDef) -> Vec<&'static str> {
    let mut out = vec!["application/json", "application/yaml"];
    if proto_objects::supported(&def.api_version(), def.kind) {
        out.push(PROTOBUF);
    }
    out
}

/// Whether a body came as protobuf (whose unknown fields upstream drops without a word:
/// `fieldValidation` applies to JSON and YAML only).
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(PROTOBUF))
}

/// Parse a JSON or YAML body into a Value (the "couldn't get version/kind" stage).
pub fn parse_body(def: &ResourceDef, content_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    let mt = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let parsed: Result<Value, String> = match mt.as_str() {
        "" | "application/json" | "*/*" => {
            serde_json::from_slice(body).map_err(|e| format!("json parse error: {e}"))
        }
        "application/yaml" => yaml_parse::parse(body).map_err(|e| format!("yaml parse error: {e}")),
        PROTOBUF if proto_objects::supported(&def.api_version(), def.kind) => {
            return proto_objects::decode(def.kind, body).map_err(|e| cannot_handle(def, e));
        }
        _ => return Err(ApiError::unsupported_media_type(&accepted(def))),
    };
    match parsed {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: expected an object ({})",
            def.kind,
            summarize(body)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): couldn't get version/kind; {e} ({})",
            def.kind,
            summarize(body)
        ))),
    }
}

/// Check `kind`/`apiVersion` of a body against the endpoint, defaulting them when absent.
pub fn check_type(def: &ResourceDef, v: &mut Value) -> Result<(), ApiError> {
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let av = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if (!kind.is_empty() && kind != def.kind) || (!av.is_empty() && av != def.api_version()) {
        let got = if kind.is_empty() {
            def.kind.to_string()
        } else {
            kind
        };
        return Err(ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: no kind \"{got}\" is registered for version \"{av}\"",
            def.kind, def.version, def.kind
        )));
    }
    if let Some(m) = v.as_object_mut() {
        m.insert("kind".into(), Value::String(def.kind.into()));
        m.insert("apiVersion".into(), Value::String(def.api_version()));
    }
    Ok(())
}

/// The wrapper upstream puts around typed decode errors.
pub fn cannot_handle(def: &ResourceDef, err: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!(
        "{} in version {:?} cannot be handled as a {}: {err}",
        def.kind, def.version, def.kind
    ))
}

/// k8s-openapi writes a required struct field the body left out as `{}`; Go's decoder leaves
/// such a field (a pointer there: a Deployment's `selector`) nil, and validation then says
/// `Required value`. So an empty object the body did not send is not kept.
fn drop_invented_objects(input: &Value, typed: &mut Value) {
    let (Value::Object(sent), Value::Object(out)) = (input, typed) else {
        return;
    };
    out.retain(|k, v| sent.contains_key(k) || !v.as_object().is_some_and(|m| m.is_empty()));
    for (k, v) in out.iter_mut() {
        if let Some(s) = sent.get(k) {
            drop_invented_objects(s, v);
        }
    }
}

/// Decode to the k8s-openapi type of `def` and back: the typed form of the object.
pub fn roundtrip(def: &ResourceDef, v: &Value) -> Result<Value, String> {
    // A served form's own type, else the kind's strategy when it is of this version (no
    // type for the rest: SelfSubjectReview v1beta1).
    let decoded = match conversion::typed(def, v) {
        Some(d) => d,
        None => match strategies::of(def.group, def.kind).filter(|k| k.version() == def.version) {
            Some(k) => k.typed(v),
            None => return Ok(v.clone()),
        },
    };
    let mut typed =
        decoded.map_err(|e| decode_error::describe(def, v, e.path(), &e.inner().to_string()))?;
    drop_invented_objects(v, &mut typed);
    Ok(typed)
}

/// Keys present in `input` but dropped by the typed round trip: upstream's "unknown field".
pub fn unknown_fields(input: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (input, typed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match b.get(k) {
                    Some(vb) => unknown_fields(va, vb, &p, out),
                    None if va.is_null() => {}
                    None if k == "kind" || k == "apiVersion" => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                unknown_fields(va, vb, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Decode a body for `def` under `fieldValidation` (`Strict` → 400, `Warn` → warnings, `Ignore`).
/// Returns the typed object (as JSON) and any warnings.
pub fn decode_object(
    def: &ResourceDef,
    mut v: Value,
    field_validation: &str,
) -> Result<(Value, Vec<String>), ApiError> {
    check_type(def, &mut v)?;
    let mut typed = roundtrip(def, &v).map_err(|e| cannot_handle(def, e))?;
    if let Some(e) = decode_error::malformed_quantity(def, &mut typed) {
        return Err(cannot_handle(def, e));
    }
    let mut unknown = Vec::new();
    unknown_fields(&v, &typed, "", &mut unknown);
    let mut warnings = Vec::new();
    if !unknown.is_empty() {
        let texts: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect();
        match field_validation {
            "Strict" => {
                return Err(cannot_handle(
                    def,
                    format!("strict decoding error: {}", texts.join(", ")),
                ));
            }
            "Ignore" => {}
            _ => warnings = texts,
        }
    }
    Ok((typed, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::registry::resources::lookup;
    use serde_json::json;

    #[test]
    fn strict_unknown_fields() {
        let Some(def) = lookup("", "v1", "pods") else {
            return;
        };
        let v = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"foo":1,"containers":[{"name":"a","image":"x","bar":2}]}});
        let e = decode_object(def, v.clone(), "Strict")
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some(
                r#"Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].bar", unknown field "spec.foo""#
            )
        );
        let ok = decode_object(def, v, "Warn").map(|(_, w)| w.len()).ok();
        assert_eq!(ok, Some(2));
    }

    /// Upstream's wording: the innermost struct, its field path without indices or map keys,
    /// and the Go type.
    #[test]
    fn type_errors_name_the_field_path_as_go_does() {
        let Some(def) = lookup("", "v1", "pods") else {
            return;
        };
        let pod = |spec: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": spec});
        let container = |extra: Value| {
            let mut c = json!({"name": "a", "image": "x"});
            if let (Some(c), Value::Object(e)) = (c.as_object_mut(), extra) {
                c.extend(e);
            }
            pod(json!({"containers": [c]}))
        };
        let cases = [
            (
                pod(json!({"containers": "x"})),
                "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
            ),
            (
                container(json!({"resources": {"requests": ["1"]}})),
                "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList",
            ),
            (
                container(json!({"ports": [{"containerPort": "80"}]})),
                "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32",
            ),
            (
                pod(json!({"priority": 3.5, "containers": []})),
                "json: cannot unmarshal number 3.5 into Go struct field PodSpec.spec.priority of type int32",
            ),
            // A map's element is what Go failed to fill, so its type is the element's.
            (
                pod(json!({"nodeSelector": {"a": 1}, "containers": []})),
                "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string",
            ),
            (
                pod(json!({"hostNetwork": "yes", "containers": []})),
                "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool",
            ),
            (
                pod(json!("x")),
                "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec",
            ),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": "x"}}),
                "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string",
            ),
        ];
        for (body, want) in cases {
            let e = decode_object(def, body.clone(), "Strict")
                .err()
                .map(|e| (e.code, e.message));
            assert_eq!(
                e,
                Some((
                    400,
                    format!("Pod in version \"v1\" cannot be handled as a Pod: {want}")
                )),
                "{body}"
            );
        }
    }

    /// Upstream's words for a malformed quantity, then which one and where, in any kind.
    #[test]
    fn malformed_quantities_anywhere_name_their_path() {
        let re = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        let Some(pods) = lookup("", "v1", "pods") else {
            return;
        };
        // The first container has no resources: the second one's are still read.
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [
            {"name": "a", "image": "x"},
            {"name": "b", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "lots"}}}
        ]}});
        assert_eq!(
            decode_object(pods, pod, "Strict")
                .err()
                .map(|e| (e.code, e.message)),
            Some((
                400,
                format!(
                    "Pod in version \"v1\" cannot be handled as a Pod: {re} (got \"lots\" at spec.containers[1].resources.requests.memory)"
                )
            ))
        );
        let Some(nodes) = lookup("", "v1", "nodes") else {
            return;
        };
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4x"}}});
        assert_eq!(
            decode_object(nodes, node, "Strict")
                .err()
                .map(|e| e.message),
            Some(format!(
                "Node in version \"v1\" cannot be handled as a Node: {re} (got \"4x\" at status.capacity.cpu)"
            ))
        );
        let ok = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": 4, "memory": "8Gi"}}});
        assert!(decode_object(nodes, ok, "Strict").is_ok());
        // Found through the types that lead to one: a Deployment's pod template, a volume.
        let Some(deployments) = lookup("apps", "v1", "deployments") else {
            return;
        };
        let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x"}],
                    "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gq"}}]}}}});
        let e = decode_object(deployments, d, "Strict")
            .err()
            .map(|e| e.message);
        assert!(
            e.as_deref().is_some_and(|m| m
                .ends_with("(got \"1Gq\" at spec.template.spec.volumes[0].emptyDir.sizeLimit)")),
            "{e:?}"
        );
    }

    #[test]
    fn malformed_json() {
        let Some(def) = lookup("", "v1", "pods") else {
            return;
        };
        let e = parse_body(def, "application/json", b"{\"apiVersion\": ")
            .err()
            .map(|e| e.code);
        assert_eq!(e, Some(400));
    }
}

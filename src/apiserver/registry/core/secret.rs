//! core/v1 Secret (upstream `pkg/registry/core/secret`, `ValidateSecret`, `printSecret`):
//! `stringData` folded into `data` as the v1 conversion does, the type defaulted to Opaque and
//! checked for the keys it needs. A Secret's values never reach a cause, a trace or a log: the
//! causes name keys only, and a malformed docker config is reported as upstream reports it,
//! `<secret contents redacted>`.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::apiserver::registry::core::configmap::config_key_errors;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct Secret;

/// `core.MaxSecretSize`: the decoded data of one Secret.
const MAX_SECRET_SIZE: usize = 1024 * 1024;

const OPAQUE: &str = "Opaque";
const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
const DOCKERCFG: &str = "kubernetes.io/dockercfg";
const DOCKER_CONFIG_JSON: &str = "kubernetes.io/dockerconfigjson";
const BASIC_AUTH: &str = "kubernetes.io/basic-auth";
const SSH_AUTH: &str = "kubernetes.io/ssh-auth";
const TLS: &str = "kubernetes.io/tls";
const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";

/// What upstream writes in place of a Secret's value in a field error.
pub(crate) const REDACTED: &str = "<secret contents redacted>";

/// The v1 → internal conversion: every `stringData` entry overwrites `data`'s, encoded, and
/// `stringData` itself is never stored (it is write-only).
fn fold_string_data(obj: &mut Value) {
    let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|m| m.remove("stringData"))
    else {
        return;
    };
    if !obj.get("data").is_some_and(Value::is_object) {
        obj["data"] = json!({});
    }
    for (k, v) in string_data {
        let text = v.as_str().unwrap_or_default();
        obj["data"][k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
}

fn default(obj: &mut Value) {
    fold_string_data(obj);
    if str_at(obj, "/type").is_empty() {
        obj["type"] = json!(OPAQUE);
    }
}

/// The decoded bytes of `data[key]`, when present (the typed decode has checked the base64).
fn data_of(obj: &Value, key: &str) -> Option<Vec<u8>> {
    let text = obj.get("data")?.get(key)?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// `encoding/json`'s verdict on a docker config, in words that carry none of its contents
/// (a syntax error says where, as our parser reports it; a wrong type names the JSON type).
fn json_error(bytes: &[u8]) -> Option<String> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(_) | Value::Null) => None,
        Ok(other) => {
            let ty = match other {
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                _ => "array",
            };
            Some(format!(
                "json: cannot unmarshal {ty} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(e) if e.is_eof() => Some("unexpected end of JSON input".into()),
        Err(e) => Some(format!(
            "invalid JSON at line {} column {}",
            e.line(),
            e.column()
        )),
    }
}

fn validate(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut total = 0;
    if let Some(data) = obj.get("data").and_then(Value::as_object) {
        for (k, v) in data {
            for e in config_key_errors(k) {
                causes.push(Cause::invalid(&format!("data[{k}]"), &json!(k), &e));
            }
            // base64 without padding is 3/4 of its text.
            total += v.as_str().map_or(0, |s| s.len() / 4 * 3);
        }
    }
    if total > MAX_SECRET_SIZE {
        causes.push(Cause::too_long("data", MAX_SECRET_SIZE));
    }
    let has = |k: &str| obj.pointer("/data").and_then(|d| d.get(k)).is_some();
    let docker = |key: &str, causes: &mut Vec<Cause>| match data_of(obj, key) {
        None if !has(key) => causes.push(Cause::required(&format!("data[{key}]"), "")),
        bytes => {
            if let Some(e) = json_error(&bytes.unwrap_or_default()) {
                causes.push(Cause::invalid(
                    &format!("data[{key}]"),
                    &json!(REDACTED),
                    &e,
                ));
            }
        }
    };
    match str_at(obj, "/type") {
        SERVICE_ACCOUNT_TOKEN => {
            let name = obj
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(SERVICE_ACCOUNT_NAME_KEY))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name.is_empty() {
                causes.push(Cause::required(
                    &format!("metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]"),
                    "",
                ));
            }
        }
        DOCKERCFG => docker(".dockercfg", &mut causes),
        DOCKER_CONFIG_JSON => docker(".dockerconfigjson", &mut causes),
        BASIC_AUTH if !has("username") && !has("password") => {
            // Upstream builds these paths from a literal `data[%s]`, so that is what it says.
            causes.push(Cause::required("data[%s][username]", ""));
            causes.push(Cause::required("data[%s][password]", ""));
        }
        SSH_AUTH if data_of(obj, "ssh-privatekey").is_none_or(|b| b.is_empty()) => {
            causes.push(Cause::required("data[%s][ssh-privatekey]", ""));
        }
        TLS => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    causes.push(Cause::required(&format!("data[{key}]"), ""));
                }
            }
        }
        _ => {}
    }
    causes
}

impl Strategy for Secret {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Secret"
    }
    kind_type!(k8s_openapi::api::core::v1::Secret);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Type",
                "string",
                0,
                "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
            ),
            column(
                "Data",
                "string",
                0,
                "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let count = o
            .get("data")
            .and_then(Value::as_object)
            .map_or(0, |m| m.len());
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/type")),
            json!(count),
            json!(age_of(o)),
        ]
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        // `SelectableFields`: the type, besides the metadata every kind has.
        (field == "type").then(|| Some(str_at(o, "/type").to_string()))
    }
    fn defaults(&self, obj: &mut Value) {
        default(obj);
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        default(obj);
        validate_into_trace("", "Secret", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut causes = validate(next);
        if next.get("type") != current.get("type") {
            causes.push(Cause::invalid(
                "type",
                &json!(str_at(next, "/type")),
                "field is immutable",
            ));
        }
        if current.get("immutable") == Some(&json!(true)) {
            if next.get("immutable") != Some(&json!(true)) {
                causes.push(Cause::forbidden(
                    "immutable",
                    "field is immutable when `immutable` is set",
                ));
            }
            if next.get("data") != current.get("data") {
                causes.push(Cause::forbidden(
                    "data",
                    "field is immutable when `immutable` is set",
                ));
            }
        }
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_folded_and_types_checked() {
        let mut s = json!({"metadata": {"name": "s"}, "stringData": {"password": "hunter2"}});
        default(&mut s);
        assert_eq!(s["data"]["password"], "aHVudGVyMg==");
        assert_eq!(s["type"], "Opaque");
        assert!(s.get("stringData").is_none());
        assert!(validate(&s).is_empty());

        let tls = json!({"type": TLS, "data": {"tls.crt": "eA=="}});
        let rendered: Vec<String> = validate(&tls).iter().map(Cause::rendered).collect();
        assert_eq!(rendered, vec!["data[tls.key]: Required value"]);

        let bad =
            json!({"type": DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": "c2VjcmV0LXZhbHVl"}});
        let rendered: Vec<String> = validate(&bad).iter().map(Cause::rendered).collect();
        assert_eq!(rendered.len(), 1);
        assert!(rendered[0].contains(REDACTED), "{rendered:?}");
        assert!(!rendered[0].contains("secret-value"), "{rendered:?}");
    }
}

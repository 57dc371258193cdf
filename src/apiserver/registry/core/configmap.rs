//! core/v1 ConfigMap (upstream `pkg/registry/core/configmap`): keys checked as upstream's
//! `ValidateConfigMap` does, the DATA column counting both maps.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct ConfigMap;

/// Upstream's `MaxSecretSize`, which ConfigMaps share: the data of one object, 1 MiB.
const MAX_DATA_BYTES: usize = 1024 * 1024;

/// `IsConfigMapKey`: a file name — letters, digits, `-`, `_`, `.` — not `.` or `..`, ≤ 253.
pub(crate) fn config_key_errors(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if key.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        out.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    if key == "." {
        out.push("must not be '.'".to_string());
    } else if key == ".." {
        out.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        out.push("must not start with '..'".to_string());
    }
    out
}

fn validate(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut total = 0;
    for field in ["data", "binaryData"] {
        let Some(map) = obj.get(field).and_then(Value::as_object) else {
            continue;
        };
        for (k, v) in map {
            for e in config_key_errors(k) {
                causes.push(Cause::invalid(field, &json!(k), &e));
            }
            if field == "binaryData" && obj.pointer(&format!("/data/{k}")).is_some() {
                causes.push(Cause::invalid(
                    &format!("data[{k}]"),
                    &json!(k),
                    "duplicate of key present in binaryData",
                ));
            }
            total += v.as_str().map_or(0, str::len);
        }
    }
    if total > MAX_DATA_BYTES {
        causes.push(Cause::too_long("", MAX_DATA_BYTES));
    }
    causes
}

impl Strategy for ConfigMap {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "ConfigMap"
    }
    kind_type!(k8s_openapi::api::core::v1::ConfigMap);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Data", "string", 0, "Data contains the configuration data."),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let count = |f: &str| o.get(f).and_then(Value::as_object).map_or(0, |m| m.len());
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(count("data") + count("binaryData")),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace("", "ConfigMap", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut causes = validate(next);
        if current.get("immutable") == Some(&json!(true)) {
            if next.get("immutable") != Some(&json!(true)) {
                causes.push(Cause::forbidden(
                    "immutable",
                    "field is immutable when `immutable` is set",
                ));
            }
            for f in ["data", "binaryData"] {
                if next.get(f) != current.get(f) {
                    causes.push(Cause::forbidden(
                        f,
                        "field is immutable when `immutable` is set",
                    ));
                }
            }
        }
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_as_upstream() {
        assert!(config_key_errors("app.properties").is_empty());
        assert!(!config_key_errors("a/b").is_empty());
        assert_eq!(config_key_errors(".."), vec!["must not be '..'"]);
        let causes = validate(&json!({"data": {"x": "1"}, "binaryData": {"x": "MQ=="}}));
        assert_eq!(causes.len(), 1, "{causes:?}");
    }

    #[test]
    fn an_immutable_map_stays_immutable() {
        let current = json!({"immutable": true, "data": {"a": "1"}});
        let thawed = json!({"immutable": false, "data": {"a": "1"}});
        let causes = ConfigMap.validate_update("", &thawed, &current);
        let fields: Vec<String> = causes.iter().map(Cause::rendered).collect();
        assert_eq!(
            fields,
            ["immutable: Forbidden: field is immutable when `immutable` is set"],
            "{causes:?}"
        );
        assert!(ConfigMap.validate_update("", &current, &current).is_empty());
    }
}

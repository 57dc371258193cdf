//! core/v1 ServiceAccount (upstream `pkg/registry/core/serviceaccount`, printer
//! `printServiceAccount`).

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
};

pub(crate) struct ServiceAccount;

impl Strategy for ServiceAccount {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "ServiceAccount"
    }
    kind_type!(k8s_openapi::api::core::v1::ServiceAccount);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Secrets",
                "string",
                0,
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let secrets = o
            .get("secrets")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(secrets),
            json!(age_of(o)),
        ]
    }
}

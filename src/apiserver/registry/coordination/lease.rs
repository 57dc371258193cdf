//! coordination.k8s.io/v1 Lease (upstream `pkg/registry/coordination/lease`, printer
//! `printLease`): node heartbeats and leader election.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
};

pub(crate) struct Lease;

impl Strategy for Lease {
    fn group(&self) -> &'static str {
        "coordination.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "Lease"
    }
    kind_type!(k8s_openapi::api::coordination::v1::Lease);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Holder",
                "string",
                0,
                "holderIdentity contains the identity of the holder of a current lease.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/spec/holderIdentity")),
            json!(age_of(o)),
        ]
    }
}

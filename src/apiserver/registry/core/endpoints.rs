//! core/v1 Endpoints (upstream `pkg/registry/core/endpoint`, `printEndpoints`): stored under
//! `/registry/services/endpoints/` as upstream keys them, written by the Endpoints controller.

use serde_json::{Value, json};

use crate::apiserver::registry::discovery_k8s_io::endpointslice::SHOWN;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
};

pub(crate) struct Endpoints;

/// `formatEndpoints`: `ip:port` for every ready address and port, the first few, then how
/// many more.
fn endpoints_cell(o: &Value) -> String {
    let mut all = Vec::new();
    for subset in o
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let addresses: Vec<&str> = subset
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| str_at(a, "/ip"))
            .collect();
        let ports: Vec<i64> = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("port").and_then(Value::as_i64))
            .collect();
        if ports.is_empty() {
            all.extend(addresses.iter().map(|a| a.to_string()));
        }
        for p in &ports {
            all.extend(addresses.iter().map(|a| format!("{a}:{p}")));
        }
    }
    if all.is_empty() {
        return "<none>".into();
    }
    let shown = all[..all.len().min(SHOWN)].join(",");
    if all.len() > SHOWN {
        format!("{shown} + {} more...", all.len() - SHOWN)
    } else {
        shown
    }
}

impl Strategy for Endpoints {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Endpoints"
    }
    kind_type!(k8s_openapi::api::core::v1::Endpoints);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Endpoints",
                "string",
                0,
                "The set of all endpoints is the union of all subsets.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(endpoints_cell(o)),
            json!(age_of(o)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_with_every_port() {
        let e = json!({"subsets": [{"addresses": [{"ip": "10.244.1.1"}, {"ip": "10.244.2.1"}], "ports": [{"port": 80}, {"port": 443}]}]});
        assert_eq!(
            endpoints_cell(&e),
            "10.244.1.1:80,10.244.2.1:80,10.244.1.1:443 + 1 more..."
        );
        assert_eq!(endpoints_cell(&json!({})), "<none>");
    }
}

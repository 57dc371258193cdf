//! discovery.k8s.io/v1 EndpointSlice (upstream `pkg/registry/discovery/endpointslice`,
//! `ValidateEndpointSlice`'s address type, `printEndpointSlice`).

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct EndpointSlice;

pub(crate) const GROUP: &str = "discovery.k8s.io";

/// How many addresses the ENDPOINTS cells show before `+ N more...` (upstream's printers).
pub(crate) const SHOWN: usize = 3;

fn validate(o: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let t = str_at(o, "/addressType");
    let supported = ["IPv4", "IPv6", "FQDN"];
    if t.is_empty() {
        causes.push(Cause::required("addressType", ""));
    } else if !supported.contains(&t) {
        causes.push(Cause::not_supported("addressType", &json!(t), &supported));
    }
    let endpoints = o.get("endpoints").and_then(Value::as_array);
    for (i, e) in endpoints.into_iter().flatten().enumerate() {
        let n = e
            .get("addresses")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if n == 0 {
            causes.push(Cause::required(
                &format!("endpoints[{i}].addresses"),
                "must contain at least 1 address",
            ));
        } else if n > 100 {
            causes.push(Cause {
                reason: "FieldValueTooMany",
                message: format!("Too many: {n}: must have at most 100 items"),
                field: format!("endpoints[{i}].addresses"),
            });
        }
    }
    causes
}

/// `formatDiscoveryPorts`.
fn ports_cell(o: &Value) -> String {
    let ports: Vec<String> = o
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| match p.get("port").and_then(Value::as_i64) {
            Some(n) => n.to_string(),
            None => "<unset>".into(),
        })
        .collect();
    if ports.is_empty() {
        "<unset>".into()
    } else {
        ports.join(",")
    }
}

/// `formatDiscoveryEndpoints`: the first addresses, then how many more.
fn endpoints_cell(o: &Value) -> String {
    let all: Vec<&str> = o
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|e| {
            e.get("addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(Value::as_str)
        .collect();
    if all.is_empty() {
        return "<unset>".into();
    }
    let shown = all[..all.len().min(SHOWN)].join(",");
    if all.len() > SHOWN {
        format!("{shown} + {} more...", all.len() - SHOWN)
    } else {
        shown
    }
}

impl Strategy for EndpointSlice {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "EndpointSlice"
    }
    kind_type!(k8s_openapi::api::discovery::v1::EndpointSlice);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "AddressType",
                "string",
                0,
                "addressType specifies the type of address carried by this EndpointSlice.",
            ),
            column(
                "Ports",
                "string",
                0,
                "ports specifies the list of network ports exposed by each endpoint in this slice.",
            ),
            column(
                "Endpoints",
                "string",
                0,
                "endpoints is a list of unique endpoints in this slice.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/addressType")),
            json!(ports_cell(o)),
            json!(endpoints_cell(o)),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace(GROUP, "EndpointSlice", obj, trace, validate(obj))
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let mut causes = validate(next);
        if next.get("addressType") != current.get("addressType") {
            causes.push(Cause::invalid(
                "addressType",
                &json!(str_at(next, "/addressType")),
                "field is immutable",
            ));
        }
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_as_kubectl_prints_them() {
        let s = json!({"addressType": "IPv4", "ports": [{"port": 80}], "endpoints": [
            {"addresses": ["10.244.1.1"]}, {"addresses": ["10.244.2.1"]},
            {"addresses": ["10.244.3.1"]}, {"addresses": ["10.244.1.2"]}]});
        assert_eq!(ports_cell(&s), "80");
        assert_eq!(
            endpoints_cell(&s),
            "10.244.1.1,10.244.2.1,10.244.3.1 + 1 more..."
        );
        assert_eq!(endpoints_cell(&json!({})), "<unset>");
        assert!(validate(&s).is_empty());
        assert_eq!(validate(&json!({"addressType": "IPX"})).len(), 1);
    }
}

//! networking.k8s.io/v1 Ingress (upstream `pkg/registry/networking/ingress`): its strategy
//! (create clears status, spec changes count in generation, validation in
//! `ingress_validation.rs`) and the printer (NAME CLASS HOSTS ADDRESS PORTS AGE). No ingress
//! controller runs here, so an Ingress keeps an empty load-balancer status, as on a cluster
//! without one.

use k8s_openapi::api::networking::v1::Ingress as IngressType;
use serde_json::{Value, json};

use crate::apiserver::registry::networking::GROUP;
use crate::apiserver::registry::networking::ingress_validation::{
    typed, validate, validate_status,
};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct Ingress;

/// printers.go's `loadBalancerWidth`: a longer ADDRESS is clipped outside `-o wide`.
const LOAD_BALANCER_WIDTH: usize = 16;

/// printers.go `formatHosts`: the first three hosts, then how many more; `*` for none.
fn hosts(o: &Value) -> String {
    let rules = o.pointer("/spec/rules").and_then(Value::as_array);
    let rules = rules.map(Vec::as_slice).unwrap_or_default();
    let (mut named, mut more) = (Vec::new(), false);
    for host in rules.iter().map(|r| str_at(r, "/host")) {
        // Once three hosts are listed, any further rule (even without a host) is "more".
        more |= named.len() == 3;
        if !more && !host.is_empty() {
            named.push(host);
        }
    }
    if named.is_empty() {
        return "*".into();
    }
    let list = named.join(",");
    if more {
        format!("{list} + {} more...", rules.len() - 3)
    } else {
        list
    }
}

/// printers.go `ingressLoadBalancerStatusStringer`: each IP (else hostname), sorted, unique.
fn address(o: &Value) -> String {
    let mut found: Vec<&str> = o
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|i| match str_at(i, "/ip") {
            "" => str_at(i, "/hostname"),
            ip => ip,
        })
        .filter(|a| !a.is_empty())
        .collect();
    found.sort_unstable();
    found.dedup();
    let r = found.join(",");
    if r.len() > LOAD_BALANCER_WIDTH {
        format!("{}...", &r[..LOAD_BALANCER_WIDTH - 3])
    } else {
        r
    }
}

impl Strategy for Ingress {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "Ingress"
    }
    kind_type!(IngressType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Class",
                "string",
                0,
                "The name of the IngressClass resource that should be used for additional configuration",
            ),
            column(
                "Hosts",
                "string",
                0,
                "Hosts that incoming requests are matched against before the ingress rule",
            ),
            column(
                "Address",
                "string",
                0,
                "Address is a list containing ingress points for the load-balancer",
            ),
            column(
                "Ports",
                "string",
                0,
                "Ports of TLS configurations that open",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let class = o
            .pointer("/spec/ingressClassName")
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        let tls = o
            .pointer("/spec/tls")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(class),
            json!(hosts(o)),
            json!(address(o)),
            json!(if tls { "80, 443" } else { "80" }),
            json!(age_of(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        // PrepareForCreate: a client cannot set status; Go writes the empty struct.
        obj["status"] = json!({"loadBalancer": {}});
        validate_into_trace(GROUP, "Ingress", obj, trace, validate(obj, true))
    }
    fn validate_update(&self, sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return typed(next)
                .map(|i| validate_status(&i.status.unwrap_or_default()))
                .unwrap_or_default();
        }
        validate(next, false)
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printer_is_upstreams() {
        let o = json!({"metadata": {"name": "web", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": "foo.com"}, {"host": "bar.com"}],
                     "tls": [{"hosts": ["bar.com"]}]},
            "status": {"loadBalancer": {}}});
        let cells = Ingress.cells(&o);
        assert_eq!(
            cells[..5],
            [
                json!("web"),
                json!("nginx"),
                json!("foo.com,bar.com"),
                json!(""),
                json!("80, 443")
            ]
        );
        let bare = json!({"metadata": {"name": "x"}, "spec": {"defaultBackend": {}}});
        let cells = Ingress.cells(&bare);
        assert_eq!(
            cells[1..5],
            [json!("<none>"), json!("*"), json!(""), json!("80")]
        );
        let many = json!({"spec": {"rules": [{"host": "a.com"}, {"host": "b.com"}, {"host": "c.com"}, {"host": "d.com"}, {"host": "e.com"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}, {"ip": "10.0.0.1"}]}}});
        assert_eq!(hosts(&many), "a.com,b.com,c.com + 2 more...");
        let gaps = json!({"spec": {"rules": [{}, {}, {}, {"host": "a.com"}]}});
        assert_eq!(hosts(&gaps), "a.com");
        assert_eq!(address(&many), "10.0.0.1,10.0...");
        assert_eq!(Ingress.columns().len(), 6);
    }
}

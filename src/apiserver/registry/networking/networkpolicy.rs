//! networking.k8s.io/v1 NetworkPolicy (upstream `pkg/registry/networking/networkpolicy`,
//! `ValidateNetworkPolicy` and `SetDefaults_NetworkPolicy`): label selectors, ports (a
//! protocol of TCP, UDP or SCTP, defaulted to TCP; a port number or name; an endPort range),
//! peers (one ipBlock alone, or selectors), CIDRs with `except` inside them, policyTypes
//! defaulted from the rules, and the printer (NAME POD-SELECTOR AGE).

use k8s_openapi::api::networking::v1::{
    NetworkPolicy as NetworkPolicyType, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::format_selector;
use crate::apiserver::registry::networking::GROUP;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::registry::{formats, label_selector, validation};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct NetworkPolicy;

const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];

fn spec_of(o: &Value) -> Option<NetworkPolicySpec> {
    // A body that does not decode was refused before the strategy runs.
    serde_json::from_value::<NetworkPolicyType>(o.clone())
        .ok()
        .map(|p| p.spec.unwrap_or_default())
}

/// `ValidateNetworkPolicyPort`.
fn validate_port(p: &NetworkPolicyPort, f: &str, out: &mut Vec<Cause>) {
    if let Some(proto) = p.protocol.as_deref()
        && !PROTOCOLS.contains(&proto)
    {
        out.push(Cause::not_supported(
            &format!("{f}.protocol"),
            &json!(proto),
            &PROTOCOLS,
        ));
    }
    let end = format!("{f}.endPort");
    match (&p.port, p.end_port) {
        (Some(IntOrString::Int(port)), end_port) => {
            for m in formats::port_num(i64::from(*port)) {
                out.push(Cause::invalid(&format!("{f}.port"), &json!(port), &m));
            }
            if let Some(e) = end_port {
                if e < *port {
                    out.push(Cause::invalid(
                        &end,
                        &json!(e),
                        "must be greater than or equal to `port`",
                    ));
                }
                for m in formats::port_num(i64::from(e)) {
                    out.push(Cause::invalid(&end, &json!(e), &m));
                }
            }
        }
        (Some(IntOrString::String(name)), end_port) => {
            if let Some(e) = end_port {
                out.push(Cause::invalid(
                    &end,
                    &json!(e),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            validation::validate_port_name(&format!("{f}.port"), name, out);
        }
        (None, Some(e)) => out.push(Cause::invalid(
            &end,
            &json!(e),
            "may not be specified when `port` is not specified",
        )),
        (None, None) => {}
    }
}

/// `ValidateNetworkPolicyPeer`: at least one of the three; an ipBlock stands alone.
/// `old_cidrs`: CIDRs the stored policy already holds, accepted again as upstream does.
fn validate_peer(p: &NetworkPolicyPeer, f: &str, old_cidrs: &[String], out: &mut Vec<Cause>) {
    if let Some(s) = &p.pod_selector {
        label_selector::validate(s, &format!("{f}.podSelector"), out);
    }
    if let Some(s) = &p.namespace_selector {
        label_selector::validate(s, &format!("{f}.namespaceSelector"), out);
    }
    if let Some(b) = &p.ip_block {
        let f = format!("{f}.ipBlock");
        let valid = |field: &str, cidr: &str, out: &mut Vec<Cause>| {
            let parsed = formats::parse_cidr_sloppy(cidr);
            if parsed.is_none() && !old_cidrs.iter().any(|c| c == cidr) {
                out.push(Cause::invalid(field, &json!(cidr), formats::CIDR_MSG));
            }
            parsed
        };
        if b.cidr.is_empty() {
            out.push(Cause::required(&format!("{f}.cidr"), ""));
        } else if let Some(outer) = valid(&format!("{f}.cidr"), &b.cidr, out) {
            for (i, except) in b.except.iter().flatten().enumerate() {
                let field = format!("{f}.except[{i}]");
                if let Some(inner) = valid(&field, except, out)
                    && !formats::strict_subset(outer, inner)
                {
                    out.push(Cause::invalid(
                        &field,
                        &json!(except),
                        "must be a strict subset of `cidr`",
                    ));
                }
            }
        }
    }
    let n = [
        p.pod_selector.is_some(),
        p.namespace_selector.is_some(),
        p.ip_block.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if n == 0 {
        out.push(Cause::required(f, "must specify a peer"));
    } else if n > 1 && p.ip_block.is_some() {
        out.push(Cause::forbidden(
            f,
            "may not specify both ipBlock and another peer",
        ));
    }
}

/// `ValidateNetworkPolicySpec`.
fn validate_spec(spec: &NetworkPolicySpec, old_cidrs: &[String]) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(s) = &spec.pod_selector {
        label_selector::validate(s, "spec.podSelector", &mut out);
    }
    for (i, rule) in spec.ingress.iter().flatten().enumerate() {
        let f = format!("spec.ingress[{i}]");
        for (j, p) in rule.ports.iter().flatten().enumerate() {
            validate_port(p, &format!("{f}.ports[{j}]"), &mut out);
        }
        for (j, p) in rule.from.iter().flatten().enumerate() {
            validate_peer(p, &format!("{f}.from[{j}]"), old_cidrs, &mut out);
        }
    }
    for (i, rule) in spec.egress.iter().flatten().enumerate() {
        let f = format!("spec.egress[{i}]");
        for (j, p) in rule.ports.iter().flatten().enumerate() {
            validate_port(p, &format!("{f}.ports[{j}]"), &mut out);
        }
        for (j, p) in rule.to.iter().flatten().enumerate() {
            validate_peer(p, &format!("{f}.to[{j}]"), old_cidrs, &mut out);
        }
    }
    let types = spec.policy_types.as_deref().unwrap_or_default();
    if types.len() > POLICY_TYPES.len() {
        let shown: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
        out.push(Cause::invalid_printed(
            "spec.policyTypes",
            &format!("[]networking.PolicyType{{{}}}", shown.join(", ")),
            "may not specify more than two policyTypes",
        ));
        return out;
    }
    for (i, t) in types.iter().enumerate() {
        if !POLICY_TYPES.contains(&t.as_str()) {
            out.push(Cause::not_supported(
                &format!("spec.policyTypes[{i}]"),
                &json!(t),
                &POLICY_TYPES,
            ));
        }
    }
    out
}

/// Every CIDR of a stored policy's peers (`ValidateNetworkPolicyUpdate`'s allowance).
fn cidrs(spec: &NetworkPolicySpec) -> Vec<String> {
    let peers = spec
        .ingress
        .iter()
        .flatten()
        .flat_map(|r| r.from.iter().flatten())
        .chain(
            spec.egress
                .iter()
                .flatten()
                .flat_map(|r| r.to.iter().flatten()),
        );
    peers
        .filter_map(|p| p.ip_block.as_ref())
        .flat_map(|b| std::iter::once(b.cidr.clone()).chain(b.except.iter().flatten().cloned()))
        .collect()
}

/// `SetDefaults_NetworkPolicyPort` on every port of `rules[*].<peers>`.
fn default_ports(spec: &mut Value, rules: &str) {
    for rule in spec
        .get_mut(rules)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for port in rule
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(p) = port.as_object_mut()
                && p.get("protocol").is_none_or(Value::is_null)
            {
                p.insert("protocol".into(), json!("TCP"));
            }
        }
    }
}

impl Strategy for NetworkPolicy {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "NetworkPolicy"
    }
    kind_type!(NetworkPolicyType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Pod-Selector",
                "string",
                0,
                "podSelector selects the pods to which this NetworkPolicy object applies. The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        // `metav1.FormatLabelSelector` of a selector that is a struct upstream: absent is empty.
        let empty = json!({});
        let sel = o.pointer("/spec/podSelector").filter(|s| s.is_object());
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(format_selector(Some(sel.unwrap_or(&empty)))),
            json!(age_of(o)),
        ]
    }
    /// `SetDefaults_NetworkPolicy`: Ingress always, Egress when egress rules exist; each
    /// port's protocol TCP.
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
            return;
        };
        default_ports(spec, "ingress");
        default_ports(spec, "egress");
        let unset = spec
            .get("policyTypes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if unset {
            let egress = spec
                .get("egress")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty());
            spec["policyTypes"] = if egress {
                json!(["Ingress", "Egress"])
            } else {
                json!(["Ingress"])
            };
        }
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        self.defaults(obj);
        let causes = spec_of(obj)
            .map(|s| validate_spec(&s, &[]))
            .unwrap_or_default();
        validate_into_trace(GROUP, "NetworkPolicy", obj, trace, causes)
    }
    fn validate_update(&self, _sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        let old = spec_of(current).map(|s| cidrs(&s)).unwrap_or_default();
        spec_of(next)
            .map(|s| validate_spec(&s, &old))
            .unwrap_or_default()
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(spec: Value) -> Value {
        json!({"metadata": {"name": "deny", "namespace": "default"}, "spec": spec})
    }

    fn causes(spec: Value) -> Vec<String> {
        let mut o = policy(spec);
        NetworkPolicy.defaults(&mut o);
        validate_spec(&spec_of(&o).unwrap(), &[])
            .iter()
            .map(Cause::rendered)
            .collect()
    }

    #[test]
    fn defaults_are_upstreams() {
        let mut o = policy(json!({"podSelector": {}}));
        NetworkPolicy.defaults(&mut o);
        assert_eq!(o["spec"]["policyTypes"], json!(["Ingress"]));
        let mut o = policy(
            json!({"podSelector": {}, "egress": [{"ports": [{"port": 53}, {"port": 53, "protocol": "UDP"}]}]}),
        );
        NetworkPolicy.defaults(&mut o);
        assert_eq!(o["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(o["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(o["spec"]["egress"][0]["ports"][1]["protocol"], "UDP");
        let mut o = policy(json!({"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]}));
        NetworkPolicy.defaults(&mut o);
        assert_eq!(
            o["spec"]["policyTypes"],
            json!(["Egress"]),
            "a choice is kept"
        );
    }

    #[test]
    fn upstreams_table() {
        assert!(causes(json!({"podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"podSelector": {}, "namespaceSelector": {"matchLabels": {"team": "a"}}},
                                  {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                         "ports": [{"port": 5432}, {"port": "http"}, {"port": 8000, "endPort": 8080}]}]}))
        .is_empty());
        let cases = [
            (
                json!({"ingress": [{"ports": [{"protocol": "ICMP"}]}]}),
                r#"spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#,
            ),
            (
                json!({"ingress": [{"ports": [{"port": 0}]}]}),
                "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            ),
            (
                json!({"egress": [{"ports": [{"port": 8080, "endPort": 8000}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 8000: must be greater than or equal to `port`",
            ),
            (
                json!({"egress": [{"ports": [{"port": "http", "endPort": 8000}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 8000: may not be specified when `port` is non-numeric",
            ),
            (
                json!({"egress": [{"ports": [{"endPort": 8000}]}]}),
                "spec.egress[0].ports[0].endPort: Invalid value: 8000: may not be specified when `port` is not specified",
            ),
            (
                json!({"ingress": [{"ports": [{"port": "-http"}]}]}),
                r#"spec.ingress[0].ports[0].port: Invalid value: "-http": must not begin or end with a hyphen"#,
            ),
            (
                json!({"ingress": [{"from": [{}]}]}),
                "spec.ingress[0].from[0]: Required value: must specify a peer",
            ),
            (
                json!({"ingress": [{"from": [{"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}}]}]}),
                "spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer",
            ),
            (
                json!({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}),
                r#"spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"#,
            ),
            (
                json!({"egress": [{"to": [{"ipBlock": {"cidr": ""}}]}]}),
                "spec.egress[0].to[0].ipBlock.cidr: Required value",
            ),
            (
                json!({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/8"]}}]}]}),
                r#"spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`"#,
            ),
            (
                json!({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["192.168.0.0/24"]}}]}]}),
                r#"spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "192.168.0.0/24": must be a strict subset of `cidr`"#,
            ),
            (
                json!({"policyTypes": ["Ingress", "Sideways"]}),
                r#"spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress""#,
            ),
            (
                json!({"policyTypes": ["Ingress", "Egress", "Ingress"]}),
                r#"spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes"#,
            ),
            (
                json!({"podSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}),
                "spec.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            ),
            (
                json!({"ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"a/b/c": "x"}}}]}]}),
                r#"spec.ingress[0].from[0].namespaceSelector.matchLabels: Invalid value: "a/b/c": a qualified name"#,
            ),
        ];
        for (spec, want) in cases {
            let got = causes(spec.clone());
            assert!(
                got.first().is_some_and(|c| c.starts_with(want)),
                "{spec}: {got:?}"
            );
        }
    }

    #[test]
    fn an_update_keeps_a_stored_cidr() {
        let old = policy(json!({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}));
        assert!(NetworkPolicy.validate_update("", &old, &old).is_empty());
        let new = policy(json!({"egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/34"}}]}]}));
        assert_eq!(NetworkPolicy.validate_update("", &new, &old).len(), 1);
    }

    #[test]
    fn the_printer_is_upstreams() {
        let o = policy(json!({"podSelector": {"matchLabels": {"app": "db"}}}));
        assert_eq!(NetworkPolicy.cells(&o)[1], json!("app=db"));
        assert_eq!(
            NetworkPolicy.cells(&policy(json!({"podSelector": {}})))[1],
            json!("<none>")
        );
        assert_eq!(NetworkPolicy.cells(&policy(json!({})))[1], json!("<none>"));
    }
}

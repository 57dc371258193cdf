//! `ValidateIngressCreate`, `ValidateIngressUpdate` and `ValidateIngressStatusUpdate`
//! (upstream `pkg/apis/networking/validation`): a default backend or rules, each path typed
//! and absolute, each backend one Service port or one resource, hosts that are DNS names (a
//! wildcard only as the first label, never an IP), and load-balancer addresses in status.

use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, Ingress as IngressType, IngressBackend, IngressSpec, IngressStatus,
};
use serde_json::{Value, json};

use crate::apiserver::registry::networking::validate_typed_reference;
use crate::apiserver::registry::{formats, validation};
use crate::apiserver::request::status::Cause;

const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The object as its type; a body that does not decode was refused before the strategy runs.
pub(crate) fn typed(o: &Value) -> Option<IngressType> {
    serde_json::from_value(o.clone()).ok()
}

/// `ValidateIngressSpec`.
fn validate_spec(spec: &IngressSpec, out: &mut Vec<Cause>) {
    let rules = spec.rules.as_deref().unwrap_or_default();
    if rules.is_empty() && spec.default_backend.is_none() {
        let rendered = match spec.rules {
            None => "[]networking.IngressRule(nil)",
            Some(_) => "[]networking.IngressRule{}",
        };
        out.push(Cause::invalid_printed(
            "spec",
            rendered,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(b) = &spec.default_backend {
        validate_backend(b, "spec.defaultBackend", out);
    }
    for (i, rule) in rules.iter().enumerate() {
        let f = format!("spec.rules[{i}]");
        if let Some(host) = rule.host.as_deref().filter(|h| !h.is_empty()) {
            validate_host(host, &format!("{f}.host"), true, out);
        }
        if let Some(http) = &rule.http {
            if http.paths.is_empty() {
                out.push(Cause::required(&format!("{f}.http.paths"), ""));
            }
            for (j, p) in http.paths.iter().enumerate() {
                validate_path(p, &format!("{f}.http.paths[{j}]"), out);
            }
        }
    }
    for (i, tls) in spec.tls.iter().flatten().enumerate() {
        for (j, host) in tls.hosts.iter().flatten().enumerate() {
            validate_host(host, &format!("spec.tls[{i}].hosts[{j}]"), false, out);
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        for m in formats::dns1123_subdomain(class) {
            out.push(Cause::invalid("spec.ingressClassName", &json!(class), &m));
        }
    }
}

/// A rule's host (`no_ip`: rules refuse an IP, TLS hosts are not asked) or a TLS host: a
/// subdomain, or a wildcard subdomain when it holds a `*`.
fn validate_host(host: &str, field: &str, no_ip: bool, out: &mut Vec<Cause>) {
    if no_ip && formats::parse_ip_sloppy(host).is_some() {
        out.push(Cause::invalid(
            field,
            &json!(host),
            "must be a DNS name, not an IP address",
        ));
    }
    let msgs = if host.contains('*') {
        formats::wildcard_dns1123_subdomain(host)
    } else {
        formats::dns1123_subdomain(host)
    };
    for m in msgs {
        out.push(Cause::invalid(field, &json!(host), &m));
    }
}

/// `validateHTTPIngressPath`: pathType first (nothing else is checked without one).
fn validate_path(p: &HTTPIngressPath, f: &str, out: &mut Vec<Cause>) {
    let path = p.path.as_deref().unwrap_or_default();
    let field = format!("{f}.path");
    let v = json!(path);
    match p.path_type.as_str() {
        // k8s-openapi reads a missing pathType as "", upstream's nil.
        "" => {
            out.push(Cause::required(
                &format!("{f}.pathType"),
                "pathType must be specified",
            ));
            return;
        }
        "Exact" | "Prefix" => {
            if !path.starts_with('/') {
                out.push(Cause::invalid(&field, &v, "must be an absolute path"));
            }
            if !path.is_empty() {
                for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                    if path.contains(seq) {
                        out.push(Cause::invalid(
                            &field,
                            &v,
                            &format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if path.ends_with(suffix) {
                        out.push(Cause::invalid(
                            &field,
                            &v,
                            &format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !path.is_empty() && !path.starts_with('/') {
                out.push(Cause::invalid(&field, &v, "must be an absolute path"));
            }
        }
        other => out.push(Cause::not_supported(
            &format!("{f}.pathType"),
            &json!(other),
            &PATH_TYPES,
        )),
    }
    validate_backend(&p.backend, &format!("{f}.backend"), out);
}

/// `validateIngressBackend`: exactly one of a Service (named, one port) or a resource.
fn validate_backend(b: &IngressBackend, f: &str, out: &mut Vec<Cause>) {
    match (&b.resource, &b.service) {
        (Some(_), Some(_)) => out.push(Cause::invalid(
            f,
            &json!(""),
            "cannot set both resource and service backends",
        )),
        (Some(r), None) => {
            let reference = (r.api_group.as_deref(), r.kind.as_str(), r.name.as_str());
            validate_typed_reference(&format!("{f}.resource"), reference, out);
        }
        (None, Some(s)) => {
            let name_field = format!("{f}.service.name");
            if s.name.is_empty() {
                out.push(Cause::required(&name_field, ""));
            } else {
                for m in formats::dns1035_label(&s.name) {
                    out.push(Cause::invalid(&name_field, &json!(s.name), &m));
                }
            }
            let name = s
                .port
                .as_ref()
                .and_then(|p| p.name.as_deref())
                .unwrap_or_default();
            let number = s.port.as_ref().and_then(|p| p.number).unwrap_or(0);
            match (!name.is_empty(), number != 0) {
                (true, true) => out.push(Cause::invalid(
                    f,
                    &json!(""),
                    "cannot set both port name & port number",
                )),
                (true, false) => {
                    validation::validate_port_name(&format!("{f}.service.port.name"), name, out)
                }
                (false, true) => {
                    for m in formats::port_num(i64::from(number)) {
                        out.push(Cause::invalid(
                            &format!("{f}.service.port.number"),
                            &json!(number),
                            &m,
                        ));
                    }
                }
                (false, false) => out.push(Cause::required(f, "port name or number is required")),
            }
        }
        (None, None) => out.push(Cause::invalid(
            f,
            &json!(""),
            "resource or service backend is required",
        )),
    }
}

/// `ValidateIngressCreate` (and the spec half of `ValidateIngressUpdate`).
pub(crate) fn validate(o: &Value, creating: bool) -> Vec<Cause> {
    let Some(ing) = typed(o) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    validate_spec(&ing.spec.clone().unwrap_or_default(), &mut out);
    let class = ing
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.as_deref());
    let annotation = ing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CLASS_ANNOTATION));
    if creating
        && let (Some(a), Some(c)) = (annotation, class)
        && a != c
    {
        out.push(Cause::invalid(
            &format!("annotations.{CLASS_ANNOTATION}"),
            &json!(a),
            "must match `ingressClassName` when both are specified",
        ));
    }
    out
}

/// `ValidateIngressLoadBalancerStatus`: what an ingress controller may write.
pub(crate) fn validate_status(status: &IngressStatus) -> Vec<Cause> {
    let mut out = Vec::new();
    let lbs = status
        .load_balancer
        .as_ref()
        .and_then(|l| l.ingress.as_deref());
    for (i, lb) in lbs.unwrap_or_default().iter().enumerate() {
        let f = format!("status.loadBalancer.ingress[{i}]");
        if let Some(ip) = lb.ip.as_deref().filter(|s| !s.is_empty())
            && formats::parse_ip_sloppy(ip).is_none()
        {
            out.push(Cause::invalid(
                &format!("{f}.ip"),
                &json!(ip),
                formats::IP_MSG,
            ));
        }
        if let Some(h) = lb.hostname.as_deref().filter(|s| !s.is_empty()) {
            for m in formats::dns1123_subdomain(h) {
                out.push(Cause::invalid(&format!("{f}.hostname"), &json!(h), &m));
            }
            if formats::parse_ip_sloppy(h).is_some() {
                out.push(Cause::invalid(
                    &format!("{f}.hostname"),
                    &json!(h),
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ingress(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "default"}, "spec": spec})
    }

    fn causes(spec: Value) -> Vec<String> {
        validate(&ingress(spec), true)
            .iter()
            .map(Cause::rendered)
            .collect()
    }

    fn rule(host: &str, path: Value) -> Value {
        json!({"host": host, "http": {"paths": [path]}})
    }

    fn svc_path(path: &str, path_type: &str) -> Value {
        json!({"path": path, "pathType": path_type, "backend": {"service": {"name": "web", "port": {"number": 80}}}})
    }

    #[test]
    fn what_kubectl_create_ingress_sends_is_valid() {
        let spec = json!({"ingressClassName": "nginx",
            "rules": [rule("foo.com", svc_path("/", "Exact")), rule("bar.com", svc_path("/", "Prefix"))],
            "tls": [{"hosts": ["bar.com"], "secretName": "bar-cert"}]});
        assert_eq!(causes(spec), Vec::<String>::new());
        assert!(
            causes(
                json!({"defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}}})
            )
            .is_empty()
        );
        assert!(
            causes(json!({"rules": [rule("*.foo.com", svc_path("", "ImplementationSpecific"))]}))
                .is_empty()
        );
    }

    #[test]
    fn upstreams_table_of_refusals() {
        let cases: Vec<(Value, &str)> = vec![
            (
                json!({}),
                "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified",
            ),
            (
                json!({"rules": []}),
                "spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified",
            ),
            (
                json!({"rules": [rule("foo.com", json!({"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}))]}),
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
            ),
            (
                json!({"rules": [rule("foo.com", svc_path("/", "Regex"))]}),
                r#"spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix""#,
            ),
            (
                json!({"rules": [rule("foo.com", svc_path("foo", "Prefix"))]}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#,
            ),
            (
                json!({"rules": [rule("foo.com", svc_path("/a//b", "Exact"))]}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/a//b": must not contain '//'"#,
            ),
            (
                json!({"rules": [rule("foo.com", svc_path("/a/..", "Prefix"))]}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/a/..": cannot end with '/..'"#,
            ),
            (
                json!({"rules": [rule("foo.com", svc_path("foo", "ImplementationSpecific"))]}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#,
            ),
            (
                json!({"rules": [rule("1.2.3.4", svc_path("/", "Exact"))]}),
                r#"spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address"#,
            ),
            (
                json!({"rules": [rule("foo.*.com", svc_path("/", "Exact"))]}),
                r#"spec.rules[0].host: Invalid value: "foo.*.com": a wildcard DNS-1123 subdomain must start with '*.'"#,
            ),
            (
                json!({"rules": [rule("Foo.com", svc_path("/", "Exact"))]}),
                r#"spec.rules[0].host: Invalid value: "Foo.com": a lowercase RFC 1123 subdomain"#,
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}, "resource": {"kind": "Bucket", "name": "b"}}}),
                r#"spec.defaultBackend: Invalid value: "": cannot set both resource and service backends"#,
            ),
            (
                json!({"defaultBackend": {}}),
                r#"spec.defaultBackend: Invalid value: "": resource or service backend is required"#,
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80, "name": "http"}}}}),
                r#"spec.defaultBackend: Invalid value: "": cannot set both port name & port number"#,
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web"}}}),
                "spec.defaultBackend: Required value: port name or number is required",
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 70000}}}}),
                "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
            ),
            (
                json!({"defaultBackend": {"service": {"name": "1web", "port": {"number": 80}}}}),
                r#"spec.defaultBackend.service.name: Invalid value: "1web": a DNS-1035 label"#,
            ),
            (
                json!({"defaultBackend": {"resource": {"kind": "", "name": "b"}}}),
                "spec.defaultBackend.resource.kind: Required value",
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}, "tls": [{"hosts": ["*"]}]}),
                r#"spec.tls[0].hosts[0]: Invalid value: "*": a wildcard DNS-1123 subdomain"#,
            ),
            (
                json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}, "ingressClassName": "Nginx"}),
                r#"spec.ingressClassName: Invalid value: "Nginx": a lowercase RFC 1123 subdomain"#,
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
    fn the_class_annotation_must_agree_on_create_only() {
        let mut o = ingress(
            json!({"ingressClassName": "nginx", "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}),
        );
        o["metadata"]["annotations"] = json!({CLASS_ANNOTATION: "traefik"});
        let got: Vec<String> = validate(&o, true).iter().map(Cause::rendered).collect();
        assert_eq!(
            got,
            [
                r#"annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match `ingressClassName` when both are specified"#
            ]
        );
        assert!(validate(&o, false).is_empty());
    }

    #[test]
    fn status_addresses_are_checked() {
        let s: IngressStatus = serde_json::from_value(
            json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.300"}, {"hostname": "1.2.3.4"}]}}),
        )
        .unwrap();
        let got: Vec<String> = validate_status(&s).iter().map(Cause::rendered).collect();
        assert_eq!(
            got,
            [
                r#"status.loadBalancer.ingress[0].ip: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"#,
                r#"status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address"#,
            ]
        );
    }
}

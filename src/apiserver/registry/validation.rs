//! Object validation after mutating admission (upstream `pkg/apis/core/validation`): all errors
//! are collected and returned together as one 422 with kube-apiserver's field paths and texts.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::{Container, Pod, Toleration};
use serde_json::{Value, json};

use crate::apiserver::registry::{
    formats, validation_affinity, validation_meta, validation_pod_spec, validation_probes,
    validation_volumes,
};
use crate::apiserver::request::status::Cause;

// The DNS name rules live with the other formats; every validator reaches them from here too.
pub(crate) use crate::apiserver::registry::formats::{DNS1123_LABEL, DNS1123_SUBDOMAIN};
pub use crate::apiserver::registry::formats::{
    is_dns1123_label, is_dns1123_subdomain, parse_quantity,
};

/// Object names: most kinds use DNS-1123 subdomains (RBAC kinds allow any path segment).
pub fn validate_name(kind: &str, name: &str, generate_name: &str, out: &mut Vec<Cause>) {
    if name.is_empty() {
        if generate_name.is_empty() {
            out.push(Cause::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
        return;
    }
    if matches!(
        kind,
        "ClusterRole" | "ClusterRoleBinding" | "Role" | "RoleBinding"
    ) {
        if name == "." || name == ".." || name.contains('/') || name.contains('%') {
            out.push(Cause::invalid(
                "metadata.name",
                &json!(name),
                "may not contain '/' or '%'",
            ));
        }
        return;
    }
    if kind == "Namespace" {
        for m in formats::dns1123_label(name) {
            out.push(Cause::invalid("metadata.name", &json!(name), &m));
        }
        return;
    }
    if name.len() > 253 {
        out.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            "must be no more than 253 characters",
        ));
    } else if !is_dns1123_subdomain(name) {
        out.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            DNS1123_SUBDOMAIN,
        ));
    }
}

/// `IsValidPortName`: each of its messages as a cause at `field`.
pub(crate) fn validate_port_name(field: &str, name: &str, out: &mut Vec<Cause>) {
    let v = json!(name);
    if name.len() > 15 {
        out.push(Cause::invalid(
            field,
            &v,
            "must be no more than 15 characters",
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push(Cause::invalid(
            field,
            &v,
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
        ));
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push(Cause::invalid(
            field,
            &v,
            "must contain at least one letter (a-z)",
        ));
    }
    if name.contains("--") {
        out.push(Cause::invalid(
            field,
            &v,
            "must not contain consecutive hyphens",
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(Cause::invalid(
            field,
            &v,
            "must not begin or end with a hyphen",
        ));
    }
}

/// One container (`validateContainerCommon`, then its name's uniqueness among `names`);
/// `volumes` are the pod's valid volumes, the only ones it may mount.
pub(crate) fn validate_container(
    c: &Container,
    path: &str,
    names: &mut HashSet<String>,
    volumes: &HashSet<String>,
    out: &mut Vec<Cause>,
) {
    let name_field = format!("{path}.name");
    let name_errors = formats::dns1123_label(&c.name);
    if c.name.is_empty() {
        out.push(Cause::required(&name_field, ""));
    } else if !name_errors.is_empty() {
        for m in name_errors {
            out.push(Cause::invalid(&name_field, &json!(c.name), &m));
        }
    } else if !names.insert(c.name.clone()) {
        out.push(Cause::duplicate(&name_field, &json!(c.name)));
    }
    match c.image.as_deref() {
        None | Some("") => out.push(Cause::required(&format!("{path}.image"), "")),
        Some(i) if i.trim() != i => out.push(Cause::invalid(
            &format!("{path}.image"),
            &json!(i),
            "must not have leading or trailing whitespace",
        )),
        _ => {}
    }
    if let Some(tp) = c.termination_message_policy.as_deref()
        && !["File", "FallbackToLogsOnError"].contains(&tp)
    {
        out.push(Cause::not_supported(
            &format!("{path}.terminationMessagePolicy"),
            &json!(tp),
            &["File", "FallbackToLogsOnError"],
        ));
    }
    let mut port_names = HashSet::new();
    for (i, p) in c.ports.iter().flatten().enumerate() {
        let pp = format!("{path}.ports[{i}]");
        if let Some(n) = p.name.as_deref().filter(|n| !n.is_empty()) {
            validate_port_name(&format!("{pp}.name"), n, out);
            if !port_names.insert(n.to_string()) {
                out.push(Cause::duplicate(&format!("{pp}.name"), &json!(n)));
            }
        }
        if p.container_port == 0 {
            out.push(Cause::required(&format!("{pp}.containerPort"), ""));
        } else if !(1..=65535).contains(&p.container_port) {
            out.push(Cause::invalid(
                &format!("{pp}.containerPort"),
                &json!(p.container_port),
                "must be between 1 and 65535, inclusive",
            ));
        }
        if let Some(h) = p.host_port.filter(|h| *h != 0)
            && !(1..=65535).contains(&h)
        {
            out.push(Cause::invalid(
                &format!("{pp}.hostPort"),
                &json!(h),
                "must be between 1 and 65535, inclusive",
            ));
        }
        if let Some(proto) = p.protocol.as_deref()
            && !["SCTP", "TCP", "UDP"].contains(&proto)
        {
            out.push(Cause::not_supported(
                &format!("{pp}.protocol"),
                &json!(proto),
                &["SCTP", "TCP", "UDP"],
            ));
        }
    }
    validation_pod_spec::validate_env(c.env.as_deref().unwrap_or_default(), path, out);
    validation_volumes::validate_volume_mounts(c, path, volumes, out);
    if let Some(pp) = c.image_pull_policy.as_deref()
        && !["Always", "IfNotPresent", "Never"].contains(&pp)
    {
        out.push(Cause::not_supported(
            &format!("{path}.imagePullPolicy"),
            &json!(pp),
            &["Always", "IfNotPresent", "Never"],
        ));
    }
    if let Some(res) = &c.resources {
        for (which, m) in [("requests", &res.requests), ("limits", &res.limits)] {
            for (k, q) in m.iter().flatten() {
                if parse_quantity(&q.0).is_some_and(|v| v < 0.0) {
                    out.push(Cause::invalid(
                        &format!("{path}.resources.{which}[{k}]"),
                        &json!(q.0),
                        "must be greater than or equal to 0",
                    ));
                }
            }
        }
        if let (Some(req), Some(lim)) = (&res.requests, &res.limits) {
            for (k, r) in req {
                if let (Some(l), Some(rv)) = (lim.get(k), parse_quantity(&r.0))
                    && parse_quantity(&l.0).is_some_and(|lv| rv > lv)
                {
                    out.push(Cause::invalid(
                        &format!("{path}.resources.requests"),
                        &json!(r.0),
                        &format!("must be less than or equal to {k} limit of {}", l.0),
                    ));
                }
            }
        }
    }
    if let Some(sc) = &c.security_context {
        validation_pod_spec::container_security_context(sc, path, out);
    }
    validation_probes::validate_probes(c, path, out);
}

/// Validate a pod for create (after defaults and mutating admission).
pub fn validate_pod(pod: &Pod) -> Vec<Cause> {
    let mut out = Vec::new();
    let m = &pod.metadata;
    validate_name(
        "Pod",
        m.name.as_deref().unwrap_or_default(),
        m.generate_name.as_deref().unwrap_or_default(),
        &mut out,
    );
    let Some(spec) = &pod.spec else {
        out.push(Cause::required("spec.containers", ""));
        return out;
    };
    // Upstream's order (`ValidatePodSpec`): volumes, containers, init containers, then the
    // rest of the spec.
    let volumes =
        validation_volumes::validate_volumes(spec.volumes.as_deref().unwrap_or_default(), &mut out);
    if spec.containers.is_empty() {
        out.push(Cause::required("spec.containers", ""));
    }
    let mut names = HashSet::new();
    for (i, c) in spec.containers.iter().enumerate() {
        let path = format!("spec.containers[{i}]");
        validate_container(c, &path, &mut names, &volumes, &mut out);
    }
    validation_pod_spec::host_port_conflicts(&spec.containers, &mut out);
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        let path = format!("spec.initContainers[{i}]");
        validate_container(c, &path, &mut names, &volumes, &mut out);
    }
    validation_pod_spec::host_network_ports(spec, &mut out);
    if let Some(rp) = spec.restart_policy.as_deref()
        && !["Always", "OnFailure", "Never"].contains(&rp)
    {
        out.push(Cause::not_supported(
            "spec.restartPolicy",
            &json!(rp),
            &["Always", "OnFailure", "Never"],
        ));
    }
    if let Some(dp) = spec.dns_policy.as_deref() {
        let ok = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
        if !ok.contains(&dp) {
            out.push(Cause::not_supported("spec.dnsPolicy", &json!(dp), &ok));
        }
    }
    validation_pod_spec::node_selector(spec, &mut out);
    if let Some(sc) = &spec.security_context {
        validation_pod_spec::pod_security_context(sc, &mut out);
    }
    if let Some(a) = &spec.affinity {
        validation_affinity::validate_affinity(a, &mut out);
    }
    validation_pod_spec::dns_config(spec, &mut out);
    validation_pod_spec::gates(spec, &mut out);
    if let Some(c) = &spec.topology_spread_constraints {
        validation_affinity::validate_topology_spread(c, &mut out);
    }
    validation_pod_spec::names_before_tolerations(spec, &mut out);
    if let Some(t) = &spec.tolerations {
        validate_tolerations(t, "spec.tolerations", &mut out);
    }
    validation_pod_spec::names_after_tolerations(spec, &mut out);
    if let Some(g) = spec.termination_grace_period_seconds
        && g < 0
    {
        out.push(Cause::invalid(
            "spec.terminationGracePeriodSeconds",
            &json!(g),
            "must be greater than or equal to 0",
        ));
    }
    out
}

/// `ValidateTolerations`: a pod's, or a RuntimeClass's that its pods get. (Where upstream
/// prints the whole toleration as the invalid value, its Go struct, this prints its JSON.)
pub(crate) fn validate_tolerations(tolerations: &[Toleration], path: &str, out: &mut Vec<Cause>) {
    for (i, t) in tolerations.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let key = t.key.as_deref().unwrap_or_default();
        let operator = t.operator.as_deref().unwrap_or_default();
        let value = t.value.as_deref().unwrap_or_default();
        let effect = t.effect.as_deref().unwrap_or_default();
        let whole = || serde_json::to_value(t).unwrap_or(Value::Null);
        for msg in formats::qualified_name(key)
            .into_iter()
            .filter(|_| !key.is_empty())
        {
            out.push(Cause::invalid(&format!("{path}.key"), &json!(key), &msg));
        }
        if key.is_empty() && operator != "Exists" {
            out.push(Cause::invalid(
                &format!("{path}.operator"),
                &json!(operator),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if t.toleration_seconds.is_some() && effect != "NoExecute" {
            out.push(Cause::invalid(
                &format!("{path}.effect"),
                &json!(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "" | "Equal" => {
                let errs = formats::label_value(value);
                if !errs.is_empty() {
                    out.push(Cause::invalid(
                        &format!("{path}.operator"),
                        &whole(),
                        &errs.join(";"),
                    ));
                }
            }
            "Exists" if !value.is_empty() => out.push(Cause::invalid(
                &format!("{path}.operator"),
                &whole(),
                "value must be empty when `operator` is 'Exists'",
            )),
            "Exists" => {}
            other => out.push(Cause::not_supported(
                &format!("{path}.operator"),
                &json!(other),
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            out.push(Cause::not_supported(
                &format!("{path}.effect"),
                &json!(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

/// Generic metadata checks for kinds without their own validation.
pub fn validate_meta(kind: &str, obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    validate_name(
        kind,
        &s("/metadata/name"),
        &s("/metadata/generateName"),
        &mut out,
    );
    validation_meta::on_create(obj.get("metadata"), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("250m"), Some(0.25));
        assert_eq!(parse_quantity("1Gi"), Some(1073741824.0));
        assert_eq!(parse_quantity("abc"), None);
        assert_eq!(parse_quantity("1x"), None);
    }

    #[test]
    fn a_pods_tolerations_are_checked() {
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "c", "image": "nginx"}],
            "tolerations": [
                {"key": "a", "operator": "Sometimes", "effect": "Never"},
                {"operator": "Equal", "value": "x"},
                {"key": "b", "operator": "Exists", "tolerationSeconds": 5}]}}))
        .expect("pod");
        let said: Vec<String> = validate_pod(&pod).iter().map(Cause::rendered).collect();
        assert_eq!(
            said,
            vec![
                "spec.tolerations[0].operator: Unsupported value: \"Sometimes\": supported values: \"Equal\", \"Exists\"",
                "spec.tolerations[0].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                "spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "spec.tolerations[2].effect: Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            ]
        );
    }

    #[test]
    fn names() {
        assert!(is_dns1123_subdomain("app.v1"));
        assert!(!is_dns1123_subdomain("App"));
        assert!(!is_dns1123_label("a.b"));
    }
}

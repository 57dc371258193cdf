//! The parts of upstream's `ValidatePodSpec` beyond containers, volumes and scheduling
//! constraints: environment variables, host ports, security contexts, DNS, gates, and the
//! spec's own names and enums, each with kube-apiserver's field path and words.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::{Container, EnvVar, PodSecurityContext, PodSpec, SecurityContext};
use serde_json::json;

use crate::apiserver::registry::{formats, label_selector};
use crate::apiserver::request::status::Cause;

const ID_RANGE: &str = "must be between 0 and 2147483647, inclusive";

/// The downward API fields an environment variable may read without a subscript.
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `ValidateEnv` with 1.33's relaxed names (RelaxedEnvironmentVariableValidation is on).
pub(crate) fn validate_env(env: &[EnvVar], path: &str, out: &mut Vec<Cause>) {
    for (i, e) in env.iter().enumerate() {
        let p = format!("{path}.env[{i}]");
        if e.name.is_empty() {
            out.push(Cause::required(&format!("{p}.name"), ""));
        } else if !e
            .name
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'=')
        {
            out.push(Cause::invalid(
                &format!("{p}.name"),
                &json!(e.name),
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        let Some(from) = &e.value_from else {
            continue;
        };
        let vf = format!("{p}.valueFrom");
        let mut sources = 0;
        if let Some(f) = &from.field_ref {
            sources += 1;
            let fp = format!("{vf}.fieldRef.fieldPath");
            let subscripted = ["metadata.labels['", "metadata.annotations['"]
                .iter()
                .any(|pre| f.field_path.starts_with(pre) && f.field_path.ends_with("']"));
            if f.field_path.is_empty() {
                out.push(Cause::required(&fp, ""));
            } else if !subscripted && !ENV_FIELD_PATHS.contains(&f.field_path.as_str()) {
                out.push(Cause::not_supported(
                    &fp,
                    &json!(f.field_path),
                    &ENV_FIELD_PATHS,
                ));
            }
        }
        if from.resource_field_ref.is_some() {
            sources += 1;
        }
        for (which, key) in [
            (
                "configMapKeyRef",
                from.config_map_key_ref.as_ref().map(|r| &r.key),
            ),
            ("secretKeyRef", from.secret_key_ref.as_ref().map(|r| &r.key)),
        ] {
            if let Some(key) = key {
                sources += 1;
                if key.is_empty() {
                    out.push(Cause::required(&format!("{vf}.{which}.key"), ""));
                }
            }
        }
        let detail = if sources == 0 {
            Some(
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
            )
        } else if e.value.as_deref().is_some_and(|v| !v.is_empty()) {
            Some("may not be specified when `value` is not empty")
        } else if sources > 1 {
            Some("may not have more than one field specified at a time")
        } else {
            None
        };
        if let Some(d) = detail {
            out.push(Cause::invalid(&vf, &json!(""), d));
        }
    }
}

/// `AccumulateUniqueHostPorts` over the regular containers: one owner per protocol, host IP
/// and host port.
pub(crate) fn host_port_conflicts(containers: &[Container], out: &mut Vec<Cause>) {
    let mut seen = HashSet::new();
    for (ci, c) in containers.iter().enumerate() {
        for (pi, p) in c.ports.iter().flatten().enumerate() {
            let Some(port) = p.host_port.filter(|h| *h != 0) else {
                continue;
            };
            let key = format!(
                "{}/{}/{port}",
                p.protocol.as_deref().unwrap_or("TCP"),
                p.host_ip.as_deref().unwrap_or_default()
            );
            if !seen.insert(key.clone()) {
                out.push(Cause::duplicate(
                    &format!("spec.containers[{ci}].ports[{pi}].hostPort"),
                    &json!(key),
                ));
            }
        }
    }
}

/// `validatePodHostNetworkDeps`: on the node's network a container's port is the host's.
pub(crate) fn host_network_ports(spec: &PodSpec, out: &mut Vec<Cause>) {
    if spec.host_network != Some(true) {
        return;
    }
    for (ci, c) in spec.containers.iter().enumerate() {
        for (pi, p) in c.ports.iter().flatten().enumerate() {
            if let Some(h) = p.host_port.filter(|h| *h != 0 && *h != p.container_port) {
                out.push(Cause::invalid(
                    &format!("spec.containers[{ci}].ports[{pi}].hostPort"),
                    &json!(h),
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
}

fn id_range(v: Option<i64>, field: &str, out: &mut Vec<Cause>) {
    if let Some(v) = v.filter(|v| !(0..=i64::from(i32::MAX)).contains(v)) {
        out.push(Cause::invalid(field, &json!(v), ID_RANGE));
    }
}

/// The user and group a container runs as (`ValidateSecurityContext`'s ranges).
pub(crate) fn container_security_context(sc: &SecurityContext, path: &str, out: &mut Vec<Cause>) {
    let p = format!("{path}.securityContext");
    id_range(sc.run_as_user, &format!("{p}.runAsUser"), out);
    id_range(sc.run_as_group, &format!("{p}.runAsGroup"), out);
    if sc.allow_privilege_escalation != Some(false) {
        return;
    }
    let contradiction = |what: &str| {
        Cause::invalid_printed(
            &p,
            &go_security_context(sc),
            &format!("cannot set `allowPrivilegeEscalation` to false and {what}"),
        )
    };
    if sc.privileged == Some(true) {
        out.push(contradiction("`privileged` to true"));
    }
    let added = sc.capabilities.as_ref().and_then(|c| c.add.as_ref());
    for cap in added.into_iter().flatten() {
        if cap == "CAP_SYS_ADMIN" {
            out.push(contradiction("`capabilities.Add` CAP_SYS_ADMIN"));
        }
    }
}

/// The security context as upstream's `field.Invalid` prints it: Go's `%#v` of the internal
/// struct, whose fields are all pointers, so each prints as its type and an address, or nil.
/// The addresses are where this server holds the values, as Go's are where kube-apiserver
/// holds them: meaningful to no client, and the same form.
fn go_security_context(sc: &SecurityContext) -> String {
    fn at<T>(ty: &str, v: Option<&T>) -> String {
        match v {
            Some(v) => format!("(*{ty})({:#x})", v as *const T as usize),
            None => format!("(*{ty})(nil)"),
        }
    }
    let fields = [
        (
            "Capabilities",
            at("core.Capabilities", sc.capabilities.as_ref()),
        ),
        ("Privileged", at("bool", sc.privileged.as_ref())),
        (
            "SELinuxOptions",
            at("core.SELinuxOptions", sc.se_linux_options.as_ref()),
        ),
        (
            "WindowsOptions",
            at(
                "core.WindowsSecurityContextOptions",
                sc.windows_options.as_ref(),
            ),
        ),
        ("RunAsUser", at("int64", sc.run_as_user.as_ref())),
        ("RunAsGroup", at("int64", sc.run_as_group.as_ref())),
        ("RunAsNonRoot", at("bool", sc.run_as_non_root.as_ref())),
        (
            "ReadOnlyRootFilesystem",
            at("bool", sc.read_only_root_filesystem.as_ref()),
        ),
        (
            "AllowPrivilegeEscalation",
            at("bool", sc.allow_privilege_escalation.as_ref()),
        ),
        (
            "ProcMount",
            at("core.ProcMountType", sc.proc_mount.as_ref()),
        ),
        (
            "SeccompProfile",
            at("core.SeccompProfile", sc.seccomp_profile.as_ref()),
        ),
        (
            "AppArmorProfile",
            at("core.AppArmorProfile", sc.app_armor_profile.as_ref()),
        ),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("core.SecurityContext{{{}}}", body.join(", "))
}

/// `validatePodSpecSecurityContext`'s IDs, fsGroupChangePolicy and seccomp profile.
pub(crate) fn pod_security_context(sc: &PodSecurityContext, out: &mut Vec<Cause>) {
    let p = "spec.securityContext";
    id_range(sc.fs_group, &format!("{p}.fsGroup"), out);
    id_range(sc.run_as_user, &format!("{p}.runAsUser"), out);
    id_range(sc.run_as_group, &format!("{p}.runAsGroup"), out);
    for (g, id) in sc.supplemental_groups.iter().flatten().enumerate() {
        id_range(Some(*id), &format!("{p}.supplementalGroups[{g}]"), out);
    }
    const CHANGE: [&str; 2] = ["Always", "OnRootMismatch"];
    if let Some(v) = sc
        .fs_group_change_policy
        .as_deref()
        .filter(|v| !CHANGE.contains(v))
    {
        out.push(Cause::not_supported(
            &format!("{p}.fsGroupChangePolicy"),
            &json!(v),
            &CHANGE,
        ));
    }
    if let Some(sp) = &sc.seccomp_profile {
        const TYPES: [&str; 3] = ["Localhost", "RuntimeDefault", "Unconfined"];
        let f = format!("{p}.seccompProfile");
        let local = sp.localhost_profile.as_deref().unwrap_or_default();
        match sp.type_.as_str() {
            "" => out.push(Cause::required(
                &format!("{f}.type"),
                "type is required when seccompProfile is set",
            )),
            "Localhost" if local.is_empty() => out.push(Cause::required(
                &format!("{f}.localhostProfile"),
                "must be set when seccomp type is Localhost",
            )),
            t if !TYPES.contains(&t) => out.push(Cause::not_supported(
                &format!("{f}.type"),
                &json!(t),
                &TYPES,
            )),
            _ => {}
        }
    }
}

/// Upstream prints a list it refuses as Go does: `[]string{"a", "b"}`.
fn go_list(l: &[String]) -> String {
    let items: Vec<String> = l.iter().map(|s| format!("{s:?}")).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// `validatePodDNSConfig`: with dnsPolicy None the pod's whole resolver comes from here.
pub(crate) fn dns_config(spec: &PodSpec, out: &mut Vec<Cause>) {
    let p = "spec.dnsConfig";
    let none = spec.dns_policy.as_deref() == Some("None");
    let Some(c) = &spec.dns_config else {
        if none {
            out.push(Cause::required(
                p,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            ));
        }
        return;
    };
    let nameservers = c.nameservers.as_deref().unwrap_or_default();
    if none && nameservers.is_empty() {
        out.push(Cause::required(
            &format!("{p}.nameservers"),
            "must provide at least one DNS nameserver when `dnsPolicy` is None",
        ));
        return;
    }
    if nameservers.len() > 3 {
        out.push(Cause::invalid_printed(
            &format!("{p}.nameservers"),
            &go_list(nameservers),
            "must not have more than 3 nameservers",
        ));
    }
    for (i, ns) in nameservers.iter().enumerate() {
        if formats::parse_ip_sloppy(ns).is_none() {
            out.push(Cause::invalid(
                &format!("{p}.nameservers[{i}]"),
                &json!(ns),
                formats::IP_MSG,
            ));
        }
    }
    let searches = c.searches.as_deref().unwrap_or_default();
    if searches.len() > 32 {
        out.push(Cause::invalid_printed(
            &format!("{p}.searches"),
            &go_list(searches),
            "must not have more than 32 search paths",
        ));
    }
    for (i, o) in c.options.iter().flatten().enumerate() {
        if o.name.as_deref().unwrap_or_default().is_empty() {
            out.push(Cause::required(
                &format!("{p}.options[{i}]"),
                "must not be empty",
            ));
        }
    }
}

/// `validateReadinessGates` and `validateSchedulingGates`: qualified names, gates unique.
pub(crate) fn gates(spec: &PodSpec, out: &mut Vec<Cause>) {
    for (i, g) in spec.readiness_gates.iter().flatten().enumerate() {
        let f = format!("spec.readinessGates[{i}].conditionType");
        for m in formats::qualified_name(&g.condition_type) {
            out.push(Cause::invalid(&f, &json!(g.condition_type), &m));
        }
    }
    let mut seen = HashSet::new();
    for (i, g) in spec.scheduling_gates.iter().flatten().enumerate() {
        let f = format!("spec.schedulingGates[{i}]");
        for m in formats::qualified_name(&g.name) {
            out.push(Cause::invalid(&f, &json!(g.name), &m));
        }
        if !seen.insert(g.name.as_str()) {
            out.push(Cause::duplicate(&f, &json!(g.name)));
        }
    }
}

/// The node selector's keys and values are labels (reported at the map, as upstream does).
pub(crate) fn node_selector(spec: &PodSpec, out: &mut Vec<Cause>) {
    if let Some(sel) = &spec.node_selector {
        let pairs = sel.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        label_selector::validate_labels(pairs, "spec.nodeSelector", out);
    }
}

/// The spec's single names and enums, in upstream's order after tolerations and before it.
pub(crate) fn names_before_tolerations(spec: &PodSpec, out: &mut Vec<Cause>) {
    for (field, v) in [
        ("serviceAccountName", &spec.service_account_name),
        ("nodeName", &spec.node_name),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            for m in formats::dns1123_subdomain(v) {
                out.push(Cause::invalid(&format!("spec.{field}"), &json!(v), &m));
            }
        }
    }
    if let Some(ads) = spec
        .active_deadline_seconds
        .filter(|v| !(1..=i64::from(i32::MAX)).contains(v))
    {
        out.push(Cause::invalid(
            "spec.activeDeadlineSeconds",
            &json!(ads),
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    for (field, v) in [("hostname", &spec.hostname), ("subdomain", &spec.subdomain)] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            for m in formats::dns1123_label(v) {
                out.push(Cause::invalid(&format!("spec.{field}"), &json!(v), &m));
            }
        }
    }
}

/// The ones upstream checks after the tolerations.
pub(crate) fn names_after_tolerations(spec: &PodSpec, out: &mut Vec<Cause>) {
    for (field, v) in [
        ("priorityClassName", &spec.priority_class_name),
        ("runtimeClassName", &spec.runtime_class_name),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            for m in formats::dns1123_subdomain(v) {
                out.push(Cause::invalid(&format!("spec.{field}"), &json!(v), &m));
            }
        }
    }
    const PREEMPTION: [&str; 2] = ["PreemptLowerPriority", "Never"];
    match spec.preemption_policy.as_deref() {
        Some("") => out.push(Cause::required("spec.preemptionPolicy", "")),
        Some(p) if !PREEMPTION.contains(&p) => out.push(Cause::not_supported(
            "spec.preemptionPolicy",
            &json!(p),
            &PREEMPTION,
        )),
        _ => {}
    }
    if let Some(os) = &spec.os {
        const OS: [&str; 2] = ["linux", "windows"];
        if os.name.is_empty() {
            out.push(Cause::required("spec.os.name", "cannot be empty"));
        } else if !OS.contains(&os.name.as_str()) {
            out.push(Cause::not_supported("spec.os", &json!(os.name), &OS));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(v: serde_json::Value) -> PodSpec {
        serde_json::from_value(v).unwrap()
    }

    fn rendered(out: &[Cause]) -> Vec<String> {
        out.iter().map(Cause::rendered).collect()
    }

    #[test]
    fn env_names_and_sources() {
        let env: Vec<EnvVar> = serde_json::from_value(json!([
            {"name": ""},
            {"name": "A=B"},
            {"name": "1.ok-in-1.33"},
            {"name": "x", "valueFrom": {}},
            {"name": "y", "value": "v", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "z", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}, "secretKeyRef": {"name": "s", "key": ""}}},
            {"name": "w", "valueFrom": {"fieldRef": {"fieldPath": "spec.hostname"}}},
        ]))
        .unwrap();
        let mut out = Vec::new();
        validate_env(&env, "spec.containers[0]", &mut out);
        assert_eq!(
            rendered(&out),
            [
                "spec.containers[0].env[0].name: Required value",
                "spec.containers[0].env[1].name: Invalid value: \"A=B\": a valid environment variable name must consist only of printable ASCII characters other than '='",
                "spec.containers[0].env[3].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                "spec.containers[0].env[4].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
                "spec.containers[0].env[5].valueFrom.secretKeyRef.key: Required value",
                "spec.containers[0].env[5].valueFrom: Invalid value: \"\": may not have more than one field specified at a time",
                "spec.containers[0].env[6].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.hostname\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\"",
            ]
        );
    }

    #[test]
    fn one_container_per_host_port() {
        let s = spec(json!({"hostNetwork": true, "containers": [
            {"name": "a", "ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]},
            {"name": "b", "ports": [{"containerPort": 81, "hostPort": 80, "protocol": "TCP"}, {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]},
        ]}));
        let mut out = Vec::new();
        host_port_conflicts(&s.containers, &mut out);
        host_network_ports(&s, &mut out);
        assert_eq!(
            rendered(&out),
            [
                "spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//80\"",
                "spec.containers[1].ports[0].hostPort: Invalid value: 80: must match `containerPort` when `hostNetwork` is true",
            ]
        );
    }

    /// No escalation yet privileged, or CAP_SYS_ADMIN added: upstream's words after the whole
    /// context as Go prints it, each set pointer as an address and each unset one as nil.
    #[test]
    fn no_escalation_contradicts_privileged_and_sys_admin() {
        let sc: SecurityContext = serde_json::from_value(json!({"allowPrivilegeEscalation": false,
            "privileged": true, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}))
        .unwrap();
        let mut out = Vec::new();
        container_security_context(&sc, "spec.containers[0]", &mut out);
        let texts = rendered(&out);
        assert_eq!(texts.len(), 2, "{texts:?}");
        // The addresses are this process's own; everything else is fixed.
        let shape = |t: &str| {
            let mut parts = t.split("(0x");
            let mut masked = parts.next().unwrap_or_default().to_string();
            for part in parts {
                masked.push_str("(ADDR");
                masked.push_str(&part[part.find(')').unwrap_or(0)..]);
            }
            masked
        };
        let value = "core.SecurityContext{Capabilities:(*core.Capabilities)(ADDR), Privileged:(*bool)(ADDR), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(ADDR), ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}";
        assert_eq!(
            shape(&texts[0]),
            format!(
                "spec.containers[0].securityContext: Invalid value: {value}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            )
        );
        assert_eq!(
            shape(&texts[1]),
            format!(
                "spec.containers[0].securityContext: Invalid value: {value}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
            )
        );
        let allowed: SecurityContext =
            serde_json::from_value(json!({"allowPrivilegeEscalation": true, "privileged": true}))
                .unwrap();
        let mut out = Vec::new();
        container_security_context(&allowed, "spec.containers[0]", &mut out);
        assert!(out.is_empty(), "{:?}", rendered(&out));
    }

    #[test]
    fn security_context_ids_and_profiles() {
        let s = spec(json!({"containers": [], "securityContext": {
            "runAsUser": -1, "supplementalGroups": [1, 2147483648i64], "fsGroupChangePolicy": "Sometimes",
            "seccompProfile": {"type": "Localhost"}}}));
        let mut out = Vec::new();
        pod_security_context(s.security_context.as_ref().unwrap(), &mut out);
        assert_eq!(
            rendered(&out),
            [
                "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
                "spec.securityContext.supplementalGroups[1]: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive",
                "spec.securityContext.fsGroupChangePolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnRootMismatch\"",
                "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
            ]
        );
    }

    #[test]
    fn dns_none_needs_a_config() {
        let mut out = Vec::new();
        dns_config(
            &spec(json!({"containers": [], "dnsPolicy": "None"})),
            &mut out,
        );
        dns_config(
            &spec(
                json!({"containers": [], "dnsConfig": {"nameservers": ["1.1.1.1", "2.2.2.2", "3.3.3.3", "nope"], "options": [{"value": "2"}]}}),
            ),
            &mut out,
        );
        assert_eq!(
            rendered(&out),
            [
                "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
                "spec.dnsConfig.nameservers: Invalid value: []string{\"1.1.1.1\", \"2.2.2.2\", \"3.3.3.3\", \"nope\"}: must not have more than 3 nameservers",
                "spec.dnsConfig.nameservers[3]: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.dnsConfig.options[0]: Required value: must not be empty",
            ]
        );
    }

    #[test]
    fn names_enums_and_gates() {
        let s = spec(
            json!({"containers": [], "hostname": "Bad.Host", "subdomain": "a.b",
            "activeDeadlineSeconds": 0, "nodeName": "Node_1", "preemptionPolicy": "Sometimes",
            "os": {"name": "plan9"},
            "readinessGates": [{"conditionType": "bad type!"}],
            "schedulingGates": [{"name": "example.com/g"}, {"name": "example.com/g"}]}),
        );
        let mut out = Vec::new();
        gates(&s, &mut out);
        names_before_tolerations(&s, &mut out);
        names_after_tolerations(&s, &mut out);
        let r = rendered(&out);
        assert!(r[0].starts_with("spec.readinessGates[0].conditionType: Invalid value: \"bad type!\": name part must consist of"));
        assert_eq!(
            r[1],
            "spec.schedulingGates[1]: Duplicate value: \"example.com/g\""
        );
        assert!(r[2].starts_with(
            "spec.nodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(
            r[3],
            "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
        );
        assert!(
            r[4].starts_with(
                "spec.hostname: Invalid value: \"Bad.Host\": a lowercase RFC 1123 label"
            )
        );
        assert_eq!(
            r[5],
            "spec.subdomain: Invalid value: \"a.b\": must not contain dots"
        );
        assert_eq!(
            r[6],
            "spec.preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""
        );
        assert_eq!(
            r[7],
            "spec.os: Unsupported value: \"plan9\": supported values: \"linux\", \"windows\""
        );
        assert_eq!(r.len(), 8);
    }
}

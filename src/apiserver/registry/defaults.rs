//! API defaulting for pods (upstream `pkg/apis/core/v1/defaults.go`), applied at decode time,
//! before admission, exactly where kube-apiserver applies it.

use k8s_openapi::api::core::v1::{Container, Pod, PodSecurityContext, ResourceRequirements};

/// `Always` for `:latest` or an untagged image (no digest), else `IfNotPresent`.
pub fn default_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

fn default_container(c: &mut Container) {
    if c.image_pull_policy.is_none() {
        c.image_pull_policy =
            Some(default_pull_policy(c.image.as_deref().unwrap_or_default()).into());
    }
    if c.termination_message_path.is_none() {
        c.termination_message_path = Some("/dev/termination-log".into());
    }
    if c.termination_message_policy.is_none() {
        c.termination_message_policy = Some("File".into());
    }
    for p in c.ports.iter_mut().flatten() {
        if p.protocol.is_none() {
            p.protocol = Some("TCP".into());
        }
    }
    let res = c
        .resources
        .get_or_insert_with(ResourceRequirements::default);
    // A limit without a request becomes the request (SetDefaults_Pod).
    if let Some(limits) = &res.limits {
        let requests = res.requests.get_or_insert_with(Default::default);
        for (k, v) in limits {
            requests.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// Apply the defaults to a pod being created.
pub fn default_pod(pod: &mut Pod) {
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    for c in spec.containers.iter_mut() {
        default_container(c);
    }
    for c in spec.init_containers.iter_mut().flatten() {
        default_container(c);
    }
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.scheduler_name
        .get_or_insert_with(|| "default-scheduler".into());
    spec.termination_grace_period_seconds.get_or_insert(30);
    spec.security_context
        .get_or_insert_with(PodSecurityContext::default);
    spec.enable_service_links.get_or_insert(true);
    if spec.host_network == Some(true) {
        for c in spec.containers.iter_mut() {
            for p in c.ports.iter_mut().flatten() {
                if p.host_port.is_none() {
                    p.host_port = Some(p.container_port);
                }
            }
        }
    }
    for v in spec.volumes.iter_mut().flatten() {
        if let Some(p) = v.projected.as_mut() {
            p.default_mode.get_or_insert(420);
        }
        if let Some(s) = v.secret.as_mut() {
            s.default_mode.get_or_insert(420);
        }
        if let Some(c) = v.config_map.as_mut() {
            c.default_mode.get_or_insert(420);
        }
    }
}

/// The pod's QoS class from its containers' requests and limits (upstream `GetPodQOS`).
pub fn qos_class(pod: &Pod) -> &'static str {
    let Some(spec) = &pod.spec else {
        return "BestEffort";
    };
    let all: Vec<&Container> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &all {
        let res = c.resources.clone().unwrap_or_default();
        let req = res.requests.unwrap_or_default();
        let lim = res.limits.unwrap_or_default();
        let relevant = |m: &std::collections::BTreeMap<
            String,
            k8s_openapi::apimachinery::pkg::api::resource::Quantity,
        >| {
            m.iter()
                .filter(|(k, _)| *k == "cpu" || *k == "memory")
                .count()
        };
        if relevant(&req) > 0 || relevant(&lim) > 0 {
            any = true;
        }
        for r in ["cpu", "memory"] {
            match (req.get(r), lim.get(r)) {
                (Some(a), Some(b)) if a == b => {}
                (None, Some(_)) => {}
                _ => guaranteed = false,
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy() {
        assert_eq!(default_pull_policy("nginx"), "Always");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.25"), "IfNotPresent");
        assert_eq!(default_pull_policy("localhost:5000/nginx"), "Always");
        assert_eq!(default_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }
}

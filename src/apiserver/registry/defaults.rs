//! API defaulting for pods (upstream `pkg/apis/core/v1/defaults.go`), applied at decode time,
//! before admission, exactly where kube-apiserver applies it.

use k8s_openapi::api::core::v1::{
    Container, DownwardAPIVolumeFile, HTTPGetAction, Pod, PodSecurityContext, Probe,
    ResourceRequirements,
};

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

/// `SetDefaults_Probe`: Go's zero is unset, so 0 takes the default as well.
fn default_probe(p: &mut Probe) {
    for (field, default) in [
        (&mut p.timeout_seconds, 1),
        (&mut p.period_seconds, 10),
        (&mut p.success_threshold, 1),
        (&mut p.failure_threshold, 3),
    ] {
        if field.is_none_or(|v| v == 0) {
            *field = Some(default);
        }
    }
    if let Some(h) = p.http_get.as_mut() {
        default_http_get(h);
    }
}

/// `SetDefaults_HTTPGetAction`, for probes and lifecycle hooks alike.
fn default_http_get(h: &mut HTTPGetAction) {
    if h.path.as_deref().is_none_or(str::is_empty) {
        h.path = Some("/".into());
    }
    if h.scheme.as_deref().is_none_or(str::is_empty) {
        h.scheme = Some("HTTP".into());
    }
}

/// `SetDefaults_ObjectFieldSelector`: a field reference without an apiVersion reads v1.
fn default_field_refs<'a>(files: impl Iterator<Item = &'a mut DownwardAPIVolumeFile>) {
    for f in files {
        if let Some(r) = f.field_ref.as_mut()
            && r.api_version.as_deref().is_none_or(str::is_empty)
        {
            r.api_version = Some("v1".into());
        }
    }
}

fn default_container(c: &mut Container) {
    for probe in [
        &mut c.liveness_probe,
        &mut c.readiness_probe,
        &mut c.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
    if let Some(l) = c.lifecycle.as_mut() {
        for hook in [&mut l.post_start, &mut l.pre_stop].into_iter().flatten() {
            if let Some(h) = hook.http_get.as_mut() {
                default_http_get(h);
            }
        }
    }
    for e in c.env.iter_mut().flatten() {
        if let Some(r) = e.value_from.as_mut().and_then(|v| v.field_ref.as_mut())
            && r.api_version.as_deref().is_none_or(str::is_empty)
        {
            r.api_version = Some("v1".into());
        }
    }
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
    c.resources
        .get_or_insert_with(ResourceRequirements::default);
}

/// Apply the defaults to a pod being created: its spec's, then those upstream's `SetDefaults_Pod`
/// keeps to pods — a limit without a request becomes the request, service links are enabled,
/// a host-network pod's ports get their host port — which a pod template does not get.
pub fn default_pod(pod: &mut Pod) {
    default_pod_template(pod);
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    let containers = spec.containers.iter_mut();
    for c in containers.chain(spec.init_containers.iter_mut().flatten()) {
        let res = c
            .resources
            .get_or_insert_with(ResourceRequirements::default);
        if let Some(limits) = &res.limits {
            let requests = res.requests.get_or_insert_with(Default::default);
            for (k, v) in limits {
                requests.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    spec.enable_service_links.get_or_insert(true);
    if spec.host_network == Some(true) {
        let containers = spec.containers.iter_mut();
        for c in containers.chain(spec.init_containers.iter_mut().flatten()) {
            for p in c.ports.iter_mut().flatten() {
                if p.host_port.is_none() {
                    p.host_port = Some(p.container_port);
                }
            }
        }
    }
}

/// The defaults of a pod template (`SetDefaults_PodSpec` and what it calls), for the template
/// a workload embeds: what every pod of it gets, less the pod-only ones of [`default_pod`].
pub fn default_pod_template(pod: &mut Pod) {
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
    for v in spec.volumes.iter_mut().flatten() {
        if let Some(p) = v.projected.as_mut() {
            p.default_mode.get_or_insert(420);
            default_field_refs(
                p.sources
                    .iter_mut()
                    .flatten()
                    .filter_map(|s| s.downward_api.as_mut())
                    .flat_map(|d| d.items.iter_mut().flatten()),
            );
        }
        if let Some(d) = v.downward_api.as_mut() {
            d.default_mode.get_or_insert(420);
            default_field_refs(d.items.iter_mut().flatten());
        }
        // `SetDefaults_HostPathVolumeSource`: HostPathUnset, the empty type.
        if let Some(h) = v.host_path.as_mut() {
            h.type_.get_or_insert_with(String::new);
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

    /// What `kubectl get -o yaml` shows of a pod on a real cluster: probes, HTTP hooks, field
    /// references and volume sources with their defaults. Without them `kubectl describe`
    /// printed `timeout=0s period=0s #success=0 #failure=0` for a probe.
    #[test]
    fn probes_hooks_field_refs_and_volumes_take_upstream_defaults() {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({"spec": {
            "containers": [{"name": "c", "image": "nginx:1.27",
                "livenessProbe": {"httpGet": {"port": 80}},
                "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 0, "failureThreshold": 5},
                "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit"}}},
                "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}],
            "volumes": [
                {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                {"name": "data", "hostPath": {"path": "/data"}}]}}))
        .unwrap();
        default_pod(&mut pod);
        let v = serde_json::to_value(&pod).unwrap();
        let c = &v["spec"]["containers"][0];
        assert_eq!(
            c["livenessProbe"],
            serde_json::json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(
            c["readinessProbe"]["periodSeconds"], 10,
            "Go's zero is unset"
        );
        assert_eq!(c["readinessProbe"]["failureThreshold"], 5);
        assert_eq!(
            c["lifecycle"]["preStop"]["httpGet"],
            serde_json::json!({"port": 80, "path": "/quit", "scheme": "HTTP"})
        );
        assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        let vols = &v["spec"]["volumes"];
        assert_eq!(vols[0]["downwardAPI"]["defaultMode"], 420);
        assert_eq!(
            vols[0]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            vols[1]["hostPath"],
            serde_json::json!({"path": "/data", "type": ""})
        );
    }
}

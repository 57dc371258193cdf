//! A container's probes and lifecycle hooks, as upstream's `validateContainers` and
//! `validateInitContainers` check them: one handler each, no negative timings, liveness and
//! startup probes that succeed once, and none of them on an init container that is not a
//! sidecar (`restartPolicy: Always`).

use k8s_openapi::api::core::v1::{Container, Probe};
use serde_json::json;

use crate::apiserver::request::status::Cause;

const NOT_ON_INIT: &str = "may not be set for init containers without restartPolicy=Always";

pub(crate) fn validate_probes(c: &Container, path: &str, out: &mut Vec<Cause>) {
    let init = path.starts_with("spec.initContainers");
    if init && c.restart_policy.as_deref() != Some("Always") {
        for (field, set) in [
            ("lifecycle", c.lifecycle.is_some()),
            ("livenessProbe", c.liveness_probe.is_some()),
            ("readinessProbe", c.readiness_probe.is_some()),
            ("startupProbe", c.startup_probe.is_some()),
        ] {
            if set {
                out.push(Cause::forbidden(&format!("{path}.{field}"), NOT_ON_INIT));
            }
        }
        return;
    }
    if let Some(l) = &c.lifecycle {
        for (hook, h) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
            if let Some(h) = h {
                let handlers = [
                    ("exec", h.exec.is_some()),
                    ("httpGet", h.http_get.is_some()),
                    ("tcpSocket", h.tcp_socket.is_some()),
                    ("sleep", h.sleep.is_some()),
                ];
                one_handler(&handlers, &format!("{path}.lifecycle.{hook}"), out);
            }
        }
    }
    for (field, probe) in [
        ("livenessProbe", &c.liveness_probe),
        ("readinessProbe", &c.readiness_probe),
        ("startupProbe", &c.startup_probe),
    ] {
        let Some(p) = probe else { continue };
        let at = format!("{path}.{field}");
        validate_probe(p, &at, out);
        match field {
            "readinessProbe" => {
                if let Some(t) = p.termination_grace_period_seconds {
                    out.push(Cause::invalid(
                        &format!("{at}.terminationGracePeriodSeconds"),
                        &json!(t),
                        "must not be set for readinessProbes",
                    ));
                }
            }
            _ => {
                // Unset (an object stored before defaults were applied) is Go's zero, which
                // defaulting makes 1.
                let s = p.success_threshold.filter(|s| *s != 0).unwrap_or(1);
                if s != 1 {
                    out.push(Cause::invalid(
                        &format!("{at}.successThreshold"),
                        &json!(s),
                        "must be 1",
                    ));
                }
            }
        }
    }
}

/// `validateHandler`: exactly one way to probe or hook.
fn one_handler(handlers: &[(&str, bool)], at: &str, out: &mut Vec<Cause>) {
    let mut set = handlers.iter().filter(|(_, s)| *s);
    if set.next().is_none() {
        out.push(Cause::required(at, "must specify a handler type"));
    }
    for (name, _) in set {
        out.push(Cause::forbidden(
            &format!("{at}.{name}"),
            "may not specify more than 1 handler type",
        ));
    }
}

/// `validateProbe`.
fn validate_probe(p: &Probe, at: &str, out: &mut Vec<Cause>) {
    let handlers = [
        ("exec", p.exec.is_some()),
        ("httpGet", p.http_get.is_some()),
        ("tcpSocket", p.tcp_socket.is_some()),
        ("grpc", p.grpc.is_some()),
    ];
    one_handler(&handlers, at, out);
    for (field, v) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        if let Some(v) = v.filter(|v| *v < 0) {
            out.push(Cause::invalid(
                &format!("{at}.{field}"),
                &json!(v),
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        out.push(Cause::invalid(
            &format!("{at}.terminationGracePeriodSeconds"),
            &json!(t),
            "must be greater than 0",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(c: serde_json::Value, path: &str) -> Vec<String> {
        let c: Container = serde_json::from_value(c).unwrap();
        let mut out = Vec::new();
        validate_probes(&c, path, &mut out);
        out.iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn probes_as_upstream_validates_them() {
        let ok = json!({"name": "c", "livenessProbe": {"httpGet": {"port": 80}, "successThreshold": 1},
                        "readinessProbe": {"exec": {"command": ["true"]}, "successThreshold": 3}});
        assert!(causes(ok, "spec.containers[0]").is_empty());
        let bad = json!({"name": "c",
            "livenessProbe": {"periodSeconds": 5, "successThreshold": 2},
            "readinessProbe": {"tcpSocket": {"port": 80}, "exec": {"command": ["x"]},
                               "timeoutSeconds": -1, "terminationGracePeriodSeconds": 5},
            "startupProbe": {"grpc": {"port": 9000}, "successThreshold": 1, "terminationGracePeriodSeconds": 0},
            "lifecycle": {"preStop": {}}});
        let got = causes(bad, "spec.containers[0]");
        for want in [
            "spec.containers[0].lifecycle.preStop: Required value: must specify a handler type",
            "spec.containers[0].livenessProbe: Required value: must specify a handler type",
            "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
            "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
            "spec.containers[0].readinessProbe.timeoutSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes",
            "spec.containers[0].startupProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0",
        ] {
            assert!(
                got.iter().any(|g| g.ends_with(want) || g == want),
                "{want}: {got:#?}"
            );
        }
    }

    #[test]
    fn only_a_sidecar_init_container_may_probe() {
        let init = json!({"name": "i", "readinessProbe": {"exec": {"command": ["true"]}}});
        assert_eq!(
            causes(init.clone(), "spec.initContainers[0]"),
            [
                "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
            ]
        );
        let mut sidecar = init;
        sidecar["restartPolicy"] = json!("Always");
        assert!(causes(sidecar, "spec.initContainers[0]").is_empty());
    }
}

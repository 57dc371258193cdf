//! Sends view 4's pod and follows it, off the UI thread, handing every new fact to `report` as
//! it arrives: the handshake, the create response, then (polling the pod and the embedded
//! server's own trace) scheduling, binding and each kubelet transition as they happen, and
//! finally the watch events a controller would have received. The stages themselves are the
//! apiserver branch's `journey::build` over what was collected — nothing here invents one.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::http::ApiClient;
use crate::journey::build::Collected;
use crate::kubeconfig::ResolvedContext;

/// How long to follow the pod before giving up on it running.
const FOLLOW: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(150);

fn handshake_detail(r: &crate::client::HandshakeReport) -> Result<Value, String> {
    if let Some(f) = &r.failure {
        return Err(format!(
            "{} at {}: {} (fix: {})",
            f.cause,
            f.step.label(),
            f.message,
            f.fix
        ));
    }
    Ok(json!({
        "peer": r.peer_address,
        "tls_version": r.tls_version,
        "cipher_suite": r.cipher_suite,
        "alpn": r.alpn,
        "server_verified": r.record.server_verified.as_ref().map(|v| v.is_ok()),
        "client_certificate_sent": r.record.client_certificate_sent,
    }))
}

/// The namespace the pod goes to: its own, else the context's, else default.
pub fn namespace_of(pod: &Value, ctx_namespace: &str) -> String {
    pod.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or(if ctx_namespace.is_empty() {
            "default"
        } else {
            ctx_namespace
        })
        .to_string()
}

/// Runs the journey; `report(collected, done)` is called after every change.
pub async fn run(
    ctx: &ResolvedContext,
    pod: &Value,
    replace_existing: bool,
    report: impl Fn(&Collected, bool),
) {
    let ns = namespace_of(pod, &ctx.namespace);
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut c = Collected {
        pod: format!("{ns}/{name}"),
        server: ctx.cluster.server.clone(),
        ..Default::default()
    };
    let hs = crate::client::handshake(ctx).await;
    c.handshake = Some(match &hs {
        Ok(r) => handshake_detail(r),
        Err(e) => Err(e.to_string()),
    });
    report(&c, false);
    if !hs.as_ref().is_ok_and(|r| r.succeeded()) {
        report(&c, true);
        return;
    }
    let client = match ApiClient::connect(ctx).await {
        Ok(c) => c,
        Err(e) => {
            c.create = Some((0, json!({"message": e.to_string()})));
            report(&c, true);
            return;
        }
    };
    let path = format!("/api/v1/namespaces/{ns}/pods");
    if replace_existing {
        // The embedded cluster keeps the previous run's pod; a workshop re-runs the same
        // manifest, so the old one goes first (never done against a real cluster).
        let _ = client
            .send(
                Method::DELETE,
                &format!("{path}/{name}?gracePeriodSeconds=0"),
                None,
            )
            .await;
    }
    let body = serde_json::to_vec(pod).unwrap_or_default();
    let resp = client
        .send(
            Method::POST,
            &format!("{path}?fieldManager=kexplore"),
            Some((body, "application/json")),
        )
        .await;
    let created = match resp {
        Ok(r) => {
            let v = r.json().unwrap_or(Value::Null);
            c.create = Some((r.status, v.clone()));
            (200..300).contains(&r.status).then_some(v)
        }
        Err(e) => {
            c.create = Some((0, json!({"message": e.to_string()})));
            None
        }
    };
    report(&c, false);
    let Some(created) = created else {
        report(&c, true);
        return;
    };
    let rv = created
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let deadline = Instant::now() + FOLLOW;
    let mut last = String::new();
    loop {
        if let Ok(r) = client.get(&format!("{path}/{name}")).await {
            c.final_pod = r.json();
        }
        if let Ok(r) = client
            .get(&format!("/debug/kexplore/pods/{ns}/{name}"))
            .await
            && r.status == 200
        {
            c.server_trace = r.json();
        }
        let phase = c
            .final_pod
            .as_ref()
            .and_then(|p| p.pointer("/status/phase"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let fingerprint = format!("{phase}{:?}", c.server_trace);
        if fingerprint != last {
            last = fingerprint;
            report(&c, false);
        }
        if matches!(phase.as_str(), "Running" | "Failed" | "Succeeded") || Instant::now() > deadline
        {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    // The watch a scheduler or kubelet had open since the create, replayed from its revision.
    let watch = format!(
        "{path}?watch=true&fieldSelector=metadata.name%3D{name}&resourceVersion={rv}&timeoutSeconds=1"
    );
    if let Ok(r) = client.get(&watch).await {
        c.watch_events = String::from_utf8_lossy(&r.body)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
    }
    let uid = created
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Ok(r) = client
        .get(&format!(
            "/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name},involvedObject.uid%3D{uid}"
        ))
        .await
    {
        c.events = r
            .json()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default();
    }
    report(&c, true);
}

//! `kexplore journey -f WORKLOAD`'s text: the workload's request stages, what each controller
//! did (the objects it created and the Events it recorded), then every pod's own journey.

use std::fmt::Write as _;

use serde_json::Value;

use super::text::{dry_run_line, render, stage_block};
use super::workload_build::WorkloadJourney;

fn s(v: &Value, p: &str) -> String {
    match v.pointer(p) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `Kind name` of each controller reference, for "← owned by".
fn owners(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["controller"] == Value::Bool(true))
        .map(|o| format!("{} {}", s(o, "/kind"), s(o, "/name")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A controller stage's lines: what it created, then its Events.
pub fn controller_lines(d: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for rs in d["replicasets"].as_array().into_iter().flatten() {
        out.push(format!(
            "ReplicaSet {} (pod-template-hash {}, revision {}, replicas {}) ← ownerReferences: {}",
            s(rs, "/name"),
            s(rs, "/pod-template-hash"),
            s(rs, "/revision"),
            s(rs, "/replicas"),
            owners(&rs["ownerReferences"])
        ));
    }
    for p in d["pods"].as_array().into_iter().flatten() {
        let node = match s(p, "/node") {
            n if n.is_empty() => "(no node yet)".to_string(),
            n => n,
        };
        out.push(format!(
            "pod {} on {node}, {} ← ownerReferences: {}",
            s(p, "/name"),
            s(p, "/phase"),
            owners(&p["ownerReferences"])
        ));
    }
    let shown = d["pods"].as_array().map_or(0, Vec::len) as u64;
    if let Some(total) = d["pods_total"].as_u64().filter(|t| *t > shown) {
        out.push(format!("… {} more pod(s) not followed", total - shown));
    }
    if let Some(w) = d["waited"].as_str() {
        out.push(w.to_string());
    }
    for e in d["events"].as_array().into_iter().flatten() {
        // As kubectl's "(x3 over 6s)": one Event that stands for several occurrences.
        let times = match e["count"].as_u64() {
            Some(n) if n > 1 => format!(" (x{n})"),
            _ => String::new(),
        };
        out.push(format!(
            "Event {} {} on {}: {}{times}",
            s(e, "/type"),
            s(e, "/reason"),
            s(e, "/object"),
            s(e, "/message")
        ));
    }
    out
}

pub fn render_workload(j: &WorkloadJourney) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} via {}",
        j.workload.kind, j.workload.name, j.first.server
    );
    if j.first.dry_run == Some(true) {
        let so = ", so no controller acts on it and no pod exists";
        let line = dry_run_line(&j.first, j.succeeded(), &j.workload.kind, so);
        let _ = writeln!(out, "{line}");
    }
    for st in &j.workload.stages {
        if st.stage.is_controller() {
            out.push_str(&stage_block(&super::StageReport {
                detail: Value::Null,
                ..st.clone()
            }));
            for line in st
                .detail
                .get("explanation")
                .and_then(Value::as_str)
                .map(String::from)
                .into_iter()
                .chain(controller_lines(&st.detail))
            {
                let _ = writeln!(out, "    {line}");
            }
        } else {
            out.push_str(&stage_block(st));
        }
    }
    if !j.pods.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "{} pod(s), each on its own journey:", j.pods.len());
    }
    for p in &j.pods {
        let _ = writeln!(out);
        out.push_str(&render(p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_standing_for_several_says_how_many() {
        let d = json!({"events": [
            {"type": "Normal", "reason": "SuccessfulCreate", "object": "ReplicaSet web-1",
             "message": "Created pod: web-1-a", "count": 1},
            {"type": "Normal", "reason": "SuccessfulCreate", "object": "ReplicaSet web-1",
             "message": "(combined from similar events): Created pod: web-1-b", "count": 3},
        ]});
        assert_eq!(
            controller_lines(&d),
            [
                "Event Normal SuccessfulCreate on ReplicaSet web-1: Created pod: web-1-a",
                "Event Normal SuccessfulCreate on ReplicaSet web-1: (combined from similar events): Created pod: web-1-b (x3)",
            ]
        );
    }

    #[test]
    fn a_dry_run_says_whether_the_server_refused_or_never_answered() {
        use crate::journey::build::Collected;
        use crate::journey::workload::WorkloadCollected;
        use crate::journey::workload_build::build_workload;
        let header = |request: Collected| {
            let j = build_workload(&WorkloadCollected {
                kind: "Deployment".into(),
                name: "default/web".into(),
                request: Collected {
                    pod: "default/web".into(),
                    server: "https://x".into(),
                    dry_run: true,
                    ..request
                },
                ..Default::default()
            });
            render_workload(&j)
                .lines()
                .nth(1)
                .unwrap_or_default()
                .to_string()
        };
        let refused = header(Collected {
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((403, json!({"kind": "Status", "code": 403}))),
            ..Default::default()
        });
        assert!(
            refused.contains("the server refused the Deployment"),
            "{refused}"
        );
        let unsent = header(Collected {
            handshake: Some(Err("unknown-authority".into())),
            ..Default::default()
        });
        assert!(unsent.contains("the request got no answer"), "{unsent}");
        let passed = header(Collected {
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((201, json!({"metadata": {"uid": "u"}}))),
            ..Default::default()
        });
        assert!(passed.contains("--for-real creates it"), "{passed}");
    }
}

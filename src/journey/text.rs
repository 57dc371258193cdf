//! The journey as text: one block per stage, with its source so a reader knows what was seen,
//! what the server reported, and what is only explained.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Journey, Source, Status};

fn mark(s: Status) -> &'static str {
    match s {
        Status::Ok => "✓",
        Status::Failed => "✗",
        Status::Skipped => "-",
    }
}

fn source(s: Source) -> &'static str {
    match s {
        Source::Observed => "observed",
        Source::Reported => "reported",
        Source::Inferred => "inferred",
    }
}

fn s(v: &Value, p: &str) -> String {
    match v.pointer(p) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// One-line summary of a stage's detail.
fn summary(stage: &str, d: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = d
        .get("explanation")
        .or_else(|| d.get("note"))
        .and_then(Value::as_str)
    {
        out.push(e.to_string());
    }
    let words_only = d.as_object().is_none_or(|o| {
        o.iter()
            .all(|(k, v)| matches!(k.as_str(), "explanation" | "note" | "dryRun") || v.is_null())
    });
    if words_only {
        return out;
    }
    if let Some(changed) = d["changed_fields"].as_array().filter(|c| !c.is_empty()) {
        // The full list is in the JSON; a line of text names the first few.
        let fields: Vec<&str> = changed.iter().filter_map(Value::as_str).take(6).collect();
        let more = changed.len().saturating_sub(fields.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out.push(format!(
            "the server set or changed: {}{more}",
            fields.join(", ")
        ));
    }
    match stage {
        "tls-handshake" => out.push(format!(
            "{} {} (ALPN {}), server chain verified: {}, client certificate requested: {}",
            s(d, "/tls_version"),
            s(d, "/cipher_suite"),
            s(d, "/alpn"),
            s(d, "/server_verified"),
            s(d, "/client_certificate_requested")
        )),
        "authentication" => out.push(format!(
            "{} → user {:?} groups {}",
            s(d, "/method"),
            s(d, "/user"),
            s(d, "/groups")
        )),
        "authorization" => out.push(format!(
            "{} (authorizer: {}) {}",
            s(d, "/decision"),
            s(d, "/authorizer"),
            s(d, "/reason")
        )),
        "admission" => {
            for p in d["plugins"].as_array().cloned().unwrap_or_default() {
                let changed = p["changed"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let msg = s(&p, "/message");
                out.push(format!(
                    "{:<24} {:<9} {}{}",
                    s(&p, "/plugin"),
                    s(&p, "/result"),
                    changed,
                    msg
                ));
            }
        }
        "validation" => {
            let causes = d["causes"].as_array().map(Vec::len).unwrap_or(0);
            out.push(if causes == 0 {
                "no field errors".into()
            } else {
                format!("{causes} field error(s): {}", d["causes"])
            });
        }
        "storage" if d["dryRun"] == Value::Bool(true) => {}
        "storage" => out.push(format!(
            "{} {} at resourceVersion {}",
            s(d, "/operation"),
            s(d, "/key"),
            s(d, "/resourceVersion")
        )),
        "response" if d["dryRun"] == Value::Bool(true) => out.push(format!(
            "HTTP {} (dryRun=All) {}",
            s(d, "/code"),
            s(d, "/status/message")
        )),
        "response" => out.push(format!(
            "HTTP {} resourceVersion {} {}",
            s(d, "/code"),
            s(d, "/resourceVersion"),
            s(d, "/status/message")
        )),
        "watch" => {
            for e in d["events"].as_array().cloned().unwrap_or_default() {
                out.push(format!(
                    "{:<9} rv {:<6} phase {:<8} node {}",
                    s(&e, "/type"),
                    s(&e, "/resourceVersion"),
                    s(&e, "/phase"),
                    s(&e, "/nodeName")
                ));
            }
        }
        "filter" => {
            for f in d["filter"].as_array().cloned().unwrap_or_default() {
                let verdict = if f["passed"] == Value::Bool(true) {
                    "passed".to_string()
                } else {
                    format!("{}: {}", s(&f, "/plugin"), s(&f, "/reasons"))
                };
                out.push(format!("{:<14} {verdict}", s(&f, "/node")));
            }
            let m = s(d, "/message");
            if !m.is_empty() {
                out.push(m);
            }
            if let Some(v) = d["kube_version"].as_str() {
                out.push(format!(
                    "modelled: kube-scheduler {v} default profile (server {})",
                    s(d, "/server_version")
                ));
            }
            for n in d["not_visible"].as_array().cloned().unwrap_or_default() {
                out.push(format!(
                    "not visible to you: {}",
                    n.as_str().unwrap_or_default()
                ));
            }
        }
        "score" => {
            for f in d["score"].as_array().cloned().unwrap_or_default() {
                out.push(format!("{:<14} {}", s(&f, "/node"), s(&f, "/total")));
            }
            out.push(format!("selected {}", s(d, "/selected")));
        }
        "binding" if d.get("simulated_node").is_some() => out.push(format!(
            "the simulation would bind it to {}",
            s(d, "/simulated_node")
        )),
        "binding" => out.push(format!("node {} {}", s(d, "/node"), s(d, "/event"))),
        "kubelet" => {
            for k in d["steps"].as_array().cloned().unwrap_or_default() {
                out.push(format!("{:<18} {}", s(&k, "/step"), k["detail"]));
            }
            out.push(format!(
                "phase {}{}",
                s(d, "/phase"),
                if d["simulated"] == Value::Bool(true) {
                    " (simulated kubelet: no container runs)"
                } else {
                    ""
                }
            ));
        }
        _ => {}
    }
    if let Some(e) = d.get("error").and_then(Value::as_str) {
        out.push(format!("error: {e}"));
    }
    out
}

pub fn render(j: &Journey) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pod {} via {}", j.pod, j.server);
    if j.dry_run == Some(true) {
        let _ = writeln!(
            out,
            "dry run (dryRun=All): the server checked the pod and stored nothing; --for-real creates it"
        );
    }
    for st in &j.stages {
        let _ = writeln!(
            out,
            "{} {:<15} [{}]",
            mark(st.status),
            st.stage,
            source(st.source)
        );
        let has_words = st
            .detail
            .get("explanation")
            .or_else(|| st.detail.get("note"))
            .is_some();
        if st.status == Status::Skipped && !has_words {
            continue; // nothing happened at this stage: no detail lines
        }
        for line in summary(st.stage, &st.detail) {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(c) = &j.cleanup {
        let _ = match (c["deleted"].as_bool(), c["error"].as_str()) {
            (Some(true), _) => writeln!(out, "cleanup: pod {} deleted", j.pod),
            (_, Some(e)) => writeln!(out, "cleanup: the delete failed: {e}"),
            _ => writeln!(out, "cleanup: the delete answered HTTP {}", c["code"]),
        };
    }
    out
}

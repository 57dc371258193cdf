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
        return vec![e.to_string()];
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
        "storage" => out.push(format!(
            "{} {} at resourceVersion {}",
            s(d, "/operation"),
            s(d, "/key"),
            s(d, "/resourceVersion")
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
        }
        "score" => {
            for f in d["score"].as_array().cloned().unwrap_or_default() {
                out.push(format!("{:<14} {}", s(&f, "/node"), s(&f, "/total")));
            }
            out.push(format!("selected {}", s(d, "/selected")));
        }
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
    out
}

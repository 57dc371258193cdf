//! The journey as text: one block per stage, with its source so a reader knows what was seen,
//! what the server reported, and what is only explained.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Journey, Source, Stage, StageReport, Status, words};
use crate::wrap::wrap;

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

/// The widest line `render` writes, in characters; diff values are cut to fit.
pub const LINE_WIDTH: usize = 100;
/// Detail lines sit under their stage, indented this far.
const INDENT: usize = 4;
/// A diff longer than this is cut, with a count of the rest.
const MAX_DIFF_LINES: usize = 24;

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One admission change as a diff line no wider than `width`: `+ path: value` for a field or
/// list element added, `~ path: old → new` for one changed, `- path: old` for one removed.
/// The path stays whole (it says where); the values share what room is left.
fn diff_line(c: &Value, width: usize) -> String {
    let path = c["path"].as_str().unwrap_or_default();
    let (sign, values) = match (c["old"].as_str(), c["new"].as_str()) {
        (None, Some(new)) => ('+', vec![new]),
        (Some(old), Some(new)) => ('~', vec![old, new]),
        (Some(old), None) => ('-', vec![old]),
        (None, None) => ('~', vec![]),
    };
    let head = format!("  {sign} {path}: ");
    let arrow = " → ";
    let fixed = head.chars().count()
        + if values.len() == 2 {
            arrow.chars().count()
        } else {
            0
        };
    let room = width.saturating_sub(fixed).max(2);
    let line = match values.as_slice() {
        [one] => format!("{head}{}", cut(one, room)),
        [old, new] => {
            // Each value gets half the room, and whatever the other leaves unused.
            let old_cut = cut(old, room - new.chars().count().min(room / 2));
            let new_room = room.saturating_sub(old_cut.chars().count()).max(1);
            format!("{head}{old_cut}{arrow}{}", cut(new, new_room))
        }
        _ => head.trim_end().trim_end_matches(':').to_string(),
    };
    cut(&line, width)
}

/// One-line summary of a stage's detail.
fn summary(st: &StageReport) -> Vec<String> {
    let (stage, d) = (st.stage, &st.detail);
    let mut out = Vec::new();
    if let Some(e) = d
        .get("explanation")
        .or_else(|| d.get("note"))
        .and_then(Value::as_str)
    {
        // A sentence wraps at a word; quoted output (kubectl's line) and diffs stay whole.
        out.extend(wrap(e, LINE_WIDTH - INDENT, "").lines().map(String::from));
    }
    if st.only_words() {
        return out;
    }
    let diffed = d["changes"].as_array().is_some_and(|c| !c.is_empty());
    if let Some(changed) = d["changed_fields"]
        .as_array()
        .filter(|c| !c.is_empty() && !diffed)
    {
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
        // A failed handshake has no version or cipher to show: its error line says it all.
        // Its error line, below, says why.
        Stage::TlsHandshake | Stage::Response if d.get("error").is_some() => {}
        // A controller's pod: the note says why this client has no handshake or response.
        Stage::TlsHandshake | Stage::Response if d.get("created_by").is_some() => {}
        Stage::TlsHandshake => out.push(format!(
            "{} {} (ALPN {}), server chain verified: {}, client certificate requested: {}",
            s(d, "/tls_version"),
            s(d, "/cipher_suite"),
            s(d, "/alpn"),
            s(d, "/server_verified"),
            s(d, "/client_certificate_requested")
        )),
        Stage::Authentication => out.push(format!(
            "{} → user {:?} groups {}",
            s(d, "/method"),
            s(d, "/user"),
            s(d, "/groups")
        )),
        // Every authorizer had no opinion: none is named, and the request is what was refused.
        Stage::Authorization if s(d, "/authorizer").is_empty() => {
            let ns = s(d, "/attributes/namespace");
            let sub = s(d, "/attributes/subresource");
            out.push(format!(
                "{}: no authorizer in the chain allowed {} {}{}{}",
                s(d, "/decision"),
                s(d, "/attributes/verb"),
                s(d, "/attributes/resource"),
                if sub.is_empty() {
                    String::new()
                } else {
                    format!("/{sub}")
                },
                if ns.is_empty() {
                    String::new()
                } else {
                    format!(" in namespace {ns}")
                },
            ))
        }
        Stage::Authorization => out.push(
            format!(
                "{} (authorizer: {}) {}",
                s(d, "/decision"),
                s(d, "/authorizer"),
                s(d, "/reason")
            )
            .trim_end()
            .to_string(),
        ),
        Stage::Admission => {
            for p in d["plugins"].as_array().cloned().unwrap_or_default() {
                let changes = p["changes"].as_array().filter(|c| !c.is_empty());
                // Without recorded values (an older server), the changed paths stand alone.
                let paths = match changes {
                    Some(_) => String::new(),
                    None => p["changed"]
                        .as_array()
                        .map(|c| {
                            c.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default(),
                };
                let line = format!(
                    "{:<24} {:<9} {paths}{}",
                    s(&p, "/plugin"),
                    s(&p, "/result"),
                    s(&p, "/message")
                );
                out.push(line.trim_end().to_string());
                for c in changes.into_iter().flatten() {
                    out.push(diff_line(c, LINE_WIDTH - INDENT));
                }
            }
            // A server without a trace: the returned object against the manifest, as one diff.
            let changes = d["changes"].as_array().cloned().unwrap_or_default();
            for c in changes.iter().take(MAX_DIFF_LINES) {
                out.push(diff_line(c, LINE_WIDTH - INDENT));
            }
            if changes.len() > MAX_DIFF_LINES {
                out.push(format!(
                    "  … and {} more (-o json lists them all)",
                    changes.len() - MAX_DIFF_LINES
                ));
            }
        }
        Stage::Validation => {
            let causes = d["causes"].as_array().map(Vec::len).unwrap_or(0);
            out.push(if causes == 0 {
                "no field errors".into()
            } else {
                format!("{causes} field error(s): {}", d["causes"])
            });
        }
        Stage::Storage if d["dryRun"] == Value::Bool(true) => {}
        Stage::Storage if d.get("etcdctl").is_some() && d.get("error").is_some() => {
            out.push(format!(
                "{} in etcd: key {}, not written (below)",
                s(d, "/operation"),
                s(d, "/etcdKey")
            ));
            out.push(format!("what the key holds: {}", s(d, "/etcdctl")));
        }
        Stage::Storage if d.get("etcdctl").is_some() => {
            out.push(format!(
                "{} in etcd: key {}, revision {} (the transaction's; the resourceVersion)",
                s(d, "/operation"),
                s(d, "/etcdKey"),
                s(d, "/etcdRevision")
            ));
            out.push(format!("read it back: {}", s(d, "/etcdctl")));
        }
        // A remote server's write: only the resourceVersion its answer carries is known.
        Stage::Storage if d.get("key").is_none() => {
            out.push(format!("resourceVersion {}", s(d, "/resourceVersion")))
        }
        // A refused write has no resourceVersion: its error line, below, says why.
        Stage::Storage => {
            let mut line = format!("{} {}", s(d, "/operation"), s(d, "/key"));
            let rv = s(d, "/resourceVersion");
            if !rv.is_empty() {
                line.push_str(&format!(" at resourceVersion {rv}"));
            }
            out.push(line);
        }
        // Code 0: the request never got an answer (no credential, connection refused).
        Stage::Response if d["code"] == json!(0) => {
            out.push(format!("no HTTP response: {}", s(d, "/status/message")))
        }
        Stage::Response => {
            // Only what the answer carries: a success has no Status message, a failure and a
            // dry run no resourceVersion.
            let mut line = format!("HTTP {}", s(d, "/code"));
            if d["dryRun"] == Value::Bool(true) {
                line.push_str(" (dryRun=All)");
            } else if !s(d, "/resourceVersion").is_empty() {
                line.push_str(&format!(" resourceVersion {}", s(d, "/resourceVersion")));
            }
            let message = s(d, "/status/message");
            if !message.is_empty() {
                line.push_str(&format!(" {message}"));
            }
            out.push(line);
        }
        Stage::Watch => {
            for e in d["events"].as_array().cloned().unwrap_or_default() {
                out.push(format!(
                    "{:<9} rv {:<6} phase {:<8} node {}",
                    s(&e, "/type"),
                    s(&e, "/resourceVersion"),
                    s(&e, "/phase"),
                    match s(&e, "/nodeName") {
                        n if n.is_empty() => "(none yet)".to_string(),
                        n => n,
                    }
                ));
            }
        }
        Stage::Filter => {
            for f in d["filter"].as_array().cloned().unwrap_or_default() {
                let verdict = if f["passed"] == Value::Bool(true) {
                    "passed".to_string()
                } else {
                    format!("{}: {}", s(&f, "/plugin"), words::reasons(&f))
                };
                out.push(format!("{:<14} {verdict}", s(&f, "/node")));
            }
            let m = s(d, "/message");
            if !m.is_empty() {
                out.push(m);
            }
            if let Some(r) = d["release"].as_str() {
                out.push(format!("{r}; its default profile"));
            } else if let Some(v) = d["kube_version"].as_str() {
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
        Stage::Score => {
            for f in d["score"].as_array().cloned().unwrap_or_default() {
                out.push(format!("{:<14} {}", s(&f, "/node"), s(&f, "/total")));
            }
            let selected = s(d, "/selected");
            if !selected.is_empty() {
                out.push(format!("selected {selected}"));
            }
            if let Some(how) = d["tie_break"].as_str() {
                out.push(format!("chosen   {how}"));
            }
            if d["spread"].is_object() {
                out.extend(super::spread_text::lines(&d["spread"]));
            }
            if let Some(cmp) = d.get("comparison").filter(|c| c.is_object()) {
                out.extend(comparison(cmp));
            }
        }
        Stage::Binding if d.get("simulated_node").is_some() => out.push(format!(
            "{} {}",
            crate::journey::SIMULATED_BINDING,
            s(d, "/simulated_node")
        )),
        // Not bound: the note says so (and why, when the scheduler said).
        Stage::Binding if s(d, "/node").is_empty() => {}
        Stage::Binding => out.push(format!("node {} {}", s(d, "/node"), s(d, "/event"))),
        Stage::Kubelet => {
            for k in d["steps"].as_array().cloned().unwrap_or_default() {
                out.push(format!(
                    "{:<18} {}",
                    s(&k, "/step"),
                    words::key_values(&k["detail"])
                ));
            }
            // A note (no node to run it) already said what the phase is.
            if d.get("note").is_none() {
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
        }
        _ => {}
    }
    if let Some(e) = d.get("error").and_then(Value::as_str) {
        out.push(format!("error: {e}"));
    }
    for line in d["kubectl_get_says"].as_array().into_iter().flatten() {
        out.push(format!(
            "kubectl get says: {}",
            line.as_str().unwrap_or_default()
        ));
    }
    if let Some(e) = d.get("simulation_error").and_then(Value::as_str) {
        out.push(format!("the simulation could not run: {e}"));
    }
    out
}

/// The real scheduler's node next to the simulation's, and why they may differ.
fn comparison(cmp: &Value) -> Vec<String> {
    let actual = s(cmp, "/actual");
    if cmp["agrees"] == Value::Bool(true) {
        return vec![format!(
            "the real scheduler bound it to {actual}: the simulation agrees"
        )];
    }
    let mut out = vec![
        format!(
            "the real scheduler bound it to {actual}, the simulation chose {}",
            match s(cmp, "/simulated") {
                n if n.is_empty() => "no node".to_string(),
                n => n,
            }
        ),
        format!(
            "{actual} in the simulation: {}",
            s(cmp, "/actual_in_simulation")
        ),
    ];
    for r in cmp["reasons"].as_array().into_iter().flatten() {
        out.push(format!("  may differ: {}", r.as_str().unwrap_or_default()));
    }
    out
}

/// One stage: its mark, name and source, then its detail lines (none when it was skipped
/// without a word of why).
pub fn stage_block(st: &super::StageReport) -> String {
    let mut out = format!(
        "{} {:<15} [{}]\n",
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
        return out;
    }
    for line in summary(st) {
        let _ = writeln!(out, "    {line}");
    }
    out
}

/// What a dry run of `what` came to, for the line under the heading. --for-real is offered
/// only when it `passed`: a refused object would meet the same refusal.
pub(super) fn dry_run_line(first: &Journey, passed: bool, what: &str, so: &str) -> String {
    let answered = first
        .stages
        .iter()
        .find(|s| s.stage == Stage::Response)
        .and_then(|s| s.detail["code"].as_u64())
        .is_some_and(|c| c > 0);
    if passed {
        format!(
            "dry run (dryRun=All): the server checked the {what} and stored nothing{so}; --for-real creates it"
        )
    } else if answered {
        format!("dry run (dryRun=All): the server refused the {what} (below) and stored nothing")
    } else {
        "dry run (dryRun=All): the request got no answer (below); nothing was stored".into()
    }
}

pub fn render(j: &Journey) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pod {} via {}", j.pod, j.server);
    if j.dry_run == Some(true) {
        let _ = writeln!(out, "{}", dry_run_line(j, j.succeeded(), "pod", ""));
    }
    for st in &j.stages {
        out.push_str(&stage_block(st));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journey::build::{Collected, build};

    fn journey(admission: Value) -> Journey {
        let mut j = build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((403, json!({"kind": "Status"}))),
            ..Default::default()
        });
        let st = j.stages.iter_mut().find(|s| s.stage == Stage::Admission);
        if let Some(st) = st {
            st.status = Status::Ok;
            st.detail = admission;
        }
        j
    }

    #[test]
    fn a_node_chosen_without_scoring_says_how() {
        let text = render(&build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((201, json!({"metadata": {"uid": "u"}}))),
            server_trace: Some(json!({"controlLoops": {"scheduling": {
                "nodes_total": 4, "filter": [{"node": "node-3", "passed": true}],
                "score": [], "selected": "node-3",
                "tie_break": "the only feasible node: selected without scoring, as kube-scheduler does"
            }}})),
            ..Default::default()
        }));
        assert!(
            text.contains(
                "selected node-3\n    chosen   the only feasible node: selected without scoring"
            ),
            "{text}"
        );
        // A 201 carries no Status message: the response line ends at its last word.
        let response = text.lines().find(|l| l.starts_with("    HTTP 201"));
        assert!(response.is_some_and(|l| !l.ends_with(' ')), "{text:?}");
    }

    #[test]
    fn a_refused_handshake_shows_its_error_and_kubectl_s_line_not_empty_facts() {
        let said = "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority";
        let text = render(&build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Err("unknown-authority at server certificate: …".into())),
            kubectl_says: vec![said.into()],
            dry_run: true,
            ..Default::default()
        }));
        assert!(
            text.contains(&format!("\n    kubectl get says: {said}\n")),
            "{text}"
        );
        assert!(!text.contains("(ALPN )"), "{text}");
        // Nothing was sent: no stage may speak of a create that failed.
        assert!(
            text.contains("the request was never sent: no connection (see the TLS handshake)"),
            "{text}"
        );
        assert!(!text.contains("the create failed"), "{text}");
        assert!(
            text.contains(
                "error: the request was never sent: no connection (see the TLS handshake)"
            ),
            "{text}"
        );
        assert!(!text.contains("HTTP"), "{text}");
        assert!(!text.contains("refused the pod"), "{text}");
        assert!(
            text.contains("dry run (dryRun=All): the request got no answer (below)"),
            "{text}"
        );
    }

    #[test]
    fn admission_changes_print_as_a_diff_with_values_within_100_columns() {
        let long = format!("{{key: {}, operator: Exists}}", "k".repeat(300));
        let text = render(&journey(json!({"plugins": [
            {"plugin": "ServiceAccount", "phase": "mutating", "result": "changed",
             "changed": ["/spec/serviceAccountName", "/spec/dnsPolicy", "/spec/tolerations"],
             "changes": [
                {"path": "/spec/serviceAccountName", "old": null, "new": "default"},
                {"path": "/spec/dnsPolicy", "old": "Default", "new": "ClusterFirst"},
                {"path": "/spec/tolerations/0", "old": null, "new": long},
                {"path": "/spec/nodeName", "old": "node-1", "new": null},
                {"path": "/metadata/annotations/a", "old": "x".repeat(200), "new": "y".repeat(200)}
             ]},
            {"plugin": "Priority", "phase": "mutating", "result": "unchanged"}
        ]})));
        assert!(
            text.contains("      + /spec/serviceAccountName: default\n"),
            "{text}"
        );
        assert!(
            text.contains("      ~ /spec/dnsPolicy: Default → ClusterFirst\n"),
            "{text}"
        );
        assert!(text.contains("      - /spec/nodeName: node-1\n"), "{text}");
        let tol = text
            .lines()
            .find(|l| l.contains("/spec/tolerations/0"))
            .unwrap_or_default();
        assert!(
            tol.starts_with("      + /spec/tolerations/0: {key: kkk"),
            "{tol}"
        );
        assert!(tol.ends_with('…'), "{tol}");
        let both = text
            .lines()
            .find(|l| l.contains("/metadata/annotations/a"))
            .unwrap_or_default();
        assert!(
            both.contains("x… → yyy"),
            "both values keep a share: {both}"
        );
        for line in text.lines() {
            assert!(line.chars().count() <= LINE_WIDTH, "too wide: {line}");
        }
        // Values, not bare paths, once the server recorded them.
        assert!(!text.contains("/spec/serviceAccountName, "), "{text}");
        assert!(
            text.contains("    Priority                 unchanged\n"),
            "{text}"
        );
    }

    #[test]
    fn a_server_without_a_trace_gets_the_manifest_diffed_against_its_answer() {
        let changes: Vec<Value> = (0..30)
            .map(|i| json!({"path": format!("/metadata/labels/l{i}"), "old": null, "new": "v"}))
            .collect();
        let text = render(&journey(json!({
            "explanation": "mutating admission ran",
            "changed_fields": ["/metadata/labels"],
            "changes": changes,
        })));
        assert!(text.contains("      + /metadata/labels/l0: v\n"), "{text}");
        assert!(
            text.contains("… and 6 more (-o json lists them all)"),
            "{text}"
        );
        assert!(!text.contains("the server set or changed"), "{text}");
    }

    #[test]
    fn a_diff_line_never_exceeds_its_width() {
        for width in [10, 40, 96] {
            for (old, new) in [
                (Some("a".repeat(500)), Some("b".repeat(3))),
                (None, Some("é".repeat(500))),
                (Some("c".repeat(500)), None),
            ] {
                let c =
                    json!({"path": format!("/spec/{}", "p".repeat(60)), "old": old, "new": new});
                assert!(diff_line(&c, width).chars().count() <= width);
            }
        }
    }

    #[test]
    fn a_refused_dry_run_does_not_offer_for_real() {
        let text = render(&build(&Collected {
            pod: "default/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((
                409,
                json!({"kind": "Status", "reason": "AlreadyExists", "message": "pods \"app\" already exists", "code": 409}),
            )),
            dry_run: true,
            ..Default::default()
        }));
        assert!(
            text.contains(
                "dry run (dryRun=All): the server refused the pod (below) and stored nothing"
            ),
            "{text}"
        );
        assert!(!text.contains("--for-real creates it"), "{text}");
    }

    #[test]
    fn a_denial_no_authorizer_made_names_the_request_not_an_empty_authorizer() {
        let mut j = build(&Collected {
            pod: "kube-system/app".into(),
            server: "https://x".into(),
            handshake: Some(Ok(json!({"tls_version": "TLSv1.3"}))),
            create: Some((403, json!({"kind": "Status", "code": 403}))),
            ..Default::default()
        });
        if let Some(st) = j
            .stages
            .iter_mut()
            .find(|s| s.stage == Stage::Authorization)
        {
            st.status = Status::Failed;
            st.source = Source::Reported;
            st.detail = json!({"authorizer": "", "decision": "forbid", "reason": "",
                "attributes": {"verb": "create", "resource": "pods", "subresource": "",
                               "namespace": "kube-system"}});
        }
        let text = render(&j);
        assert!(
            text.contains("    forbid: no authorizer in the chain allowed create pods in namespace kube-system\n"),
            "{text}"
        );
        assert!(!text.contains("(authorizer: )"), "{text}");
    }

    #[test]
    fn a_pending_pods_filter_and_watch_read_as_words() {
        let filter = StageReport {
            stage: Stage::Filter,
            status: Status::Failed,
            source: Source::Reported,
            detail: json!({"filter": [{"node": "node-1", "passed": false,
                "plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu", "Insufficient memory"]}]}),
        };
        assert_eq!(
            summary(&filter)[0],
            "node-1         NodeResourcesFit: Insufficient cpu, Insufficient memory"
        );
        let watch = StageReport {
            stage: Stage::Watch,
            status: Status::Ok,
            source: Source::Observed,
            detail: json!({"events": [{"type": "MODIFIED", "resourceVersion": "513",
                "phase": "Pending", "nodeName": null}]}),
        };
        assert_eq!(
            summary(&watch)[0],
            "MODIFIED  rv 513    phase Pending  node (none yet)"
        );
    }

    #[test]
    fn kubelet_steps_read_as_key_values_and_a_pod_with_no_node_says_why() {
        let ran = StageReport {
            stage: Stage::Kubelet,
            status: Status::Ok,
            source: Source::Reported,
            detail: json!({"phase": "Running", "simulated": true, "steps": [
                {"step": "ContainerCreating", "detail": {"hostIP": "10.0.0.13", "node": "node-3"}}]}),
        };
        let lines = summary(&ran);
        assert_eq!(lines[0], "ContainerCreating  hostIP=10.0.0.13 node=node-3");
        assert_eq!(
            lines[1],
            "phase Running (simulated kubelet: no container runs)"
        );
        let pending = StageReport {
            stage: Stage::Kubelet,
            status: Status::Skipped,
            source: Source::Observed,
            detail: json!({"phase": "Pending", "note": "no node, so no kubelet runs it: the pod stays Pending"}),
        };
        assert_eq!(
            summary(&pending),
            ["no node, so no kubelet runs it: the pod stays Pending"]
        );
        let unscored = StageReport {
            stage: Stage::Score,
            status: Status::Skipped,
            source: Source::Reported,
            detail: json!({"note": "not run: no node passed the filter", "score": [], "selected": null}),
        };
        assert_eq!(summary(&unscored), ["not run: no node passed the filter"]);
    }

    #[test]
    fn a_refused_write_names_no_resource_version() {
        let refused = StageReport {
            stage: Stage::Storage,
            status: Status::Failed,
            source: Source::Reported,
            detail: json!({"operation": "create", "key": "/registry/pods/default/app",
                           "error": "pods \"app\" already exists"}),
        };
        let lines = summary(&refused);
        assert_eq!(lines[0], "create /registry/pods/default/app", "{lines:?}");
        let mut on_etcd = refused.clone();
        on_etcd.detail["etcdKey"] = json!("/registry/pods/default/app");
        on_etcd.detail["etcdctl"] = json!("etcdctl get /registry/pods/default/app");
        let lines = summary(&on_etcd);
        assert_eq!(
            lines[..2],
            [
                "create in etcd: key /registry/pods/default/app, not written (below)",
                "what the key holds: etcdctl get /registry/pods/default/app"
            ],
            "{lines:?}"
        );
    }
}

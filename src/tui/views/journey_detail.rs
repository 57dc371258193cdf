//! The right-hand pane of view 4: what one stage did, in words and numbers, read from the
//! stage's detail as the journey reported it. Admission shows each plugin's changes as a diff
//! (the value before from the manifest, after from the stored pod the 201 returned).

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::journey::{source_word, text};
use crate::journey::run::{WriteMode, namespace_of};
use crate::journey::{Source, Stage, StageReport, Status};
use crate::tui::journey::request;
use crate::tui::state::AppState;
use crate::tui::theme::Theme;
use crate::tui::widgets::field;

fn row(label: &str, value: impl Into<String>, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    field::lines(label, 17, &value.into(), width, theme.label, theme.text)
}

fn note(s: impl Into<String>, theme: &Theme) -> Line<'static> {
    Line::styled(s.into(), theme.muted)
}

/// Lines no wider than `width`: a one-style line that is wider (a note) wraps, never cut.
fn fit(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        if l.width() <= width || l.spans.len() != 1 {
            out.push(l);
            continue;
        }
        let style = l.spans[0].style;
        let text = l.spans[0].content.to_string();
        out.extend(
            field::wrap(&text, width.max(1))
                .into_iter()
                .map(|t| Line::styled(t, style)),
        );
    }
    out
}

pub fn request(state: &AppState, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    fit(request_lines(state, width, theme), width)
}

fn request_lines(state: &AppState, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let j = &state.journey;
    let mut out = Vec::new();
    let pod = match &j.manifest {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            out.extend(field::lines("✗", 2, e, width, theme.error, theme.error));
            out.push(note("e edits the manifest", theme));
            return out;
        }
        None => return vec![note("no manifest", theme)],
    };
    let server = state
        .active
        .as_ref()
        .and_then(|a| a.resolved.as_ref().ok())
        .map_or(String::new(), |f| f.server.clone());
    let ctx_ns = state
        .active
        .as_ref()
        .and_then(|a| a.resolved.as_ref().ok())
        .map_or(String::new(), |f| f.namespace.clone());
    let ns = namespace_of(pod, &ctx_ns);
    let file = j
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("pod.json")
        .to_string();
    // What Space does comes first: on a short screen it is the line that must not scroll away.
    let (sentence, warn) = j.space_sentence(&server);
    let style = if warn { theme.warn } else { theme.muted };
    out.extend(field::lines("", 0, &sentence, width, style, style));
    out.extend(row("manifest", j.path.display().to_string(), width, theme));
    // The request lines show what was (or Space will be) sent, dry run included.
    let dry_run = j.shown_write() == WriteMode::DryRun;
    // A workload goes to its own collection under apps/v1.
    let to_collection = |l: String| match crate::journey::workload::kind_of(pod) {
        Some((resource, _)) => l.replace(
            &format!("/api/v1/namespaces/{ns}/pods"),
            &format!("/apis/apps/v1/namespaces/{ns}/{resource}"),
        ),
        None => l,
    };
    out.push(Line::styled("as curl (the seed):", theme.label));
    out.extend(field::lines(
        "",
        2,
        &to_collection(request::curl(&server, &ns, &file, dry_run)),
        width,
        theme.text,
        theme.text,
    ));
    out.push(Line::styled("as kubectl sends it:", theme.label));
    for l in request::kubectl(&ns, &file, dry_run)
        .into_iter()
        .map(to_collection)
    {
        out.extend(field::lines("", 2, &l, width, theme.text, theme.text));
    }
    out.push(Line::styled("body:", theme.label));
    let body = serde_json::to_string(pod).unwrap_or_default();
    out.extend(field::lines("", 2, &body, width, theme.muted, theme.muted));
    out
}

pub fn stage(state: &AppState, s: &StageReport, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    fit(stage_lines(state, s, width, theme), width)
}

fn stage_lines(
    state: &AppState,
    s: &StageReport,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let d = &s.detail;
    let mut out = Vec::new();
    if let Some(label) = inferred_label(s) {
        out.push(note(label, theme));
    }
    // A stage that did not take place, with the server's or the run's word of why (a pod a
    // controller wrote in-process has no handshake, no credentials, no response of ours).
    if let Some(n) = d.get("note").and_then(Value::as_str)
        && s.status == Status::Skipped
    {
        out.extend(field::lines("", 0, n, width, theme.muted, theme.muted));
        return out;
    }
    // An inferred stage that did not take place has no values of its own, only the reason: rows
    // of dashes between "why:" and the reason read as if the why were missing.
    if s.status == Status::Skipped
        && s.source == Source::Inferred
        && let Some(why) = d.get("explanation").and_then(Value::as_str)
    {
        out.extend(field::lines("", 0, why, width, theme.muted, theme.muted));
        if let (Stage::Binding, Some(node)) = (s.stage, d["simulated_node"].as_str()) {
            out.extend(row(
                "simulated",
                format!("{} {node}", crate::journey::SIMULATED_BINDING),
                width,
                theme,
            ));
        }
        return out;
    }
    // An inferred stage that has only words (a remote server's, or one a refusal's answer
    // points at): the rows of values it does not have would read as dashes, or as raw JSON.
    if s.source == Source::Inferred && s.only_words() {
        for w in ["explanation", "note"]
            .iter()
            .filter_map(|k| d[*k].as_str())
        {
            out.extend(field::lines("", 0, w, width, theme.muted, theme.muted));
        }
        return out;
    }
    match s.stage {
        Stage::TlsHandshake => {
            if let Some(e) = d.get("error") {
                out.extend(field::lines(
                    "✗",
                    2,
                    &text(d, "error"),
                    width,
                    theme.error,
                    theme.error,
                ));
                let _ = e;
            } else {
                out.extend(row("version", text(d, "tls_version"), width, theme));
                out.extend(row("cipher", text(d, "cipher_suite"), width, theme));
                out.extend(row("ALPN", text(d, "alpn"), width, theme));
                out.extend(row(
                    "server cert",
                    if d["server_verified"] == Value::Bool(true) {
                        "✓ verified against the kubeconfig's CA"
                    } else {
                        "✗ not verified"
                    },
                    width,
                    theme,
                ));
                out.extend(row(
                    "client cert",
                    if d["client_certificate_sent"] == Value::Bool(true) {
                        "✓ sent"
                    } else {
                        "none sent"
                    },
                    width,
                    theme,
                ));
                out.push(note(
                    "view 3 walks through this handshake step by step",
                    theme,
                ));
            }
        }
        Stage::Authentication => {
            out.extend(row("user", text(d, "user"), width, theme));
            out.extend(row(
                "groups",
                d["groups"]
                    .as_array()
                    .map(|g| {
                        g.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default(),
                width,
                theme,
            ));
            out.extend(row("method", text(d, "method"), width, theme));
            if let Some(c) = d.get("client_certificate") {
                out.extend(row("certificate", text(c, "subject"), width, theme));
                out.extend(row("issuer", text(c, "issuer"), width, theme));
                out.push(note("CN → user, O → groups; every authenticated user also gets system:authenticated", theme));
            }
            if let Some(e) = d.get("explanation") {
                out.extend(field::lines(
                    "",
                    0,
                    e.as_str().unwrap_or(""),
                    width,
                    theme.muted,
                    theme.muted,
                ));
            }
        }
        Stage::Authorization => {
            out.extend(row("decision", text(d, "decision"), width, theme));
            let authorizer = text(d, "authorizer");
            // A denial no authorizer made: each one had no opinion.
            let by = if d["authorizer"].as_str().is_some_and(str::is_empty) {
                "none allowed it (each had no opinion)".to_string()
            } else {
                authorizer.clone()
            };
            out.extend(row("authorizer", by, width, theme));
            let a = &d["attributes"];
            out.extend(row(
                "request",
                format!(
                    "{} {} in namespace {}",
                    text(a, "verb"),
                    text(a, "resource"),
                    text(a, "namespace")
                ),
                width,
                theme,
            ));
            let reason = text(d, "reason");
            if authorizer == "privileged-group" {
                out.extend(row(
                    "rule",
                    "none needed: the group system:masters bypasses RBAC entirely",
                    width,
                    theme,
                ));
            } else if reason != "—" && !reason.is_empty() {
                out.extend(row("rule", reason, width, theme));
            }
            if let Some(e) = d.get("explanation") {
                out.extend(field::lines(
                    "",
                    0,
                    e.as_str().unwrap_or(""),
                    width,
                    theme.muted,
                    theme.muted,
                ));
            }
        }
        Stage::Admission => admission(state, d, width, theme, &mut out),
        Stage::Validation => match d["causes"].as_array() {
            Some(c) if c.is_empty() => out.push(Line::styled(
                "✓ the pod is valid: no field errors",
                theme.ok,
            )),
            Some(c) => {
                for cause in c {
                    out.extend(field::lines(
                        "✗",
                        2,
                        &format!("{}: {}", text(cause, "field"), text(cause, "message")),
                        width,
                        theme.error,
                        theme.error,
                    ));
                }
            }
            None => out.extend(field::lines(
                "",
                0,
                &d.to_string(),
                width,
                theme.text,
                theme.text,
            )),
        },
        // The embedded server says which store it wrote to: a real etcd names its key and
        // revision (and how to read it back); its in-memory store only the key. A remote
        // cluster reports nothing here, and kube-apiserver's store is etcd.
        // A refused write: no revision, no uid; on etcd, what the key holds instead.
        Stage::Storage if d.get("error").is_some() => {
            let key = if d.get("etcdKey").is_some() {
                "etcd key"
            } else {
                "store key"
            };
            let at = if d.get("etcdKey").is_some() {
                "etcdKey"
            } else {
                "key"
            };
            out.extend(row(key, text(d, at), width, theme));
            out.extend(row("error", text(d, "error"), width, theme));
            if d.get("etcdctl").is_some() {
                out.extend(row("the key holds", text(d, "etcdctl"), width, theme));
            }
            out.push(note(
                "nothing was written: a resourceVersion and a uid come only with a write",
                theme,
            ));
        }
        Stage::Storage if d.get("etcdctl").is_some() => {
            out.extend(row("etcd key", text(d, "etcdKey"), width, theme));
            out.extend(row("etcd revision", text(d, "etcdRevision"), width, theme));
            out.extend(row("uid", text(d, "uid"), width, theme));
            out.extend(row("read it back", text(d, "etcdctl"), width, theme));
            out.push(note(
                "resourceVersion is etcd's revision: watches resume from it",
                theme,
            ));
        }
        Stage::Storage if d.get("key").is_some() => {
            out.extend(row("store key", text(d, "key"), width, theme));
            out.extend(row(
                "resourceVersion",
                text(d, "resourceVersion"),
                width,
                theme,
            ));
            out.extend(row("uid", text(d, "uid"), width, theme));
            out.push(note(
                "kept in the embedded server's memory (serve --etcd: in a real etcd)",
                theme,
            ));
            out.push(note(
                "resourceVersion is the store's revision: watches resume from it",
                theme,
            ));
        }
        Stage::Storage => {
            out.extend(row(
                "resourceVersion",
                text(d, "resourceVersion"),
                width,
                theme,
            ));
            // An inferred write's explanation, below, says where and what the number is.
            if d.get("explanation").is_none() {
                out.push(note("kube-apiserver stores the object in etcd", theme));
                out.push(note(
                    "resourceVersion is etcd's revision: watches resume from it",
                    theme,
                ));
            }
        }
        Stage::Response => {
            // Code 0: the request went out and no HTTP answer came back.
            let code = d["code"].as_u64().filter(|c| *c > 0);
            out.extend(row(
                "status",
                code.map_or("no answer".into(), |c| c.to_string()),
                width,
                theme,
            ));
            if let Some(e) = d.get("error").and_then(Value::as_str) {
                out.extend(row("error", e, width, theme));
            }
            // Only a stored object has a resourceVersion: a dry run's and a refusal's row
            // would name one that never existed.
            if d.get("resourceVersion").is_some() {
                out.extend(row(
                    "resourceVersion",
                    text(d, "resourceVersion"),
                    width,
                    theme,
                ));
            }
            if let Some(n) = d.get("note").and_then(Value::as_str) {
                out.extend(field::lines("", 0, n, width, theme.muted, theme.muted));
            }
            if let Some(st) = d.get("status") {
                if st.get("reason").is_some() {
                    out.extend(row("reason", text(st, "reason"), width, theme));
                }
                out.extend(row("message", text(st, "message"), width, theme));
            }
        }
        Stage::Watch => {
            // Presenter mode asks "which node wins?" at the score: until the room has seen
            // it, the watch events keep the node to themselves.
            let score_step = crate::journey::STAGES
                .iter()
                .position(|s| *s == Stage::Score)
                .map_or(0, |i| i + 1);
            let hide_node = state.present && state.journey.step < score_step;
            for e in d["events"].as_array().into_iter().flatten() {
                // No node yet gives nothing away; a node is the answer the room waits for.
                let node = match e["nodeName"].as_str().filter(|n| !n.is_empty()) {
                    None => "(none yet)".to_string(),
                    Some(_) if hide_node => "? (revealed at Score)".to_string(),
                    Some(n) => n.to_string(),
                };
                out.push(Line::from(vec![
                    Span::styled(format!("{:<9}", text(e, "type")), theme.label),
                    Span::styled(
                        format!(
                            "rv {:<5} phase {:<8} node {}",
                            text(e, "resourceVersion"),
                            text(e, "phase"),
                            node
                        ),
                        theme.text,
                    ),
                ]));
            }
            out.push(note(
                "the scheduler watches pods without a node; each kubelet watches pods bound to it",
                theme,
            ));
        }
        Stage::Filter => {
            out.extend(row(
                "feasible",
                format!(
                    "{} of {} nodes",
                    text(d, "nodes_feasible"),
                    text(d, "nodes_total")
                ),
                width,
                theme,
            ));
            for v in d["filter"].as_array().into_iter().flatten().take(8) {
                let passed = v["passed"] == Value::Bool(true);
                let why = crate::journey::words::reasons(v);
                // The mark hangs: a long reason wraps under the node, not under the mark.
                let (mark, line) = if passed {
                    ("✓", text(v, "node"))
                } else {
                    (
                        "✗",
                        format!("{}  {}: {why}", text(v, "node"), text(v, "plugin")),
                    )
                };
                let style = if passed { theme.ok } else { theme.error };
                out.extend(field::lines(mark, 2, &line, width, style, style));
            }
            if d["message"].is_string() {
                out.extend(row("FitError", text(d, "message"), width, theme));
            }
            out.push(Line::styled(
                "Enter: every node, plugin by plugin, in view 5",
                theme.key_hint,
            ));
        }
        Stage::Score => {
            let selected = text(d, "selected");
            for n in d["score"].as_array().into_iter().flatten() {
                let node = text(n, "node");
                let star = if node == selected { "★" } else { " " };
                out.push(Line::styled(
                    format!("{star} {node:<16} {}", text(n, "total")),
                    if node == selected {
                        theme.accent
                    } else {
                        theme.text
                    },
                ));
            }
            out.extend(row("selected", selected, width, theme));
            if let Some(how) = d["tie_break"].as_str() {
                out.extend(row("chosen", how, width, theme));
            }
            if d["spread"].is_object() {
                for l in crate::journey::spread_text::lines(&d["spread"]) {
                    out.extend(field::lines("", 0, &l, width, theme.text, theme.text));
                }
            }
            out.push(Line::styled(
                "Enter: the plugins' raw → normalized → weighted scores in view 5",
                theme.key_hint,
            ));
        }
        Stage::Binding => {
            out.extend(row("node", text(d, "node"), width, theme));
            out.extend(row("event", text(d, "event"), width, theme));
            out.extend(row(
                "resourceVersion",
                text(d, "resourceVersion"),
                width,
                theme,
            ));
            // The pod's name as the scheduler's own event gives it ("Successfully assigned
            // default/app to node-3"): a workload's pods are not the manifest's.
            let event = text(d, "event");
            let name = event
                .strip_prefix("Successfully assigned ")
                .and_then(|r| r.split_once(" to "))
                .and_then(|(pod, _)| pod.split_once('/'))
                .map(|(_, name)| name.to_string());
            out.push(note(
                match name {
                    Some(n) => format!(
                        "POST pods/{n}/binding: the scheduler writes spec.nodeName, nothing more"
                    ),
                    None => "the scheduler POSTs the pod's binding: it writes spec.nodeName, \
                             nothing more"
                        .to_string(),
                },
                theme,
            ));
        }
        Stage::Kubelet => {
            for st in d["steps"].as_array().into_iter().flatten() {
                let at = text(st, "at");
                let t = at.get(11..23).unwrap_or(&at).to_string();
                let what = crate::journey::words::key_values(&st["detail"]);
                out.extend(field::lines(
                    &format!("{t}  {:<18}", text(st, "step")),
                    33,
                    &what,
                    width,
                    theme.label,
                    theme.text,
                ));
            }
            out.extend(row("phase", text(d, "phase"), width, theme));
            if d["simulated"] == Value::Bool(true) {
                out.push(note(
                    "the embedded cluster's kubelets are simulated: no container really runs",
                    theme,
                ));
            }
        }
        _ => out.extend(field::lines(
            "",
            0,
            &d.to_string(),
            width,
            theme.text,
            theme.text,
        )),
    }
    if s.status == Status::Failed && out.is_empty() {
        out.push(Line::styled("✗ failed", theme.error));
    }
    if let Some(e) = d
        .get("explanation")
        .filter(|_| !matches!(s.stage, Stage::Authentication | Stage::Authorization))
    {
        out.extend(field::lines(
            "",
            0,
            e.as_str().unwrap_or(""),
            width,
            theme.muted,
            theme.muted,
        ));
    }
    out
}

/// What an inferred stage is, said first: a scheduler stage kexplore simulated (its per-node
/// results are the simulation's, not the server's), or one the server does not report, whose
/// text is what must have happened. None for what was observed or reported.
fn inferred_label(s: &StageReport) -> Option<String> {
    if s.source != Source::Inferred {
        return None;
    }
    let simulated = matches!(s.stage, Stage::Filter | Stage::Score)
        && (s.detail["filter"].is_array() || s.detail["score"].is_array());
    // A skipped stage did not happen (a dry run, a failed create): saying what "must have
    // happened" above the reason it did not would contradict it.
    if s.status == Status::Skipped {
        return Some(format!(
            "{}: this stage did not take place; why:",
            source_word(s.source)
        ));
    }
    if s.status == Status::Failed {
        return Some(format!(
            "{}: the server does not report its stages; its answer says this one refused",
            source_word(s.source)
        ));
    }
    Some(if simulated {
        format!(
            "{}: simulated by kexplore on the live nodes and pods (default profile); the server does not say how its scheduler decided",
            source_word(s.source)
        )
    } else {
        format!(
            "{}: the server does not report this stage; this is what must have happened",
            source_word(s.source)
        )
    })
}

fn admission(
    state: &AppState,
    d: &Value,
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
) {
    let manifest = state.journey.pod().cloned().unwrap_or(Value::Null);
    let stored = state
        .journey
        .collected
        .as_ref()
        .and_then(|c| c.create.as_ref())
        .map(|(_, b)| b.clone())
        .unwrap_or(Value::Null);
    let mut recorded = false;
    for p in d["plugins"].as_array().into_iter().flatten() {
        out.push(Line::from(vec![
            Span::styled(format!("{:<26}", text(p, "plugin")), theme.label),
            Span::styled(
                format!("{} · {}", text(p, "phase"), text(p, "result")),
                theme.muted,
            ),
        ]));
        if let Some(changes) = p["changes"].as_array() {
            recorded = true;
            for c in changes {
                admission_change(c, width, theme, out);
            }
            continue;
        }
        // A server that records paths only: values from the manifest and the stored pod.
        let changed: Vec<&str> = p["changed"]
            .as_array()
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for path in changed {
            if let Some(old) = request::value_at(&manifest, path) {
                out.extend(field::lines(
                    "  - ",
                    4,
                    &format!("{path}: {old}"),
                    width,
                    theme.error,
                    theme.error,
                ));
            }
            let new = request::value_at(&stored, path).unwrap_or_else(|| "(removed)".into());
            out.extend(field::lines(
                "  + ",
                4,
                &format!("{path}: {new}"),
                width,
                theme.ok,
                theme.ok,
            ));
        }
    }
    if recorded {
        out.push(note(
            "+ added · ~ set (before → after) · - removed: as each plugin left it",
            theme,
        ));
        return;
    }
    out.push(note(
        "+ values as stored (the 201's body); - values from your manifest",
        theme,
    ));
}

/// `/spec/tolerations/0` → `spec.tolerations[0]`: the path as a person writes it.
pub fn dotted_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// One recorded change: `+` a list element or value added, `~` a field set or changed
/// (before → after), `-` removed. The symbol carries the meaning, the colour repeats it.
fn admission_change(c: &Value, width: usize, theme: &Theme, out: &mut Vec<Line<'static>>) {
    let path = dotted_path(c["path"].as_str().unwrap_or(""));
    let appended = path.ends_with(']');
    let (sym, line, style) = match (c["old"].as_str(), c["new"].as_str()) {
        (None, Some(new)) if appended => ("  + ", format!("{path}: {new}"), theme.ok),
        (None, Some(new)) => ("  ~ ", format!("{path}: (unset) → {new}"), theme.warn),
        (Some(old), Some(new)) => ("  ~ ", format!("{path}: {old} → {new}"), theme.warn),
        (Some(old), None) => ("  - ", format!("{path}: {old}"), theme.error),
        (None, None) => ("  ~ ", path, theme.warn),
    };
    out.extend(field::lines(sym, 4, &line, width, style, style));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn stage(name: Stage, source: Source, detail: Value) -> StageReport {
        StageReport {
            stage: name,
            status: Status::Ok,
            source,
            detail,
        }
    }

    #[test]
    fn a_simulated_stage_is_labelled_as_a_simulation() {
        let sim = stage(
            Stage::Filter,
            Source::Inferred,
            json!({"filter": [], "nodes_total": 3}),
        );
        let label = inferred_label(&sim).unwrap_or_default();
        assert!(
            label.starts_with("inferred: simulated by kexplore on the live nodes and pods"),
            "{label}"
        );
        assert!(!label.contains("must have happened"), "{label}");
        let sim = stage(
            Stage::Score,
            Source::Inferred,
            json!({"score": [], "selected": "n"}),
        );
        assert!(inferred_label(&sim).is_some_and(|l| l.contains("simulated by kexplore")));
        // Explained only: the server's silence, in words.
        let words = stage(
            Stage::Filter,
            Source::Inferred,
            json!({"explanation": "filtered"}),
        );
        assert!(inferred_label(&words).is_some_and(|l| l.contains("does not report this stage")));
        let reported = stage(Stage::Filter, Source::Reported, json!({"filter": []}));
        assert_eq!(inferred_label(&reported), None);
        // A dry run's binding: skipped, and not described as something that happened.
        let mut skipped = stage(
            Stage::Binding,
            Source::Inferred,
            json!({"explanation": "dry run (dryRun=All): nothing was stored, so nothing was bound"}),
        );
        skipped.status = Status::Skipped;
        let label = inferred_label(&skipped).unwrap_or_default();
        assert!(label.contains("did not take place"), "{label}");
        assert!(!label.contains("must have happened"), "{label}");
    }

    fn words(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn no_kubeconfig() -> AppState {
        AppState::new(
            crate::tui::session::Source::NotFound {
                looked: String::new(),
            },
            None,
            0,
        )
    }

    #[test]
    fn the_binding_names_the_pod_that_was_bound() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let bound = stage(
            Stage::Binding,
            Source::Reported,
            json!({"node": "node-2", "event": "Successfully assigned shop/web-7f9d-x2x4q to node-2"}),
        );
        let text = words(&stage_lines(&state, &bound, 200, &theme));
        assert!(text.contains("POST pods/web-7f9d-x2x4q/binding"), "{text}");
        assert!(!text.contains("pods/app/"), "{text}");
        // Not bound: the journey's reason, and nothing about a binding that was not made.
        let mut unbound = stage(
            Stage::Binding,
            Source::Observed,
            json!({"note": "not bound: the scheduler found no node for it; it stays Pending until the cluster changes"}),
        );
        unbound.status = Status::Skipped;
        let text = words(&stage_lines(&state, &unbound, 200, &theme));
        assert!(text.contains("the scheduler found no node"), "{text}");
        assert!(!text.contains("binding"), "{text}");
    }

    /// A node's filter reason too long for the pane wraps under the node's name, the mark
    /// hanging to its left, so each node's verdict reads as one block.
    #[test]
    fn a_long_filter_reason_wraps_under_the_node_not_the_mark() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let filter = stage(
            Stage::Filter,
            Source::Reported,
            json!({"nodes_total": 2, "nodes_feasible": 1, "filter": [
                {"node": "node-1", "passed": true},
                {"node": "node-2", "passed": false, "plugin": "NodeResourcesFit",
                 "reasons": ["Insufficient cpu", "Insufficient memory", "Too many pods"]},
            ]}),
        );
        let text = words(&stage_lines(&state, &filter, 40, &theme));
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with("✗ node-2"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(lines.contains(&"✓ node-1"), "{text}");
        let rest: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("  "))
            .copied()
            .collect();
        assert!(!rest.is_empty(), "the reason wraps: {text}");
        let whole: String = std::iter::once(lines[at])
            .chain(rest.iter().copied())
            .flat_map(|l| l.chars().skip(2))
            .collect();
        // Every word of the reason is there, in order (the breaks may take a space).
        let bare = |s: &str| s.split_whitespace().collect::<String>();
        assert!(
            bare(&whole).contains(&bare(
                "Insufficient cpu, Insufficient memory, Too many pods"
            )),
            "{text}"
        );
        let block = std::iter::once(&lines[at]).chain(&rest);
        assert!(block.into_iter().all(|l| l.chars().count() <= 40), "{text}");
    }

    #[test]
    fn a_dry_run_binding_gives_its_reason_and_the_simulated_node() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let mut dry = stage(
            Stage::Binding,
            Source::Inferred,
            json!({"explanation": "dry run: nothing stored, so nothing is bound", "simulated_node": "node-3"}),
        );
        dry.status = Status::Skipped;
        let text = words(&stage_lines(&state, &dry, 200, &theme));
        let lines: Vec<&str> = text.lines().collect();
        // The reason right under "why:", then the simulation's node; no rows of dashes.
        assert!(lines[0].ends_with("why:"), "{text}");
        assert!(lines[1].contains("nothing is bound"), "{text}");
        assert!(
            lines[2].contains("the simulated scheduler would bind it to node-3"),
            "{text}"
        );
        assert!(!text.contains('—'), "{text}");
    }

    #[test]
    fn an_inferred_stage_with_only_words_shows_them_not_dashes_or_json() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let passed = stage(
            Stage::Validation,
            Source::Inferred,
            json!({"explanation": "passed: the refusal came later, from storage"}),
        );
        let text = words(&stage_lines(&state, &passed, 80, &theme));
        assert!(text.contains("must have happened"), "{text}");
        assert!(
            text.contains("passed: the refusal came later, from storage"),
            "{text}"
        );
        assert!(!text.contains('{'), "{text}");
        let mut refused = stage(
            Stage::Storage,
            Source::Inferred,
            json!({"explanation": "the name is taken: the storage write creates only a key that does not exist yet"}),
        );
        refused.status = Status::Failed;
        let text = words(&stage_lines(&state, &refused, 80, &theme));
        assert!(text.contains("its answer says this one refused"), "{text}");
        assert!(text.contains("the name is taken"), "{text}");
        assert!(!text.contains("must have happened"), "{text}");
        assert!(
            !text.contains('—'),
            "no resourceVersion of a write that never was: {text}"
        );
    }

    #[test]
    fn a_response_that_never_came_says_so_without_dashes() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        for (detail, said) in [
            (json!({"error": "no response"}), "no response"),
            (
                json!({"code": 0, "status": {"message": "connection refused"}}),
                "connection refused",
            ),
        ] {
            let mut r = stage(Stage::Response, Source::Observed, detail);
            r.status = Status::Failed;
            let text = words(&stage_lines(&state, &r, 80, &theme));
            assert!(text.contains("no answer"), "{text}");
            assert!(text.contains(said), "{text}");
            assert!(!text.contains('—'), "{text}");
        }
    }

    #[test]
    fn a_refused_write_the_server_reported_names_its_error_not_dashes() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let error = "pods \"app\" already exists";
        let mut memory = stage(
            Stage::Storage,
            Source::Reported,
            json!({"operation": "create", "key": "/registry/pods/default/app", "error": error}),
        );
        memory.status = Status::Failed;
        let text = words(&stage_lines(&state, &memory, 120, &theme));
        assert!(
            text.contains("store key        /registry/pods/default/app"),
            "{text}"
        );
        assert!(text.contains(error), "{text}");
        assert!(text.contains("nothing was written"), "{text}");
        assert!(!text.contains('—'), "{text}");
        assert!(!text.contains("kept in"), "{text}");
        let etcdctl = "ETCDCTL_API=3 etcdctl get /registry/pods/default/app";
        let mut etcd = memory.clone();
        etcd.detail["backend"] = json!("etcd");
        etcd.detail["etcdKey"] = json!("/registry/pods/default/app");
        etcd.detail["etcdctl"] = json!(etcdctl);
        let text = words(&stage_lines(&state, &etcd, 120, &theme));
        assert!(text.contains("etcd key"), "{text}");
        assert!(
            text.contains(&format!("the key holds    {etcdctl}")),
            "{text}"
        );
        assert!(!text.contains("etcd revision"), "{text}");
        assert!(!text.contains('—'), "{text}");
    }

    #[test]
    fn a_remote_write_shows_its_revision_and_says_where_once() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let write = stage(
            Stage::Storage,
            Source::Inferred,
            json!({"explanation": "the pod was written to etcd under /registry/pods/<namespace>/<name>; its resourceVersion is the etcd revision", "resourceVersion": "2112"}),
        );
        let text = words(&stage_lines(&state, &write, 200, &theme));
        assert!(text.contains("resourceVersion  2112"), "{text}");
        assert_eq!(text.matches("etcd").count(), 2, "{text}");
    }

    #[test]
    fn a_denial_no_authorizer_made_is_not_a_dash() {
        let state = no_kubeconfig();
        let theme = Theme::default();
        let mut denied = stage(
            Stage::Authorization,
            Source::Reported,
            json!({"authorizer": "", "decision": "forbid", "reason": "",
                "attributes": {"verb": "create", "resource": "pods", "namespace": "kube-system"}}),
        );
        denied.status = Status::Failed;
        let text = words(&stage_lines(&state, &denied, 200, &theme));
        assert!(text.contains("none allowed it"), "{text}");
        assert!(!text.contains('—'), "{text}");
    }
}

//! `dryRun`, judged once for every write before its handler runs (upstream `ValidateDryRun`,
//! wrapped by each handler in `NewInvalid(meta.k8s.io/<Verb>Options, "", …)`), and the trace
//! line a write leaves. The verdict travels in `Ctx::write` to every store write, which is
//! where a dry run stops (`store::Write`).

use serde_json::{Value, json};

use crate::apiserver::endpoints::delete_options::delete_options;
use crate::apiserver::request::context::Ctx;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};
use crate::apiserver::storage::store::Write;

/// The only value kube-apiserver accepts (`metav1.DryRunAll`).
const ALL: &str = "All";

/// The options kind whose `dryRun` a verb reads; None for verbs that write nothing.
fn options_kind(verb: &str) -> Option<&'static str> {
    match verb {
        "create" => Some("CreateOptions"),
        "update" => Some("UpdateOptions"),
        "patch" => Some("PatchOptions"),
        "delete" | "deletecollection" => Some("DeleteOptions"),
        _ => None,
    }
}

/// The request's verdict: Commit without `dryRun`, DryRun when every value is `All`, else the
/// 422 kube-apiserver answers. Delete verbs read DeleteOptions (the body, or the query when
/// the body is empty), the others the query.
pub(crate) fn gate(ctx: &Ctx<'_>) -> Result<Write, ApiError> {
    let Some(kind) = options_kind(&ctx.info.verb) else {
        return Ok(Write::Commit);
    };
    let values = if kind == "DeleteOptions" {
        delete_options(ctx)?.dry_run
    } else {
        ctx.info.query_all("dryRun")
    };
    judge(kind, &values)
}

/// `ValidateDryRun`: any value other than `All` (an empty one too) refuses the whole list.
pub(crate) fn judge(kind: &str, values: &[String]) -> Result<Write, ApiError> {
    if values.is_empty() {
        return Ok(Write::Commit);
    }
    if values.iter().all(|v| v == ALL) {
        return Ok(Write::DryRun);
    }
    let cause = Cause {
        reason: "FieldValueNotSupported",
        message: format!(
            "Unsupported value: {}: supported values: {}",
            go_string_slice(values),
            go_quote(ALL)
        ),
        field: "dryRun".into(),
    };
    Err(ApiError::invalid("meta.k8s.io", kind, "", vec![cause]))
}

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
fn go_string_slice(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// Go's `strconv.Quote` for the characters a query can carry.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            '\u{fffd}' => out.push_str("\\ufffd"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The storage stage of a write. A dry run says it stored nothing and shows no
/// resourceVersion, since none was assigned.
pub(crate) fn storage_stage(trace: &mut RequestTrace, write: Write, mut detail: Value) {
    match write {
        Write::Commit => trace.stage(Stage::Storage, Status::Ok, detail),
        Write::DryRun => {
            if let Some(m) = detail.as_object_mut() {
                m.remove("resourceVersion");
                m.insert("dryRun".into(), json!(true));
                m.insert("note".into(), json!("dry run: nothing stored"));
            }
            trace.stage(Stage::Storage, Status::Skipped, detail);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_all_is_a_dry_run() {
        assert_eq!(judge("CreateOptions", &[]).ok(), Some(Write::Commit));
        assert_eq!(
            judge("CreateOptions", &strings(&["All"])).ok(),
            Some(Write::DryRun)
        );
        assert_eq!(
            judge("CreateOptions", &strings(&["All", "All"])).ok(),
            Some(Write::DryRun)
        );
    }

    #[test]
    fn anything_else_is_upstreams_422() {
        let e = judge("UpdateOptions", &strings(&["foo"])).err();
        let e = e.unwrap_or_else(|| panic!("foo accepted"));
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            r#"UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"foo"}: supported values: "All""#
        );
        let status = e.to_status();
        assert_eq!(status["details"]["group"], "meta.k8s.io");
        assert_eq!(status["details"]["kind"], "UpdateOptions");
        assert!(status["details"].get("name").is_none(), "{status}");
        assert_eq!(
            status["details"]["causes"],
            json!([{"reason": "FieldValueNotSupported", "field": "dryRun",
                    "message": r#"Unsupported value: []string{"foo"}: supported values: "All""#}])
        );
        // The whole list is named, an empty value counts, Go's quoting.
        let e = judge("DeleteOptions", &strings(&["All", "", "a\"b\u{1}"])).err();
        assert_eq!(
            e.map(|e| e.message).as_deref(),
            Some(
                r#"DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "", "a\"b\x01"}: supported values: "All""#
            )
        );
    }
}

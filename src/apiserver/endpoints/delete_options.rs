//! DeleteOptions, read from the body (JSON or, as kubectl 1.32+ drain sends it, protobuf) or the
//! query: grace period, preconditions and `dryRun`. Read by the delete handlers and, for the
//! `dryRun` verdict, by the dry-run gate before them.

use serde_json::{Value, json};

use crate::apiserver::codec::decode;
use crate::apiserver::codec::proto_objects;
use crate::apiserver::request::context::Ctx;
use crate::apiserver::request::status::ApiError;

/// DeleteOptions from the body and query.
pub struct DeleteOptions {
    pub grace: Option<i64>,
    pub uid: Option<String>,
    pub rv: Option<String>,
    /// `dryRun`, from the body, or from the query when there is no body (as upstream).
    pub dry_run: Vec<String>,
    /// `propagationPolicy`: Orphan, Background or Foreground (checked by [`propagation`]).
    pub propagation: Option<String>,
    /// The deprecated `orphanDependents`.
    pub orphan_dependents: Option<bool>,
}

/// How a delete treats the object's dependents (upstream `metav1.DeletionPropagation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    Orphan,
    Background,
    Foreground,
}

/// The policy of a delete of `group`/`kind`: the one asked for, else `orphanDependents`, else
/// the kind's `DefaultGarbageCollectionPolicy` (batch/v1 Job orphans for back compatibility;
/// every other kind served deletes its dependents). Refused as `ValidateDeleteOptions` does.
pub(crate) fn propagation(
    opts: &DeleteOptions,
    group: &str,
    kind: &str,
) -> Result<Propagation, ApiError> {
    use crate::apiserver::request::status::Cause;
    let invalid = |cause| ApiError::invalid("meta.k8s.io", "DeleteOptions", "", vec![cause]);
    if opts.orphan_dependents.is_some() && opts.propagation.is_some() {
        return Err(invalid(Cause::invalid(
            "propagationPolicy",
            &json!(opts.propagation),
            "orphanDependents and deletionPropagation cannot be both set",
        )));
    }
    Ok(
        match (opts.propagation.as_deref(), opts.orphan_dependents) {
            (Some("Orphan"), _) | (None, Some(true)) => Propagation::Orphan,
            (Some("Background"), _) | (None, Some(false)) => Propagation::Background,
            (Some("Foreground"), _) => Propagation::Foreground,
            (Some(other), _) => {
                return Err(invalid(Cause::not_supported(
                    "propagationPolicy",
                    &json!(other),
                    &["Foreground", "Background", "Orphan", "nil"],
                )));
            }
            (None, None) if (group, kind) == ("batch", "Job") => Propagation::Orphan,
            (None, None) => Propagation::Background,
        },
    )
}

pub(crate) fn delete_options(ctx: &Ctx<'_>) -> Result<DeleteOptions, ApiError> {
    let body: Value = if ctx.body.is_empty() {
        json!({})
    } else if decode::is_protobuf(&ctx.content_type) {
        // kubectl 1.32+ drain sends its DeleteOptions so.
        proto_objects::decode("DeleteOptions", &ctx.body).map_err(|e| {
            ApiError::bad_request(format!(
                "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: {e}"
            ))
        })?
    } else {
        serde_json::from_slice(&ctx.body).map_err(|e| {
            ApiError::bad_request(format!(
                "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: {e}"
            ))
        })?
    };
    let grace = body
        .get("gracePeriodSeconds")
        .and_then(Value::as_i64)
        .or_else(|| {
            ctx.info
                .query("gracePeriodSeconds")
                .and_then(|g| g.parse().ok())
        });
    let dry_run = if ctx.body.is_empty() {
        ctx.info.query_all("dryRun")
    } else {
        from_delete_options(&body)?
    };
    let propagation = body
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .map(String::from)
        .or_else(|| ctx.info.query("propagationPolicy").map(String::from));
    let orphan_dependents = body
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| {
            ctx.info
                .query("orphanDependents")
                .and_then(|v| v.parse().ok())
        });
    Ok(DeleteOptions {
        dry_run,
        grace,
        propagation,
        orphan_dependents,
        uid: body
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(String::from),
        rv: body
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from),
    })
}

/// `dryRun` of a DeleteOptions body. A value that is not a list of strings is refused as Go's
/// decoder refuses it (400), rather than read as no dry run, which would delete for real.
pub(crate) fn from_delete_options(body: &Value) -> Result<Vec<String>, ApiError> {
    let refuse = |found: &Value, want: &str| {
        let kind = match found {
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            _ => "object",
        };
        ApiError::bad_request(format!(
            "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: json: cannot unmarshal {kind} into Go struct field DeleteOptions.dryRun of type {want}"
        ))
    };
    match body.get("dryRun") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Null => Ok(String::new()),
                other => Err(refuse(other, "string")),
            })
            .collect(),
        Some(other) => Err(refuse(other, "[]string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_delete_body_whose_dry_run_is_not_a_list_is_refused_not_ignored() {
        let read = |v: Value| from_delete_options(&v).map_err(|e| (e.code, e.message));
        assert_eq!(read(json!({})), Ok(vec![]));
        assert_eq!(read(json!({"dryRun": ["All"]})), Ok(strings(&["All"])));
        assert_eq!(read(json!({"dryRun": [null]})), Ok(strings(&[""])));
        assert_eq!(
            read(json!({"dryRun": "All"})),
            Err((400, r#"DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string"#.into()))
        );
        assert_eq!(
            read(json!({"dryRun": [1]})).map_err(|e| e.1),
            Err(r#"DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal number into Go struct field DeleteOptions.dryRun of type string"#.into())
        );
    }
}

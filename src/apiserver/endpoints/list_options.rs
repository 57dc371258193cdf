//! Which revision a list reads, from `resourceVersion`, `resourceVersionMatch`, `limit` and
//! `continue`, with kube-apiserver's validation of the combinations and its errors.

use serde_json::json;

use crate::apiserver::endpoints::continue_token;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::selectors::{FieldSelector, LabelSelector};
use crate::apiserver::request::context::Ctx;
use crate::apiserver::request::status::{ApiError, Cause};

/// The revision a list is read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// The latest state (resourceVersion unset or "0", or a 410's inconsistent token).
    Latest,
    /// Exactly this revision (a continue token, `Exact`, or a non-zero resourceVersion with
    /// `limit` and no match, as upstream's legacy paging rule says).
    Exact(u64),
    /// At least this revision.
    NotOlderThan(u64),
}

/// Where a list starts and at which revision, from its query parameters.
#[derive(Debug)]
pub struct ListPlan {
    pub at: ReadAt,
    pub start: String,
    /// A continue token was given (its expiry is a 410 with a fresh token, not plain 410).
    pub continuing: bool,
}

/// Read and validate the list options; `prefix` is the collection's key prefix.
pub fn plan(
    prefix: &str,
    resource_version: Option<&str>,
    rv_match: Option<&str>,
    limit: Option<usize>,
    continue_token: Option<&str>,
    send_initial_events: Option<&str>,
) -> Result<ListPlan, ApiError> {
    let rv = resource_version.filter(|s| !s.is_empty());
    let m = rv_match.filter(|s| !s.is_empty());
    let cont = continue_token.filter(|s| !s.is_empty());
    let mut causes = Vec::new();
    if send_initial_events.is_some_and(|s| !s.is_empty()) {
        causes.push(Cause::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    match m {
        None | Some("Exact" | "NotOlderThan") => {}
        Some(other) => causes.push(Cause::not_supported(
            "resourceVersionMatch",
            &json!(other),
            &["Exact", "NotOlderThan", ""],
        )),
    }
    if m.is_some() && rv.is_none() {
        causes.push(Cause::forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    if m.is_some() && cont.is_some() {
        causes.push(Cause::forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if m == Some("Exact") && rv == Some("0") {
        causes.push(Cause::forbidden(
            "resourceVersionMatch",
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes));
    }
    if let Some(c) = cont {
        // Upstream reads the token first: a bad one is refused whatever else was sent.
        let (start, token_rv) = continue_token::decode(c, prefix)?;
        if rv.is_some_and(|r| r != "0") {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        return Ok(ListPlan {
            at: u64::try_from(token_rv)
                .ok()
                .filter(|rv| *rv > 0)
                .map_or(ReadAt::Latest, ReadAt::Exact),
            start,
            continuing: true,
        });
    }
    let at = match rv {
        None | Some("0") => ReadAt::Latest,
        Some(s) => {
            let n: u64 = s
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s}")))?;
            match m {
                Some("Exact") => ReadAt::Exact(n),
                Some(_) => ReadAt::NotOlderThan(n),
                None if limit.is_some() => ReadAt::Exact(n),
                None => ReadAt::NotOlderThan(n),
            }
        }
    };
    Ok(ListPlan {
        at,
        start: String::new(),
        continuing: false,
    })
}

/// A watch's `sendInitialEvents` (None: not given), after upstream's validateWatchOptions:
/// it needs `resourceVersionMatch=NotOlderThan`, and a match needs it (422 on ListOptions).
pub fn watch_send_initial_events(
    send_initial_events: Option<&str>,
    rv_match: Option<&str>,
    continue_token: Option<&str>,
) -> Result<Option<bool>, ApiError> {
    let send = send_initial_events
        .filter(|s| !s.is_empty())
        .map(|s| s == "true" || s == "1");
    let m = rv_match.filter(|s| !s.is_empty());
    let mut causes = Vec::new();
    if send.is_some() && m != Some("NotOlderThan") {
        causes.push(Cause::forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if let Some(m) = m {
        if send.is_none() {
            causes.push(Cause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if m != "NotOlderThan" {
            causes.push(Cause::not_supported(
                "resourceVersionMatch",
                &json!(m),
                &["NotOlderThan"],
            ));
        }
        if continue_token.is_some_and(|c| !c.is_empty()) {
            causes.push(Cause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    if causes.is_empty() {
        Ok(send)
    } else {
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
    }
}

/// kube-apiserver's answer to a list or get at a revision it has not reached yet (after the
/// watch cache waited for it): 504 with reason Timeout and a ResourceVersionTooLarge cause.
pub fn too_large(asked: u64, current: u64) -> ApiError {
    let mut e = ApiError::timeout(format!(
        "Too large resource version: {asked}, current: {current}"
    ));
    e.details = Some(json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1
    }));
    e
}

/// The 410 for a continue token whose revision was compacted away, with upstream's words and a
/// token that continues from the same key at the latest revision.
pub fn continue_expired(start: &str, prefix: &str) -> ApiError {
    ApiError::expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    )
    .with_list_continue(continue_token::encode(-1, start, prefix))
}

/// The 410 for an `Exact` read older than the history.
pub fn list_too_old() -> ApiError {
    ApiError::expired("The resourceVersion for the provided list is too old.")
}

/// Selectors from the query (400 on bad syntax or unsupported fields).
/// A read the client asked to be current (no resourceVersion, nor a continue token, which
/// carries its own) must reach the store's source of truth first: on etcd, a quorum.
pub(crate) fn confirm_current(ctx: &Ctx<'_>) -> Result<(), ApiError> {
    let unset = |q: &str| ctx.info.query(q).is_none_or(str::is_empty);
    if unset("resourceVersion") && unset("continue") {
        ctx.api
            .store
            .confirm_current()
            .map_err(|e| ApiError::storage(&e))?;
    }
    Ok(())
}

pub fn selectors(
    ctx: &Ctx<'_>,
    def: &ResourceDef,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let ls = LabelSelector::parse(ctx.info.query("labelSelector").unwrap_or_default())?;
    let fs = FieldSelector::parse(
        def.kind,
        ctx.info.query("fieldSelector").unwrap_or_default(),
    )?;
    Ok((ls, fs))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/registry/pods/default/";

    fn err(r: Result<ListPlan, ApiError>) -> ApiError {
        match r {
            Err(e) => e,
            Ok(p) => panic!("accepted: {p:?}"),
        }
    }

    #[test]
    fn revision_semantics_follow_upstreams_table() {
        let at = |rv, m, limit| plan(P, rv, m, limit, None, None).map(|p| p.at).ok();
        assert_eq!(at(None, None, None), Some(ReadAt::Latest));
        assert_eq!(at(Some("0"), None, Some(500)), Some(ReadAt::Latest));
        assert_eq!(at(Some("7"), None, None), Some(ReadAt::NotOlderThan(7)));
        assert_eq!(at(Some("7"), None, Some(500)), Some(ReadAt::Exact(7)));
        assert_eq!(at(Some("7"), Some("Exact"), None), Some(ReadAt::Exact(7)));
        assert_eq!(
            at(Some("7"), Some("NotOlderThan"), Some(2)),
            Some(ReadAt::NotOlderThan(7))
        );
        assert_eq!(
            at(Some("0"), Some("NotOlderThan"), None),
            Some(ReadAt::Latest)
        );
    }

    #[test]
    fn invalid_combinations_are_422_on_list_options() {
        let e = err(plan(P, None, Some("Exact"), None, None, None));
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        assert_eq!(
            e.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        let e = err(plan(P, Some("0"), Some("Exact"), None, None, None));
        assert!(
            e.message
                .contains("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
            "{}",
            e.message
        );
        let e = err(plan(P, Some("3"), Some("Newest"), None, None, None));
        assert!(e.message.contains("resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""), "{}", e.message);
        let tok = continue_token::encode(5, &format!("{P}b"), P);
        let e = err(plan(P, Some("5"), Some("Exact"), None, Some(&tok), None));
        assert!(
            e.message
                .contains("resourceVersionMatch is forbidden when continue is provided"),
            "{}",
            e.message
        );
        let e = err(plan(P, None, None, None, None, Some("true")));
        assert!(
            e.message
                .contains("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
            "{}",
            e.message
        );
        let e = err(plan(P, Some("5"), None, Some(2), Some(&tok), None));
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "specifying resource version is not allowed when using continue"
            )
        );
    }

    #[test]
    fn watch_options_follow_validate_watch_options() {
        let w = |send, m| watch_send_initial_events(send, m, None);
        assert_eq!(w(None, None).ok(), Some(None));
        assert_eq!(w(Some("true"), Some("NotOlderThan")).ok(), Some(Some(true)));
        assert_eq!(
            w(Some("false"), Some("NotOlderThan")).ok(),
            Some(Some(false))
        );
        let msg =
            |r: Result<Option<bool>, ApiError>| r.err().map(|e| e.message).unwrap_or_default();
        assert_eq!(
            msg(w(Some("true"), None)),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
        );
        assert!(msg(w(None, Some("NotOlderThan"))).contains(
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
        ));
        assert!(msg(w(Some("true"), Some("Exact"))).contains(
            "resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\""
        ));
    }

    #[test]
    fn continue_tokens_read_at_their_revision_or_latest_after_a_410() {
        let tok = continue_token::encode(5, &format!("{P}b"), P);
        let p = plan(P, None, None, Some(2), Some(&tok), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.at, p.start.as_str(), p.continuing),
            (ReadAt::Exact(5), "/registry/pods/default/b", true)
        );
        let e = continue_expired(&p.start, P);
        assert_eq!(e.code, 410);
        let fresh = e.list_continue.unwrap_or_default();
        let p = plan(P, None, None, Some(2), Some(&fresh), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (p.at, p.start.as_str()),
            (ReadAt::Latest, "/registry/pods/default/b")
        );
        // A bad token is refused before the resourceVersion beside it is looked at.
        let e = err(plan(P, Some("7"), None, None, Some("!"), None));
        assert_eq!(
            e.message,
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"
        );
        let e = err(plan(P, Some("7"), None, None, Some(&tok), None));
        assert_eq!(
            e.message,
            "specifying resource version is not allowed when using continue"
        );
    }
}

//! Which request stage refused a create, read off the Status a server that reports no trace
//! (a remote kube-apiserver) answered with. kube-apiserver's handler chain runs authentication,
//! authorization, mutating admission, validation, validating admission and the storage write
//! in that order, and each builds its refusals its own way (specs/apiserver.md §0, §1.2): so the
//! answer names the stage, and every stage before it passed.

use serde_json::Value;

use super::Stage;

/// The stage that refused and why that answer points at it; `None` when the answer does not
/// tell (a 400 body error, a 429, a 500).
pub(crate) fn refused_at(code: u16, status: &Value) -> Option<(Stage, &'static str)> {
    let message = status["message"].as_str().unwrap_or_default();
    let reason = status["reason"].as_str().unwrap_or_default();
    // Webhooks and ValidatingAdmissionPolicy choose their own code, so their words come first.
    if message.contains("admission webhook") || message.contains("ValidatingAdmissionPolicy") {
        return Some((
            Stage::Admission,
            "an admission webhook or ValidatingAdmissionPolicy denied it (the message names it)",
        ));
    }
    match (code, reason) {
        (401, _) => Some((
            Stage::Authentication,
            "a 401 comes from authentication: the server accepted no identity from these credentials",
        )),
        (403, _) if is_authorization(message) => Some((
            Stage::Authorization,
            "a 403 that names the user, the verb and the resource comes from the authorizer chain (RBAC)",
        )),
        (403, _) => Some((
            Stage::Admission,
            "a 403 with a plugin's own words (PodSecurity, ResourceQuota, NamespaceLifecycle, ServiceAccount…) comes from admission",
        )),
        (404, _) if message.starts_with("namespaces \"") => Some((
            Stage::Admission,
            "a missing namespace is refused by the NamespaceLifecycle admission plugin",
        )),
        (409, "AlreadyExists") => Some((
            Stage::Storage,
            "the name is taken: the storage write creates only a key that does not exist yet",
        )),
        (422, _) => Some((
            Stage::Validation,
            "a 422 Invalid lists the fields the pod's validation refused",
        )),
        _ => None,
    }
}

/// RBAC's refusal: `User "jane" cannot create resource "pods" in API group "" …` (a service
/// account is a user `system:serviceaccount:…` too).
fn is_authorization(message: &str) -> bool {
    message.contains("User \"") && message.contains("\" cannot ")
}

/// What the answer says of a stage before the one that refused.
pub(crate) fn before(refused: Stage, earlier: Stage) -> String {
    if refused == Stage::Validation && earlier == Stage::Admission {
        // Validating admission runs after validation: only the mutating half took place.
        return "mutating admission passed; validating admission runs after validation, so it never ran".into();
    }
    format!(
        "passed: the refusal came later, from {}",
        refused.title().to_lowercase()
    )
}

/// What the answer says of a stage after the one that refused.
pub(crate) fn after(refused: Stage, later: Stage) -> String {
    if refused == Stage::Admission && later == Stage::Validation {
        // Mutating admission runs before validation, validating admission after it.
        return "not known from the answer: validation runs after mutating and before validating admission, and the answer does not say which kind refused".into();
    }
    format!("the request ended at {}", refused.title().to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(code: u16, reason: &str, message: &str) -> Option<Stage> {
        refused_at(
            code,
            &json!({"kind": "Status", "reason": reason, "message": message, "code": code}),
        )
        .map(|(s, _)| s)
    }

    // The messages as kube-apiserver words them (specs/apiserver.md §1.2, §4).
    #[test]
    fn each_refusal_names_the_stage_it_comes_from() {
        assert_eq!(
            at(401, "Unauthorized", "Unauthorized"),
            Some(Stage::Authentication)
        );
        assert_eq!(
            at(
                403,
                "Forbidden",
                r#"pods "app" is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "kube-system""#
            ),
            Some(Stage::Authorization)
        );
        assert_eq!(
            at(
                403,
                "Forbidden",
                r#"pods "app" is forbidden: User "system:serviceaccount:ci:deployer" cannot create resource "pods" in API group "" in the namespace "prod""#
            ),
            Some(Stage::Authorization)
        );
        assert_eq!(
            at(
                403,
                "Forbidden",
                r#"pods "app" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true)"#
            ),
            Some(Stage::Admission)
        );
        assert_eq!(
            at(
                403,
                "Forbidden",
                r#"pods "app" is forbidden: unable to create new content in namespace shop because it is being terminated"#
            ),
            Some(Stage::Admission)
        );
        assert_eq!(
            at(404, "NotFound", r#"namespaces "nope" not found"#),
            Some(Stage::Admission)
        );
        assert_eq!(
            at(
                400,
                "BadRequest",
                r#"admission webhook "policy.example.com" denied the request: no latest tags"#
            ),
            Some(Stage::Admission)
        );
        assert_eq!(
            at(
                422,
                "Invalid",
                r#"pods "app" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'b' denied request: failed expression"#
            ),
            Some(Stage::Admission)
        );
        assert_eq!(
            at(
                422,
                "Invalid",
                r#"Pod "app" is invalid: spec.containers[0].image: Required value"#
            ),
            Some(Stage::Validation)
        );
        assert_eq!(
            at(409, "AlreadyExists", r#"pods "app" already exists"#),
            Some(Stage::Storage)
        );
    }

    #[test]
    fn a_validation_refusal_does_not_claim_validating_admission_ran() {
        let said = before(Stage::Validation, Stage::Admission);
        assert!(said.contains("never ran"), "{said}");
        assert!(before(Stage::Storage, Stage::Admission).starts_with("passed"));
    }

    #[test]
    fn answers_that_name_no_stage_claim_none() {
        assert_eq!(at(400, "BadRequest", "the body was not JSON"), None);
        assert_eq!(at(429, "TooManyRequests", "Too many requests"), None);
        assert_eq!(at(500, "InternalError", "Internal error occurred"), None);
        assert_eq!(at(409, "Conflict", "the object has been modified"), None);
    }
}

//! kube-apiserver's `Status` errors: every failure a client can cause ends here, never in a panic.
//! Message texts follow upstream (`k8s.io/apimachinery/pkg/api/errors`), see specs/apiserver.md §1.

use serde_json::{Value, json};

/// One field error of a 422, rendered as kube-apiserver renders `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The cause type (`FieldValueRequired`, ...); JSON key `reason`.
    pub reason: &'static str,
    /// The body without the field (`Required value`, `Invalid value: "x": detail`).
    pub message: String,
    pub field: String,
}

impl Cause {
    pub fn required(field: &str, detail: &str) -> Self {
        Self::with(field, "FieldValueRequired", "Required value".into(), detail)
    }
    pub fn invalid(field: &str, value: &Value, detail: &str) -> Self {
        Self::with(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {}", render_value(value)),
            detail,
        )
    }
    pub fn not_supported(field: &str, value: &Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Self::with(
            field,
            "FieldValueNotSupported",
            format!("Unsupported value: {}", render_value(value)),
            &format!("supported values: {}", list.join(", ")),
        )
    }
    pub fn duplicate(field: &str, value: &Value) -> Self {
        Self::with(
            field,
            "FieldValueDuplicate",
            format!("Duplicate value: {}", render_value(value)),
            "",
        )
    }
    /// `field.NotFound`: a reference to something that does not exist.
    pub fn not_found(field: &str, value: &Value) -> Self {
        Self::with(
            field,
            "FieldValueNotFound",
            format!("Not found: {}", render_value(value)),
            "",
        )
    }
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self::with(field, "FieldValueForbidden", "Forbidden".into(), detail)
    }
    /// `field.TooLong` with an unrendered value, as upstream's size checks report it.
    pub fn too_long(field: &str, max_bytes: usize) -> Self {
        Self::with(
            field,
            "FieldValueTooLong",
            format!("Too long: may not be more than {max_bytes} bytes"),
            "",
        )
    }
    /// `field.Invalid` whose value is already printed as Go prints it (`%#v` of a struct or a
    /// typed slice, a Stringer's output), which no JSON value renders as.
    pub fn invalid_printed(field: &str, printed: &str, detail: &str) -> Self {
        Self::with(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {printed}"),
            detail,
        )
    }
    /// `field.Duplicate` whose value is already printed as Go prints it.
    pub fn duplicate_printed(field: &str, printed: &str) -> Self {
        Self::with(
            field,
            "FieldValueDuplicate",
            format!("Duplicate value: {printed}"),
            "",
        )
    }
    /// `field.Invalid` with `field.OmitValueType{}`: the value is not shown.
    pub fn invalid_omitted(field: &str, detail: &str) -> Self {
        Self::with(field, "FieldValueInvalid", "Invalid value".into(), detail)
    }
    /// `field.TooMany`.
    pub fn too_many(field: &str, actual: usize, max: usize) -> Self {
        Self::with(
            field,
            "FieldValueTooMany",
            format!("Too many: {actual}"),
            &format!("must have at most {max} items"),
        )
    }
    fn with(field: &str, reason: &'static str, body: String, detail: &str) -> Self {
        let message = if detail.is_empty() {
            body
        } else {
            format!("{body}: {detail}")
        };
        Cause {
            reason,
            message,
            field: field.to_string(),
        }
    }
    /// `<field>: <body>` as in the Status message.
    pub fn rendered(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }
}

/// Go's `%v`-ish rendering of a field value: strings quoted, numbers and bools bare.
fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

const STALE: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// An API error: HTTP code, reason and message, ready to become a `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    /// Empty for a plain 500 (upstream omits the reason then).
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
    /// The Status's ListMeta `continue`: set only on a 410 for a too-old list continue token,
    /// where it lets the client finish the list inconsistently.
    pub list_continue: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// `GroupResource.String()`: `pods` for core, `priorityclasses.scheduling.k8s.io` otherwise.
pub fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

fn details(name: &str, group: &str, kind: &str) -> Value {
    let mut d = serde_json::Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    if !kind.is_empty() {
        d.insert("kind".into(), json!(kind));
    }
    Value::Object(d)
}

impl ApiError {
    fn new(
        code: u16,
        reason: &'static str,
        message: impl Into<String>,
        details: Option<Value>,
    ) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details,
            list_continue: None,
        }
    }

    pub fn with_list_continue(mut self, token: String) -> Self {
        self.list_continue = Some(token);
        self
    }

    fn metadata(&self) -> Value {
        match &self.list_continue {
            Some(c) => json!({"continue": c}),
            None => json!({}),
        }
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized", None)
    }

    /// 403 from the authorizer; `text` is `User "x" cannot ...`, `reason` the authorizer's reason.
    pub fn forbidden(group: &str, resource: &str, name: &str, text: &str, reason: &str) -> Self {
        // The qualified resource upstream wraps with carries no subresource.
        let resource = resource.split('/').next().unwrap_or_default();
        let mut msg = if resource.is_empty() {
            format!("forbidden: {text}")
        } else if name.is_empty() {
            format!("{} is forbidden: {text}", group_resource(group, resource))
        } else {
            format!(
                "{} {name:?} is forbidden: {text}",
                group_resource(group, resource)
            )
        };
        if !reason.is_empty() {
            msg = format!("{msg}: {reason}");
        }
        let msg = msg
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        Self::new(403, "Forbidden", msg, Some(details(name, group, resource)))
    }

    /// 403 from an admission plugin: `pods "app" is forbidden: <plugin message>`.
    pub fn admission_forbidden(group: &str, resource: &str, name: &str, text: &str) -> Self {
        let name = if name.is_empty() { "Unknown" } else { name };
        let msg = format!(
            "{} {name:?} is forbidden: {text}",
            group_resource(group, resource)
        );
        Self::new(403, "Forbidden", msg, Some(details(name, group, resource)))
    }

    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        let msg = format!("{} {name:?} not found", group_resource(group, resource));
        Self::new(404, "NotFound", msg, Some(details(name, group, resource)))
    }

    /// An unregistered path: upstream's `NewNotFound(schema.GroupResource{}, "")`, whose details
    /// are present and empty. Clients read them: kubectl debug tells "the subresource is not
    /// served" from "the pod is gone" by `Details.Name == ""`, and without details it panicked.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
            Some(json!({})),
        )
    }

    /// Upstream's `NewGenerateNameConflict`: every generated name tried was taken.
    pub fn generate_name_conflict(group: &str, resource: &str, name: &str) -> Self {
        let mut e = Self::already_exists(group, resource, name);
        e.message = format!(
            "{}, the server was not able to generate a unique name for the object",
            e.message
        );
        if let Some(d) = e.details.as_mut() {
            d["retryAfterSeconds"] = json!(1);
        }
        e
    }

    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        let msg = format!(
            "{} {name:?} already exists",
            group_resource(group, resource)
        );
        Self::new(
            409,
            "AlreadyExists",
            msg,
            Some(details(name, group, resource)),
        )
    }

    /// 409 Conflict: `Operation cannot be fulfilled on <gr> "<name>": <text>`.
    pub fn conflict(group: &str, resource: &str, name: &str, text: &str) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} {name:?}: {text}",
            group_resource(group, resource)
        );
        Self::new(409, "Conflict", msg, Some(details(name, group, resource)))
    }

    /// 409 from server-side apply (upstream's `NewApplyConflict`): `conflicts` are the printed
    /// manager and the field path of each conflict, one cause each.
    pub fn apply_conflict(conflicts: &[(String, String)]) -> Self {
        let msg = match conflicts {
            [(manager, path)] => {
                format!("Apply failed with 1 conflict: conflict with {manager}: {path}")
            }
            _ => {
                let mut managers: Vec<&String> = conflicts.iter().map(|(m, _)| m).collect();
                managers.sort();
                managers.dedup();
                let mut lines = Vec::new();
                for m in managers {
                    lines.push(format!("conflicts with {m}:"));
                    for (_, path) in conflicts.iter().filter(|(cm, _)| cm == m) {
                        lines.push(format!("- {path}"));
                    }
                }
                format!(
                    "Apply failed with {} conflicts: {}",
                    conflicts.len(),
                    lines.join("\n")
                )
            }
        };
        let causes: Vec<Value> = conflicts
            .iter()
            .map(|(m, path)| {
                json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": path})
            })
            .collect();
        Self::new(409, "Conflict", msg, Some(json!({ "causes": causes })))
    }

    pub fn stale(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(group, resource, name, STALE)
    }

    /// Whether this is [`ApiError::stale`]: the object moved since it was read.
    pub fn is_stale(&self) -> bool {
        self.code == 409 && self.message.ends_with(STALE)
    }

    /// 422 Invalid; `kind` is the Kind (`Pod`), `group` its API group.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let mut texts: Vec<String> = Vec::new();
        for c in &causes {
            let t = c.rendered();
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
        let errs = if texts.len() == 1 {
            texts[0].clone()
        } else {
            format!("[{}]", texts.join(", "))
        };
        let gk = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{gk} {name:?} is invalid: {errs}");
        let mut d = details(name, group, kind);
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect();
        if let Value::Object(m) = &mut d {
            m.insert("causes".into(), Value::Array(causes));
        }
        Self::new(422, "Invalid", msg, Some(d))
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message, None)
    }

    /// A JSON patch that does not apply: upstream answers 422 with the patch error as message.
    pub fn invalid_patch(err: impl std::fmt::Display) -> Self {
        Self::new(422, "Invalid", err.to_string(), None)
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
            None,
        )
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            Some(json!({})),
        )
    }

    /// `NewMethodNotSupported(resource, "watch")`: a resource that lists but cannot be watched.
    pub fn watch_not_supported(resource: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("watch is not supported on resources of kind {resource:?}"),
            Some(json!({"kind": resource})),
        )
    }

    pub fn not_acceptable(supported: &[&str]) -> Self {
        let list = supported.join(", ");
        Self::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: {list}"),
            None,
        )
    }

    /// upstream `NewUnsupportedMediaTypeError`: the media types this endpoint accepts.
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
            None,
        )
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message, None)
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message, None)
    }

    /// A storage failure that is not about the object: etcd unreachable or failing is a 500
    /// carrying etcd's own words and no reason (upstream's `ErrorToAPIStatus` for an error
    /// that is not a Status), a storage call past its deadline the handler's 504.
    pub(crate) fn storage(err: &crate::apiserver::storage::interface::StoreError) -> Self {
        use crate::apiserver::storage::interface::StoreError;
        match err {
            StoreError::Unavailable(m) => Self::new(500, "", m.clone(), None),
            StoreError::Timeout => Self::timeout(format!("Timeout: {err}")),
            other => Self::internal(other),
        }
    }

    pub fn internal(err: impl std::fmt::Display) -> Self {
        let e = err.to_string();
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {e}"),
            Some(json!({"causes": [{"message": e}]})),
        )
    }

    /// The `Status` body encoded with keys in Go's order (serde_json's Value would sort them).
    pub fn status_bytes(&self) -> Vec<u8> {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct StatusBody<'a> {
            kind: &'static str,
            api_version: &'static str,
            metadata: Value,
            status: &'static str,
            message: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            reason: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            details: Option<&'a Value>,
            code: u16,
        }
        let body = StatusBody {
            kind: "Status",
            api_version: "v1",
            metadata: self.metadata(),
            status: "Failure",
            message: &self.message,
            reason: self.reason,
            details: self.details.as_ref(),
            code: self.code,
        };
        let mut out = serde_json::to_vec(&body).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The `Status` body as a Value (for watch ERROR events and the audit log).
    pub fn to_status(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.insert("metadata".into(), self.metadata());
        m.insert("status".into(), json!("Failure"));
        m.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            m.insert("reason".into(), json!(self.reason));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        m.insert("code".into(), json!(self.code));
        Value::Object(m)
    }
}

/// A `Status` reporting success (binding 201, deletes of kinds that return no object).
pub fn success(code: u16, details: Option<Value>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), json!("Status"));
    m.insert("apiVersion".into(), json!("v1"));
    m.insert("metadata".into(), json!({}));
    m.insert("status".into(), json!("Success"));
    if let Some(d) = details {
        m.insert("details".into(), d);
    }
    m.insert("code".into(), json!(code));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubectl debug reads `Details.Name` of this 404 without checking for details.
    #[test]
    fn an_unregistered_path_has_empty_details() {
        let s = String::from_utf8(ApiError::no_route().status_bytes()).unwrap_or_default();
        assert_eq!(
            s,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\",\"details\":{},\"code\":404}\n"
        );
    }

    #[test]
    fn unauthorized_is_byte_exact() {
        let s = String::from_utf8(ApiError::unauthorized().status_bytes()).unwrap_or_default();
        assert_eq!(
            s,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}\n"
        );
    }

    #[test]
    fn invalid_single_and_many() {
        let e = ApiError::invalid(
            "",
            "Pod",
            "app",
            vec![Cause::required("spec.containers", "")],
        );
        assert_eq!(
            e.message,
            r#"Pod "app" is invalid: spec.containers: Required value"#
        );
        let e = ApiError::invalid(
            "",
            "Pod",
            "app",
            vec![
                Cause::required("a", ""),
                Cause::invalid("b", &json!("x"), "bad"),
            ],
        );
        assert_eq!(
            e.message,
            r#"Pod "app" is invalid: [a: Required value, b: Invalid value: "x": bad]"#
        );
    }

    #[test]
    fn forbidden_texts() {
        let e = ApiError::forbidden("", "pods", "", "User \"jane\" cannot list", "");
        assert_eq!(e.message, "pods is forbidden: User \"jane\" cannot list");
        let e = ApiError::forbidden("", "", "", "User \"a\" cannot get path \"/\"", "");
        assert_eq!(e.message, "forbidden: User \"a\" cannot get path \"/\"");
    }
}

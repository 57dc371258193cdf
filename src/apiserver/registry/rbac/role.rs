//! Role and ClusterRole (upstream `pkg/registry/rbac/*role`): printed by the default table
//! convertor (Name, Created At); each rule checked as `ValidatePolicyRule` checks it.

use serde_json::Value;

use crate::apiserver::registry::strategy::{Strategy, kind_type, validate_into_trace};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

/// A rule grants verbs on resources of API groups, or on non-resource URLs (cluster-wide
/// only), never both.
fn rules(o: &Value, namespaced: bool) -> Vec<Cause> {
    let mut out = Vec::new();
    let len = |r: &Value, k: &str| r.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    for (i, r) in o
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("rules[{i}]");
        if len(r, "verbs") == 0 {
            out.push(Cause::required(
                &format!("{p}.verbs"),
                "verbs must contain at least one value",
            ));
        }
        if len(r, "nonResourceURLs") > 0 {
            let urls = &r["nonResourceURLs"];
            let go = |detail: &str| Cause {
                reason: "FieldValueInvalid",
                message: format!("Invalid value: {}: {detail}", go_strings(urls)),
                field: format!("{p}.nonResourceURLs"),
            };
            if namespaced {
                out.push(go("namespaced rules cannot apply to non-resource URLs"));
            }
            if len(r, "apiGroups") + len(r, "resources") + len(r, "resourceNames") > 0 {
                out.push(go(
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if len(r, "apiGroups") == 0 {
            out.push(Cause::required(
                &format!("{p}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if len(r, "resources") == 0 {
            out.push(Cause::required(
                &format!("{p}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
    out
}

/// A `[]string` as Go's `%#v` prints it.
fn go_strings(v: &Value) -> String {
    let items: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| format!("{:?}", s.as_str().unwrap_or_default()))
        .collect();
    format!("[]string{{{}}}", items.join(", "))
}

pub(crate) struct Role;
pub(crate) struct ClusterRole;

impl Strategy for Role {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "Role"
    }
    kind_type!(k8s_openapi::api::rbac::v1::Role);
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        let causes = rules(obj, true);
        validate_into_trace(self.group(), self.kind(), obj, trace, causes)
    }
    fn validate_update(&self, _sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        rules(next, true)
    }
}

impl Strategy for ClusterRole {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "ClusterRole"
    }
    kind_type!(k8s_openapi::api::rbac::v1::ClusterRole);
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        let causes = rules(obj, false);
        validate_into_trace(self.group(), self.kind(), obj, trace, causes)
    }
    fn validate_update(&self, _sub: &str, next: &Value, _current: &Value) -> Vec<Cause> {
        rules(next, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rule_needs_verbs_and_either_resources_or_urls() {
        let o = json!({"rules": [
            {"verbs": [], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"], "apiGroups": [""]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
        ]});
        let r: Vec<String> = rules(&o, true).iter().map(Cause::rendered).collect();
        assert_eq!(
            r,
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[1].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs",
                "rules[1].nonResourceURLs: Invalid value: []string{\"/healthz\"}: rules cannot apply to both regular resources and non-resource URLs",
            ]
        );
        let cluster = json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert!(rules(&cluster, false).is_empty());
    }
}

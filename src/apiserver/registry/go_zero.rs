//! Which zero values are values. Go's JSON encoding leaves a non-pointer field's zero out
//! (`omitempty`), so to kube-apiserver `hostNetwork: false` and no `hostNetwork` are one object;
//! a pointer field's zero is kept and means something (`runAsUser: 0` is root,
//! `gracePeriodSeconds: 0` deletes at once). Protobuf decoding and update validation both ask.

use serde_json::Value;

/// The pointer fields (by JSON name) whose zero is kept.
const POINTER_FIELDS: &[&str] = &[
    "activeDeadlineSeconds",
    "allowPrivilegeEscalation",
    "automountServiceAccountToken",
    "defaultMode",
    "enableServiceLinks",
    "expirationSeconds",
    "fsGroup",
    "gracePeriodSeconds",
    "hostUsers",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "leaseDurationSeconds",
    "leaseTransitions",
    "minDomains",
    "mode",
    "optional",
    "orphanDependents",
    "priority",
    "privileged",
    "readOnlyRootFilesystem",
    "runAsGroup",
    "runAsNonRoot",
    "runAsUser",
    "setHostnameAsFQDN",
    "shareProcessNamespace",
    "terminationGracePeriodSeconds",
    "tolerationSeconds",
    "value",
];

/// Whether `v`, the value of the field `name`, is what Go's JSON encoding leaves out.
pub(crate) fn omitted(name: &str, v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(false) => !POINTER_FIELDS.contains(&name),
        Value::Number(n) => n.as_i64() == Some(0) && !POINTER_FIELDS.contains(&name),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_zeros_are_left_out_and_pointer_zeros_kept() {
        assert!(omitted("hostNetwork", &json!(false)));
        assert!(omitted("nodeName", &json!("")));
        assert!(omitted("containerPort", &json!(0)));
        assert!(!omitted("runAsUser", &json!(0)));
        assert!(!omitted("automountServiceAccountToken", &json!(false)));
        assert!(!omitted("hostNetwork", &json!(true)));
    }
}

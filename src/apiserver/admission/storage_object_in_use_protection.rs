//! The StorageObjectInUseProtection admission plugin (upstream
//! `plugin/pkg/admission/storage/storageobjectinuseprotection`): every new claim gets the
//! `kubernetes.io/pvc-protection` finalizer and every new volume `kubernetes.io/pv-protection`,
//! so a claim a pod still uses, or a volume still bound, is only marked deleted (Terminating)
//! until the protection controllers (`controllers/volume_protection.rs`) let it go.

use serde_json::{Value, json};

use crate::apiserver::admission::plugins::PluginRecord;

pub(crate) const NAME: &str = "StorageObjectInUseProtection";
pub(crate) const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub(crate) const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

/// Add `finalizer` to `obj` unless it has it, and say what the plugin did.
pub(crate) fn admit(obj: &mut Value, finalizer: &str) -> PluginRecord {
    let mut record = PluginRecord::mutating(NAME);
    let Some(meta) = obj.get_mut("metadata").filter(|m| m.is_object()) else {
        return record;
    };
    let before = meta.get("finalizers").filter(|f| f.is_array()).cloned();
    let mut list = before.clone().unwrap_or_else(|| json!([]));
    let Some(items) = list.as_array_mut() else {
        return record;
    };
    if items.iter().any(|f| f.as_str() == Some(finalizer)) {
        return record;
    }
    items.push(json!(finalizer));
    record.set(
        "/metadata/finalizers",
        before.map(|b| b.to_string()),
        list.to_string(),
    );
    meta["finalizers"] = list;
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finalizer_is_added_once_beside_the_users() {
        let mut claim = json!({"metadata": {"name": "data", "finalizers": ["example.com/keep"]}});
        let r = admit(&mut claim, PVC_PROTECTION);
        assert_eq!(r.result, "changed");
        assert_eq!(
            claim["metadata"]["finalizers"],
            json!(["example.com/keep", "kubernetes.io/pvc-protection"])
        );
        assert_eq!(admit(&mut claim, PVC_PROTECTION).result, "unchanged");
        let mut pv = json!({"metadata": {"name": "pv1"}});
        admit(&mut pv, PV_PROTECTION);
        assert_eq!(
            pv["metadata"]["finalizers"],
            json!(["kubernetes.io/pv-protection"])
        );
    }
}

//! The PersistentVolumeClaimResize admission plugin (upstream
//! `plugin/pkg/admission/storage/persistentvolume/resize`): a claim's storage request may grow
//! only while it is Bound, and only when its StorageClass says `allowVolumeExpansion: true`.
//! kind's `standard` class does not, and neither does the demo's, so growing a claim there is
//! refused where it was accepted and never acted on.

use serde_json::Value;

use crate::apiserver::registry::validation::parse_quantity;
use crate::apiserver::storage::interface::Storage;

pub(crate) const NAME: &str = "PersistentVolumeClaimResize";

fn storage_request(claim: &Value) -> f64 {
    claim
        .pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
        .and_then(parse_quantity)
        .unwrap_or(0.0)
}

/// `GetPersistentVolumeClaimClass`: the beta annotation first, then the field.
fn class_of(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The class the stored claim at `key` names, if that class allows expansion. Read before the
/// update: the update itself runs under the store's lock.
pub(crate) fn expandable_class(store: &dyn Storage, key: &str) -> Option<String> {
    let claim = store.get(key)?;
    let class = class_of(&claim);
    let allowed = store
        .get(&format!("/registry/storageclasses/{class}"))
        .and_then(|c| c.get("allowVolumeExpansion").and_then(Value::as_bool))
        .unwrap_or(false);
    (allowed && !class.is_empty()).then(|| class.to_string())
}

/// `Validate` on an update of a claim's main resource: the refusal's text, if refused.
/// `expandable` is what `expandable_class` read.
pub(crate) fn refusal(expandable: Option<&str>, next: &Value, cur: &Value) -> Option<&'static str> {
    if storage_request(next) <= storage_request(cur) {
        return None;
    }
    if cur.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
        return Some("Only bound persistent volume claims can be expanded");
    }
    let (class, old_class) = (class_of(next), class_of(cur));
    let allowed = !class.is_empty() && class == old_class && expandable == Some(class);
    (!allowed).then_some(
        "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::{Store, Write};
    use serde_json::json;

    const REFUSED: Option<&str> = Some(
        "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
    );

    fn claim(size: &str, phase: &str, class: &str) -> Value {
        json!({"metadata": {"name": "data"}, "spec": {"storageClassName": class,
            "resources": {"requests": {"storage": size}}}, "status": {"phase": phase}})
    }

    #[test]
    fn only_a_bound_claim_of_an_expandable_class_may_grow() {
        let grow = |expandable: Option<&str>, class: &str, phase: &str| {
            refusal(
                expandable,
                &claim("2Gi", phase, class),
                &claim("1Gi", phase, class),
            )
        };
        assert_eq!(grow(Some("grows"), "grows", "Bound"), None);
        assert_eq!(grow(None, "fixed", "Bound"), REFUSED);
        assert_eq!(grow(None, "", "Bound"), REFUSED, "no class");
        assert_eq!(
            grow(Some("grows"), "grows", "Pending"),
            Some("Only bound persistent volume claims can be expanded")
        );
        // Not growing is not this plugin's business.
        let same = claim("1Gi", "Bound", "fixed");
        assert_eq!(refusal(None, &same, &same), None);
        assert_eq!(
            refusal(None, &claim("1024Mi", "Bound", "fixed"), &same),
            None
        );
    }

    #[test]
    fn the_class_is_read_from_the_stored_claim() {
        let store = Store::default();
        for (name, expand) in [("fixed", None), ("grows", Some(true))] {
            let mut c = json!({"metadata": {"name": name}, "provisioner": "p.io/x"});
            if let Some(e) = expand {
                c["allowVolumeExpansion"] = json!(e);
            }
            store
                .create(
                    &format!("/registry/storageclasses/{name}"),
                    c,
                    Write::Commit,
                )
                .expect("class");
        }
        for (claim_name, class, want) in [("a", "grows", Some("grows")), ("b", "fixed", None)] {
            let key = format!("/registry/persistentvolumeclaims/default/{claim_name}");
            store
                .create(&key, claim("1Gi", "Bound", class), Write::Commit)
                .expect("claim");
            assert_eq!(expandable_class(&store, &key).as_deref(), want, "{class}");
        }
    }
}

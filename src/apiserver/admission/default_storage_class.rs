//! The DefaultStorageClass admission plugin (upstream
//! `plugin/pkg/admission/storage/storageclass/setdefault`): a claim created without a
//! `storageClassName` gets the default class — the newest one annotated
//! `storageclass.kubernetes.io/is-default-class: "true"` — and an explicit `""` keeps none.

use serde_json::{Value, json};

use crate::apiserver::admission::plugins::PluginRecord;
use crate::apiserver::registry::storage::storageclass::is_default;
use crate::apiserver::storage::interface::Storage;

pub(crate) const NAME: &str = "DefaultStorageClass";

/// The default class's name, if any class is marked so (`GetDefaultClass`: the newest).
pub(crate) fn default_class(store: &dyn Storage) -> Option<String> {
    let classes = store.list("/registry/storageclasses/").0;
    classes
        .iter()
        .filter(|c| is_default(c))
        .max_by(|a, b| {
            let at = |c: &Value| {
                c.pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let name = |c: &Value| {
                c.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            at(a).cmp(&at(b)).then_with(|| name(b).cmp(&name(a)))
        })
        .and_then(|c| c.pointer("/metadata/name")?.as_str().map(String::from))
}

/// Give `claim` the default class when it names none, and say what the plugin did.
pub(crate) fn admit(store: &dyn Storage, claim: &mut Value) -> PluginRecord {
    let named = claim
        .pointer("/spec/storageClassName")
        .is_some_and(|c| !c.is_null());
    let class = (!named).then(|| default_class(store)).flatten();
    let mut record = PluginRecord::mutating(NAME);
    if let Some(class) = class
        && claim.get("spec").is_some_and(Value::is_object)
    {
        claim["spec"]["storageClassName"] = json!(class);
        record.set("/spec/storageClassName", None, class);
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::storage::store::{Store, Write};

    fn class(store: &Store, name: &str, default: bool, at: &str) {
        let mut c =
            json!({"metadata": {"name": name, "creationTimestamp": at}, "provisioner": "p.io/x"});
        if default {
            c["metadata"]["annotations"] =
                json!({"storageclass.kubernetes.io/is-default-class": "true"});
        }
        store
            .create(
                &format!("/registry/storageclasses/{name}"),
                c,
                Write::Commit,
            )
            .expect("class");
    }

    fn admitted(store: &Store, spec: Value) -> Value {
        let mut claim = json!({"metadata": {"name": "c"}, "spec": spec});
        admit(store, &mut claim);
        claim["spec"]["storageClassName"].clone()
    }

    #[test]
    fn a_claim_without_a_class_gets_the_newest_default() {
        let store = Store::default();
        assert_eq!(admitted(&store, json!({})), Value::Null, "no default class");
        class(&store, "slow", false, "2026-01-03T00:00:00Z");
        class(&store, "old", true, "2026-01-01T00:00:00Z");
        class(&store, "new", true, "2026-01-02T00:00:00Z");
        assert_eq!(admitted(&store, json!({})), json!("new"));
        // "" asks for no class; a named one is kept.
        assert_eq!(admitted(&store, json!({"storageClassName": ""})), json!(""));
        assert_eq!(
            admitted(&store, json!({"storageClassName": "slow"})),
            json!("slow")
        );
    }
}

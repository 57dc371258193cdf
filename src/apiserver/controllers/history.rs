//! ControllerRevisions for DaemonSets and StatefulSets (upstream `pkg/controller/history`):
//! one per distinct pod template, named `<owner>-<hash>`, its `data` the patch that restores
//! the template, numbered by `revision`; rolling back to a template renumbers its revision.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::deployment::pod_template_hash;
use crate::apiserver::controllers::workload::{self, claim, controller_ref, s};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::request::context::Api;

/// The label pods and revisions carry (`apps/v1` `ControllerRevisionHashLabelKey`).
pub(crate) const HASH_LABEL: &str = "controller-revision-hash";

/// `getPatch`: the template, marked to replace rather than merge.
fn data_of(owner: &Value) -> Value {
    let mut template = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(json!({}));
    template["$patch"] = json!("replace");
    json!({"spec": {"template": template}})
}

/// The revisions `owner` controls, oldest revision first. Orphans its selector picks are
/// adopted first (upstream `adoptOrphanRevisions` / `ClaimControllerRevisions`): a StatefulSet
/// deleted with `--cascade=orphan` and created again takes its old revisions back, as it takes
/// its pods.
pub(crate) fn revisions(api: &Api, owner: &Value) -> Vec<Arc<Value>> {
    let def = workload::def("apps", "controllerrevisions");
    let listed = client::list(api, def, s(owner, "/metadata/namespace"));
    let mut out = claim(api, owner, def, listed);
    out.sort_by_key(|r| int_at(r, "/revision"));
    out
}

/// The current revision of `owner`'s template (created or renumbered as needed): its hash
/// (the pods' `controller-revision-hash`) and name, or None when it could not be stored. A
/// name collision bumps `owner`'s `status.collisionCount`, which its status update stores.
pub(crate) fn current(api: &Api, owner: &mut Value) -> Option<(String, String)> {
    let def = workload::def("apps", "controllerrevisions");
    let ns = s(owner, "/metadata/namespace").to_string();
    let ns = ns.as_str();
    let data = data_of(owner);
    let all = revisions(api, owner);
    let max = all.last().map_or(0, |r| int_at(r, "/revision"));
    if let Some(r) = all.iter().find(|r| r.get("data") == Some(&data)) {
        let hash = s(r, &format!("/metadata/labels/{HASH_LABEL}")).to_string();
        let name = s(r, "/metadata/name").to_string();
        if int_at(r, "/revision") < max {
            let _ = client::update(api, def, ns, &name, |o| o["revision"] = json!(max + 1));
        }
        return Some((hash, name));
    }
    let mut collision = owner
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64);
    // Upstream's CreateControllerRevision: a name another revision already holds is taken
    // when that revision is this template, else a collision, counted so the next hash differs.
    for _ in 0..MAX_COLLISIONS {
        let hash = pod_template_hash(&data, collision);
        let name = format!("{}-{hash}", s(owner, "/metadata/name"));
        let mut labels = owner
            .pointer("/spec/template/metadata/labels")
            .cloned()
            .unwrap_or(json!({}));
        labels[HASH_LABEL] = json!(hash);
        let rev = json!({
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "ownerReferences": [controller_ref(owner)]},
            "data": data,
            "revision": max + 1,
        });
        match client::create(api, def, rev) {
            Ok(_) => return Some((hash, name)),
            Err(e) if e.reason == "AlreadyExists" => {
                let existing = api.store.get(&def.key_for(ns, &name))?;
                if existing.get("data") == Some(&data) {
                    return Some((hash, name));
                }
                let next = collision.unwrap_or(0) + 1;
                collision = Some(next);
                // The owner's status carries the count, as upstream's status update does.
                owner["status"]["collisionCount"] = json!(next);
            }
            Err(_) => return None,
        }
    }
    None
}

/// Collisions tried in one sync before giving up until the next.
const MAX_COLLISIONS: usize = 16;

/// Revisions beyond `revisionHistoryLimit` that no pod uses go, oldest first.
pub(crate) fn cleanup(api: &Api, owner: &Value, live_hashes: &[&str]) {
    let def = workload::def("apps", "controllerrevisions");
    let limit = owner
        .pointer("/spec/revisionHistoryLimit")
        .and_then(Value::as_i64)
        .unwrap_or(10);
    let all = revisions(api, owner);
    let Some((_, older)) = all.split_last() else {
        return;
    };
    let idle: Vec<_> = older
        .iter()
        .filter(|r| !live_hashes.contains(&s(r, &format!("/metadata/labels/{HASH_LABEL}"))))
        .collect();
    let excess = idle
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(0));
    for r in idle.into_iter().take(excess) {
        let _ = client::delete(
            api,
            def,
            s(owner, "/metadata/namespace"),
            s(r, "/metadata/name"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::controllers::bootstrap;
    use crate::apiserver::controllers::workload::controller_uid;
    use crate::apiserver::filters::authn::TokenFile;

    fn api() -> Api {
        let api = Api::new(TokenFile::default(), None);
        bootstrap::system(&api);
        api
    }

    fn set(uid: &str, image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default", "uid": uid},
            "spec": {"selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "d", "image": image}]}}}})
    }

    fn owner_of(api: &Api, name: &str) -> Option<String> {
        let r = api
            .store
            .get(&format!("/registry/controllerrevisions/default/{name}"))?;
        controller_uid(&r).map(str::to_string)
    }

    #[test]
    fn a_set_made_again_adopts_its_orphaned_revision() {
        let api = api();
        let (hash, name) = current(&api, &mut set("uid-1", "postgres")).expect("stored");
        // Deleted with --cascade=orphan: the garbage collector drops the owner reference.
        let def = workload::def("apps", "controllerrevisions");
        client::update(&api, def, "default", &name, |o| {
            o["metadata"]["ownerReferences"] = json!([]);
        })
        .expect("orphaned");
        let mut again = set("uid-2", "postgres");
        assert_eq!(current(&api, &mut again), Some((hash, name.clone())));
        assert_eq!(owner_of(&api, &name).as_deref(), Some("uid-2"));
        assert!(again.pointer("/status/collisionCount").is_none());
    }

    #[test]
    fn a_name_held_by_another_template_is_a_counted_collision() {
        let api = api();
        let mut first = set("uid-1", "postgres");
        let (_, taken) = current(&api, &mut first).expect("stored");
        // Another set's revision holds the name the new template hashes to: made by hand here,
        // with labels this set's selector does not pick, so it is not adopted.
        let mut other = set("uid-1", "postgres:17");
        let name = format!(
            "db-{}",
            pod_template_hash(
                &data_of(&other),
                other
                    .pointer("/status/collisionCount")
                    .and_then(Value::as_i64)
            )
        );
        let def = workload::def("apps", "controllerrevisions");
        client::create(
            &api,
            def,
            json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": "other"}},
                   "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}),
        )
        .expect("the squatter");
        let (hash, made) = current(&api, &mut other).expect("stored under another name");
        assert_ne!(made, name);
        assert_ne!(made, taken);
        assert_eq!(made, format!("db-{hash}"));
        assert_eq!(other["status"]["collisionCount"], 1);
        assert_eq!(owner_of(&api, &made).as_deref(), Some("uid-1"));
        assert_eq!(
            owner_of(&api, &name),
            None,
            "the other revision is left alone"
        );
    }
}

//! ControllerRevisions for DaemonSets and StatefulSets (upstream `pkg/controller/history`):
//! one per distinct pod template, named `<owner>-<hash>`, its `data` the patch that restores
//! the template, numbered by `revision`; rolling back to a template renumbers its revision.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::deployment::pod_template_hash;
use crate::apiserver::controllers::workload::{self, controller_ref, controller_uid, s};
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

/// The revisions `owner` controls, oldest revision first.
pub(crate) fn revisions(api: &Api, owner: &Value) -> Vec<Arc<Value>> {
    let uid = s(owner, "/metadata/uid");
    let mut out: Vec<_> = client::list(
        api,
        workload::def("apps", "controllerrevisions"),
        s(owner, "/metadata/namespace"),
    )
    .into_iter()
    .filter(|r| controller_uid(r) == Some(uid))
    .collect();
    out.sort_by_key(|r| int_at(r, "/revision"));
    out
}

/// The current revision of `owner`'s template (created or renumbered as needed): its hash
/// (the pods' `controller-revision-hash`) and name, or None when it could not be stored.
pub(crate) fn current(api: &Api, owner: &Value) -> Option<(String, String)> {
    let def = workload::def("apps", "controllerrevisions");
    let ns = s(owner, "/metadata/namespace");
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
    let collision = owner
        .pointer("/status/collisionCount")
        .and_then(Value::as_i64);
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
    client::create(api, def, rev).ok().map(|_| (hash, name))
}

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

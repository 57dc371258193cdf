//! The namespace controller (upstream `pkg/controller/namespace`, `deletion/
//! namespaced_resources_deleter.go`): a Terminating namespace has every object of every
//! namespaced kind in it deleted (pods gracefully, through their kubelet), its five deletion
//! conditions kept as upstream words them, and once nothing is left its `kubernetes` finalizer
//! removed and the namespace itself deleted.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::garbage_collector::finalizers;
use crate::apiserver::controllers::workload::{Controller, ns_name, s, terminating};
use crate::apiserver::registry::core::namespace::FINALIZER;
use crate::apiserver::registry::resources::{RESOURCES, ResourceDef};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::storage::store::Write;
use crate::apiserver::util;

pub(crate) struct Namespaces;

/// Every stored namespaced kind, each storage key once.
fn namespaced() -> Vec<&'static ResourceDef> {
    let mut out: Vec<&'static ResourceDef> = Vec::new();
    for r in RESOURCES.iter().filter(|r| r.namespaced && r.stored()) {
        if !out.iter().any(|o| o.key == r.key) {
            out.push(r);
        }
    }
    out
}

impl Controller for Namespaces {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/namespaces/", "/registry/pods/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix("/registry/namespaces/") {
            out.insert((name.to_string(), String::new()));
        } else if let Some((ns, _)) = ns_name(&ev.key) {
            // A pod gone from a namespace being emptied may be its last.
            out.insert((ns, String::new()));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        api.store
            .list("/registry/namespaces/")
            .0
            .iter()
            .filter(|n| terminating(n))
            .map(|n| (s(n, "/metadata/name").to_string(), String::new()))
            .collect()
    }

    fn sync(&mut self, api: &Api, name: &str, _: &str) -> bool {
        let key = format!("/registry/namespaces/{name}");
        let Some(ns) = api.store.get(&key) else {
            return true;
        };
        if !terminating(&ns) {
            return true;
        }
        let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
        let mut with_finalizers: BTreeMap<String, usize> = BTreeMap::new();
        let mut failures: Vec<String> = Vec::new();
        for def in namespaced() {
            let items = client::list(api, def, name);
            if items.is_empty() {
                continue;
            }
            remaining.insert(format!("{}.{}", def.plural, def.group), items.len());
            for o in &items {
                for f in finalizers(o) {
                    *with_finalizers.entry(f.to_string()).or_default() += 1;
                }
                if terminating(o) {
                    continue;
                }
                // Background propagation: pods gracefully, what a finalizer holds only marked.
                if let Err(e) = client::delete(api, def, name, s(o, "/metadata/name")) {
                    failures.push(format!("{}.{}: {}", def.plural, def.group, e.message));
                }
            }
        }
        set_conditions(api, name, &remaining, &with_finalizers, &failures);
        if !remaining.is_empty() {
            return failures.is_empty();
        }
        // Empty: the finalize step, then the namespace goes.
        let _ = client::update(api, ns_def(), "", name, |o| {
            if let Some(f) = o
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut)
            {
                f.retain(|x| x.as_str() != Some(FINALIZER));
            }
        });
        let _ = api.store.delete(&key, Write::Commit, |cur| {
            let spec_finalizers = cur
                .pointer("/spec/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty());
            if spec_finalizers || !finalizers(cur).is_empty() {
                Err(crate::apiserver::storage::store::StoreError::Rejected(
                    "finalizers remain".into(),
                ))
            } else {
                Ok(())
            }
        });
        true
    }
}

fn ns_def() -> &'static ResourceDef {
    crate::apiserver::controllers::workload::def("", "namespaces")
}

fn condition(ty: &str, failing: bool, reason: &str, message: &str) -> (String, Value) {
    (
        ty.to_string(),
        json!({"type": ty, "status": if failing { "True" } else { "False" }, "reason": reason, "message": message}),
    )
}

/// The five conditions of `status_condition_utils.go`, a transition time kept while a
/// condition's status stays.
fn set_conditions(
    api: &Api,
    name: &str,
    remaining: &BTreeMap<String, usize>,
    with_finalizers: &BTreeMap<String, usize>,
    failures: &[String],
) {
    let list = |m: &BTreeMap<String, usize>, word: &str| {
        let mut v: Vec<String> = m
            .iter()
            .map(|(k, n)| format!("{k}{word}{n} resource instances"))
            .collect();
        v.sort();
        v.join(", ")
    };
    let conds = [
        condition(
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        condition(
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        if failures.is_empty() {
            condition(
                "NamespaceDeletionContentFailure",
                false,
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization",
            )
        } else {
            condition(
                "NamespaceDeletionContentFailure",
                true,
                "ContentDeletionFailed",
                &format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    failures.len(),
                    failures.join(", ")
                ),
            )
        },
        if remaining.is_empty() {
            condition(
                "NamespaceContentRemaining",
                false,
                "ContentRemoved",
                "All content successfully removed",
            )
        } else {
            condition(
                "NamespaceContentRemaining",
                true,
                "SomeResourcesRemain",
                &format!("Some resources are remaining: {}", list(remaining, " has ")),
            )
        },
        if with_finalizers.is_empty() {
            condition(
                "NamespaceFinalizersRemaining",
                false,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished",
            )
        } else {
            condition(
                "NamespaceFinalizersRemaining",
                true,
                "SomeFinalizersRemain",
                &format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    list(with_finalizers, " in ")
                ),
            )
        },
    ];
    let now = util::now();
    let _ = client::update(api, ns_def(), "", name, |o| {
        let old: Vec<Value> = o
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let next: Vec<Value> = conds
            .iter()
            .map(|(ty, c)| {
                let mut c = c.clone();
                let prev = old.iter().find(|p| s(p, "/type") == ty);
                let same = prev.is_some_and(|p| {
                    s(p, "/status") == s(&c, "/status")
                        && s(p, "/reason") == s(&c, "/reason")
                        && s(p, "/message") == s(&c, "/message")
                });
                c["lastTransitionTime"] = match prev {
                    Some(p) if same => p.get("lastTransitionTime").cloned().unwrap_or(json!(now)),
                    _ => json!(now),
                };
                c
            })
            .collect();
        o["status"]["conditions"] = Value::Array(next);
    });
}

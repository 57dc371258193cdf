//! The two storage-protection controllers (upstream `pkg/controller/volume/pvcprotection` and
//! `pvprotection`): a deleted claim keeps its `kubernetes.io/pvc-protection` finalizer, and
//! stays Terminating, while a scheduled pod still mounts it; a deleted volume keeps
//! `kubernetes.io/pv-protection` while it is Bound. Without them a claim deleted under a running
//! pod was gone at once and its volume, with policy Delete, deleted with the pod's data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::apiserver::admission::storage_object_in_use_protection::{
    PV_PROTECTION, PVC_PROTECTION,
};
use crate::apiserver::controllers::client;
use crate::apiserver::controllers::garbage_collector::{
    add_finalizer, finalizers, release_finalizer,
};
use crate::apiserver::controllers::persistentvolume::{CLAIMS, VOLUMES};
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s, terminating};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;

const PODS: &str = "/registry/pods/";

/// Whether the finalizer is missing on a live object (`NeedToAddFinalizer`) or is all that
/// holds a deleted one (`IsDeletionCandidate`); None when neither.
fn candidate(o: &Value, finalizer: &str) -> Option<bool> {
    let has = finalizers(o).contains(&finalizer);
    match (terminating(o), has) {
        (false, false) => Some(false),
        (true, true) => Some(true),
        _ => None,
    }
}

/// `addFinalizer`, for objects stored before the admission plugin added it.
fn protect(api: &Api, res: &str, ns: &str, name: &str, finalizer: &str) -> bool {
    client::update(api, workload::def("", res), ns, name, |o| {
        add_finalizer(o, finalizer)
    })
    .is_ok()
}

/// `podUsesPVC`: only a scheduled pod counts (the kubelet will not start one whose claim is
/// being deleted). An ephemeral volume's claim counts while the pod is not shut down.
fn pod_uses(pod: &Value, claim: &Value) -> bool {
    if s(pod, "/spec/nodeName").is_empty() {
        return false;
    }
    let name = s(claim, "/metadata/name");
    let pod_name = s(pod, "/metadata/name");
    let shut_down =
        terminating(pod) && pod.pointer("/metadata/deletionGracePeriodSeconds") == Some(&json!(0));
    let owned_by_pod = claim
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("controller") == Some(&json!(true)) && s(r, "/uid") == s(pod, "/metadata/uid")
            })
        });
    pod.pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|v| {
            s(v, "/persistentVolumeClaim/claimName") == name
                || (!shut_down
                    && v.get("ephemeral").is_some_and(|e| !e.is_null())
                    && format!("{pod_name}-{}", s(v, "/name")) == name
                    && owned_by_pod)
        })
}

/// The pvc-protection controller.
#[derive(Default)]
pub(crate) struct PvcProtection {
    /// Deleted claims still held, by namespace: a pod event there may free them. Pod events
    /// elsewhere are not even read.
    waiting: BTreeMap<String, BTreeSet<String>>,
}

impl PvcProtection {
    fn hold(&mut self, ns: &str, name: &str, held: bool) {
        if held {
            self.waiting
                .entry(ns.to_string())
                .or_default()
                .insert(name.to_string());
        } else if let Some(names) = self.waiting.get_mut(ns) {
            names.remove(name);
            if names.is_empty() {
                self.waiting.remove(ns);
            }
        }
    }
}

impl Controller for PvcProtection {
    fn prefixes(&self) -> &'static [&'static str] {
        &[CLAIMS, PODS]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if ev.key.starts_with(CLAIMS) {
            out.extend(ns_name(&ev.key));
        } else if let Some((ns, _)) = ns_name(&ev.key)
            && let Some(names) = self.waiting.get(&ns)
        {
            out.extend(names.iter().map(|n| (ns.clone(), n.clone())));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, workload::def("", "persistentvolumeclaims"))
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let claims = workload::def("", "persistentvolumeclaims");
        let claim = api.store.get(&claims.key_for(ns, name));
        let Some(claim) = claim else {
            self.hold(ns, name, false);
            return true;
        };
        match candidate(&claim, PVC_PROTECTION) {
            None => {
                self.hold(ns, name, false);
                true
            }
            Some(false) => protect(api, "persistentvolumeclaims", ns, name, PVC_PROTECTION),
            Some(true) => {
                // The views the control loops list leave out pods' volumes: read them whole.
                let pods = api.store.list(&format!("{PODS}{ns}/")).0;
                let used = pods.iter().any(|p| pod_uses(p, &claim));
                self.hold(ns, name, used);
                used || release_finalizer(api, claims, ns, name, PVC_PROTECTION)
            }
        }
    }
}

/// The pv-protection controller.
pub(crate) struct PvProtection;

impl Controller for PvProtection {
    fn prefixes(&self) -> &'static [&'static str] {
        &[VOLUMES]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix(VOLUMES) {
            out.insert((String::new(), name.to_string()));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        workload::keys(api, workload::def("", "persistentvolumes"))
    }

    fn sync(&mut self, api: &Api, _ns: &str, name: &str) -> bool {
        let volumes = workload::def("", "persistentvolumes");
        let Some(pv) = api.store.get(&volumes.key_for("", name)) else {
            return true;
        };
        match candidate(&pv, PV_PROTECTION) {
            None => true,
            Some(false) => protect(api, "persistentvolumes", "", name, PV_PROTECTION),
            // `isBeingUsed`: Bound, as the PersistentVolume controller last wrote it.
            Some(true) if s(&pv, "/status/phase") == "Bound" => true,
            Some(true) => release_finalizer(api, volumes, "", name, PV_PROTECTION),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_scheduled_pod_mounting_the_claim_holds_it() {
        let claim = json!({"metadata": {"name": "data"}});
        let pod = |node: &str, claim: &str| {
            json!({"metadata": {"name": "db", "uid": "p1"}, "spec": {"nodeName": node,
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}})
        };
        assert!(pod_uses(&pod("node-1", "data"), &claim));
        assert!(!pod_uses(&pod("", "data"), &claim), "not scheduled");
        assert!(!pod_uses(&pod("node-1", "other"), &claim));
        // A finished pod still mounts it, as upstream counts it.
        let mut done = pod("node-1", "data");
        done["status"] = json!({"phase": "Succeeded"});
        assert!(pod_uses(&done, &claim));
    }

    #[test]
    fn an_ephemeral_claim_is_held_by_its_own_pod_until_shut_down() {
        let claim = json!({"metadata": {"name": "db-scratch", "ownerReferences": [
            {"uid": "p1", "controller": true, "kind": "Pod", "name": "db"}]}});
        let mut pod = json!({"metadata": {"name": "db", "uid": "p1"}, "spec": {"nodeName": "n",
            "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]}});
        assert!(pod_uses(&pod, &claim));
        pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert!(!pod_uses(&pod, &claim));
        let stranger = json!({"metadata": {"name": "db-scratch"}});
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        assert!(!pod_uses(&pod, &stranger), "a claim the pod does not own");
    }

    #[test]
    fn the_finalizer_is_added_to_live_objects_and_judged_on_deleted_ones() {
        let live = json!({"metadata": {"name": "a"}});
        assert_eq!(candidate(&live, PVC_PROTECTION), Some(false));
        let held = json!({"metadata": {"name": "a", "finalizers": [PVC_PROTECTION],
            "deletionTimestamp": "2026-01-01T00:00:00Z"}});
        assert_eq!(candidate(&held, PVC_PROTECTION), Some(true));
        let plain = json!({"metadata": {"name": "a", "finalizers": [PVC_PROTECTION]}});
        assert_eq!(candidate(&plain, PVC_PROTECTION), None);
    }
}

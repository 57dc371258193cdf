//! The demo cluster's volume provisioner, `kexplore.dev/hostpath`: a simulated external
//! provisioner, as kind ships rancher's local-path-provisioner behind its default `standard`
//! class. It does what sig-storage's external-provisioner library does for its claims: once
//! the PersistentVolume controller has named it on a claim (`volume.kubernetes.io/storage-
//! provisioner`) — and, for a WaitForFirstConsumer class, the scheduler has chosen a node
//! (`volume.kubernetes.io/selected-node`) — it creates the volume `pvc-<claim uid>`, a hostPath
//! on that node, already naming the claim, for the controller to bind. A Released volume it
//! made whose policy is Delete is deleted. No directory is made anywhere: like the kubelets'
//! containers, the volumes are the API objects a real provisioner would write.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::persistentvolume::{
    ANN_STORAGE_PROVISIONER, CLAIMS, VOLUMES, claims_and_volumes,
};
use crate::apiserver::controllers::volume_plugins::ANN_PROVISIONED_BY;
use crate::apiserver::controllers::volume_prebind::claim_ref;
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s, terminating};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::scheduler::plugins::volume_binding::{ANN_SELECTED_NODE, WAIT_FOR_FIRST_CONSUMER};

/// The provisioner's name, as its StorageClass names it.
pub(crate) const PROVISIONER: &str = "kexplore.dev/hostpath";
/// Where its volumes would live on their node (local-path-provisioner's layout).
const ROOT: &str = "/var/local-path-provisioner";

/// The demo cluster's default class: this provisioner, volumes made on the node of the first
/// pod that uses the claim, and deleted with it.
pub(crate) fn default_class() -> Value {
    json!({
        "metadata": {"name": "standard", "annotations": {
            "storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": WAIT_FOR_FIRST_CONSUMER,
    })
}

pub(crate) struct Provisioner;

fn annotation<'a>(o: &'a Value, key: &str) -> &'a str {
    o.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Provisioner {
    /// `provisionClaimOperation`: the volume for a claim that asks this provisioner for one.
    fn provision(&self, api: &Api, ns: &str, name: &str) -> bool {
        let claims = workload::def("", "persistentvolumeclaims");
        let Some(claim) = api.store.get(&claims.key_for(ns, name)) else {
            return true;
        };
        if terminating(&claim)
            || !s(&claim, "/spec/volumeName").is_empty()
            || annotation(&claim, ANN_STORAGE_PROVISIONER) != PROVISIONER
        {
            return true;
        }
        let class_name = s(&claim, "/spec/storageClassName");
        let Some(class) = api
            .store
            .get(&format!("/registry/storageclasses/{class_name}"))
        else {
            return true;
        };
        let node = annotation(&claim, ANN_SELECTED_NODE);
        if s(&class, "/volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER && node.is_empty() {
            return true;
        }
        let pvs = workload::def("", "persistentvolumes");
        let pv_name = format!("pvc-{}", s(&claim, "/metadata/uid"));
        if api.store.get(&pvs.key_for("", &pv_name)).is_some() {
            return true;
        }
        workload::event(
            api,
            PROVISIONER,
            &claim,
            "Normal",
            "Provisioning",
            &format!("External provisioner is provisioning volume for claim \"{ns}/{name}\""),
        );
        let mut pv = json!({
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv_name, "annotations": {ANN_PROVISIONED_BY: PROVISIONER}},
            "spec": {
                "capacity": {"storage": s(&claim, "/spec/resources/requests/storage")},
                "accessModes": claim.pointer("/spec/accessModes").cloned().unwrap_or(json!([])),
                "persistentVolumeReclaimPolicy": s(&class, "/reclaimPolicy"),
                "storageClassName": class_name,
                "volumeMode": s(&claim, "/spec/volumeMode"),
                "claimRef": claim_ref(&claim),
                "hostPath": {"path": format!("{ROOT}/{pv_name}_{ns}_{name}"), "type": "DirectoryOrCreate"},
            },
        });
        if !node.is_empty() {
            pv["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}});
        }
        match client::create_as(api, pvs, pv, PROVISIONER) {
            Ok(_) => {
                workload::event(
                    api,
                    PROVISIONER,
                    &claim,
                    "Normal",
                    "ProvisioningSucceeded",
                    &format!("Successfully provisioned volume {pv_name}"),
                );
                true
            }
            Err(e) => e.code == 409,
        }
    }

    /// A Released volume this provisioner made, whose policy is Delete, is deleted.
    fn reclaim(&self, api: &Api, name: &str) -> bool {
        let pvs = workload::def("", "persistentvolumes");
        let Some(pv) = api.store.get(&pvs.key_for("", name)) else {
            return true;
        };
        if s(&pv, "/status/phase") != "Released"
            || s(&pv, "/spec/persistentVolumeReclaimPolicy") != "Delete"
            || annotation(&pv, ANN_PROVISIONED_BY) != PROVISIONER
        {
            return true;
        }
        client::delete(api, pvs, "", name).is_ok()
    }
}

impl Controller for Provisioner {
    fn prefixes(&self) -> &'static [&'static str] {
        &[CLAIMS, VOLUMES]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix(VOLUMES) {
            out.insert((String::new(), name.to_string()));
        } else if ev.key.starts_with(CLAIMS) {
            out.extend(ns_name(&ev.key));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        claims_and_volumes(api)
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        if ns.is_empty() {
            self.reclaim(api, name)
        } else {
            self.provision(api, ns, name)
        }
    }
}

//! The PersistentVolume controller (upstream `pkg/controller/volume/persistentvolume`,
//! `pv_controller.go`): binds each unbound claim to the smallest Available volume that
//! satisfies it (class, access modes, size, volume mode, selector), completes bindings the
//! scheduler or a user began by naming one side, marks a volume Available or Released, and a
//! claim Lost when its volume is gone, and reclaims a Released volume whose policy is Delete as
//! the in-tree plugins would (`volume_plugins`). Claims of a WaitForFirstConsumer class are left
//! to the scheduler; a claim no volume satisfies says what it is waiting for (an external
//! provisioner, such as the demo's, or nothing), in upstream's words, and stays Pending.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::volume_plugins::{
    Reclaim, Refusal, cannot_provision, reclaim_delete,
};
use crate::apiserver::controllers::volume_prebind::claim_ref;
use crate::apiserver::controllers::workload::{self, Controller, ns_name, s, terminating};
use crate::apiserver::registry::core::persistentvolume::with_phase;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::scheduler::plugins::volume_binding::{
    ANN_BIND_COMPLETED, ANN_SELECTED_NODE, WAIT_FOR_FIRST_CONSUMER, best_match, names_claim,
};

const COMPONENT: &str = "persistentvolume-controller";
pub(crate) const CLAIMS: &str = "/registry/persistentvolumeclaims/";
pub(crate) const VOLUMES: &str = "/registry/persistentvolumes/";
const CLASSES: &str = "/registry/storageclasses/";

const ANN_BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
pub(crate) const ANN_STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
const ANN_BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";

/// How often a claim's unchanged wait is reported again (upstream's controller resync).
const REPORT_AGAIN: Duration = Duration::from_secs(15);

/// Work items: a claim is (namespace, name); a volume, cluster-scoped, is ("", name).
#[derive(Default)]
pub(crate) struct PersistentVolumes {
    /// The last event each claim got, so a 2 s resync does not repeat it every pass.
    reported: HashMap<(String, String), (String, Instant)>,
}

/// The volumes as the matching reads them, typed.
fn typed_volumes(volumes: &[Arc<Value>]) -> Vec<PersistentVolume> {
    volumes
        .iter()
        .filter_map(|v| PersistentVolume::deserialize(&**v).ok())
        .collect()
}

/// The stored volume of `name` among `volumes`.
fn stored<'a>(volumes: &'a [Arc<Value>], name: &str) -> Option<&'a Value> {
    volumes
        .iter()
        .map(|v| &**v)
        .find(|v| s(v, "/metadata/name") == name)
}

fn annotate(o: &mut Value, key: &str, value: &str) {
    if !o["metadata"]["annotations"].is_object() {
        o["metadata"]["annotations"] = json!({});
    }
    o["metadata"]["annotations"][key] = json!(value);
}

impl PersistentVolumes {
    /// An event about a claim, unless it got the same one within [`REPORT_AGAIN`].
    fn report(&mut self, api: &Api, claim: &Value, ty: &str, reason: &str, msg: &str) {
        let key = (
            s(claim, "/metadata/namespace").to_string(),
            s(claim, "/metadata/name").to_string(),
        );
        if let Some((last, at)) = self.reported.get(&key)
            && last == msg
            && at.elapsed() < REPORT_AGAIN
        {
            return;
        }
        self.reported.insert(key, (msg.to_string(), Instant::now()));
        workload::event(api, COMPONENT, claim, ty, reason, msg);
    }

    fn sync_claim(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let claims = workload::def("", "persistentvolumeclaims");
        let Some(claim) = api.store.get(&claims.key_for(ns, name)) else {
            self.reported.remove(&(ns.to_string(), name.to_string()));
            return true;
        };
        if terminating(&claim) {
            return true;
        }
        let volumes = client::list(api, workload::def("", "persistentvolumes"), "");
        let wanted = s(&claim, "/spec/volumeName");
        if !wanted.is_empty() {
            return self.sync_named(api, &claim, wanted, &volumes);
        }
        let Ok(typed) = PersistentVolumeClaim::deserialize(&*claim) else {
            return true;
        };
        let typed_pvs = typed_volumes(&volumes);
        let class_name = s(&claim, "/spec/storageClassName").to_string();
        let class = (!class_name.is_empty())
            .then(|| api.store.get(&format!("{CLASSES}{class_name}")))
            .flatten();
        let delayed = class
            .as_ref()
            .is_some_and(|c| s(c, "/volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER);
        let selected = claim
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(ANN_SELECTED_NODE))
            .is_some();
        // A volume that names this claim is bound whatever the mode: the scheduler names
        // one when it places a consumer of a WaitForFirstConsumer claim.
        let pre_bound = typed_pvs.iter().find(|v| names_claim(v, &typed));
        if delayed && !selected && pre_bound.is_none() {
            self.report(
                api,
                &claim,
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
            );
            return true;
        }
        let found = match pre_bound {
            Some(v) => Some(v),
            None if delayed => None,
            None => best_match(&typed_pvs, &typed, &HashSet::new(), |_| true),
        };
        let found = found.and_then(|v| stored(&volumes, v.metadata.name.as_deref()?));
        if let Some(pv) = found {
            return bind(api, &claim, pv);
        }
        match (class_name.as_str(), &class) {
            ("", _) => self.report(
                api,
                &claim,
                "Normal",
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set",
            ),
            (c, None) => self.report(
                api,
                &claim,
                "Warning",
                "ProvisioningFailed",
                &format!("storageclass.storage.k8s.io \"{c}\" not found"),
            ),
            (_, Some(class)) => {
                let provisioner = s(class, "/provisioner").to_string();
                // `kubernetes.io/no-provisioner`, the local-volume classes' name, among them.
                let refusal = cannot_provision(&provisioner);
                if let Some(Refusal::NoPlugin(why)) = &refusal {
                    self.report(api, &claim, "Warning", "ProvisioningFailed", why);
                    return true;
                }
                let missing = [ANN_STORAGE_PROVISIONER, ANN_BETA_STORAGE_PROVISIONER]
                    .iter()
                    .any(|a| {
                        claim
                            .pointer("/metadata/annotations")
                            .and_then(|m| m.get(*a))
                            .is_none()
                    });
                if missing {
                    let written = client::update(api, claims, ns, name, |c| {
                        annotate(c, ANN_STORAGE_PROVISIONER, &provisioner);
                        annotate(c, ANN_BETA_STORAGE_PROVISIONER, &provisioner);
                    });
                    if written.is_err() {
                        return false;
                    }
                }
                if let Some(Refusal::Disabled(why)) = &refusal {
                    self.report(api, &claim, "Warning", "ProvisioningFailed", why);
                    return true;
                }
                self.report(
                    api,
                    &claim,
                    "Normal",
                    "ExternalProvisioning",
                    &format!(
                        "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
                    ),
                );
            }
        }
        true
    }

    /// A claim that names its volume: bound already, to be bound, or Lost.
    fn sync_named(
        &mut self,
        api: &Api,
        claim: &Value,
        wanted: &str,
        volumes: &[Arc<Value>],
    ) -> bool {
        let bound = s(claim, "/status/phase") == "Bound";
        let names_it = |pv: &Value| match (
            PersistentVolume::deserialize(pv),
            PersistentVolumeClaim::deserialize(claim),
        ) {
            (Ok(pv), Ok(c)) => names_claim(&pv, &c),
            _ => false,
        };
        match stored(volumes, wanted) {
            None if bound => {
                let claims = workload::def("", "persistentvolumeclaims");
                let (ns, name) = (s(claim, "/metadata/namespace"), s(claim, "/metadata/name"));
                if client::update(api, claims, ns, name, |c| {
                    c["status"]["phase"] = json!("Lost");
                })
                .is_err()
                {
                    return false;
                }
                self.report(
                    api,
                    claim,
                    "Warning",
                    "ClaimLost",
                    "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
                );
                true
            }
            // Pre-bound to a volume not created yet: it binds when the volume appears.
            None => true,
            Some(pv) if pv.pointer("/spec/claimRef").is_none_or(Value::is_null) => {
                bind(api, claim, pv)
            }
            Some(pv) if names_it(pv) => bind(api, claim, pv),
            Some(_) => {
                self.report(
                    api,
                    claim,
                    "Warning",
                    "FailedBinding",
                    &format!("volume \"{wanted}\" already bound to a different claim."),
                );
                true
            }
        }
    }

    /// A volume's phase from its claimRef: Available without one, Bound while the claim it
    /// names exists, Released once that claim is gone. Binding is the claim's sync.
    fn sync_volume(&mut self, api: &Api, name: &str) -> bool {
        let def = workload::def("", "persistentvolumes");
        let Some(pv) = api.store.get(&def.key_for("", name)) else {
            return true;
        };
        // A volume being deleted is still followed: pv-protection holds it while it is Bound,
        // and lets it go once its claim is gone and it is Released.
        let phase = match pv.pointer("/spec/claimRef").filter(|r| r.is_object()) {
            None => "Available",
            Some(r) => {
                let key = format!("{CLAIMS}{}/{}", s(r, "/namespace"), s(r, "/name"));
                match api.store.get(&key) {
                    // Named but not bound yet (a user's or the scheduler's pre-binding).
                    _ if s(r, "/uid").is_empty() => "Available",
                    Some(c) if s(&c, "/metadata/uid") == s(r, "/uid") => {
                        if s(&c, "/spec/volumeName") == name {
                            "Bound"
                        } else {
                            return self.sync_claim(
                                api,
                                s(&c, "/metadata/namespace"),
                                s(&c, "/metadata/name"),
                            );
                        }
                    }
                    _ => "Released",
                }
            }
        };
        let current = s(&pv, "/status/phase");
        // A Failed volume stays Failed, so the user sees what went wrong.
        let released = phase == "Released";
        if current != phase && !(released && current == "Failed") {
            let written = client::update(api, def, "", name, |v| {
                if !v["status"].is_object() {
                    v["status"] = json!({});
                }
                with_phase(&mut v["status"], phase);
            });
            if written.is_err() {
                return false;
            }
        }
        if released && s(&pv, "/spec/persistentVolumeReclaimPolicy") == "Delete" {
            return reclaim(api, &pv);
        }
        true
    }
}

/// `deleteVolumeOperation`: the volume is deleted, left to its provisioner, or Failed with the
/// reason no deleter took it, reported once as upstream's VolumeFailedDelete.
fn reclaim(api: &Api, pv: &Value) -> bool {
    let def = workload::def("", "persistentvolumes");
    let name = s(pv, "/metadata/name");
    match reclaim_delete(pv) {
        Reclaim::External => true,
        // The hostPath deleter removes the directory first; this cluster's volumes have none.
        Reclaim::Delete => client::delete(api, def, "", name).is_ok(),
        Reclaim::Fail(_) if s(pv, "/status/phase") == "Failed" => true,
        Reclaim::Fail(why) => match client::update(api, def, "", name, |v| {
            with_phase(&mut v["status"], "Failed");
            v["status"]["message"] = json!(why);
        }) {
            Ok(failed) => {
                workload::event(
                    api,
                    COMPONENT,
                    &failed,
                    "Warning",
                    "VolumeFailedDelete",
                    &why,
                );
                true
            }
            Err(_) => false,
        },
    }
}

/// `bindVolumeToClaim` then `bindClaimToVolume`: the volume first, so a claim never names a
/// volume that does not name it back.
fn bind(api: &Api, claim: &Value, pv: &Value) -> bool {
    let pvs = workload::def("", "persistentvolumes");
    let claims = workload::def("", "persistentvolumeclaims");
    let pv_name = s(pv, "/metadata/name").to_string();
    let by_controller = pv.pointer("/spec/claimRef").is_none_or(Value::is_null);
    let r = claim_ref(claim);
    let volume = client::update(api, pvs, "", &pv_name, |v| {
        if by_controller {
            annotate(v, ANN_BOUND_BY_CONTROLLER, "yes");
        }
        v["spec"]["claimRef"] = r.clone();
        if !v["status"].is_object() {
            v["status"] = json!({});
        }
        with_phase(&mut v["status"], "Bound");
    });
    let Ok(volume) = volume else {
        return false;
    };
    let claim_named_it = s(claim, "/spec/volumeName") == pv_name;
    let (ns, name) = (s(claim, "/metadata/namespace"), s(claim, "/metadata/name"));
    client::update(api, claims, ns, name, |c| {
        c["spec"]["volumeName"] = json!(pv_name);
        annotate(c, ANN_BIND_COMPLETED, "yes");
        if !claim_named_it {
            annotate(c, ANN_BOUND_BY_CONTROLLER, "yes");
        }
        c["status"] = json!({
            "phase": "Bound",
            "accessModes": volume.pointer("/spec/accessModes").cloned().unwrap_or(json!([])),
            "capacity": volume.pointer("/spec/capacity").cloned().unwrap_or(json!({})),
        });
    })
    .is_ok()
}

/// Every claim, as (namespace, name), and every volume, as ("", name): the work items of the
/// controllers that watch both.
pub(crate) fn claims_and_volumes(api: &Api) -> BTreeSet<(String, String)> {
    let mut out = workload::keys(api, workload::def("", "persistentvolumeclaims"));
    out.extend(workload::keys(api, workload::def("", "persistentvolumes")));
    out
}

impl Controller for PersistentVolumes {
    fn prefixes(&self) -> &'static [&'static str] {
        &[CLAIMS, VOLUMES, CLASSES]
    }

    fn dirty(&mut self, api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix(VOLUMES) {
            out.insert((String::new(), name.to_string()));
        }
        if ev.key.starts_with(CLAIMS) {
            out.extend(ns_name(&ev.key));
            // The volume a deleted claim held is Released.
            for json in [Some(&ev.object), ev.prev.as_ref()].into_iter().flatten() {
                if let Ok(c) = serde_json::from_slice::<Value>(json) {
                    let v = s(&c, "/spec/volumeName");
                    if !v.is_empty() {
                        out.insert((String::new(), v.to_string()));
                    }
                }
            }
        }
        // A new or freed volume, or a class, can satisfy claims that were waiting.
        if ev.key.starts_with(VOLUMES) || ev.key.starts_with(CLASSES) {
            for c in client::list(api, workload::def("", "persistentvolumeclaims"), "") {
                if s(&c, "/spec/volumeName").is_empty() {
                    out.insert((
                        s(&c, "/metadata/namespace").to_string(),
                        s(&c, "/metadata/name").to_string(),
                    ));
                }
            }
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        claims_and_volumes(api)
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        if ns.is_empty() {
            self.sync_volume(api, name)
        } else {
            self.sync_claim(api, ns, name)
        }
    }
}

//! The scheduler's VolumeBinding PreBind and what its informers hold of storage (upstream
//! `volumebinding.PreBind`, `binder.BindPodVolumes`): once a node is chosen for a pod whose
//! WaitForFirstConsumer claims are unbound, each claim a volume there satisfies is bound by
//! naming it in that volume's claimRef (the PersistentVolume controller completes the
//! binding), and each claim left for a provisioner gets the `selected-node` annotation. The pod
//! itself is bound only when all its claims are: upstream waits in PreBind, here the pod is
//! placed again on the next pass, where its bound volumes hold it to that node.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use serde_json::{Value, json};

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::scheduler_cache::decode;
use crate::apiserver::controllers::workload;
use crate::apiserver::request::context::Api;
use crate::scheduler::plugins::volume_binding::{
    ANN_SELECTED_NODE, Plan, Volumes, claim_class, plan_for_node,
};
use crate::scheduler::podinfo::pod_claims;
use crate::scheduler::selector::Labels;

/// The claims, volumes and classes, as the scheduler reads them this pass.
pub(crate) fn volumes(api: &Api) -> Arc<Volumes> {
    let list = |plural: &str, group: &str| {
        let def = crate::apiserver::registry::resources::lookup(group, "v1", plural);
        def.map(|d| client::list(api, d, "")).unwrap_or_default()
    };
    let claims: Vec<PersistentVolumeClaim> = decode(&list("persistentvolumeclaims", ""));
    let pvs: Vec<PersistentVolume> = decode(&list("persistentvolumes", ""));
    let classes: Vec<StorageClass> = decode(&list("storageclasses", "storage.k8s.io"));
    Arc::new(Volumes::new(claims, pvs, classes))
}

/// What PreBind did for a pod placed on `node`: None when every claim is bound (bind the
/// pod), else the note for its trace (the pod waits for its claims).
pub(crate) fn pre_bind(
    api: &Api,
    world: &Volumes,
    pod: &Pod,
    (node, labels): (&str, &Labels),
) -> Option<String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let claims = pod_claims(pod);
    let Plan { bind, provision } = plan_for_node(world, ns, &claims, (node, labels))?;
    if bind.is_empty() && provision.is_empty() {
        return None;
    }
    let pvcs = workload::def("", "persistentvolumeclaims");
    let pvs = workload::def("", "persistentvolumes");
    let mut done = Vec::new();
    for (pv, claim) in &bind {
        let Some(c) = api.store.get(&pvcs.key_for(ns, claim)) else {
            continue;
        };
        // Another pod of this pass may have taken it (the pass reads the volumes once, where
        // upstream's assume cache would know): that pod keeps it, and this one is placed again.
        let taken = api
            .store
            .get(&pvs.key_for("", pv))
            .and_then(|v| v.pointer("/spec/claimRef/uid").cloned())
            .is_some_and(|uid| uid != json!(workload::s(&c, "/metadata/uid")));
        if taken {
            done.push(format!(
                "PersistentVolume {pv} was just bound to another claim"
            ));
            continue;
        }
        let r = claim_ref(&c);
        if client::update(api, pvs, "", pv, |v| v["spec"]["claimRef"] = r.clone()).is_ok() {
            done.push(format!("bound PersistentVolume {pv} to claim {claim}"));
        }
    }
    for claim in &provision {
        let provisioner = world
            .claim(ns, claim)
            .and_then(|c| world.class(claim_class(c)))
            .map(|c| c.provisioner.clone())
            .unwrap_or_default();
        let written = client::update(api, pvcs, ns, claim, |c| {
            if !c["metadata"]["annotations"].is_object() {
                c["metadata"]["annotations"] = json!({});
            }
            c["metadata"]["annotations"][ANN_SELECTED_NODE] = json!(node);
        });
        if written.is_ok() {
            done.push(format!(
                "claim {claim} annotated {ANN_SELECTED_NODE}={node} for provisioner '{provisioner}'"
            ));
        }
    }
    Some(format!(
        "VolumeBinding PreBind on {node}: {}; the pod is bound once its claims are",
        done.join("; ")
    ))
}

/// The claimRef that names a claim in a volume.
pub(crate) fn claim_ref(claim: &Value) -> Value {
    let s = |p: &str| workload::s(claim, p);
    json!({
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": s("/metadata/namespace"),
        "name": s("/metadata/name"),
        "uid": s("/metadata/uid"),
        "resourceVersion": s("/metadata/resourceVersion"),
    })
}

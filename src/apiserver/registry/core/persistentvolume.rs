//! core/v1 PersistentVolume (upstream `pkg/registry/core/persistentvolume`,
//! `ValidatePersistentVolume`, `printPersistentVolume`): cluster-scoped storage an
//! administrator declares, created Pending; the PersistentVolume controller makes it Available
//! and binds it to a claim (`controllers/persistentvolume.rs`).

use serde_json::{Value, json};

use crate::apiserver::admission::record_mutating;
use crate::apiserver::admission::storage_object_in_use_protection::{self, PV_PROTECTION};
use crate::apiserver::registry::core::persistentvolumeclaim::{
    access_modes_cell, phase_cell, validate_access_modes,
};
use crate::apiserver::registry::formats;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::registry::validation::parse_quantity;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

pub(crate) struct PersistentVolume;

const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];

/// The volume sources a PersistentVolume may name (`PersistentVolumeSource`): exactly one.
const SOURCES: [&str; 22] = [
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
];

/// `ValidatePersistentVolumeSpec`, the parts a hand-written volume gets wrong.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    validate_access_modes(o, "", &mut out);
    match o.pointer("/spec/capacity").and_then(Value::as_object) {
        None => out.push(Cause::required("spec.capacity", "")),
        Some(c) if c.is_empty() => out.push(Cause::required("spec.capacity", "")),
        Some(c) => {
            for (k, v) in c {
                if k != "storage" {
                    out.push(Cause::not_supported(
                        "spec.capacity",
                        &json!(k),
                        &["storage"],
                    ));
                } else if v
                    .as_str()
                    .and_then(parse_quantity)
                    .is_some_and(|q| q <= 0.0)
                {
                    out.push(Cause::invalid(
                        "spec.capacity.storage",
                        v,
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    let policy = str_at(o, "/spec/persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        out.push(Cause::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            &json!(policy),
            &RECLAIM_POLICIES,
        ));
    }
    let class = str_at(o, "/spec/storageClassName");
    if !class.is_empty() {
        for m in formats::dns1123_subdomain(class) {
            out.push(Cause::invalid("spec.storageClassName", &json!(class), &m));
        }
    }
    let named = SOURCES
        .iter()
        .filter(|s| {
            o.pointer(&format!("/spec/{s}"))
                .is_some_and(|v| !v.is_null())
        })
        .count();
    match named {
        0 => out.push(Cause::required("spec", "must specify a volume type")),
        1 => {}
        _ => out.push(Cause::forbidden(
            "spec",
            "may not specify more than 1 volume type",
        )),
    }
    if o.pointer("/spec/hostPath").is_some_and(Value::is_object)
        && str_at(o, "/spec/hostPath/path").is_empty()
    {
        out.push(Cause::required("spec.hostPath.path", ""));
    }
    if o.pointer("/spec/local").is_some_and(Value::is_object) {
        if str_at(o, "/spec/local/path").is_empty() {
            out.push(Cause::required("spec.local.path", ""));
        }
        if o.pointer("/spec/nodeAffinity").is_none_or(Value::is_null) {
            out.push(Cause::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    out
}

/// The phase with its transition time, as the registry and the controller set it.
pub(crate) fn with_phase(status: &mut Value, phase: &str) {
    if status.get("phase").and_then(Value::as_str) != Some(phase) {
        status["phase"] = json!(phase);
        status["lastPhaseTransitionTime"] = json!(util::now());
    }
}

impl Strategy for PersistentVolume {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "PersistentVolume"
    }
    kind_type!(k8s_openapi::api::core::v1::PersistentVolume);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Capacity",
                "string",
                0,
                "capacity is the description of the persistent volume's resources and capacity.",
            ),
            column(
                "Access Modes",
                "string",
                0,
                "accessModes contains all ways the volume can be mounted.",
            ),
            column(
                "Reclaim Policy",
                "string",
                0,
                "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
            ),
            column(
                "Status",
                "string",
                0,
                "phase indicates if a volume is available, bound to a claim, or released by a claim.",
            ),
            column(
                "Claim",
                "string",
                0,
                "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            ),
            column(
                "StorageClass",
                "string",
                0,
                "storageClassName is the name of StorageClass to which this persistent volume belongs.",
            ),
            column(
                "VolumeAttributesClass",
                "string",
                0,
                "volumeAttributesClassName is the name of VolumeAttributesClass to which this persistent volume belongs.",
            ),
            column(
                "Reason",
                "string",
                0,
                "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            column(
                "VolumeMode",
                "string",
                1,
                "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let claim = match o.pointer("/spec/claimRef") {
            Some(r) if r.is_object() => {
                format!("{}/{}", str_at(r, "/namespace"), str_at(r, "/name"))
            }
            _ => String::new(),
        };
        let or_unset = |p: &str| match str_at(o, p) {
            "" => "<unset>".to_string(),
            s => s.to_string(),
        };
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/spec/capacity/storage")),
            json!(access_modes_cell(o, "/spec/accessModes")),
            json!(str_at(o, "/spec/persistentVolumeReclaimPolicy")),
            json!(phase_cell(o)),
            json!(claim),
            json!(str_at(o, "/spec/storageClassName")),
            json!(or_unset("/spec/volumeAttributesClassName")),
            json!(str_at(o, "/status/reason")),
            json!(age_of(o)),
            json!(or_unset("/spec/volumeMode")),
        ]
    }
    /// `SetDefaults_PersistentVolume` and `SetDefaults_HostPathVolumeSource`.
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for (field, default) in [
            ("persistentVolumeReclaimPolicy", "Retain"),
            ("volumeMode", "Filesystem"),
        ] {
            if spec.get(field).is_none_or(Value::is_null) {
                spec.insert(field.into(), json!(default));
            }
        }
        if let Some(h) = spec.get_mut("hostPath").and_then(Value::as_object_mut)
            && h.get("type").is_none_or(Value::is_null)
        {
            h.insert("type".into(), json!(""));
        }
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        self.defaults(obj);
        record_mutating(
            trace,
            &[storage_object_in_use_protection::admit(obj, PV_PROTECTION)],
        );
        let mut status = json!({});
        with_phase(&mut status, "Pending");
        obj["status"] = status;
        validate_into_trace("", "PersistentVolume", obj, trace, validate(obj))
    }
    /// `ValidatePersistentVolumeUpdate`: the volume source never changes.
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut out = validate(next);
        let source = |o: &Value| -> Vec<Option<Value>> {
            SOURCES
                .iter()
                .map(|s| o.pointer(&format!("/spec/{s}")).cloned())
                .collect()
        };
        if source(next) != source(current) {
            out.push(Cause::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(mut o: Value) -> Vec<String> {
        PersistentVolume.defaults(&mut o);
        validate(&o).iter().map(Cause::rendered).collect()
    }

    fn pv(spec: Value) -> Value {
        json!({"metadata": {"name": "pv1"}, "spec": spec})
    }

    #[test]
    fn upstreams_table() {
        assert!(causes(pv(json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}))).is_empty());
        assert_eq!(
            causes(pv(json!({}))),
            [
                "spec.accessModes: Required value",
                "spec.capacity: Required value",
                "spec: Required value: must specify a volume type",
            ]
        );
        assert_eq!(
            causes(pv(
                json!({"capacity": {"storage": "1Gi", "cpu": "1"}, "accessModes": ["ReadWriteAll"],
                "hostPath": {"path": "/a"}, "nfs": {"server": "s", "path": "/"}})
            )),
            [
                r#"spec.accessModes: Unsupported value: "ReadWriteAll": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod""#,
                r#"spec.capacity: Unsupported value: "cpu": supported values: "storage""#,
                "spec: Forbidden: may not specify more than 1 volume type",
            ]
        );
        assert_eq!(
            causes(pv(
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/disk"}})
            )),
            ["spec.nodeAffinity: Required value: Local volume requires node affinity"]
        );
    }

    #[test]
    fn defaults_and_the_printer() {
        let mut o = pv(
            json!({"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
            "hostPath": {"path": "/data"}, "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "manual"}),
        );
        PersistentVolume.defaults(&mut o);
        assert_eq!(o["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(o["spec"]["hostPath"]["type"], "");
        o["status"] = json!({"phase": "Bound"});
        assert_eq!(
            PersistentVolume.cells(&o)[..8],
            [
                json!("pv1"),
                json!("5Gi"),
                json!("RWO,ROX"),
                json!("Retain"),
                json!("Bound"),
                json!("default/data"),
                json!("manual"),
                json!("<unset>")
            ]
        );
    }

    #[test]
    fn the_source_is_fixed() {
        let old = pv(
            json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}),
        );
        let mut new = old.clone();
        new["spec"]["hostPath"]["path"] = json!("/b");
        let got: Vec<String> = PersistentVolume
            .validate_update("", &new, &old)
            .iter()
            .map(Cause::rendered)
            .collect();
        assert_eq!(
            got,
            [
                "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"
            ]
        );
    }
}

//! core/v1 PersistentVolumeClaim (upstream `pkg/registry/core/persistentvolumeclaim`,
//! `printPersistentVolumeClaim`): created Pending, with the default StorageClass when it names
//! none; the PersistentVolume controller binds it (`controllers/persistentvolume.rs`).

use serde_json::{Value, json};

use crate::apiserver::admission::storage_object_in_use_protection::{self, PVC_PROTECTION};
use crate::apiserver::admission::{default_storage_class, record_mutating};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;

pub(crate) struct PersistentVolumeClaim;

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// `spec.accessModes`: at least one (`required` says so as the kind's validation does), each a
/// mode Kubernetes knows.
pub(crate) fn validate_access_modes(o: &Value, required: &str, causes: &mut Vec<Cause>) {
    let modes: Vec<&str> = o
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if modes.is_empty() {
        causes.push(Cause::required("spec.accessModes", required));
    }
    for m in &modes {
        if !ACCESS_MODES.contains(m) {
            causes.push(Cause::not_supported(
                "spec.accessModes",
                &json!(m),
                &ACCESS_MODES,
            ));
        }
    }
}

fn validate(o: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_access_modes(o, "at least 1 access mode is required", &mut causes);
    if o.pointer("/spec/resources/requests/storage").is_none() {
        causes.push(Cause::required("spec.resources[storage]", ""));
    }
    causes
}

/// `GetAccessModesAsString` of the modes at `pointer`: RWO, ROX, RWX, RWOP, in that order.
pub(crate) fn access_modes_cell(o: &Value, pointer: &str) -> String {
    let modes: Vec<&str> = o
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The STATUS column of claims and volumes: the phase, or Terminating once deleted (a finalizer
/// such as pvc-protection holds it).
pub(crate) fn phase_cell(o: &Value) -> &str {
    if o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        "Terminating"
    } else {
        str_at(o, "/status/phase")
    }
}

impl Strategy for PersistentVolumeClaim {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "PersistentVolumeClaim"
    }
    kind_type!(k8s_openapi::api::core::v1::PersistentVolumeClaim);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Status",
                "string",
                0,
                "phase represents the current phase of PersistentVolumeClaim.",
            ),
            column(
                "Volume",
                "string",
                0,
                "volumeName is the binding reference to the PersistentVolume backing this claim.",
            ),
            column(
                "Capacity",
                "string",
                0,
                "capacity represents the actual resources of the underlying volume.",
            ),
            column(
                "Access Modes",
                "string",
                0,
                "accessModes contains the actual access modes the volume backing the PVC has.",
            ),
            column(
                "StorageClass",
                "string",
                0,
                "storageClassName is the name of the StorageClass required by the claim.",
            ),
            column(
                "VolumeAttributesClass",
                "string",
                0,
                "volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            column(
                "VolumeMode",
                "string",
                1,
                "volumeMode defines what type of volume is required by the claim.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let or_unset = |s: &str| {
            if s.is_empty() {
                "<unset>".to_string()
            } else {
                s.to_string()
            }
        };
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(phase_cell(o)),
            json!(str_at(o, "/spec/volumeName")),
            json!(str_at(o, "/status/capacity/storage")),
            json!(access_modes_cell(o, "/status/accessModes")),
            json!(str_at(o, "/spec/storageClassName")),
            json!(or_unset(str_at(o, "/spec/volumeAttributesClassName"))),
            json!(age_of(o)),
            json!(or_unset(str_at(o, "/spec/volumeMode"))),
        ]
    }
    fn defaults(&self, obj: &mut Value) {
        if obj.get("spec").is_some_and(Value::is_object)
            && str_at(obj, "/spec/volumeMode").is_empty()
        {
            obj["spec"]["volumeMode"] = json!("Filesystem");
        }
    }
    fn prepare_create(
        &self,
        api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        self.defaults(obj);
        let records = [
            default_storage_class::admit(&*api.store, obj),
            storage_object_in_use_protection::admit(obj, PVC_PROTECTION),
        ];
        record_mutating(trace, &records);
        obj["status"] = json!({"phase": "Pending"});
        validate_into_trace("", "PersistentVolumeClaim", obj, trace, validate(obj))
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut causes = validate(next);
        let mut a = next.get("spec").cloned().unwrap_or_default();
        let mut b = current.get("spec").cloned().unwrap_or_default();
        // Only a bound claim's storage request may grow; everything else is fixed.
        for s in [&mut a, &mut b] {
            if let Some(r) = s
                .pointer_mut("/resources/requests")
                .and_then(Value::as_object_mut)
            {
                r.remove("storage");
            }
        }
        if a != b {
            causes.push(Cause::forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
            ));
        }
        causes
    }
}

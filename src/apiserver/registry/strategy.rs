//! What a kind is, in one place (upstream `pkg/registry/<group>/<kind>/strategy.go` plus its
//! printer and field-label conversion): a kind's file implements [`Strategy`] and adds itself
//! to `strategies::STRATEGIES`; with its line in `resources::RESOURCES` that is all adding a
//! kind takes. Every method has the behaviour of a plain stored object as its default.

use k8s_openapi::schemars::SchemaGenerator;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::apiserver::registry::validation;
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};

pub(crate) trait Strategy: Sync {
    /// The API group (`""` for core) and kind this strategy serves.
    fn group(&self) -> &'static str;
    fn kind(&self) -> &'static str;
    /// The version the kind is stored in, whose type [`Strategy::typed`] decodes; other served
    /// versions convert to it (`registry/conversion.rs`).
    fn version(&self) -> &'static str {
        "v1"
    }

    /// Register the kind's k8s-openapi type (and so every type it references) with the
    /// generator: OpenAPI v2/v3, strategic merge patch and server-side apply read these.
    fn schemas(&self, generator: &mut SchemaGenerator);

    /// Decode into the kind's k8s-openapi type and back: the typed form of a request body
    /// (what it cannot hold is an unknown field; a wrong type is a decode error at its path).
    fn typed(&self, v: &Value) -> TypedResult;

    /// Server-side Table columns as kubectl prints them (`kubectl get`). Without a printer of
    /// its own a kind gets upstream's default table convertor: Name and Created At.
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Created At", "date", 0, AGE_DESCRIPTION),
        ]
    }

    /// One Table row's cells, in [`Strategy::columns`]' order.
    fn cells(&self, o: &Value) -> Vec<Value> {
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/metadata/creationTimestamp")),
        ]
    }

    /// A field selector's value (`Some(None)`: the field is supported and empty); `None` for a
    /// field this kind does not support (metadata.name and metadata.namespace always are).
    fn field(&self, _field: &str, _o: &Value) -> Option<Option<String>> {
        None
    }

    /// PrepareForCreate, defaulting, admission of its own and Validate, on the decoded object
    /// (metadata already has its namespace and name). Record what ran on `trace`.
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        validate_into_trace(self.group(), self.kind(), obj, trace, Vec::new())
    }

    /// The scheme's defaults (upstream `SetDefaults_<Kind>`), applied to every body a client
    /// sends — create, update, patch result — so what a client leaves out is not a change.
    fn defaults(&self, _obj: &mut Value) {}

    /// PrepareForUpdate on the main resource: what the kind carries over from the stored
    /// object when a client leaves it out (a Service's allocated ClusterIP and NodePorts).
    fn prepare_update(&self, _next: &mut Value, _current: &Value) {}

    /// What a write to a subresource of the kind's own (not `status`: a CSR's `approval`)
    /// stores, from the current object and the body; None for the shared rules.
    fn merge_subresource(&self, _sub: &str, _current: &Value, _incoming: &Value) -> Option<Value> {
        None
    }

    /// Validating admission of a write to a subresource (a CSR's approval or certificate),
    /// by `user`, against the object as stored.
    fn admit_subresource(
        &self,
        _api: &Api,
        _user: &crate::apiserver::request::user::UserInfo,
        _sub: &str,
        _incoming: &Value,
        _current: &Value,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// ValidateUpdate beyond the metadata rules every kind gets (`sub`: "" or "status").
    fn validate_update(&self, _sub: &str, _next: &Value, _current: &Value) -> Vec<Cause> {
        Vec::new()
    }

    /// WarningsOnCreate: what kube-apiserver warns of in a new object that validated (a pod's
    /// duplicate port, a workload's dotted name); the client prints each as `Warning: …`.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// WarningsOnUpdate of the main resource, after the update validated.
    fn warnings_on_update(&self, _next: &Value, _current: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Whether a change of `spec` bumps metadata.generation (kinds with a status that reports
    /// observedGeneration: Deployments, ReplicaSets, …).
    fn bumps_generation(&self) -> bool {
        false
    }

    /// Work that follows a committed create (upstream: controllers that react at once).
    fn after_create(&self, _api: &Api, _stored: &Value) {}

    /// What an update of the object at `key` takes before it is stored (a Service's address
    /// and node ports), written into `next`; held until [`Strategy::after_update`].
    fn allocate_update(&self, _api: &Api, _key: &str, _next: &mut Value) -> Result<(), ApiError> {
        Ok(())
    }

    /// Work that follows a committed update of the object at `key`.
    fn after_update(&self, _api: &Api, _key: &str) {}
}

/// A typed decode: the object as its type writes it, or where and why it did not decode.
pub(crate) type TypedResult = Result<Value, serde_path_to_error::Error<serde_json::Error>>;

/// [`Strategy::typed`] for the k8s-openapi type `T`.
pub(crate) fn typed_as<T: DeserializeOwned + Serialize>(v: &Value) -> TypedResult {
    let typed: T = serde_path_to_error::deserialize(v)?;
    // Serializing a k8s-openapi type to a JSON value has no failure case (string keys only).
    Ok(serde_json::to_value(&typed).unwrap_or(Value::Null))
}

/// A kind's two type-driven methods, from its k8s-openapi type:
/// `impl Strategy for X { kind_type!(k8s_openapi::api::core::v1::ConfigMap); … }`.
macro_rules! kind_type {
    ($t:ty) => {
        fn schemas(&self, generator: &mut k8s_openapi::schemars::SchemaGenerator) {
            let _ = generator.subschema_for::<$t>();
        }
        fn typed(
            &self,
            v: &serde_json::Value,
        ) -> $crate::apiserver::registry::strategy::TypedResult {
            $crate::apiserver::registry::strategy::typed_as::<$t>(v)
        }
    };
}
pub(crate) use kind_type;

pub(crate) const NAME_DESCRIPTION: &str = "Name must be unique within a namespace.";
pub(crate) const AGE_DESCRIPTION: &str =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

/// A Table column definition (priority 1 shows only with `-o wide`).
pub(crate) fn column(name: &str, ty: &str, priority: i32, description: &str) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A field selector's view of a field: strings as they are, booleans and numbers as text,
/// null as empty; `None` when the object does not have it.
pub(crate) fn field_at(o: &Value, pointer: &str) -> Option<String> {
    o.pointer(pointer).map(|v| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// `<none>` for an empty cell, as kubectl's printers write it.
pub(crate) fn or_none(x: &str) -> String {
    if x.is_empty() {
        "<none>".into()
    } else {
        x.to_string()
    }
}

/// The Age cell: kubectl's short duration since creationTimestamp.
pub(crate) fn age_of(o: &Value) -> String {
    crate::apiserver::util::age(
        o.pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str),
    )
}

/// Validate metadata (name rules) plus the kind's own `causes`, record the validation stage,
/// and answer 422 with every cause when any.
pub(crate) fn validate_into_trace(
    group: &str,
    kind: &str,
    obj: &Value,
    trace: &mut RequestTrace,
    causes: Vec<Cause>,
) -> Result<(), ApiError> {
    let mut all = validation::validate_meta(kind, obj);
    all.extend(causes);
    trace.stage(
        Stage::Validation,
        if all.is_empty() {
            Status::Ok
        } else {
            Status::Failed
        },
        json!({"causes": all.iter().map(|c| c.rendered()).collect::<Vec<_>>()}),
    );
    if all.is_empty() {
        return Ok(());
    }
    let name = str_at(obj, "/metadata/name").to_string();
    Err(ApiError::invalid(group, kind, &name, all))
}

/// A validating admission plugin's verdict as the trace records it: allowed, or rejected with
/// its message.
pub(crate) fn record_validating(trace: &mut RequestTrace, plugin: &str, rejected: Option<&str>) {
    let (status, result) = match rejected {
        Some(_) => (Status::Failed, "rejected"),
        None => (Status::Ok, "allowed"),
    };
    trace.stage(
        Stage::Admission,
        status,
        json!({"phase": "validating", "plugins": [{"plugin": plugin, "phase": "validating",
            "result": result, "message": rejected}]}),
    );
}

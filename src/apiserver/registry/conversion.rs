//! Kinds served in a form other than the one they are stored in (upstream: the scheme's
//! conversion functions and each resource's storage version). Events are stored as core/v1
//! and also served as events.k8s.io/v1; HorizontalPodAutoscalers are stored as autoscaling/v2
//! and also served as autoscaling/v1. Every endpoint converts through here: a body on its way
//! in, an object on its way out. Adding a served form is one entry in [`SERVED`].

use k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler as HpaV1;
use k8s_openapi::schemars::SchemaGenerator;
use serde_json::Value;

use crate::apiserver::registry::autoscaling::conversion_v1;
use crate::apiserver::registry::events;
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::registry::strategy::{TypedResult, typed_as};

/// A k8s-openapi type's typed decode and its OpenAPI registration.
type OwnType = (fn(&Value) -> TypedResult, fn(&mut SchemaGenerator));

/// One served form of a kind stored in another.
pub(crate) struct Served {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    /// The served form's own k8s-openapi type, when the kind's strategy does not decode it
    /// (its strategy is of the stored version): typed decoding and OpenAPI read it.
    own_type: Option<OwnType>,
    to_stored: fn(&Value) -> Value,
    to_served: fn(&Value) -> Value,
}

fn hpa_v1_schemas(generator: &mut SchemaGenerator) {
    let _ = generator.subschema_for::<HpaV1>();
}

static SERVED: &[Served] = &[
    Served {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        // Its own strategy (`core::event::EventsV1Event`) decodes and prints it.
        own_type: None,
        to_stored: events::from_events_v1,
        to_served: events::to_events_v1,
    },
    Served {
        group: "autoscaling",
        version: "v1",
        kind: "HorizontalPodAutoscaler",
        own_type: Some((typed_as::<HpaV1>, hpa_v1_schemas)),
        to_stored: conversion_v1::from_v1,
        to_served: conversion_v1::to_v1,
    },
];

fn of(def: &ResourceDef) -> Option<&'static Served> {
    SERVED
        .iter()
        .find(|s| (s.group, s.version, s.kind) == (def.group, def.version, def.kind))
}

/// Whether `def` is served in a form other than the stored one (its stored encodings can then
/// not be sent as they are).
pub(crate) fn converts(def: &ResourceDef) -> bool {
    of(def).is_some()
}

/// A decoded body of `def` in the form it is stored in.
pub(crate) fn to_stored(def: &ResourceDef, v: Value) -> Value {
    match of(def) {
        Some(s) => (s.to_stored)(&v),
        None => v,
    }
}

/// A stored object as `def` serves it; `None` when that is the stored form itself.
pub(crate) fn to_served(def: &ResourceDef, v: &Value) -> Option<Value> {
    of(def).map(|s| (s.to_served)(v))
}

/// The typed decode of the served form's own type, when it has one here.
pub(crate) fn typed(def: &ResourceDef, v: &Value) -> Option<TypedResult> {
    of(def)?.own_type.map(|(typed, _)| typed(v))
}

/// Registers the served form's own type with the OpenAPI generator; false when it has none
/// here (the kind's strategy registers it).
pub(crate) fn schemas(def: &ResourceDef, generator: &mut SchemaGenerator) -> bool {
    match of(def).and_then(|s| s.own_type) {
        Some((_, schemas)) => {
            schemas(generator);
            true
        }
        None => false,
    }
}

//! What each served kind is (upstream `pkg/registry` and `pkg/apis`): the resource table,
//! strategies, defaulting, validation, printers, selectors, list merge types, discovery and OpenAPI.

pub(crate) mod apiextensions;
pub(crate) mod apps;
pub(crate) mod authn;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod certificates;
pub(crate) mod conversion;
pub(crate) mod coordination;
pub(crate) mod core;
pub(crate) mod defaults;
pub(crate) mod discovery;
pub(crate) mod discovery_k8s_io;
pub(crate) mod events;
pub(crate) mod formats;
pub(crate) mod go_zero;
pub(crate) mod kinds;
pub(crate) mod label_selector;
pub(crate) mod list_types;
pub(crate) mod networking;
pub(crate) mod node;
pub(crate) mod openapi;
pub(crate) mod openapi_v2;
pub(crate) mod openapi_v2_schema;
pub(crate) mod policy;
pub(crate) mod rbac;
pub(crate) mod resources;
pub(crate) mod scheduling;
pub(crate) mod selectors;
pub(crate) mod storage;
pub(crate) mod strategies;
pub(crate) mod strategy;
pub(crate) mod table;
pub(crate) mod validation;
pub(crate) mod validation_probes;
pub(crate) mod validation_update;

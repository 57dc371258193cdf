//! What each served kind is (upstream `pkg/registry` and `pkg/apis`): the resource table,
//! strategies, defaulting, validation, printers, selectors, list merge types, discovery and OpenAPI.

pub mod defaults;
pub mod discovery;
pub mod kinds;
pub(crate) mod list_types;
pub mod openapi;
pub mod openapi_v2;
pub(crate) mod openapi_v2_schema;
pub mod resources;
pub mod selectors;
pub mod table;
pub mod table_columns;
pub mod validation;
pub(crate) mod validation_update;

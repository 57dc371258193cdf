//! The REST endpoints after routing (upstream `endpoints/handlers`): get, list, create, update,
//! patch, apply, delete, watch, dry-run, subresources and the non-resource paths.

pub(crate) mod apply;
pub mod create;
pub mod delete;
pub(crate) mod delete_options;
pub(crate) mod dry_run;
pub mod get;
pub(crate) mod health;
pub mod list;
pub mod list_options;
pub(crate) mod managed_fields;
pub mod patch;
pub mod pods;
pub(crate) mod reply;
pub mod reviews;
pub mod router;
pub mod update;
pub mod watch;

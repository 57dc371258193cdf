//! The REST endpoints after routing (upstream `endpoints/handlers`): get, list, create, update,
//! patch, apply, delete, watch, dry-run, subresources and the non-resource paths.

pub(crate) mod apply;
pub(crate) mod continue_token;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod delete_options;
pub(crate) mod dry_run;
pub(crate) mod eviction;
pub(crate) mod get;
pub(crate) mod health;
pub(crate) mod list;
pub(crate) mod list_options;
pub(crate) mod managed_fields;
pub(crate) mod metrics;
pub(crate) mod patch;
pub(crate) mod pod_log_follow;
pub(crate) mod pod_streams;
pub(crate) mod pods;
pub(crate) mod reply;
pub(crate) mod reviews;
pub(crate) mod router;
pub(crate) mod scale;
pub(crate) mod strategic_merge;
pub(crate) mod tokens;
pub(crate) mod update;
pub(crate) mod watch;

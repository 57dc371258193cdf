//! kexplore's embedded API server: real HTTPS with client-certificate authentication, the
//! kube-apiserver request pipeline stage by stage (each recorded in a per-request trace), an
//! etcd-like store with watch, a scheduler loop and simulated kubelets.
//!
//! Entry points: [`server::start`] (used by `kexplore serve`, `journey` and tests) and
//! [`api::handle`] (one request, no socket — used by router tests).

pub mod activity;
pub mod admission;
pub mod api;
pub(crate) mod apply;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod body;
pub mod body_read;
pub mod bootstrap;
pub mod create;
pub mod decode;
pub(crate) mod decode_error;
pub mod defaults;
pub mod delete;
pub mod discovery;
pub(crate) mod dry_run;
pub mod events;
pub(crate) mod health;
pub mod impersonation;
pub mod inflight;
pub mod kinds;
pub mod kubelet;
pub mod limits;
pub mod linger;
pub mod list;
pub mod list_options;
pub(crate) mod list_types;
pub(crate) mod managed_fields;
pub mod openapi;
pub mod openapi_v2;
pub(crate) mod openapi_v2_schema;
pub mod patch;
pub mod pki;
pub mod placement;
pub mod pods;
pub mod proto;
pub mod proto_objects;
pub(crate) mod proto_schema;
pub mod request;
pub mod resources;
pub mod rest;
pub mod reviews;
pub mod router;
pub mod scheduler_loop;
pub mod selectors;
pub mod server;
pub mod status;
pub mod store;
pub mod table;
pub mod table_columns;
pub mod tls;
pub mod trace;
pub mod tracked_keys;
pub mod util;
pub mod validation;
pub(crate) mod validation_update;
pub mod watch;
pub mod yaml_depth;
pub mod yaml_parse;

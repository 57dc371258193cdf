//! The client side of mTLS: a rustls configuration built from a resolved kubeconfig context,
//! instrumented to record what the server presented and asked for, and a handshake that turns
//! those records into facts a person can read.

pub mod access;
pub mod cluster;
pub mod config;
pub mod describe;
pub mod error;
pub mod exec;
pub mod exec_cache;
pub mod exec_context;
pub mod explain;
mod first_bytes;
mod go_x509;
pub mod handshake;
pub mod http;
pub(crate) mod kubectl_words;
pub mod recorder;
pub mod server_clock;
pub mod server_report;
pub mod snapshot;

pub use config::{TlsTarget, build_client_config};
pub use error::ClientError;
pub use explain::{Explanation, explain_tls_error};
pub use handshake::{HandshakeReport, handshake, handshake_with_exec};
pub use recorder::{HandshakeRecord, Recorder};

//! Transport: TCP accept, TLS with the client certificate requested, HTTP/1.1 and HTTP/2 serving,
//! connection limits and lingering close, the body-size limit (upstream `k8s.io/apiserver/pkg/server`).

pub(crate) mod activity;
pub(crate) mod body_read;
pub mod limits;
pub(crate) mod linger;
pub mod pki;
pub mod server;
pub mod tls;
pub(crate) mod yaml_depth;

//! kexplore's embedded API server: real HTTPS with client-certificate authentication, the
//! kube-apiserver request pipeline stage by stage (each recorded in a per-request trace), an
//! etcd-like store with watch, a scheduler loop and simulated kubelets.
//!
//! Entry points: [`transport::server::start`] (used by `kexplore serve`, `journey` and tests) and
//! [`filters::chain::handle`] (one request, no socket — used by router tests).

pub(crate) mod admission;
pub(crate) mod codec;
pub mod controllers;
pub(crate) mod endpoints;
pub mod filters;
pub(crate) mod registry;
pub mod request;
pub mod storage;
pub mod transport;
pub(crate) mod util;

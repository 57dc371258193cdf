//! kexplore: how a Kubernetes cluster lets a client in and decides where a pod runs.
//! The core modules know nothing of the terminal; `tui` renders their state.

pub mod apiserver;
pub mod cli;
pub mod client;
pub mod commands;
pub mod journey;
pub mod kubeconfig;
pub mod lesson;
pub mod pki;
pub mod scheduler;
pub mod scratch;
pub mod stage;
pub mod tui;
mod wrap;

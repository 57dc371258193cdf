//! The apps kinds (upstream `pkg/registry/apps/<kind>`).

pub(crate) mod controllerrevision;
pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod replicaset;
pub(crate) mod statefulset;
pub(crate) mod workload;

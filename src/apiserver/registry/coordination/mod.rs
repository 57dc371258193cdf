//! The coordination.k8s.io kinds (upstream `pkg/registry/coordination`).

pub(crate) mod lease;

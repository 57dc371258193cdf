//! The scheduling.k8s.io kinds (upstream `pkg/registry/scheduling/<kind>`).

pub(crate) mod priorityclass;

//! The node.k8s.io kinds (upstream `pkg/registry/node/<kind>`).

pub(crate) mod runtimeclass;

//! The discovery.k8s.io kinds (upstream `pkg/registry/discovery/<kind>`).

pub(crate) mod endpointslice;

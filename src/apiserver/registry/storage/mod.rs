//! The storage.k8s.io kinds (upstream `pkg/registry/storage/<kind>`).

pub(crate) mod storageclass;

pub(crate) const GROUP: &str = "storage.k8s.io";

//! The core/v1 kinds (upstream `pkg/registry/core/<kind>`).

pub(crate) mod binding;
pub(crate) mod configmap;
pub(crate) mod event;
pub(crate) mod namespace;
pub(crate) mod node;
pub(crate) mod pod;
pub(crate) mod serviceaccount;

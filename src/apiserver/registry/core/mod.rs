//! The core/v1 kinds with strategies of their own (upstream `pkg/registry/core/<kind>`).

pub(crate) mod configmap;

//! The rbac.authorization.k8s.io kinds (upstream `pkg/registry/rbac`).

pub(crate) mod binding;
pub(crate) mod role;

pub(crate) use crate::apiserver::registry::resources::RBAC;

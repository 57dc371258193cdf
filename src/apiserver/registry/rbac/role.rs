//! Role and ClusterRole (upstream `pkg/registry/rbac/*role`): printed by the default table
//! convertor (Name, Created At).

use crate::apiserver::registry::strategy::{Strategy, kind_type};

pub(crate) struct Role;
pub(crate) struct ClusterRole;

impl Strategy for Role {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "Role"
    }
    kind_type!(k8s_openapi::api::rbac::v1::Role);
}

impl Strategy for ClusterRole {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "ClusterRole"
    }
    kind_type!(k8s_openapi::api::rbac::v1::ClusterRole);
}

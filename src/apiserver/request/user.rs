//! Who is asking (upstream `k8s.io/apiserver/pkg/authentication/user`): what authentication
//! and impersonation decide, and what authorization, audit and the trace read.

use std::collections::BTreeMap;

use serde::Serialize;

/// An authenticated user (upstream `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub(crate) struct UserInfo {
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    pub groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    pub(crate) fn in_group(&self, g: &str) -> bool {
        self.groups.iter().any(|x| x == g)
    }
}

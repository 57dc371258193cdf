//! RoleBinding and ClusterRoleBinding (upstream `pkg/registry/rbac/*binding`, printer
//! `printRoleBinding`): the role and, with `-o wide`, the subjects by kind.

use serde_json::{Value, json};

use crate::apiserver::registry::strategy::{Strategy, age_of, column, kind_type, str_at};

pub(crate) struct RoleBinding;
pub(crate) struct ClusterRoleBinding;

fn binding_columns() -> Vec<Value> {
    vec![
        column(
            "Name",
            "string",
            0,
            "Name must be unique within a namespace.",
        ),
        column("Role", "string", 0, "RoleRef is the reference to the role."),
        column(
            "Age",
            "string",
            0,
            "CreationTimestamp is a timestamp representing the server time when this object was created.",
        ),
        column("Users", "string", 1, "Users in the roleBinding"),
        column("Groups", "string", 1, "Groups in the roleBinding"),
        column(
            "ServiceAccounts",
            "string",
            1,
            "ServiceAccounts in the roleBinding",
        ),
    ]
}

fn binding_cells(b: &Value) -> Vec<Value> {
    let subjects = b
        .get("subjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let of = |k: &str| {
        subjects
            .iter()
            .filter(|x| x.get("kind").and_then(Value::as_str) == Some(k))
            .map(|x| {
                if k == "ServiceAccount" {
                    format!("{}/{}", str_at(x, "/namespace"), str_at(x, "/name"))
                } else {
                    str_at(x, "/name").to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        json!(str_at(b, "/metadata/name")),
        json!(format!(
            "{}/{}",
            str_at(b, "/roleRef/kind"),
            str_at(b, "/roleRef/name")
        )),
        json!(age_of(b)),
        json!(of("User")),
        json!(of("Group")),
        json!(of("ServiceAccount")),
    ]
}

impl Strategy for RoleBinding {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "RoleBinding"
    }
    kind_type!(k8s_openapi::api::rbac::v1::RoleBinding);
    fn columns(&self) -> Vec<Value> {
        binding_columns()
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        binding_cells(o)
    }
}

impl Strategy for ClusterRoleBinding {
    fn group(&self) -> &'static str {
        super::RBAC
    }
    fn kind(&self) -> &'static str {
        "ClusterRoleBinding"
    }
    kind_type!(k8s_openapi::api::rbac::v1::ClusterRoleBinding);
    fn columns(&self) -> Vec<Value> {
        binding_columns()
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        binding_cells(o)
    }
}

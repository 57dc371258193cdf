//! core/v1 Binding (upstream `pkg/registry/core/pod/storage`'s BindingREST): created only,
//! through `pods/<name>/binding` or `bindings`; decoded here, bound in `endpoints/pods.rs`.

use crate::apiserver::registry::strategy::{Strategy, kind_type};

pub(crate) struct Binding;

impl Strategy for Binding {
    fn group(&self) -> &'static str {
        ""
    }
    fn kind(&self) -> &'static str {
        "Binding"
    }
    kind_type!(k8s_openapi::api::core::v1::Binding);
}

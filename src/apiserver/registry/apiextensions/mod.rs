//! apiextensions.k8s.io/v1 CustomResourceDefinition, served read-only and always empty: this
//! cluster serves no custom resources, so none can be defined (a create is 405). It is served
//! because kubectl lists it: `kubectl create -f` of a kind whose API has no PATCH (the reviews,
//! bindings) asks whether the kind is a CRD before validating it on the client, and a 404 there
//! fails the command where a real cluster answers with its (here empty) list.

use crate::apiserver::registry::strategy::{Strategy, kind_type};

pub(crate) struct CustomResourceDefinition;

impl Strategy for CustomResourceDefinition {
    fn group(&self) -> &'static str {
        "apiextensions.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "CustomResourceDefinition"
    }
    kind_type!(
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition
    );
}

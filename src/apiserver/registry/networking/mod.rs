//! The networking.k8s.io kinds (upstream `pkg/registry/networking/<kind>` and
//! `pkg/apis/networking/validation`): Ingress, IngressClass and NetworkPolicy, stored,
//! validated, defaulted and printed as kube-apiserver does. Nothing here enforces them: no
//! ingress controller or network plugin runs, as on a cluster that has none installed.

use crate::apiserver::request::status::Cause;

pub(crate) mod ingress;
pub(crate) mod ingress_validation;
pub(crate) mod ingressclass;
pub(crate) mod networkpolicy;

pub(crate) const GROUP: &str = "networking.k8s.io";

/// `field.Invalid` whose value Go prints with `%#v` (a typed slice such as
/// `[]networking.IngressRule(nil)`), which no JSON value renders as.
pub(crate) fn invalid_go(field: &str, rendered: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {rendered}: {detail}"),
        field: field.to_string(),
    }
}

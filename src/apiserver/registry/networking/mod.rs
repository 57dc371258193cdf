//! The networking.k8s.io kinds (upstream `pkg/registry/networking/<kind>` and
//! `pkg/apis/networking/validation`): Ingress, IngressClass and NetworkPolicy, stored,
//! validated, defaulted and printed as kube-apiserver does. Nothing here enforces them: no
//! ingress controller or network plugin runs, as on a cluster that has none installed.

use serde_json::json;

use crate::apiserver::registry::formats;
use crate::apiserver::request::status::Cause;

pub(crate) mod ingress;
pub(crate) mod ingress_validation;
pub(crate) mod ingressclass;
pub(crate) mod networkpolicy;

pub(crate) const GROUP: &str = "networking.k8s.io";

/// A reference to an object by API group, kind and name at `f` (an Ingress's resource backend,
/// an IngressClass's parameters): the group a DNS subdomain, kind and name required path
/// segment names, as upstream validates both.
pub(crate) fn validate_typed_reference(
    f: &str,
    (api_group, kind, name): (Option<&str>, &str, &str),
    out: &mut Vec<Cause>,
) {
    if let Some(g) = api_group {
        for m in formats::dns1123_subdomain(g) {
            out.push(Cause::invalid(&format!("{f}.apiGroup"), &json!(g), &m));
        }
    }
    for (key, v) in [("kind", kind), ("name", name)] {
        if v.is_empty() {
            out.push(Cause::required(&format!("{f}.{key}"), ""));
        }
        for m in formats::path_segment_name(v) {
            out.push(Cause::invalid(&format!("{f}.{key}"), &json!(v), &m));
        }
    }
}

//! The review kinds (authentication.k8s.io, authorization.k8s.io): never stored, answered per
//! request by `endpoints/reviews.rs`; decoded through these strategies.

use crate::apiserver::registry::strategy::{Strategy, kind_type};

pub(crate) struct SelfSubjectReview;
pub(crate) struct SelfSubjectAccessReview;

impl Strategy for SelfSubjectReview {
    fn group(&self) -> &'static str {
        "authentication.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "SelfSubjectReview"
    }
    kind_type!(k8s_openapi::api::authentication::v1::SelfSubjectReview);
}

impl Strategy for SelfSubjectAccessReview {
    fn group(&self) -> &'static str {
        "authorization.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "SelfSubjectAccessReview"
    }
    kind_type!(k8s_openapi::api::authorization::v1::SelfSubjectAccessReview);
}

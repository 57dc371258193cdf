//! The review kinds (authentication.k8s.io, authorization.k8s.io): never stored, answered per
//! request by `endpoints/reviews.rs`; decoded through these strategies.

use crate::apiserver::registry::strategy::{Strategy, kind_type};

pub(crate) struct SelfSubjectReview;
pub(crate) struct SelfSubjectAccessReview;
pub(crate) struct SubjectAccessReview;
pub(crate) struct LocalSubjectAccessReview;
pub(crate) struct SelfSubjectRulesReview;
pub(crate) struct TokenReview;
pub(crate) struct TokenRequest;

impl Strategy for TokenReview {
    fn group(&self) -> &'static str {
        "authentication.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "TokenReview"
    }
    kind_type!(k8s_openapi::api::authentication::v1::TokenReview);
}

/// The body of `serviceaccounts/token` (`endpoints/tokens.rs`).
impl Strategy for TokenRequest {
    fn group(&self) -> &'static str {
        "authentication.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "TokenRequest"
    }
    kind_type!(k8s_openapi::api::authentication::v1::TokenRequest);
}

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

impl Strategy for SubjectAccessReview {
    fn group(&self) -> &'static str {
        "authorization.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "SubjectAccessReview"
    }
    kind_type!(k8s_openapi::api::authorization::v1::SubjectAccessReview);
}

impl Strategy for LocalSubjectAccessReview {
    fn group(&self) -> &'static str {
        "authorization.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "LocalSubjectAccessReview"
    }
    kind_type!(k8s_openapi::api::authorization::v1::LocalSubjectAccessReview);
}

impl Strategy for SelfSubjectRulesReview {
    fn group(&self) -> &'static str {
        "authorization.k8s.io"
    }
    fn kind(&self) -> &'static str {
        "SelfSubjectRulesReview"
    }
    kind_type!(k8s_openapi::api::authorization::v1::SelfSubjectRulesReview);
}

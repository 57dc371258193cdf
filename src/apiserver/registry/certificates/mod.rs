//! The certificates.k8s.io group (upstream `pkg/registry/certificates`): how a client asks the
//! cluster's CA for a certificate, and who may say yes.

pub(crate) mod admission;
pub(crate) mod certificatesigningrequest;
pub(crate) mod request;

pub(crate) const GROUP: &str = "certificates.k8s.io";

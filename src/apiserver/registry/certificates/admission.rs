//! The certificates admission plugins kube-apiserver enables by default (upstream
//! `plugin/pkg/admission/certificates`): CertificateSubjectRestriction refuses a request to the
//! kube-apiserver-client signer for the `system:masters` group (a certificate for it would be
//! cluster-admin that no RBAC can take back); CertificateApproval lets only those who may
//! `approve` the request's signer (`certificates.k8s.io/signers`, by name or `domain/*`)
//! approve or deny it; CertificateSigning lets only those who may `sign` for it write a
//! certificate.

use serde_json::Value;
use x509_parser::prelude::FromDer;

use crate::apiserver::filters::authz::Attributes;
use crate::apiserver::registry::certificates::GROUP;
use crate::apiserver::registry::certificates::request::{parse_request, request_pem};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::user::UserInfo;

const RESOURCE: &str = "certificatesigningrequests";
const CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// CertificateSubjectRestriction, on create: Err with its message.
pub(crate) fn subject_restriction(csr: &Value) -> Result<(), String> {
    if s(csr, "/spec/signerName") != CLIENT_SIGNER {
        return Ok(());
    }
    let Some(der) = request_pem(csr).and_then(|pem| parse_request(&pem).ok()) else {
        return Ok(()); // validation has refused it already
    };
    let Ok((_, req)) = x509_parser::certification_request::X509CertificationRequest::from_der(&der)
    else {
        return Ok(());
    };
    let masters = req
        .certification_request_info
        .subject
        .iter_organization()
        .any(|o| o.as_str() == Ok("system:masters"));
    if masters {
        return Err(format!(
            "use of {CLIENT_SIGNER} signer with system:masters group is not allowed"
        ));
    }
    Ok(())
}

/// Whether `user` may `verb` the signer `name` (by name, or its `domain/*`).
fn may(api: &Api, user: &UserInfo, verb: &str, signer: &str) -> bool {
    let wildcard = signer
        .split_once('/')
        .map(|(domain, _)| format!("{domain}/*"));
    [Some(signer.to_string()), wildcard]
        .into_iter()
        .flatten()
        .any(|name| {
            let a = Attributes {
                verb: verb.into(),
                resource_request: true,
                group: GROUP.into(),
                resource: "signers".into(),
                subresource: String::new(),
                namespace: String::new(),
                name,
                path: String::new(),
            };
            api.authorizer.authorize(&*api.store, user, &a).allowed
        })
}

/// CertificateApproval and CertificateSigning, on a write to `sub` of the CSR `current`.
pub(crate) fn admit_update(
    api: &Api,
    user: &UserInfo,
    sub: &str,
    incoming: &Value,
    current: &Value,
) -> Result<(), ApiError> {
    let signer = s(current, "/spec/signerName");
    let name = s(current, "/metadata/name");
    let (verb, what) = match sub {
        "approval" => ("approve", "approve"),
        "status" if s(incoming, "/status/certificate") != s(current, "/status/certificate") => {
            ("sign", "sign")
        }
        _ => return Ok(()),
    };
    if may(api, user, verb, signer) {
        return Ok(());
    }
    Err(ApiError::admission_forbidden(
        GROUP,
        RESOURCE,
        name,
        &format!("user not permitted to {what} requests with signerName {signer:?}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_certificate_for_system_masters_is_refused() {
        // openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes
        //   -subj "/CN=eve/O=system:masters"
        let pem = "-----BEGIN CERTIFICATE REQUEST-----
MIHiMIGJAgEAMCcxDDAKBgNVBAMMA2V2ZTEXMBUGA1UECgwOc3lzdGVtOm1hc3Rl
cnMwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASVcM2EYAqN42Al2vf0YhwSZcMw
18MxTvGcmTZ+e/EvnHD5b4Y4EN/uxrS2AjhVGfTkvTz2wMK+SFUZvCYvEOIVoAAw
CgYIKoZIzj0EAwIDSAAwRQIhAL+rvwuZUBl6U+oeZbE5bnNQGXQ3iSnQsDurWZr8
Qc2VAiAGZfwdzn50X9JFom3CgUCQ40wD8tbJ7YUpFR7+B40oiw==
-----END CERTIFICATE REQUEST-----
";
        use base64::Engine;
        let request = base64::engine::general_purpose::STANDARD.encode(pem);
        let csr =
            |signer: &str| serde_json::json!({"spec": {"request": request, "signerName": signer}});
        // The fixture is a real request (its signature verifies), or this test means nothing.
        assert!(parse_request(pem.as_bytes()).is_ok());
        assert_eq!(
            subject_restriction(&csr(CLIENT_SIGNER)),
            Err("use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed".into())
        );
        assert_eq!(subject_restriction(&csr("example.com/other")), Ok(()));
    }
}

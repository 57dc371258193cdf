//! certificates.k8s.io/v1 CertificateSigningRequest (upstream
//! `pkg/registry/certificates/certificates` and `pkg/apis/certificates/validation`): who asked
//! is recorded by the server, never taken from the body; the request must be a PEM
//! `CERTIFICATE REQUEST` whose signature checks; approval and denial are conditions written
//! only through the `approval` subresource; the signer writes `status.certificate`. Printer:
//! NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION.

use k8s_openapi::api::certificates::v1::CertificateSigningRequest as Csr;
use serde_json::{Value, json};

use crate::apiserver::registry::certificates::request::{parse_request, request_pem};
use crate::apiserver::registry::certificates::{GROUP, admission};
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, record_validating,
    str_at, validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

pub(crate) struct CertificateSigningRequest;

pub(crate) const KIND: &str = "CertificateSigningRequest";

/// `certificates.KeyUsage` values, sorted as upstream's NotSupported lists them.
const KEY_USAGES: [&str; 22] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "timestamping",
];

/// Go's `%#v` of a `[]byte`: how upstream prints an invalid request.
fn go_bytes(b: &[u8]) -> String {
    let items: Vec<String> = b.iter().map(|x| format!("0x{x:x}")).collect();
    format!("[]byte{{{}}}", items.join(", "))
}

/// `ValidateCertificateSigningRequestCreate`.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    match request_pem(o) {
        None => out.push(Cause::required("spec.request", "")),
        Some(pem) => {
            if let Err(why) = parse_request(&pem) {
                out.push(Cause {
                    reason: "FieldValueInvalid",
                    message: format!("Invalid value: {}: {why}", go_bytes(&pem)),
                    field: "spec.request".into(),
                });
            }
        }
    }
    let usages = o
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if usages.is_empty() {
        out.push(Cause::required("spec.usages", ""));
    }
    for (i, u) in usages.iter().enumerate() {
        let u = u.as_str().unwrap_or_default();
        if !KEY_USAGES.contains(&u) {
            out.push(Cause::not_supported(
                &format!("spec.usages[{i}]"),
                &json!(u),
                &KEY_USAGES,
            ));
        }
    }
    for (i, u) in usages.iter().enumerate() {
        if usages[..i].contains(u) {
            out.push(Cause::duplicate(&format!("spec.usages[{i}]"), u));
        }
    }
    // After the usages, as upstream checks them; the legacy signer only through v1beta1.
    let signer = str_at(o, "/spec/signerName");
    if signer == "kubernetes.io/legacy-unknown" {
        out.push(Cause::invalid(
            "spec.signerName",
            &json!(signer),
            "the legacy signerName is not allowed via this API version",
        ));
    } else if signer.is_empty() {
        out.push(Cause::required("spec.signerName", ""));
    } else if !signer_name_ok(signer) {
        out.push(Cause::invalid(
            "spec.signerName",
            &json!(signer),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
    }
    if let Some(e) = o
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .filter(|e| *e < 600)
    {
        out.push(Cause::invalid(
            "spec.expirationSeconds",
            &json!(e),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    out
}

/// `ValidateSignerName`, in short: a DNS domain, `/`, and a path.
fn signer_name_ok(s: &str) -> bool {
    match s.split_once('/') {
        Some((domain, path)) => {
            !path.is_empty()
                && !path.ends_with('/')
                && crate::apiserver::registry::formats::dns1123_subdomain(domain).is_empty()
                && domain.contains('.')
        }
        None => false,
    }
}

/// `True` conditions of the CSR by type.
pub(crate) fn has_condition(o: &Value, ty: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == ty && c["status"].as_str().unwrap_or("True") == "True")
        })
}

/// printers.go `extractCSRStatus`.
fn condition(o: &Value) -> String {
    let mut status = if has_condition(o, "Denied") {
        "Denied"
    } else if has_condition(o, "Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has_condition(o, "Failed") {
        status.push_str(",Failed");
    }
    if !str_at(o, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    status
}

/// `populateConditionTimestamps`: a condition written without its times gets them now.
fn stamp_conditions(o: &mut Value) {
    let now = util::now();
    if let Some(cs) = o
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in cs.iter_mut() {
            for k in ["lastUpdateTime", "lastTransitionTime"] {
                if c.get(k).is_none_or(Value::is_null) {
                    c[k] = json!(now);
                }
            }
            if c.get("status").is_none_or(Value::is_null) {
                c["status"] = json!("True");
            }
        }
    }
}

/// The Approved and Denied conditions, which only the approval subresource may change.
fn decisions(o: &Value) -> Vec<Value> {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter(|c| matches!(c["type"].as_str(), Some("Approved" | "Denied")))
                .map(|c| json!({"type": c["type"], "status": c["status"]}))
                .collect()
        })
        .unwrap_or_default()
}

impl Strategy for CertificateSigningRequest {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        KIND
    }
    kind_type!(Csr);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Age", "date", 0, AGE_DESCRIPTION),
            column(
                "SignerName",
                "string",
                0,
                "signerName indicates the requested signer, and is a qualified name.",
            ),
            column(
                "Requestor",
                "string",
                0,
                "username contains the name of the user that created the CertificateSigningRequest.",
            ),
            column(
                "RequestedDuration",
                "string",
                0,
                "expirationSeconds is the requested duration of validity of the issued certificate.",
            ),
            column(
                "Condition",
                "string",
                0,
                "Approved, Denied or Pending, then Failed and Issued once they apply.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let duration = o
            .pointer("/spec/expirationSeconds")
            .and_then(Value::as_i64)
            .map_or("<none>".to_string(), util::human_duration);
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(age_of(o)),
            json!(str_at(o, "/spec/signerName")),
            json!(str_at(o, "/spec/username")),
            json!(duration),
            json!(condition(o)),
        ]
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        // PrepareForCreate: no status, and the requester as the server authenticated it.
        if let Some(m) = obj.as_object_mut() {
            m.remove("status");
        }
        if let Some(user) = &trace.requester {
            let spec = &mut obj["spec"];
            spec["username"] = json!(user.username);
            spec["groups"] = json!(user.groups);
            match user.uid.as_str() {
                "" => {
                    if let Some(m) = spec.as_object_mut() {
                        m.remove("uid");
                    }
                }
                uid => spec["uid"] = json!(uid),
            }
            if user.extra.is_empty() {
                if let Some(m) = spec.as_object_mut() {
                    m.remove("extra");
                }
            } else {
                spec["extra"] = json!(user.extra);
            }
        }
        validate_into_trace(GROUP, KIND, obj, trace, validate(obj))?;
        // Validating admission, after validation as upstream.
        let message = admission::subject_restriction(obj).err();
        record_validating(trace, "CertificateSubjectRestriction", message.as_deref());
        match message {
            Some(m) => Err(ApiError::admission_forbidden(
                GROUP,
                "certificatesigningrequests",
                str_at(obj, "/metadata/name"),
                &m,
            )),
            None => Ok(()),
        }
    }
    /// The `approval` subresource (`approvalStrategy`): only the conditions change.
    fn merge_subresource(&self, sub: &str, current: &Value, incoming: &Value) -> Option<Value> {
        (sub == "approval").then(|| approval_update(current, incoming))
    }
    fn admit_subresource(
        &self,
        api: &Api,
        user: &crate::apiserver::request::user::UserInfo,
        sub: &str,
        incoming: &Value,
        current: &Value,
    ) -> Result<(), ApiError> {
        admission::admit_update(api, user, sub, incoming, current)
    }
    /// PrepareForUpdate: the main resource changes metadata only.
    fn prepare_update(&self, next: &mut Value, current: &Value) {
        next["spec"] = current.get("spec").cloned().unwrap_or(json!({}));
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        match sub {
            "approval" => {
                if has_condition(next, "Approved") && has_condition(next, "Denied") {
                    return vec![Cause::invalid(
                        "status.conditions",
                        &json!("Approved"),
                        "Approved and Denied conditions are mutually exclusive",
                    )];
                }
                Vec::new()
            }
            "status" if decisions(next) != decisions(current) => vec![Cause::forbidden(
                "status.conditions",
                "updates may not add or remove a condition of type \"Approved\" or \"Denied\"",
            )],
            _ => Vec::new(),
        }
    }
}

/// The object an approval writes: everything as stored but the conditions the client sent,
/// each given its times.
fn approval_update(current: &Value, incoming: &Value) -> Value {
    let mut next = current.clone();
    next["status"]["conditions"] = incoming
        .pointer("/status/conditions")
        .cloned()
        .unwrap_or(json!([]));
    stamp_conditions(&mut next);
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    #[test]
    fn the_condition_column_reads_as_kubectls() {
        let csr = |conds: Value, cert: &str| json!({"status": {"conditions": conds, "certificate": cert}});
        assert_eq!(condition(&csr(json!([]), "")), "Pending");
        assert_eq!(
            condition(&csr(json!([{"type": "Approved", "status": "True"}]), "")),
            "Approved"
        );
        assert_eq!(
            condition(&csr(
                json!([{"type": "Approved", "status": "True"}]),
                "LS0t"
            )),
            "Approved,Issued"
        );
        assert_eq!(
            condition(&csr(
                json!([{"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}]),
                ""
            )),
            "Approved,Failed"
        );
        assert_eq!(
            condition(&csr(json!([{"type": "Denied", "status": "True"}]), "")),
            "Denied"
        );
    }

    #[test]
    fn a_request_that_is_not_a_csr_is_refused_in_upstreams_words() {
        let b64 = base64::engine::general_purpose::STANDARD
            .encode("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n");
        let o = json!({"spec": {"request": b64, "signerName": "example", "usages": ["client auth", "flying"], "expirationSeconds": 60}});
        let got: Vec<String> = validate(&o).iter().map(Cause::rendered).collect();
        assert!(
            got[0].starts_with("spec.request: Invalid value: []byte{0x2d, 0x2d"),
            "{got:?}"
        );
        assert!(
            got[0].ends_with(": PEM block type must be CERTIFICATE REQUEST"),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|g| g.starts_with("spec.signerName: Invalid value: \"example\"")),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|g| g.starts_with("spec.usages[1]: Unsupported value: \"flying\"")),
            "{got:?}"
        );
        assert!(
            got.iter().any(|g| g == "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"),
            "{got:?}"
        );
    }

    #[test]
    fn usages_then_the_signer_as_upstream_and_no_legacy_signer_in_v1() {
        let o = json!({"spec": {"signerName": "kubernetes.io/legacy-unknown",
            "usages": ["client auth", "client auth"]}});
        let got: Vec<String> = validate(&o).iter().map(Cause::rendered).collect();
        assert_eq!(
            got,
            [
                "spec.request: Required value",
                "spec.usages[1]: Duplicate value: \"client auth\"",
                "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version",
            ]
        );
    }

    #[test]
    fn an_approval_takes_only_the_conditions_and_stamps_them() {
        let current = json!({"spec": {"username": "alice"}, "status": {"certificate": "LS0t"}});
        let incoming = json!({"spec": {"username": "mallory"}, "status": {"certificate": "",
            "conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove"}]}});
        let next = approval_update(&current, &incoming);
        assert_eq!(next["spec"]["username"], "alice");
        assert_eq!(next["status"]["certificate"], "LS0t");
        assert!(next["status"]["conditions"][0]["lastUpdateTime"].is_string());
    }
}

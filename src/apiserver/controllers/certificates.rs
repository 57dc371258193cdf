//! The CSR signing controller (upstream `pkg/controller/certificates/signer`): an approved
//! CertificateSigningRequest for `kubernetes.io/kube-apiserver-client`,
//! `kubernetes.io/kube-apiserver-client-kubelet` or `kubernetes.io/kubelet-serving` is signed
//! with the cluster CA — the subject the request names (CN = user, O = groups, as the API server
//! reads them back), its DNS and IP subjectAltNames, the usages it asks for, valid from five
//! minutes ago for its expirationSeconds (counted from now when that is under 8 hours) or a year
//! (`--cluster-signing-duration`), never past the CA — and the certificate written to
//! `status.certificate`. A request the signer may not honour (each signer's checks are
//! upstream's, in upstream's order and words) gets the Failed condition with reason
//! SignerValidationFailure. Other signers' requests are left alone, as kube-controller-manager
//! leaves them.

use std::collections::BTreeSet;
use std::net::IpAddr;

use base64::Engine;
use rcgen::{ExtendedKeyUsagePurpose, KeyUsagePurpose};
use serde_json::{Value, json};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{self, Controller, s};
use crate::apiserver::registry::certificates::certificatesigningrequest::has_condition;
use crate::apiserver::registry::certificates::request::{parse_request, request_pem};
use crate::apiserver::registry::resources::ResourceDef;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;
use crate::pki::cert::ip_addr;
use crate::pki::mint::{Attr, CertSpec};

const PREFIX: &str = "/registry/certificatesigningrequests/";
const CLIENT: &str = "kubernetes.io/kube-apiserver-client";
const KUBELET_CLIENT: &str = "kubernetes.io/kube-apiserver-client-kubelet";
const KUBELET_SERVING: &str = "kubernetes.io/kubelet-serving";
/// `--cluster-signing-duration`'s default.
const SIGNING_DURATION: i64 = 365 * 24 * 3600;
/// How far back a certificate's validity starts, for clocks a little behind (upstream's).
const BACKDATE: i64 = 5 * 60;
/// Below this lifetime the backdating is not taken out of it (upstream's `Short`: 5 minutes is
/// about 1 % of 8 hours).
const SHORT: i64 = 8 * 3600;

pub(crate) struct CsrSigner;

fn csr_def() -> &'static ResourceDef {
    workload::def("certificates.k8s.io", "certificatesigningrequests")
}

impl Controller for CsrSigner {
    fn prefixes(&self) -> &'static [&'static str] {
        &[PREFIX]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(name) = ev.key.strip_prefix(PREFIX) {
            out.insert((String::new(), name.to_string()));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, csr_def(), "")
            .iter()
            .map(|c| (String::new(), s(c, "/metadata/name").to_string()))
            .collect()
    }

    fn sync(&mut self, api: &Api, _ns: &str, name: &str) -> bool {
        let Some(csr) = api.store.get(&csr_def().key_for("", name)) else {
            return true;
        };
        let signer = s(&csr, "/spec/signerName");
        let pending = has_condition(&csr, "Approved")
            && !has_condition(&csr, "Denied")
            && !has_condition(&csr, "Failed")
            && s(&csr, "/status/certificate").is_empty();
        if !pending || !matches!(signer, CLIENT | KUBELET_CLIENT | KUBELET_SERVING) {
            return true;
        }
        let Some(ca) = api.cluster_signer.as_ref() else {
            return true;
        };
        let status = match sign(ca, &csr, signer) {
            Ok(pem) => Ok(base64::engine::general_purpose::STANDARD.encode(pem)),
            Err(why) => Err(why),
        };
        client::update(api, csr_def(), "", name, |o| {
            if !s(o, "/status/certificate").is_empty() || has_condition(o, "Failed") {
                return;
            }
            match &status {
                Ok(cert) => o["status"]["certificate"] = json!(cert),
                Err(why) => {
                    let now = util::now();
                    let failed = json!({"type": "Failed", "status": "True",
                        "reason": "SignerValidationFailure", "message": why,
                        "lastUpdateTime": now, "lastTransitionTime": now});
                    match o["status"]["conditions"].as_array_mut() {
                        Some(cs) => cs.push(failed),
                        None => o["status"]["conditions"] = json!([failed]),
                    }
                }
            }
        })
        .is_ok()
    }
}

/// A key usage as the CSR names it, as a certificate extension; None for those the signer
/// does not put in a certificate.
fn usage(u: &str) -> Option<Result<KeyUsagePurpose, ExtendedKeyUsagePurpose>> {
    Some(match u {
        "digital signature" => Ok(KeyUsagePurpose::DigitalSignature),
        "key encipherment" => Ok(KeyUsagePurpose::KeyEncipherment),
        "client auth" => Err(ExtendedKeyUsagePurpose::ClientAuth),
        "server auth" => Err(ExtendedKeyUsagePurpose::ServerAuth),
        _ => return None,
    })
}

/// `validAPIServerClientUsages`: client auth required, digital signature and key
/// encipherment allowed, nothing else.
fn check_usages(usages: &[&str]) -> Result<(), String> {
    for u in usages {
        if !matches!(*u, "digital signature" | "key encipherment" | "client auth") {
            return Err(format!("invalid usage for client certificate: {u}"));
        }
    }
    if !usages.contains(&"client auth") {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

/// The subjectAltNames a request asks for (its extensionRequest).
#[derive(Default)]
struct Sans {
    dns: Vec<String>,
    ip: Vec<IpAddr>,
    email: Vec<String>,
    uri: Vec<String>,
}

impl Sans {
    fn of(req: &X509CertificationRequest<'_>) -> Sans {
        let mut out = Sans::default();
        for ext in req.requested_extensions().into_iter().flatten() {
            if let ParsedExtension::SubjectAlternativeName(san) = ext {
                for name in &san.general_names {
                    match name {
                        GeneralName::DNSName(d) => out.dns.push(d.to_string()),
                        GeneralName::IPAddress(b) => out.ip.extend(ip_addr(b)),
                        GeneralName::RFC822Name(e) => out.email.push(e.to_string()),
                        GeneralName::URI(u) => out.uri.push(u.to_string()),
                        _ => {}
                    }
                }
            }
        }
        out
    }
}

/// Whether `usages` are exactly one of `sets` (Go's `sets.String.Equal`: order and repeats do
/// not count).
fn exactly(usages: &[&str], sets: &[&[&str]]) -> bool {
    let have: BTreeSet<&str> = usages.iter().copied().collect();
    sets.iter()
        .any(|set| have == set.iter().copied().collect::<BTreeSet<&str>>())
}

/// The signer's own checks of a request (upstream `isKubeAPIServerClient`,
/// `ValidateKubeletClientCSR`, `ValidateKubeletServingCSR`), the first failing one's words.
fn validate(
    signer: &str,
    subject: &[(Attr, String)],
    sans: &Sans,
    usages: &[&str],
) -> Result<(), String> {
    if signer == CLIENT {
        return check_usages(usages);
    }
    let orgs: Vec<&str> = subject
        .iter()
        .filter(|(a, _)| *a == Attr::O)
        .map(|(_, v)| v.as_str())
        .collect();
    let node_cn = subject
        .iter()
        .find(|(a, _)| *a == Attr::CN)
        .is_some_and(|(_, v)| v.starts_with("system:node:"));
    let fail = |why: &str| Err(why.to_string());
    if orgs != ["system:nodes"] {
        return fail("subject organization is not system:nodes");
    }
    if signer == KUBELET_SERVING {
        if sans.dns.is_empty() && sans.ip.is_empty() {
            return fail("DNS or IP subjectAltName is required");
        }
        if !sans.email.is_empty() {
            return fail("Email subjectAltNames are not allowed");
        }
        if !sans.uri.is_empty() {
            return fail("URI subjectAltNames are not allowed");
        }
        let rsa: &[&str] = &["digital signature", "key encipherment", "server auth"];
        if !exactly(usages, &[rsa, &["digital signature", "server auth"]]) {
            return fail("usages did not match [digital signature key encipherment server auth]");
        }
        if !node_cn {
            return fail("subject common name does not begin with system:node:");
        }
        return Ok(());
    }
    if !sans.dns.is_empty() {
        return fail("DNS subjectAltNames are not allowed");
    }
    if !sans.email.is_empty() {
        return fail("Email subjectAltNames are not allowed");
    }
    if !sans.ip.is_empty() {
        return fail("IP subjectAltNames are not allowed");
    }
    if !sans.uri.is_empty() {
        return fail("URI subjectAltNames are not allowed");
    }
    if !node_cn {
        return fail("subject common name does not begin with system:node:");
    }
    let rsa: &[&str] = &["digital signature", "key encipherment", "client auth"];
    if !exactly(usages, &[rsa, &["digital signature", "client auth"]]) {
        return fail("usages did not match [client auth digital signature key encipherment]");
    }
    Ok(())
}

/// A certificate's validity for a lifetime of `ttl` seconds issued at `now`: backdated for
/// clocks a little behind, the lifetime kept whole when it is short.
fn validity(now: i64, ttl: i64) -> (i64, i64) {
    let not_before = now - BACKDATE;
    let not_after = if ttl < SHORT {
        now + ttl
    } else {
        not_before + ttl
    };
    (not_before, not_after)
}

/// The certificate for an approved request, or why the signer refuses it.
fn sign(ca: &crate::pki::mint::Authority, csr: &Value, signer: &str) -> Result<String, String> {
    let pem = request_pem(csr).ok_or("no request")?;
    let der = parse_request(&pem)?;
    let (_, req) = X509CertificationRequest::from_der(&der).map_err(|e| e.to_string())?;
    let info = &req.certification_request_info;
    let mut subject = Vec::new();
    for rdn in info.subject.iter() {
        for a in rdn.iter() {
            use x509_parser::oid_registry as oids;
            let attr = match a.attr_type() {
                t if *t == oids::OID_X509_COMMON_NAME => Attr::CN,
                t if *t == oids::OID_X509_ORGANIZATION_NAME => Attr::O,
                t if *t == oids::OID_X509_ORGANIZATIONAL_UNIT => Attr::OU,
                t if *t == oids::OID_X509_COUNTRY_NAME => Attr::C,
                t if *t == oids::OID_X509_STATE_OR_PROVINCE_NAME => Attr::ST,
                t if *t == oids::OID_X509_LOCALITY_NAME => Attr::L,
                _ => continue,
            };
            if let Ok(v) = a.as_str() {
                subject.push((attr, v.to_string()));
            }
        }
    }
    let usages: Vec<&str> = csr
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let sans = Sans::of(&req);
    validate(signer, &subject, &sans, &usages)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let ttl = csr
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .map_or(SIGNING_DURATION, |e| e.min(SIGNING_DURATION));
    let ca_end = x509_parser::parse_x509_certificate(&ca.cert.cert_der)
        .map(|(_, c)| c.validity().not_after.timestamp())
        .unwrap_or(i64::MAX);
    let (not_before, not_after) = validity(now, ttl);
    let mut spec = CertSpec::client(subject, not_before, not_after.min(ca_end));
    spec.dns_names = sans.dns;
    spec.ip_addresses = sans.ip;
    spec.email_addresses = sans.email;
    spec.uris = sans.uri;
    spec.key_usages.clear();
    spec.extended_key_usages.clear();
    for u in &usages {
        match usage(u) {
            Some(Ok(k)) => spec.key_usages.push(k),
            Some(Err(e)) => spec.extended_key_usages.push(e),
            None => {}
        }
    }
    let (pem, _) = ca
        .issue_for_public_key(&spec, info.subject_pki.raw)
        .map_err(|e| format!("error signing the certificate: {e}"))?;
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_backdated_five_minutes_and_a_short_lifetime_kept_whole() {
        assert_eq!(validity(10_000, 3600), (10_000 - 300, 10_000 + 3600));
        assert_eq!(
            validity(10_000, SIGNING_DURATION),
            (9_700, 9_700 + SIGNING_DURATION)
        );
    }

    #[test]
    fn the_kubelet_signers_check_as_upstream_in_its_order() {
        let node = vec![
            (Attr::O, "system:nodes".to_string()),
            (Attr::CN, "system:node:n1".to_string()),
        ];
        let named = Sans {
            dns: vec!["n1".into()],
            ..Sans::default()
        };
        let serving = ["key encipherment", "server auth", "digital signature"];
        assert_eq!(validate(KUBELET_SERVING, &node, &named, &serving), Ok(()));
        // Without key encipherment (an ECDSA key) is the other set upstream takes.
        let ec = ["digital signature", "server auth"];
        assert_eq!(validate(KUBELET_SERVING, &node, &named, &ec), Ok(()));
        let err = |signer, subject: &[(Attr, String)], sans: &Sans, usages: &[&str]| {
            validate(signer, subject, sans, usages).unwrap_err()
        };
        assert_eq!(
            err(KUBELET_SERVING, &node, &Sans::default(), &serving),
            "DNS or IP subjectAltName is required"
        );
        assert_eq!(
            err(KUBELET_SERVING, &node, &named, &["server auth"]),
            "usages did not match [digital signature key encipherment server auth]"
        );
        let user = vec![
            (Attr::O, "system:nodes".to_string()),
            (Attr::CN, "n1".to_string()),
        ];
        assert_eq!(
            err(KUBELET_SERVING, &user, &named, &serving),
            "subject common name does not begin with system:node:"
        );
        // The organisation is checked first, by both kubelet signers.
        let devs = vec![(Attr::O, "devs".to_string()), (Attr::CN, "n1".to_string())];
        assert_eq!(
            err(KUBELET_SERVING, &devs, &Sans::default(), &[]),
            "subject organization is not system:nodes"
        );
        let client = ["digital signature", "key encipherment", "client auth"];
        assert_eq!(
            validate(KUBELET_CLIENT, &node, &Sans::default(), &client),
            Ok(())
        );
        assert_eq!(
            err(KUBELET_CLIENT, &node, &named, &client),
            "DNS subjectAltNames are not allowed"
        );
        assert_eq!(
            err(KUBELET_CLIENT, &node, &Sans::default(), &["client auth"]),
            "usages did not match [client auth digital signature key encipherment]"
        );
    }

    #[test]
    fn client_certificates_need_client_auth_and_nothing_a_server_uses() {
        assert_eq!(
            check_usages(&["digital signature", "key encipherment", "client auth"]),
            Ok(())
        );
        assert_eq!(
            check_usages(&["client auth", "server auth"]),
            Err("invalid usage for client certificate: server auth".into())
        );
        assert_eq!(
            check_usages(&["digital signature"]),
            Err("missing required usage for client certificate: client auth".into())
        );
    }
}

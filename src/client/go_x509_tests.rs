//! Go's verdicts on minted chains. The words themselves are checked against real kubectl in
//! tests/kubectl_words.rs; these pin the order of Go's checks and the cases kubectl accepts.

use std::net::IpAddr;

use super::*;
use crate::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};
use crate::pki::testkit::{NOW, Y2025, Y2125, ca};

fn server(ca: &Authority, dns: &[&str], ips: &[&str], nb: i64, na: i64) -> Vec<u8> {
    let spec = CertSpec::server(
        vec![(Attr::CN, "kube-apiserver".into())],
        dns.iter().map(|s| s.to_string()).collect(),
        ips.iter().map(|s| s.parse::<IpAddr>().unwrap()).collect(),
        nb,
        na,
    );
    ca.issue(&spec, &generate_key(KeyKind::EcdsaP256).unwrap())
        .unwrap()
        .cert_der
}

fn verdict(chain: &[Vec<u8>], roots: Option<&[Vec<u8>]>, host: &str) -> Verdict {
    verify(&Inputs {
        chain,
        roots,
        host,
        now: NOW,
    })
}

fn rejects(v: Verdict) -> String {
    match v {
        Verdict::Rejects(e) => e,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_chain_to_a_trusted_ca_is_accepted_by_name_and_by_ip() {
    let ca = ca("kexplore-ca");
    let leaf = server(
        &ca,
        &["localhost", "*.example.com"],
        &["127.0.0.1", "::1"],
        Y2025,
        Y2125,
    );
    let roots = [ca.cert.cert_der.clone()];
    for host in [
        "localhost",
        "LOCALHOST",
        "api.example.com",
        "127.0.0.1",
        "::1",
        "[::1]",
    ] {
        assert_eq!(
            verdict(std::slice::from_ref(&leaf), Some(&roots), host),
            Verdict::Accepts,
            "{host}"
        );
    }
}

#[test]
fn another_ca_is_an_unknown_authority_without_a_hint() {
    let (trusted, other) = (ca("trusted"), ca("other"));
    let leaf = server(&other, &["localhost"], &[], Y2025, Y2125);
    assert_eq!(
        rejects(verdict(
            &[leaf],
            Some(std::slice::from_ref(&trusted.cert.cert_der)),
            "localhost"
        )),
        "x509: certificate signed by unknown authority"
    );
}

#[test]
fn a_same_named_ca_with_another_key_is_named_in_the_hint() {
    let (trusted, regenerated) = (ca("kubernetes"), ca("kubernetes"));
    let leaf = server(&regenerated, &["localhost"], &[], Y2025, Y2125);
    assert_eq!(
        rejects(verdict(
            &[leaf],
            Some(std::slice::from_ref(&trusted.cert.cert_der)),
            "localhost"
        )),
        "x509: certificate signed by unknown authority (possibly because of \"x509: ECDSA verification failure\" while trying to verify candidate authority certificate \"kubernetes\")"
    );
}

#[test]
fn an_expired_leaf_is_reported_before_anything_else() {
    let ca = ca("kexplore-ca");
    // 2025-06-01: expired at NOW (2026-01-01), and from a CA nobody trusts, for another name.
    let leaf = server(&ca, &["localhost"], &[], Y2025, 1_748_736_000);
    assert_eq!(
        rejects(verdict(&[leaf], Some(&[]), "elsewhere")),
        "x509: certificate has expired or is not yet valid: current time 2026-01-01T00:00:00Z is after 2025-06-01T00:00:00Z"
    );
    let early = server(&ca, &["localhost"], &[], Y2125 - 1, Y2125);
    assert!(
        rejects(verdict(&[early], Some(&[]), "localhost"))
            .starts_with("x509: certificate has expired or is not yet valid: current time 2026-01-01T00:00:00Z is before 2124-")
    );
}

#[test]
fn the_host_name_is_checked_before_the_chain() {
    let (trusted, other) = (ca("trusted"), ca("other"));
    let leaf = server(
        &other,
        &["localhost", "kubernetes"],
        &["127.0.0.1", "::1"],
        Y2025,
        Y2125,
    );
    let roots = [trusted.cert.cert_der.clone()];
    assert_eq!(
        rejects(verdict(
            std::slice::from_ref(&leaf),
            Some(&roots),
            "foo.example"
        )),
        "x509: certificate is valid for localhost, kubernetes, not foo.example"
    );
    assert_eq!(
        rejects(verdict(&[leaf], Some(&roots), "10.0.0.1")),
        "x509: certificate is valid for 127.0.0.1, ::1, not 10.0.0.1"
    );
    let dns_only = server(&other, &["localhost"], &[], Y2025, Y2125);
    assert_eq!(
        rejects(verdict(&[dns_only], Some(&roots), "10.0.0.1")),
        "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs"
    );
    let ip_only = server(&other, &[], &["127.0.0.1"], Y2025, Y2125);
    assert_eq!(
        rejects(verdict(&[ip_only], Some(&roots), "localhost")),
        "x509: certificate is not valid for any names, but wanted to match localhost"
    );
}

#[test]
fn a_pinned_leaf_is_accepted_as_go_accepts_it() {
    let ca = ca("kexplore-ca");
    let leaf = server(&ca, &["localhost"], &[], Y2025, Y2125);
    assert_eq!(
        verdict(
            std::slice::from_ref(&leaf),
            Some(std::slice::from_ref(&leaf)),
            "localhost"
        ),
        Verdict::Accepts
    );
}

#[test]
fn system_roots_leave_the_chain_unsure_but_not_the_leaf() {
    let ca = ca("kexplore-ca");
    let leaf = server(&ca, &["localhost"], &[], Y2025, Y2125);
    assert_eq!(
        verdict(std::slice::from_ref(&leaf), None, "localhost"),
        Verdict::Unsure
    );
    assert!(matches!(
        verdict(&[leaf], None, "other"),
        Verdict::Rejects(_)
    ));
}

#[test]
fn a_presented_intermediate_completes_the_chain() {
    let root = ca("root");
    let mid = root
        .issue_ca(
            &CertSpec::ca(vec![(Attr::CN, "mid".into())], Y2025, Y2125),
            generate_key(KeyKind::EcdsaP256).unwrap(),
        )
        .unwrap();
    let leaf = server(&mid, &["localhost"], &[], Y2025, Y2125);
    let roots = [root.cert.cert_der.clone()];
    assert_eq!(
        verdict(
            &[leaf.clone(), mid.cert.cert_der.clone()],
            Some(&roots),
            "localhost"
        ),
        Verdict::Accepts
    );
    assert_eq!(
        rejects(verdict(&[leaf], Some(&roots), "localhost")),
        "x509: certificate signed by unknown authority"
    );
}

#[test]
fn a_client_only_certificate_has_an_incompatible_key_usage() {
    let ca = ca("kexplore-ca");
    let mut spec = CertSpec::client(vec![(Attr::CN, "x".into())], Y2025, Y2125);
    spec.dns_names = vec!["localhost".into()];
    let leaf = ca
        .issue(&spec, &generate_key(KeyKind::EcdsaP256).unwrap())
        .unwrap()
        .cert_der;
    assert_eq!(
        rejects(verdict(
            &[leaf],
            Some(std::slice::from_ref(&ca.cert.cert_der)),
            "localhost"
        )),
        "x509: certificate specifies an incompatible key usage"
    );
}

#[test]
fn go_quotes_like_percent_q() {
    assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    assert_eq!(go_quote("kubernetes"), "\"kubernetes\"");
}

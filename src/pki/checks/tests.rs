//! Checks on freshly minted PKIs: each id fires when it should.

use crate::kubeconfig::ResolveWarning;
use crate::pki::CredentialReport;

/// Every check emitted has the status the catalogue gives its id.
fn assert_catalogued(r: &CredentialReport) {
    for c in &r.checks {
        if c.id == "data-and-file-both-set" {
            continue;
        }
        let entry = super::CATALOGUE.iter().find(|(id, _)| *id == c.id);
        assert_eq!(entry.map(|(_, s)| *s), Some(c.status), "{}", c.id);
    }
}
use crate::pki::testkit::*;
use crate::pki::{CheckStatus, inspect_at, mint};

#[test]
fn a_healthy_context_has_no_warnings_or_errors() {
    let ca = ca("kubernetes");
    let c = client(&ca, &client_spec("jane", &["dev"]));
    let ctx = context(
        Some(&ca.cert.cert_pem),
        Some((&c.cert_pem, c.key_pem.expose())),
    );
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(ids(&r, CheckStatus::Warn).is_empty(), "{:?}", r.checks);
    assert!(ids(&r, CheckStatus::Error).is_empty(), "{:?}", r.checks);
    let ok = ids(&r, CheckStatus::Ok);
    for id in [
        "ca-present",
        "client-cert-valid",
        "client-cert-issued-by-ca",
        "client-key-matches-cert",
        "client-cert-client-auth",
    ] {
        assert!(ok.contains(&id.to_string()), "{id} in {ok:?}");
    }
    let id = r.user.identity.unwrap();
    assert_eq!(
        (id.user.as_str(), id.groups),
        ("jane", vec!["dev".to_string()])
    );
}

#[test]
fn validity_windows() {
    let ca = ca("kubernetes");
    let day = 86_400;
    for (nb, na, id) in [
        (NOW - 10 * day, NOW + 10 * day, "client-cert-expiring-soon"),
        (NOW + 2 * day, NOW + 400 * day, "client-cert-not-yet-valid"),
        (NOW - 400 * day, NOW - day, "client-cert-expired"),
        (NOW - day, NOW + 31 * day, "client-cert-valid"),
    ] {
        let mut spec = client_spec("x", &[]);
        spec.not_before = nb;
        spec.not_after = na;
        let c = client(&ca, &spec);
        let ctx = context(
            Some(&ca.cert.cert_pem),
            Some((&c.cert_pem, c.key_pem.expose())),
        );
        let r = inspect_at(&ctx, NOW).unwrap();
        assert_catalogued(&r);
        assert!(r.checks.iter().any(|c| c.id == id), "{id}: {:?}", r.checks);
    }
}

#[test]
fn a_key_from_another_pair_is_an_error() {
    let ca = ca("kubernetes");
    let a = client(&ca, &client_spec("a", &[]));
    let b = client(&ca, &client_spec("b", &[]));
    let ctx = context(
        Some(&ca.cert.cert_pem),
        Some((&a.cert_pem, b.key_pem.expose())),
    );
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert_eq!(
        r.user.client_key.as_ref().unwrap().matches_certificate,
        Some(false)
    );
    assert!(ids(&r, CheckStatus::Error).contains(&"client-key-mismatch".to_string()));
}

#[test]
fn server_only_eku_and_missing_cn_are_errors() {
    let ca = ca("kubernetes");
    let mut spec = mint::CertSpec::server(
        vec![(mint::Attr::O, "system:nodes".into())],
        vec!["node1".into()],
        vec![],
        Y2025,
        Y2125,
    );
    spec.not_after = Y2125;
    let c = client(&ca, &spec);
    let ctx = context(
        Some(&ca.cert.cert_pem),
        Some((&c.cert_pem, c.key_pem.expose())),
    );
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    let errors = ids(&r, CheckStatus::Error);
    assert!(
        errors.contains(&"client-cert-missing-client-auth".into()),
        "{errors:?}"
    );
    assert!(
        errors.contains(&"client-cert-no-common-name".into()),
        "{errors:?}"
    );
}

#[test]
fn a_leaf_as_ca_and_a_foreign_issuer() {
    let other = ca("other-ca");
    let ca = ca("kubernetes");
    let leaf = client(&ca, &client_spec("pinned", &[]));
    let c = client(&other, &client_spec("x", &[]));
    let ctx = context(
        Some(&leaf.cert_pem),
        Some((&c.cert_pem, c.key_pem.expose())),
    );
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(ids(&r, CheckStatus::Error).contains(&"ca-cert-not-ca".into()));
    let warns = ids(&r, CheckStatus::Warn);
    assert!(
        warns.contains(&"client-cert-issuer-not-in-kubeconfig".into()),
        "{warns:?}"
    );
    assert!(r.user.client_certificate[0].issued_by.is_none());
}

#[test]
fn same_named_ca_with_another_key_is_an_error() {
    let trusted = ca("kubernetes");
    let old = ca("kubernetes");
    let c = client(&old, &client_spec("admin", &["system:masters"]));
    let ctx = context(
        Some(&trusted.cert.cert_pem),
        Some((&c.cert_pem, c.key_pem.expose())),
    );
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(ids(&r, CheckStatus::Error).contains(&"client-cert-signature-mismatch".into()));
    assert!(ids(&r, CheckStatus::Warn).contains(&"identity-system-masters".into()));
    assert_eq!(r.issuance.len(), 1);
    assert!(!r.issuance[0].verified);
}

#[test]
fn tls_settings_and_server_names() {
    let ca = ca("kubernetes");
    let mut ctx = context(Some(&ca.cert.cert_pem), None);
    ctx.cluster.insecure_skip_tls_verify = true;
    ctx.cluster.server = "https://my_cluster:6443".into();
    ctx.warnings.push(ResolveWarning {
        id: "data-and-file-both-set",
        message: "both".into(),
    });
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    let errors = ids(&r, CheckStatus::Error);
    let warns = ids(&r, CheckStatus::Warn);
    assert!(errors.contains(&"insecure-with-ca".into()), "{errors:?}");
    for id in [
        "insecure-skip-tls-verify",
        "server-host-invalid",
        "data-and-file-both-set",
        "no-credentials",
    ] {
        assert!(warns.contains(&id.to_string()), "{id}: {warns:?}");
    }
    ctx.cluster.server = "https://[::1]:6443".into();
    ctx.cluster.insecure_skip_tls_verify = false;
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(ids(&r, CheckStatus::Ok).contains(&"server-host".into()));
    ctx.cluster.server = "http://example.com".into();
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(ids(&r, CheckStatus::Warn).contains(&"server-not-https".into()));
}

#[test]
fn short_rsa_keys_are_errors() {
    use rsa::pkcs8::EncodePublicKey as _;
    let ca = ca("kubernetes");
    let mut rng = rand::thread_rng();
    let weak = rsa::RsaPrivateKey::new(&mut rng, 1024).unwrap();
    let spki = weak.to_public_key().to_public_key_der().unwrap();
    let (pem, _) = ca
        .issue_for_public_key(&client_spec("weak", &[]), spki.as_bytes())
        .unwrap();
    use rsa::pkcs1::EncodeRsaPrivateKey as _;
    let key = weak.to_pkcs1_pem(rsa::pkcs8::LineEnding::LF).unwrap();
    let ctx = context(Some(&ca.cert.cert_pem), Some((&pem, key.as_str())));
    let r = inspect_at(&ctx, NOW).unwrap();
    assert_catalogued(&r);
    assert!(
        ids(&r, CheckStatus::Error).contains(&"weak-key".into()),
        "{:?}",
        r.checks
    );
    let k = r.user.client_key.unwrap();
    assert_eq!((k.bits, k.matches_certificate), (1024, Some(true)));
}

#[test]
fn a_pkcs8_v2_key_is_a_warning_naming_the_rewrite_and_v1_is_not() {
    let ca = ca("kubernetes");
    let key = mint::generate_key(mint::KeyKind::Ed25519).unwrap();
    let leaf = ca.issue(&client_spec("jane", &["dev"]), &key).unwrap();
    // ring's own serialization is v2; what mint hands out is v1.
    let v2 = key.serialize_pem();
    let warned = |key_pem: &str| {
        let ctx = context(Some(&ca.cert.cert_pem), Some((&leaf.cert_pem, key_pem)));
        let r = inspect_at(&ctx, NOW).unwrap();
        assert_catalogued(&r);
        r.checks.into_iter().find(|c| c.id == "client-key-pkcs8-v2")
    };
    let ctx = context(Some(&ca.cert.cert_pem), Some((&leaf.cert_pem, v2.as_str())));
    let report = inspect_at(&ctx, NOW).unwrap();
    let format = report.user.client_key.as_ref().map(|k| k.format.as_str());
    assert_eq!(format, Some("PKCS#8 v2"));
    let c = warned(&v2).expect("the v2 key is flagged");
    assert_eq!(c.status, CheckStatus::Warn);
    for words in [
        "PKCS#8 v2",
        "kubectl (Go) and rustls read it",
        "curl",
        "openssl asn1parse -in client.key -offset 5 -length 43",
    ] {
        assert!(c.message.contains(words), "{words:?} in {}", c.message);
    }
    assert!(
        warned(leaf.key_pem.expose()).is_none(),
        "mint's v1 key is not flagged"
    );
}

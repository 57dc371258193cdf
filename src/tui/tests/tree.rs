//! The trust tree's shape on odd inputs: shared certificates, cycles, missing issuers.

use super::fixtures;
use crate::pki::Issuance;
use crate::tui::trust_tree::{Bundle, Link, build};

fn edge(c: &str, i: &str, v: bool) -> Issuance {
    Issuance {
        child: c.into(),
        issuer: i.into(),
        verified: v,
    }
}

#[test]
fn three_levels_nest_with_prefixes() {
    let rows = build(&fixtures::report());
    let shape: Vec<(usize, &str, Link)> = rows
        .iter()
        .map(|r| (r.depth, r.prefix.as_str(), r.link))
        .collect();
    assert_eq!(
        shape,
        vec![
            (0, "", Link::SelfSigned { verified: true }),
            (1, "└─ ", Link::Issued { verified: true }),
            (2, "   └─ ", Link::Issued { verified: true }),
        ]
    );
    assert_eq!(rows[2].bundles, vec![Bundle::ClientCert]);
}

#[test]
fn a_certificate_in_both_bundles_appears_once_with_both() {
    let mut report = fixtures::report();
    let root = report.cluster.certificate_authority[0].clone();
    report.user.client_certificate.push(root);
    let rows = build(&report);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].bundles, vec![Bundle::ServerCa, Bundle::ClientCert]);
}

#[test]
fn siblings_get_tee_and_corner() {
    let mut report = fixtures::report();
    // Make the leaf a direct child of the root, next to the cluster CA.
    report.issuance = vec![
        edge("AA:01", "AA:01", true),
        edge("BB:02", "AA:01", true),
        edge("CC:03", "AA:01", true),
    ];
    let prefixes: Vec<String> = build(&report).into_iter().map(|r| r.prefix).collect();
    assert_eq!(prefixes, vec!["", "├─ ", "└─ "]);
}

#[test]
fn cycles_and_missing_issuers_still_show_every_certificate_once() {
    let mut report = fixtures::report();
    report.issuance = vec![edge("BB:02", "CC:03", false), edge("CC:03", "BB:02", false)];
    report.cluster.certificate_authority[0].self_signed = false;
    let rows = build(&report);
    let mut fps: Vec<&str> = rows.iter().map(|r| r.fingerprint.as_str()).collect();
    fps.sort();
    assert_eq!(fps, vec!["AA:01", "BB:02", "CC:03"]);
    assert_eq!(rows[0].link, Link::IssuerNotPresent, "{rows:?}");
}

#[test]
fn a_verified_issuer_wins_over_an_unverified_one() {
    let mut report = fixtures::report();
    report.issuance.insert(0, edge("CC:03", "AA:01", false));
    let rows = build(&report);
    let leaf = rows.iter().find(|r| r.fingerprint == "CC:03").unwrap();
    assert_eq!(
        leaf.depth, 2,
        "hangs under the cluster CA it verifies against"
    );
    assert_eq!(leaf.link, Link::Issued { verified: true });
}

//! Who issued whom, decided by verifying signatures: a certificate is linked to a candidate
//! issuer only when the candidate's public key verifies its signature. Names only nominate
//! candidates, because two CAs can share a name (a regenerated `CN=kubernetes` is the classic).

use x509_parser::prelude::X509Certificate;

use super::report::{CertSummary, Issuance};

/// Fills `issued_by` on every certificate and returns every issuance edge, including failed
/// ones (a same-named candidate whose key does not verify the signature).
pub fn link(certs: &mut [&mut CertSummary]) -> Vec<Issuance> {
    let ders: Vec<Vec<u8>> = certs.iter().map(|c| c.extra.der.clone()).collect();
    let parsed: Vec<Option<X509Certificate<'_>>> = ders
        .iter()
        .map(|d| x509_parser::parse_x509_certificate(d).ok().map(|(_, c)| c))
        .collect();
    let fps: Vec<String> = certs.iter().map(|c| c.sha256_fingerprint.clone()).collect();
    let mut edges: Vec<Issuance> = Vec::new();
    for (i, child) in parsed.iter().enumerate() {
        let Some(child) = child else { continue };
        let mut failed: Option<usize> = None;
        let mut found: Option<usize> = None;
        for (j, cand) in parsed.iter().enumerate() {
            let Some(cand) = cand else { continue };
            if cand.subject().as_raw() != child.issuer().as_raw() {
                continue;
            }
            // Identical certificates listed twice: one representative is enough.
            if j != i && fps[j] == fps[i] {
                continue;
            }
            if child.verify_signature(Some(cand.public_key())).is_ok() {
                found = Some(j);
                break;
            }
            failed.get_or_insert(j);
        }
        if let Some(j) = found {
            certs[i].issued_by = Some(fps[j].clone());
            if j != i {
                push_edge(&mut edges, &fps[i], &fps[j], true);
            }
        } else if let Some(j) = failed
            && j != i
        {
            push_edge(&mut edges, &fps[i], &fps[j], false);
        }
    }
    edges
}

fn push_edge(edges: &mut Vec<Issuance>, child: &str, issuer: &str, verified: bool) {
    if !edges.iter().any(|e| e.child == child && e.issuer == issuer) {
        edges.push(Issuance {
            child: child.to_string(),
            issuer: issuer.to_string(),
            verified,
        });
    }
}

/// One line of the drawn tree: depth, the certificate, and how it hangs from its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub depth: usize,
    /// Index into the list given to `tree`.
    pub index: usize,
    /// `Some(true)` verified link to the parent row, `Some(false)` a parent that shares the
    /// issuer's name but whose key does not verify the signature, `None` for a top row.
    pub link: Option<bool>,
    /// Whether this is the last child of its parent (for drawing └ vs ├).
    pub last: bool,
    /// The prefix of vertical bars for the ancestors, for drawing.
    pub prefix: String,
}

/// Arranges certificates (deduplicated by fingerprint) into issuance trees: roots first, in
/// the order given, each child under its verified issuer (or, failing that, under the
/// same-named certificate that did not verify, marked `Some(false)`).
pub fn tree(certs: &[&CertSummary], edges: &[Issuance]) -> Vec<TreeRow> {
    let mut unique: Vec<usize> = Vec::new();
    for (i, c) in certs.iter().enumerate() {
        if !unique
            .iter()
            .any(|&u| certs[u].sha256_fingerprint == c.sha256_fingerprint)
        {
            unique.push(i);
        }
    }
    let parent_of = |i: usize| -> Option<(usize, bool)> {
        let fp = &certs[i].sha256_fingerprint;
        let edge = edges
            .iter()
            .find(|e| &e.child == fp && e.verified)
            .or_else(|| edges.iter().find(|e| &e.child == fp))?;
        let p = unique
            .iter()
            .copied()
            .find(|&u| certs[u].sha256_fingerprint == edge.issuer)?;
        (p != i).then_some((p, edge.verified))
    };
    let mut rows = Vec::new();
    let roots: Vec<usize> = unique
        .iter()
        .copied()
        .filter(|&i| parent_of(i).is_none())
        .collect();
    let mut visited = Vec::new();
    for (n, &r) in roots.iter().enumerate() {
        walk(
            r,
            0,
            None,
            n + 1 == roots.len(),
            String::new(),
            &unique,
            &parent_of,
            &mut visited,
            &mut rows,
        );
    }
    // Cycles (two CAs cross-signing each other) have no root: show what is left flat.
    for &i in &unique {
        if !visited.contains(&i) {
            walk(
                i,
                0,
                None,
                true,
                String::new(),
                &unique,
                &parent_of,
                &mut visited,
                &mut rows,
            );
        }
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn walk(
    i: usize,
    depth: usize,
    link: Option<bool>,
    last: bool,
    prefix: String,
    unique: &[usize],
    parent_of: &dyn Fn(usize) -> Option<(usize, bool)>,
    visited: &mut Vec<usize>,
    rows: &mut Vec<TreeRow>,
) {
    if visited.contains(&i) {
        return;
    }
    visited.push(i);
    rows.push(TreeRow {
        depth,
        index: i,
        link,
        last,
        prefix: prefix.clone(),
    });
    let children: Vec<(usize, bool)> = unique
        .iter()
        .copied()
        .filter_map(|c| parent_of(c).filter(|(p, _)| *p == i).map(|(_, v)| (c, v)))
        .collect();
    let child_prefix = if depth == 0 {
        String::new()
    } else {
        format!("{prefix}{}", if last { "    " } else { "│   " })
    };
    for (n, (c, verified)) in children.iter().enumerate() {
        walk(
            *c,
            depth + 1,
            Some(*verified),
            n + 1 == children.len(),
            child_prefix.clone(),
            unique,
            parent_of,
            visited,
            rows,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::mint::{Attr, CertSpec, KeyKind, generate_key};
    use super::super::testkit::*;
    use super::super::{inspect_at, render};

    #[test]
    fn three_levels_with_a_duplicate_and_a_stranger() {
        let root = ca("root");
        let mid = root
            .issue_ca(
                &CertSpec::ca(vec![(Attr::CN, "mid".into())], Y2025, Y2125),
                generate_key(KeyKind::EcdsaP256).unwrap(),
            )
            .unwrap();
        let stranger = ca("stranger");
        let leaf = client(&mid, &client_spec("leaf", &[]));
        // CA bundle: mid, root, stranger; client bundle: leaf + mid again.
        let bundle = format!(
            "{}{}{}",
            mid.cert.cert_pem, root.cert.cert_pem, stranger.cert.cert_pem
        );
        let chain = format!("{}{}", leaf.cert_pem, mid.cert.cert_pem);
        let ctx = context(Some(&bundle), Some((&chain, leaf.key_pem.expose())));
        let r = inspect_at(&ctx, NOW).unwrap();
        let ca = &r.cluster.certificate_authority;
        let cl = &r.user.client_certificate;
        assert_eq!(ca[0].issued_by.as_ref(), Some(&ca[1].sha256_fingerprint));
        assert_eq!(ca[1].issued_by.as_ref(), Some(&ca[1].sha256_fingerprint));
        assert!(ca[1].self_signed && !ca[0].self_signed);
        assert_eq!(cl[0].issued_by.as_ref(), Some(&ca[0].sha256_fingerprint));
        assert!(r.issuance.iter().all(|e| e.verified));
        let lines = render::tree_lines(&r);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert!(lines[0].starts_with("CN=root  [CA #2, self-signed root"));
        assert!(lines[1].starts_with("└── ✓ CN=mid  [CA #1"));
        assert!(
            lines[2].starts_with("    └── ✓ CN=leaf  [client cert]"),
            "{lines:#?}"
        );
        assert!(lines[3].starts_with("CN=stranger"));
    }
}

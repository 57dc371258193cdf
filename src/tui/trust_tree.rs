//! The chain-of-trust tree of view 2, as rows: roots first, each certificate under the one
//! that issued it (by the report's `issuance` edges, i.e. by signature), each row knowing
//! which bundle(s) the certificate came from. Pure data, so it is tested without a terminal.

use std::collections::HashSet;

use crate::pki::{CertSummary, CredentialReport};

/// How a row hangs from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// A self-signed root; `verified` says whether its own signature checks out.
    SelfSigned { verified: bool },
    /// Issued by the row above it in the tree; `verified` is the signature check.
    Issued { verified: bool },
    /// No issuer in the kubeconfig: trust depends on something kexplore cannot see.
    IssuerNotPresent,
}

/// Which kubeconfig bundle a certificate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bundle {
    /// `certificate-authority[-data]`: the CAs the client trusts for the server.
    ServerCa,
    /// `client-certificate[-data]`: what the client presents.
    ClientCert,
}

impl Bundle {
    pub fn label(self) -> &'static str {
        match self {
            Bundle::ServerCa => "CA trusted for the server",
            Bundle::ClientCert => "client certificate",
        }
    }

    /// As `label`, but a CA in the client bundle is an intermediate sent along with the leaf.
    pub fn label_for(self, is_ca: bool) -> &'static str {
        match (self, is_ca) {
            (Bundle::ClientCert, true) => "sent with the client certificate",
            _ => self.label(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub fingerprint: String,
    pub depth: usize,
    /// Box-drawing prefix, e.g. `│  └─ `.
    pub prefix: String,
    pub link: Link,
    pub bundles: Vec<Bundle>,
}

/// The certificate a row stands for (first occurrence by fingerprint).
pub fn cert<'a>(report: &'a CredentialReport, fingerprint: &str) -> Option<&'a CertSummary> {
    report
        .all_certificates()
        .find(|c| c.sha256_fingerprint == fingerprint)
}

/// The row view 2 opens on: the certificate the worst check judged, else the first row.
pub fn worst_row(report: &CredentialReport) -> usize {
    let Some(fp) = report.worst_check().and_then(|worst| {
        report
            .checks
            .iter()
            .filter(|c| c.status == worst.status)
            .find_map(|c| c.certificate.as_deref())
    }) else {
        return 0;
    };
    build(report)
        .iter()
        .position(|r| r.fingerprint == fp)
        .unwrap_or(0)
}

/// Builds the rows. Every certificate appears exactly once, even with cycles or odd edges.
pub fn build(report: &CredentialReport) -> Vec<TreeRow> {
    // Unique certificates in report order (CA bundle first), with their bundles.
    let mut nodes: Vec<(String, Vec<Bundle>)> = Vec::new();
    let tagged = report
        .cluster
        .certificate_authority
        .iter()
        .map(|c| (c, Bundle::ServerCa))
        .chain(
            report
                .user
                .client_certificate
                .iter()
                .map(|c| (c, Bundle::ClientCert)),
        );
    for (c, bundle) in tagged {
        let fp = &c.sha256_fingerprint;
        match nodes.iter_mut().find(|(f, _)| f == fp) {
            Some((_, bundles)) if !bundles.contains(&bundle) => bundles.push(bundle),
            Some(_) => {}
            None => nodes.push((fp.clone(), vec![bundle])),
        }
    }
    let known: HashSet<&str> = nodes.iter().map(|(f, _)| f.as_str()).collect();
    // Each certificate's parent: a verified edge to another known certificate, else any.
    let parent_of = |fp: &str| -> Option<(String, bool)> {
        let edges = report
            .issuance
            .iter()
            .filter(|e| e.child == fp && e.issuer != fp && known.contains(e.issuer.as_str()));
        let mut first = None;
        for e in edges {
            if e.verified {
                return Some((e.issuer.clone(), true));
            }
            first.get_or_insert((e.issuer.clone(), false));
        }
        first
    };
    let parents: Vec<Option<(String, bool)>> = nodes.iter().map(|(fp, _)| parent_of(fp)).collect();

    let mut rows = Vec::new();
    let mut seen = HashSet::new();
    let roots: Vec<usize> = (0..nodes.len()).filter(|i| parents[*i].is_none()).collect();
    let count = roots.len();
    for (n, i) in roots.into_iter().enumerate() {
        walk(
            report,
            &nodes,
            &parents,
            i,
            0,
            "",
            n + 1 == count,
            &mut seen,
            &mut rows,
        );
    }
    // Certificates caught in an issuance cycle have no root: show them at the top level.
    for i in 0..nodes.len() {
        if !seen.contains(&i) {
            walk(
                report, &nodes, &parents, i, 0, "", true, &mut seen, &mut rows,
            );
        }
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn walk(
    report: &CredentialReport,
    nodes: &[(String, Vec<Bundle>)],
    parents: &[Option<(String, bool)>],
    i: usize,
    depth: usize,
    indent: &str,
    last: bool,
    seen: &mut HashSet<usize>,
    rows: &mut Vec<TreeRow>,
) {
    if !seen.insert(i) {
        return;
    }
    let (fp, bundles) = &nodes[i];
    let link = match (&parents[i], depth) {
        (Some((_, verified)), d) if d > 0 => Link::Issued {
            verified: *verified,
        },
        _ => {
            let self_edge = report
                .issuance
                .iter()
                .find(|e| e.child == *fp && e.issuer == *fp);
            let self_signed = cert(report, fp).is_some_and(|c| c.self_signed);
            match (self_edge, self_signed) {
                (Some(e), _) => Link::SelfSigned {
                    verified: e.verified,
                },
                (None, true) => Link::SelfSigned { verified: true },
                (None, false) => Link::IssuerNotPresent,
            }
        }
    };
    let prefix = if depth == 0 {
        String::new()
    } else {
        format!("{indent}{}", if last { "└─ " } else { "├─ " })
    };
    rows.push(TreeRow {
        fingerprint: fp.clone(),
        depth,
        prefix,
        link,
        bundles: bundles.clone(),
    });
    let children: Vec<usize> = (0..nodes.len())
        .filter(|c| !seen.contains(c))
        .filter(|c| parents[*c].as_ref().is_some_and(|(p, _)| p == fp))
        .collect();
    let child_indent = if depth == 0 {
        String::new()
    } else {
        format!("{indent}{}", if last { "   " } else { "│  " })
    };
    let count = children.len();
    for (n, c) in children.into_iter().enumerate() {
        walk(
            report,
            nodes,
            parents,
            c,
            depth + 1,
            &child_indent,
            n + 1 == count,
            seen,
            rows,
        );
    }
}

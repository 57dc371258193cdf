//! The plain-text report of `kexplore certs`: header, identity, the issuance tree, each
//! certificate's fields, the checks. Status is always a symbol (✓ ! ✗), never colour alone;
//! this module emits no colour at all, so it is the same on a TTY and in a pipe.

use std::fmt::Write as _;

use super::chain;
use super::report::{CertSummary, CheckStatus, CredentialReport};

/// `✓`, `!` or `✗`.
pub fn symbol(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Ok => "✓",
        CheckStatus::Warn => "!",
        CheckStatus::Error => "✗",
    }
}

/// A short name for the i-th certificate of `all_certificates()`: `CA #1`, `client cert`, ...
pub fn label(r: &CredentialReport, i: usize) -> String {
    let n_ca = r.cluster.certificate_authority.len();
    if i < n_ca {
        format!("CA #{}", i + 1)
    } else if i == n_ca {
        "client cert".into()
    } else {
        format!("client chain #{}", i - n_ca + 1)
    }
}

/// The issuance tree as lines, root first: `└── ✓ CN=...  [tags]`.
pub fn tree_lines(r: &CredentialReport) -> Vec<String> {
    let all: Vec<&CertSummary> = r.all_certificates().collect();
    let n_ca = r.cluster.certificate_authority.len();
    let rows = chain::tree(&all, &r.issuance);
    rows.iter()
        .map(|row| {
            let c = all[row.index];
            let mut tags = vec![label(r, row.index)];
            // The same certificate may be listed in both bundles.
            if row.index >= n_ca
                && r.cluster
                    .certificate_authority
                    .iter()
                    .any(|a| a.sha256_fingerprint == c.sha256_fingerprint)
            {
                tags.push("also in CA bundle".into());
            }
            if c.self_signed {
                tags.push("self-signed root".into());
            } else if row.depth == 0 {
                tags.push(format!("issuer {} not in kubeconfig", c.issuer));
            }
            if row.index < n_ca {
                tags.push("trusted for the server".into());
            }
            let branch = match (row.depth, row.last) {
                (0, _) => String::new(),
                (_, true) => "└── ".into(),
                (_, false) => "├── ".into(),
            };
            let link = match row.link {
                Some(true) => "✓ ",
                Some(false) => "✗ ",
                None => "",
            };
            let note = if row.link == Some(false) {
                "  (same issuer name, but this CA's key did not sign it)"
            } else {
                ""
            };
            format!(
                "{}{branch}{link}{}  [{}]{note}",
                row.prefix,
                display_name(&c.subject),
                tags.join(", ")
            )
        })
        .collect()
}

fn display_name(dn: &str) -> &str {
    if dn.is_empty() { "(empty name)" } else { dn }
}

fn field(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "    {name:<19}{value}");
}

fn join_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "—".into()
    } else {
        v.join(", ")
    }
}

fn certificate(out: &mut String, r: &CredentialReport, i: usize, c: &CertSummary, now: i64) {
    let _ = writeln!(out, "  {}  from {}", label(r, i), c.extra.origin);
    field(out, "Subject", display_name(&c.subject));
    field(out, "Issuer", display_name(&c.issuer));
    field(
        out,
        "Serial",
        format!("{} ({})", c.serial, c.serial_decimal),
    );
    let left = (c.extra.not_after_unix - now).div_euclid(86_400);
    let when = if left < 0 {
        format!("expired {} days ago", -left)
    } else {
        format!("{left} days left")
    };
    field(
        out,
        "Validity",
        format!("{} → {}  ({when})", c.not_before, c.not_after),
    );
    field(out, "Signature", &c.signature_algorithm);
    let key = match &c.public_key.curve {
        Some(curve) => format!("{} {} ({curve})", c.public_key.algorithm, c.public_key.bits),
        None => format!("{} {} bits", c.public_key.algorithm, c.public_key.bits),
    };
    field(out, "Public key", key);
    let ca = if c.is_ca {
        match c.path_len {
            Some(n) => format!("yes, path length {n}"),
            None => "yes".into(),
        }
    } else {
        "no".into()
    };
    field(out, "CA", ca);
    field(out, "Key usage", join_or_none(&c.key_usage));
    field(out, "Ext. key usage", join_or_none(&c.extended_key_usage));
    let mut san: Vec<String> = Vec::new();
    san.extend(c.san.dns.iter().map(|d| format!("DNS:{d}")));
    san.extend(c.san.ip.iter().map(|d| format!("IP Address:{d}")));
    san.extend(c.san.email.iter().map(|d| format!("email:{d}")));
    san.extend(c.san.uri.iter().map(|d| format!("URI:{d}")));
    field(out, "Subject alt names", join_or_none(&san));
    field(
        out,
        "Subject key id",
        c.subject_key_id.as_deref().unwrap_or("—"),
    );
    field(
        out,
        "Authority key id",
        c.authority_key_id.as_deref().unwrap_or("—"),
    );
    field(out, "SHA-256", &c.sha256_fingerprint);
    let issued = if c.self_signed {
        "itself (self-signed, signature ✓)".to_string()
    } else if let Some(fp) = &c.issued_by {
        let j = r
            .all_certificates()
            .position(|x| &x.sha256_fingerprint == fp);
        format!(
            "{} (signature ✓)",
            j.map_or_else(|| fp.clone(), |j| label(r, j))
        )
    } else {
        "not in this kubeconfig".into()
    };
    field(out, "Issued by", issued);
}

/// The whole text report. `now` only feeds the "days left" figures.
pub fn text(r: &CredentialReport, now: i64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Context      {}", r.context);
    for (i, k) in r.kubeconfig.iter().enumerate() {
        let _ = writeln!(out, "{:<13}{k}", if i == 0 { "Kubeconfig" } else { "" });
    }
    let _ = writeln!(out, "Cluster      {}  {}", r.cluster.name, r.cluster.server);
    if let Some(n) = &r.cluster.tls_server_name {
        let _ = writeln!(out, "TLS name     {n}");
    }
    let user = if r.user.name.is_empty() {
        "(none)"
    } else {
        &r.user.name
    };
    let _ = writeln!(out, "User         {user}  (auth: {})", r.user.auth);
    out.push('\n');

    let _ = writeln!(out, "Identity");
    match &r.user.identity {
        Some(id) => {
            let _ = writeln!(
                out,
                "  Kubernetes sees you as user \"{}\" in groups [{}]",
                id.user,
                id.groups.join(", ")
            );
            let _ = writeln!(
                out,
                "  (from the client certificate: CN → user, O → groups; the API server adds system:authenticated)"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  No client certificate: the identity is decided by the server ({} authentication)",
                r.user.auth
            );
        }
    }
    out.push('\n');

    let _ = writeln!(
        out,
        "Chain of issuance  (✓ signature verified, ✗ signature does not verify)"
    );
    let lines = tree_lines(r);
    if lines.is_empty() {
        let _ = writeln!(out, "  (no certificates in this context)");
    }
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
    out.push('\n');

    let all: Vec<&CertSummary> = r.all_certificates().collect();
    if !all.is_empty() {
        let _ = writeln!(out, "Certificates");
        for (i, c) in all.iter().enumerate() {
            certificate(&mut out, r, i, c, now);
            out.push('\n');
        }
    }
    if let Some(k) = &r.user.client_key {
        let _ = writeln!(out, "Client key");
        let size = match &k.curve {
            Some(c) => format!("{} {} ({c})", k.algorithm, k.bits),
            None => format!("{} {} bits", k.algorithm, k.bits),
        };
        let m = match k.matches_certificate {
            Some(true) => "✓ matches the client certificate",
            Some(false) => "✗ does NOT match the client certificate",
            None => "! cannot be compared with the client certificate",
        };
        let _ = writeln!(
            out,
            "  {size}, {}, {m}  (key bytes are never shown)",
            k.format
        );
        out.push('\n');
    }

    let _ = writeln!(out, "Checks");
    for c in &r.checks {
        let _ = writeln!(out, "  {} {:<38} {}", symbol(c.status), c.id, c.message);
    }
    let count = |s| r.checks.iter().filter(|c| c.status == s).count();
    let (ok, warn, err) = (
        count(CheckStatus::Ok),
        count(CheckStatus::Warn),
        count(CheckStatus::Error),
    );
    let _ = writeln!(
        out,
        "\nResult: {ok} ok, {warn} warning{}, {err} error{}",
        if warn == 1 { "" } else { "s" },
        if err == 1 { "" } else { "s" }
    );
    out
}

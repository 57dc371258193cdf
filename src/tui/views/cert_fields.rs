//! The right pane of view 2: one certificate's fields, as openssl names them, with validity as
//! a countdown and what Kubernetes makes of the names (CN → user, O → groups).

use ratatui::text::{Line, Span};

use crate::pki::{CertSummary, CheckStatus, CredentialReport};
use crate::tui::theme::Theme;
use crate::tui::trust_tree::{Bundle, TreeRow};
use crate::tui::widgets::{expiry, status};

const LABEL_WIDTH: usize = 15;

fn row(label: &str, value: impl Into<String>, theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<LABEL_WIDTH$}"), theme.label),
        Span::styled(value.into(), theme.text),
    ])
}

fn row_spans(label: &str, mut spans: Vec<Span<'static>>, theme: &Theme) -> Line<'static> {
    spans.insert(
        0,
        Span::styled(format!("{label:<LABEL_WIDTH$}"), theme.label),
    );
    Line::from(spans)
}

fn list_or_dash(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

pub fn lines(
    report: &CredentialReport,
    cert: &CertSummary,
    tree_row: &TreeRow,
    now: i64,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![
        row("Subject", cert.subject.clone(), theme),
        row("Issuer", cert.issuer.clone(), theme),
        row(
            "Serial",
            format!("{} ({})", cert.serial, cert.serial_decimal),
            theme,
        ),
        row("Not before", cert.not_before.clone(), theme),
    ];
    let (st, countdown) =
        expiry::countdown(cert.extra.not_before_unix, cert.extra.not_after_unix, now);
    out.push(row_spans(
        "Not after",
        vec![
            status::labelled(theme, st, countdown),
            Span::styled(format!("  ({})", cert.not_after), theme.text),
        ],
        theme,
    ));
    let key = &cert.public_key;
    let key_text = match &key.curve {
        Some(curve) => format!("{} {} bits ({curve})", key.algorithm, key.bits),
        None => format!("{} {} bits", key.algorithm, key.bits),
    };
    out.push(row("Public key", key_text, theme));
    out.push(row("Signature", cert.signature_algorithm.clone(), theme));
    let ca = if cert.is_ca {
        match cert.path_len {
            Some(n) => format!("CA:TRUE, pathlen {n}"),
            None => "CA:TRUE".into(),
        }
    } else {
        "CA:FALSE".into()
    };
    out.push(row("Basic constr.", ca, theme));
    out.push(row("Key usage", list_or_dash(&cert.key_usage), theme));
    out.push(row(
        "Ext. usage",
        list_or_dash(&cert.extended_key_usage),
        theme,
    ));
    let san = &cert.san;
    let mut sans: Vec<String> = Vec::new();
    sans.extend(san.dns.iter().map(|d| format!("DNS:{d}")));
    sans.extend(san.ip.iter().map(|d| format!("IP:{d}")));
    sans.extend(san.email.iter().map(|d| format!("email:{d}")));
    sans.extend(san.uri.iter().map(|d| format!("URI:{d}")));
    out.push(row("SANs", list_or_dash(&sans), theme));
    out.push(row(
        "Subject KID",
        cert.subject_key_id.clone().unwrap_or_else(|| "-".into()),
        theme,
    ));
    out.push(row(
        "Authority KID",
        cert.authority_key_id.clone().unwrap_or_else(|| "-".into()),
        theme,
    ));
    out.push(row("SHA-256", cert.sha256_fingerprint.clone(), theme));
    let bundles: Vec<&str> = tree_row.bundles.iter().map(|b| b.label()).collect();
    out.push(row("Bundle", bundles.join(" + "), theme));
    out.push(row("From", cert.extra.origin.clone(), theme));
    out.push(Line::raw(""));
    out.extend(kubernetes_lines(report, cert, tree_row, theme));
    out
}

/// What the API server's x509 authenticator would make of this certificate.
fn kubernetes_lines(
    report: &CredentialReport,
    cert: &CertSummary,
    tree_row: &TreeRow,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if tree_row.bundles.contains(&Bundle::ClientCert) && !cert.is_ca {
        let user = cert
            .extra
            .common_name
            .clone()
            .unwrap_or_else(|| "(no CN: rejected)".into());
        out.push(row("CN → user", user, theme));
        out.push(row(
            "O → groups",
            list_or_dash(&cert.extra.organizations),
            theme,
        ));
        if let Some(k) = &report.user.client_key {
            let mut text = match &k.curve {
                Some(c) => format!("{} {} bits ({c})", k.algorithm, k.bits),
                None => format!("{} {} bits", k.algorithm, k.bits),
            };
            let span = match k.matches_certificate {
                Some(true) => {
                    text.push_str(", matches this certificate");
                    status::labelled(theme, CheckStatus::Ok, text)
                }
                Some(false) => {
                    text.push_str(", does NOT match this certificate");
                    status::labelled(theme, CheckStatus::Error, text)
                }
                None => Span::styled(text, theme.text),
            };
            out.push(row_spans("Private key", vec![span], theme));
        }
    } else if cert.is_ca {
        let role = if tree_row.bundles.contains(&Bundle::ServerCa) {
            "the client trusts servers whose chain leads here"
        } else {
            "a CA sent along with the client certificate"
        };
        out.push(row("Role", role, theme));
    }
    out
}

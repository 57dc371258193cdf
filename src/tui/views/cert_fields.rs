//! The right pane of view 2: one certificate's fields, as openssl names them, with validity as
//! a countdown and what Kubernetes makes of the names (CN → user, O → groups).

use ratatui::text::{Line, Span};

use crate::pki::{CertSummary, CheckStatus, CredentialReport};
use crate::tui::theme::Theme;
use crate::tui::trust_tree::{Bundle, TreeRow};
use crate::tui::widgets::{expiry, field, flow, status};

const LABEL_WIDTH: usize = 15;

/// The pane's lines, built row by row at a known width.
struct Rows<'t> {
    out: Vec<Line<'static>>,
    width: usize,
    theme: &'t Theme,
}

impl Rows<'_> {
    fn add(&mut self, label: &str, value: impl AsRef<str>) {
        self.out.extend(field::lines(
            label,
            LABEL_WIDTH,
            value.as_ref(),
            self.width,
            self.theme.label,
            self.theme.text,
        ));
    }

    /// A labelled row of styled pieces, wrapped under the value column as `add` wraps text:
    /// a piece that does not fit goes to the next row, not back under the labels.
    fn add_spans(&mut self, label: &str, spans: Vec<Span<'static>>) {
        let room = self.width.saturating_sub(LABEL_WIDTH).max(8);
        // flow::rows opens each row with a one-column margin, which the label column replaces.
        let mut rows: Vec<Vec<Span<'static>>> = flow::rows(spans, room + 1)
            .into_iter()
            .map(|row| row.spans.into_iter().skip(1).collect())
            .collect();
        if rows.is_empty() {
            rows.push(Vec::new());
        }
        for (i, mut pieces) in rows.into_iter().enumerate() {
            let head = if i == 0 {
                Span::styled(format!("{label:<LABEL_WIDTH$}"), self.theme.label)
            } else {
                Span::raw(" ".repeat(LABEL_WIDTH))
            };
            pieces.insert(0, head);
            self.out.push(Line::from(pieces));
        }
    }
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
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut rows = Rows {
        out: Vec::new(),
        width,
        theme,
    };
    // What a workshop asks first comes first: who this makes you, and whether it is valid.
    rows.add("Subject", &cert.subject);
    rows.add("Issuer", &cert.issuer);
    identity_rows(&mut rows, cert, tree_row);
    rows.add("Not before", &cert.not_before);
    let (st, countdown) =
        expiry::countdown(cert.extra.not_before_unix, cert.extra.not_after_unix, now);
    rows.add_spans(
        "Not after",
        vec![
            status::labelled(theme, st, countdown),
            Span::styled(format!("  ({})", cert.not_after), theme.text),
        ],
    );
    let key = &cert.public_key;
    rows.add(
        "Public key",
        match &key.curve {
            Some(curve) => format!("{} {} bits ({curve})", key.algorithm, key.bits),
            None => format!("{} {} bits", key.algorithm, key.bits),
        },
    );
    if is_client_leaf(cert, tree_row) {
        private_key_rows(&mut rows, report);
    }
    rows.add("Signature", &cert.signature_algorithm);
    rows.add(
        "Serial",
        format!("{} ({})", cert.serial, cert.serial_decimal),
    );
    rows.add(
        "Basic constr.",
        match (cert.is_ca, cert.path_len) {
            (true, Some(n)) => format!("CA:TRUE, pathlen {n}"),
            (true, None) => "CA:TRUE".into(),
            (false, _) => "CA:FALSE".into(),
        },
    );
    rows.add("Key usage", list_or_dash(&cert.key_usage));
    rows.add("Ext. usage", list_or_dash(&cert.extended_key_usage));
    let san = &cert.san;
    let mut sans: Vec<String> = Vec::new();
    sans.extend(san.dns.iter().map(|d| format!("DNS:{d}")));
    sans.extend(san.ip.iter().map(|d| format!("IP:{d}")));
    sans.extend(san.email.iter().map(|d| format!("email:{d}")));
    sans.extend(san.uri.iter().map(|d| format!("URI:{d}")));
    rows.add("SANs", list_or_dash(&sans));
    rows.add("Subject KID", cert.subject_key_id.as_deref().unwrap_or("-"));
    rows.add(
        "Authority KID",
        cert.authority_key_id.as_deref().unwrap_or("-"),
    );
    rows.add("SHA-256", &cert.sha256_fingerprint);
    let bundles: Vec<&str> = tree_row
        .bundles
        .iter()
        .map(|b| b.label_for(cert.is_ca))
        .collect();
    rows.add("Bundle", bundles.join(" + "));
    rows.add("From", &cert.extra.origin);
    rows.out
}

fn is_client_leaf(cert: &CertSummary, tree_row: &TreeRow) -> bool {
    tree_row.bundles.contains(&Bundle::ClientCert) && !cert.is_ca
}

/// What the API server's x509 authenticator would make of this certificate (CN → user,
/// O → groups), or for a CA what it is trusted for.
fn identity_rows(rows: &mut Rows, cert: &CertSummary, tree_row: &TreeRow) {
    if is_client_leaf(cert, tree_row) {
        let user = cert
            .extra
            .common_name
            .as_deref()
            .unwrap_or("(no CN: the API server rejects it)");
        rows.add("CN → user", user);
        rows.add("O → groups", list_or_dash(&cert.extra.organizations));
    } else if cert.is_ca {
        let role = if tree_row.bundles.contains(&Bundle::ServerCa) {
            "the client trusts servers whose chain leads here"
        } else {
            "a CA sent along with the client certificate"
        };
        rows.add("Role", role);
    }
}

/// The client key next to the certificate it must match.
fn private_key_rows(rows: &mut Rows, report: &CredentialReport) {
    let theme = rows.theme;
    let Some(k) = &report.user.client_key else {
        return;
    };
    let mut text = match &k.curve {
        Some(c) => format!("{} {} bits ({c})", k.algorithm, k.bits),
        None => format!("{} {} bits", k.algorithm, k.bits),
    };
    if !k.format.is_empty() {
        text.push_str(&format!(", {}", k.format));
    }
    rows.add("Private key", text);
    match k.matches_certificate {
        Some(true) => rows.add_spans(
            "Key pair",
            vec![status::labelled(
                theme,
                CheckStatus::Ok,
                "the key matches this certificate",
            )],
        ),
        Some(false) => rows.add_spans(
            "Key pair",
            vec![status::labelled(
                theme,
                CheckStatus::Error,
                "the key does NOT match this certificate",
            )],
        ),
        None => {}
    }
}

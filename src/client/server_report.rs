//! The handshake as the contract's `server` object and as text: the chain the server presented,
//! each certificate linked by signature to the kubeconfig's CAs where one issued it.

use x509_parser::prelude::FromDer;

use super::exec_context::ExecOutcome;
use super::explain::HandshakeStep;
use super::handshake::HandshakeReport;
use crate::pki::{self, CertSummary, CredentialReport, ServerReport};

/// Decodes the presented chain and links it to the report's CA bundle.
pub fn server_report(report: &CredentialReport, hs: &HandshakeReport) -> ServerReport {
    let mut chain: Vec<CertSummary> = hs
        .record
        .server_chain
        .iter()
        .enumerate()
        .filter_map(|(i, der)| pki::cert::summarize(der, "presented by the server", i).ok())
        .collect();
    let mut cas: Vec<CertSummary> = report.cluster.certificate_authority.clone();
    {
        let mut all: Vec<&mut CertSummary> = chain.iter_mut().chain(cas.iter_mut()).collect();
        pki::chain::link(&mut all);
    }
    let verified = matches!(hs.record.server_verified, Some(Ok(())));
    // Still one string (the contract's shape); kubectl's words follow on lines of their own
    // so they can be matched exactly.
    let error = hs.failure.as_ref().map(|f| {
        let mut e = format!("{} (fix: {})", f.message, f.fix);
        for line in &f.kubectl_says {
            e.push_str(&format!("\nkubectl says: {line}"));
        }
        e
    });
    ServerReport {
        chain,
        verified,
        tls_version: hs.tls_version.clone(),
        cipher_suite: hs.cipher_suite.clone(),
        client_certificate_requested: hs.record.client_certificate_requested,
        error,
    }
}

fn dn(der: &[u8]) -> String {
    x509_parser::x509::X509Name::from_der(der)
        .map(|(_, n)| pki::names::rfc2253(&n))
        .unwrap_or_else(|_| "(unreadable name)".into())
}

fn find_ca<'a>(
    report: &'a CredentialReport,
    fingerprint: &str,
) -> Option<(usize, &'a CertSummary)> {
    report
        .cluster
        .certificate_authority
        .iter()
        .enumerate()
        .find(|(_, c)| c.sha256_fingerprint == fingerprint)
}

/// The Connection section of `certs --connect` in text.
pub fn render_text(
    report: &CredentialReport,
    hs: &HandshakeReport,
    exec: &ExecOutcome,
    server: &ServerReport,
) -> String {
    let mut out = String::new();
    let addr = hs.peer_address.as_deref().unwrap_or("not reached");
    out.push_str(&format!("\nConnection  {}  ({addr})\n", hs.target.url));
    if hs.tls_version.is_some() {
        out.push_str(&format!(
            "  TLS                {}, {}, key exchange {}, ALPN {}\n",
            hs.tls_version.as_deref().unwrap_or("?"),
            hs.cipher_suite.as_deref().unwrap_or("?"),
            hs.key_exchange_group.as_deref().unwrap_or("?"),
            hs.alpn.as_deref().unwrap_or("none (HTTP/1.1)")
        ));
    }
    if !server.chain.is_empty() {
        out.push_str("  Server chain       (as presented, leaf first)\n");
        for (i, c) in server.chain.iter().enumerate() {
            let link = match c.issued_by.as_deref().and_then(|fp| find_ca(report, fp)) {
                Some((n, _)) => format!("✓ signed by CA #{} from the kubeconfig", n + 1),
                None if c.issued_by.is_some() => {
                    "✓ signed by the next certificate in the chain".into()
                }
                None => "✗ no certificate in the kubeconfig signed it".into(),
            };
            out.push_str(&format!("    #{i} {}  [{link}]\n", c.subject));
            out.push_str(&format!("       issuer {}\n", c.issuer));
            let sans: Vec<String> = c
                .san
                .dns
                .iter()
                .map(|d| format!("DNS:{d}"))
                .chain(c.san.ip.iter().map(|ip| format!("IP:{ip}")))
                .collect();
            if !sans.is_empty() {
                out.push_str(&format!("       SANs   {}\n", sans.join(", ")));
            }
            out.push_str(&format!(
                "       valid  {} → {}\n",
                c.not_before, c.not_after
            ));
        }
    }
    match (&hs.record.server_verified, hs.record.verification_skipped) {
        (Some(Ok(())), _) => out.push_str(&format!(
            "  ✓ Verified         the chain leads to a CA the kubeconfig trusts and is valid for {:?}\n",
            hs.target.server_name
        )),
        (Some(Err(e)), true) => out.push_str(&format!(
            "  ! Not verified     {e} — ignored because insecure-skip-tls-verify is set\n"
        )),
        (Some(Err(_)), false) | (None, _) => {}
    }
    if hs.record.client_certificate_requested {
        let names: Vec<String> = hs
            .record
            .acceptable_ca_names
            .iter()
            .map(|n| dn(n))
            .collect();
        let wanted = if names.is_empty() {
            "any CA".to_string()
        } else {
            names.join("; ")
        };
        out.push_str(&format!(
            "  CertificateRequest the server asked for a client certificate from: {wanted}\n"
        ));
        let from_exec = exec
            .certificate
            .as_deref()
            .and_then(|der| pki::cert::summarize(der, "returned by the exec plugin", 0).ok());
        let sent = report
            .user
            .client_certificate
            .first()
            .or(from_exec.as_ref());
        match (hs.record.client_certificate_sent, sent) {
            (true, Some(c)) => {
                let accepted = names.is_empty() || names.iter().any(|n| n == &c.issuer);
                let mark = if accepted { "✓" } else { "!" };
                let whence = if report.user.client_certificate.is_empty() {
                    ", returned by the exec plugin"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "  {mark} Client cert      sent {} (issuer {}{whence})\n",
                    c.subject, c.issuer
                ));
                if !accepted {
                    out.push_str("                     its issuer is not among the CAs the server named: expect 401 Unauthorized\n");
                } else if hs.failure.is_none() {
                    out.push_str("                     verified by the server: it answered the requests after the handshake without 401\n");
                }
            }
            _ => out.push_str(
                "  ! Client cert      none sent: the server will treat the request as anonymous\n",
            ),
        }
    } else if hs.succeeded() {
        out.push_str("  CertificateRequest the server did not ask for a client certificate\n");
    }
    let exec_explained = hs
        .failure
        .as_ref()
        .is_some_and(|f| f.cause.starts_with("exec-plugin"));
    if let Some(e) = exec.error.as_ref().filter(|_| !exec_explained) {
        out.push_str(&format!(
            "  ! Exec plugin      gave no credential, so none was offered: {e}\n"
        ));
    }
    match &hs.failure {
        None => out.push_str("  ✓ Handshake        complete\n"),
        Some(f) => {
            let step = if f.step == HandshakeStep::TcpConnect {
                "TCP connect"
            } else {
                f.step.label()
            };
            out.push_str(&format!("  ✗ Failed at        {step}: {}\n", f.message));
            out.push_str(&format!("    Fix              {}\n", f.fix));
            for line in &f.kubectl_says {
                out.push_str(&format!("    kubectl says     {line}\n"));
            }
        }
    }
    out
}

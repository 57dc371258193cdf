//! The checks: each has a stable kebab-case id that always carries the same status, so scripts
//! can match on ids (`client-cert-expired` is always an error, `client-cert-valid` always ok).
//! Messages say what it means for kubectl and the API server, not only what was found.

mod client;
mod key_form;
#[cfg(test)]
mod tests;

use super::report::{CertSummary, Check, CheckStatus, CredentialReport};
use crate::kubeconfig::{AuthMethod, ResolvedContext};
use client::{algorithms, ca_flags, client_leaf};

/// Every check id and the one status it always has. Validity ids exist for each role:
/// `ca-cert-*` (certificate-authority), `client-cert-*` (the client certificate) and
/// `client-chain-cert-*` (further certificates in client-certificate-data). Warnings found
/// while resolving the kubeconfig keep their own ids (`data-and-file-both-set`, ...) as `warn`.
pub const CATALOGUE: &[(&str, CheckStatus)] = {
    use CheckStatus::{Error as E, Ok as O, Warn as W};
    &[
        // credentials
        ("token-set", O),
        ("exec-plugin", O),
        ("basic-auth-removed", W),
        ("auth-provider-legacy", W),
        ("auth-provider-removed", E),
        ("no-credentials", W),
        // trust of the server
        ("ca-present", O),
        ("ca-not-set", W),
        ("insecure-skip-tls-verify", W),
        ("insecure-with-ca", E),
        ("server-host", O),
        ("server-host-invalid", W),
        ("server-not-https", W),
        ("server-url-invalid", W),
        // validity, per certificate
        ("ca-cert-valid", O),
        ("ca-cert-expiring-soon", W),
        ("ca-cert-expired", E),
        ("ca-cert-not-yet-valid", E),
        ("client-cert-valid", O),
        ("client-cert-expiring-soon", W),
        ("client-cert-expired", E),
        ("client-cert-not-yet-valid", E),
        ("client-chain-cert-valid", O),
        ("client-chain-cert-expiring-soon", W),
        ("client-chain-cert-expired", E),
        ("client-chain-cert-not-yet-valid", E),
        // CA bundle
        ("ca-cert-is-ca", O),
        ("ca-cert-not-ca", E),
        // the client certificate and key
        ("client-cert-issued-by-ca", O),
        ("client-cert-issuer-not-in-kubeconfig", W),
        ("client-cert-signature-mismatch", E),
        ("client-key-matches-cert", O),
        ("client-key-mismatch", E),
        ("client-key-unverified", W),
        ("client-key-pkcs8-v2", W),
        ("client-cert-client-auth", O),
        ("client-cert-missing-client-auth", E),
        ("client-cert-no-common-name", E),
        ("identity-system-masters", W),
        // algorithms
        ("key-sizes", O),
        ("weak-key", E),
        ("weak-signature", E),
        ("cert-version-1", W),
    ]
};

const DAY: i64 = 86_400;
const SOON_DAYS: i64 = 30;

pub(super) fn check(id: &str, status: CheckStatus, message: impl Into<String>) -> Check {
    Check {
        id: id.to_string(),
        status,
        message: message.into(),
        certificate: None,
    }
}

/// Runs every check that applies to this context, in a fixed order.
pub fn run(ctx: &ResolvedContext, r: &CredentialReport, now: i64) -> Vec<Check> {
    let mut out = Vec::new();
    credentials(ctx, r, &mut out);
    for w in &ctx.warnings {
        out.push(check(w.id, CheckStatus::Warn, w.message.clone()));
    }
    trust(ctx, r, &mut out);
    server_url(ctx, &mut out);
    for (i, c) in r.cluster.certificate_authority.iter().enumerate() {
        let what = format!("certificate-authority #{} ({})", i + 1, c.subject);
        validity("ca-cert", &what, c, now, &mut out);
        ca_flags(&what, c, &mut out);
    }
    for (i, c) in r.user.client_certificate.iter().enumerate() {
        if i == 0 {
            validity("client-cert", "client certificate", c, now, &mut out);
        } else {
            let what = format!("client chain certificate #{} ({})", i + 1, c.subject);
            validity("client-chain-cert", &what, c, now, &mut out);
        }
    }
    if let Some(leaf) = r.user.client_certificate.first() {
        client_leaf(leaf, r, &mut out);
    }
    key_form::key_form(ctx, r, &mut out);
    algorithms(r, &mut out);
    out
}

fn days(secs: i64) -> i64 {
    secs.div_euclid(DAY)
}

/// What an out-of-date certificate breaks, by where it sits, in the words each side prints.
fn consequence(role: &str) -> String {
    if role == "ca-cert" {
        "kubectl will not trust a server chain through it (x509: certificate has expired or is not yet valid)".into()
    } else {
        // kube-apiserver logs the x509 error; the client only sees the 401.
        format!(
            "the API server rejects the client certificate: 401 Unauthorized (its log: x509: certificate has expired or is not yet valid; kubectl: {})",
            crate::client::kubectl_words::unauthorized("Unauthorized").join(", or ")
        )
    }
}

fn validity(role: &str, what: &str, c: &CertSummary, now: i64, out: &mut Vec<Check>) {
    let (nb, na) = (c.extra.not_before_unix, c.extra.not_after_unix);
    let (id, status, msg) = if now > na {
        (
            "expired",
            CheckStatus::Error,
            format!(
                "{what} expired on {} ({} days ago); {}",
                c.not_after,
                days(now - na),
                consequence(role)
            ),
        )
    } else if now < nb {
        (
            "not-yet-valid",
            CheckStatus::Error,
            format!(
                "{what} is not valid before {} (in {} days): check this machine's clock; until then {}",
                c.not_before,
                days(nb - now) + 1,
                consequence(role)
            ),
        )
    } else if na - now < SOON_DAYS * DAY {
        (
            "expiring-soon",
            CheckStatus::Warn,
            format!(
                "{what} expires on {} (in {} days); renew it",
                c.not_after,
                days(na - now)
            ),
        )
    } else {
        (
            "valid",
            CheckStatus::Ok,
            format!(
                "{what} is valid until {} ({} days left)",
                c.not_after,
                days(na - now)
            ),
        )
    };
    out.push(check(&format!("{role}-{id}"), status, msg).about(c));
}

fn credentials(ctx: &ResolvedContext, r: &CredentialReport, out: &mut Vec<Check>) {
    let user = &ctx.user;
    match user.auth_method() {
        AuthMethod::ClientCertificate => {}
        AuthMethod::Token => out.push(check(
            "token-set",
            CheckStatus::Ok,
            "a bearer token is sent in the Authorization header (its value is not shown)",
        )),
        AuthMethod::Exec => {
            let cmd = user.exec.as_ref().map(|e| e.command.as_str()).unwrap_or("");
            out.push(check(
                "exec-plugin",
                CheckStatus::Ok,
                format!(
                    "credentials come from running '{cmd}' (an exec plugin); kexplore certs does not run it"
                ),
            ))
        }
        AuthMethod::Basic => out.push(check(
            "basic-auth-removed",
            CheckStatus::Warn,
            "username/password (basic auth) is set; kube-apiserver dropped static password files in v1.19, so most clusters reject it",
        )),
        AuthMethod::None => {
            if let Some(p) = &user.auth_provider {
                let (id, status, msg) = match p.name.as_str() {
                    "gcp" => ("auth-provider-removed", CheckStatus::Error, "auth-provider 'gcp' was removed from kubectl; install gke-gcloud-auth-plugin and use exec".to_string()),
                    "azure" => ("auth-provider-removed", CheckStatus::Error, "auth-provider 'azure' was removed from kubectl; use kubelogin (exec)".to_string()),
                    name => ("auth-provider-legacy", CheckStatus::Warn, format!("auth-provider '{name}' is the legacy plugin mechanism; kexplore does not run it")),
                };
                out.push(check(id, status, msg));
            } else {
                out.push(check(
                    "no-credentials",
                    CheckStatus::Warn,
                    format!(
                        "{} has no client certificate, token, exec plugin or password: requests are anonymous (kubectl will prompt for a username)",
                        if r.user.name.is_empty() { "the context names no user and".to_string() } else { format!("user '{}'", r.user.name) }
                    ),
                ));
            }
        }
    }
}

fn trust(ctx: &ResolvedContext, r: &CredentialReport, out: &mut Vec<Check>) {
    let has_ca = !r.cluster.certificate_authority.is_empty();
    if ctx.cluster.insecure_skip_tls_verify {
        if has_ca {
            out.push(check(
                "insecure-with-ca",
                CheckStatus::Error,
                "insecure-skip-tls-verify is set together with a certificate authority; kubectl refuses this: \"specifying a root certificates file with the insecure flag is not allowed\"",
            ));
        }
        out.push(check(
            "insecure-skip-tls-verify",
            CheckStatus::Warn,
            "insecure-skip-tls-verify is set: the server's certificate is not checked, so anyone on the path can impersonate the API server and read your credentials",
        ));
    } else if has_ca {
        let n = r.cluster.certificate_authority.len();
        out.push(check(
            "ca-present",
            CheckStatus::Ok,
            format!(
                "the server's certificate is checked against {n} certificate{} from {}",
                if n == 1 { "" } else { "s" },
                r.cluster.certificate_authority[0].extra.origin
            ),
        ));
    } else {
        out.push(check(
            "ca-not-set",
            CheckStatus::Warn,
            "no certificate-authority: the server is checked against this machine's system roots, which rarely hold a self-hosted cluster's CA",
        ));
    }
}

/// The host a server certificate must match, and whether it could appear in one.
fn server_url(ctx: &ResolvedContext, out: &mut Vec<Check>) {
    let server = &ctx.cluster.server;
    let Some(rest) = server.strip_prefix("https://") else {
        if server.starts_with("http://") {
            out.push(check(
                "server-not-https",
                CheckStatus::Warn,
                format!("server {server} is plain HTTP: no TLS, so certificates and the CA are not used and credentials travel in clear"),
            ));
        } else {
            out.push(check(
                "server-url-invalid",
                CheckStatus::Warn,
                format!("server '{server}' is not an https:// URL"),
            ));
        }
        return;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    let (name, from) = match &ctx.cluster.tls_server_name {
        Some(n) => (n.as_str(), "tls-server-name"),
        None => (host, "server host"),
    };
    if name.parse::<std::net::IpAddr>().is_ok() {
        out.push(check(
            "server-host",
            CheckStatus::Ok,
            format!(
                "{from} {name} is an IP address: the server certificate must list it as an IP SAN"
            ),
        ));
    } else if is_dns_name(name) {
        out.push(check(
            "server-host",
            CheckStatus::Ok,
            format!("{from} {name} is a DNS name: the server certificate must list it (or a matching wildcard) as a DNS SAN"),
        ));
    } else {
        out.push(check(
            "server-host-invalid",
            CheckStatus::Warn,
            format!("{from} '{name}' is neither an IP address nor a valid DNS name, so no server certificate can match it"),
        ));
    }
}

fn is_dns_name(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

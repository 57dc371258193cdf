//! The checks: each has a stable kebab-case id that always carries the same status, so scripts
//! can match on ids (`client-cert-expired` is always an error, `client-cert-valid` always ok).
//! Messages say what it means for kubectl and the API server, not only what was found.

use super::report::{CertSummary, Check, CheckStatus, CredentialReport};
use crate::kubeconfig::{AuthMethod, ResolvedContext};

const DAY: i64 = 86_400;
const SOON_DAYS: i64 = 30;

fn check(id: &str, status: CheckStatus, message: impl Into<String>) -> Check {
    Check {
        id: id.to_string(),
        status,
        message: message.into(),
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
    algorithms(r, &mut out);
    out
}

fn days(secs: i64) -> i64 {
    secs.div_euclid(DAY)
}

fn validity(role: &str, what: &str, c: &CertSummary, now: i64, out: &mut Vec<Check>) {
    let (nb, na) = (c.extra.not_before_unix, c.extra.not_after_unix);
    let (id, status, msg) = if now > na {
        (
            "expired",
            CheckStatus::Error,
            format!(
                "{what} expired on {} ({} days ago); TLS handshakes using it fail",
                c.not_after,
                days(now - na)
            ),
        )
    } else if now < nb {
        (
            "not-yet-valid",
            CheckStatus::Error,
            format!(
                "{what} is not valid before {} (in {} days); check this machine's clock",
                c.not_before,
                days(nb - now) + 1
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
    out.push(check(&format!("{role}-{id}"), status, msg));
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

fn ca_flags(what: &str, c: &CertSummary, out: &mut Vec<Check>) {
    if c.is_ca {
        out.push(check(
            "ca-cert-is-ca",
            CheckStatus::Ok,
            format!("{what} is a CA (CA:TRUE)"),
        ));
    } else {
        out.push(check(
            "ca-cert-not-ca",
            CheckStatus::Error,
            format!(
                "{what} lacks CA:TRUE: it is a leaf pinned as a CA. kubectl (Go) may accept it when it is exactly the server's certificate, but rustls-based clients reject it (UnknownIssuer); put the issuing CA here instead"
            ),
        ));
    }
}

/// Follows `issued_by` from the leaf upwards; returns the certificates met (leaf excluded).
fn ancestors<'a>(leaf: &'a CertSummary, r: &'a CredentialReport) -> Vec<&'a CertSummary> {
    let mut out: Vec<&CertSummary> = Vec::new();
    let mut cur = leaf;
    while let Some(fp) = &cur.issued_by {
        if fp == &cur.sha256_fingerprint || out.iter().any(|c| &c.sha256_fingerprint == fp) {
            break;
        }
        match r.all_certificates().find(|c| &c.sha256_fingerprint == fp) {
            Some(p) => {
                out.push(p);
                cur = p;
            }
            None => break,
        }
    }
    out
}

fn client_leaf(leaf: &CertSummary, r: &CredentialReport, out: &mut Vec<Check>) {
    let in_ca = |c: &CertSummary| {
        r.cluster
            .certificate_authority
            .iter()
            .any(|a| a.sha256_fingerprint == c.sha256_fingerprint)
    };
    let chain = ancestors(leaf, r);
    let top = chain.last().copied().unwrap_or(leaf);
    let failed_edge = r.issuance.iter().find(|e| {
        e.child == top.sha256_fingerprint
            && !e.verified
            && r.cluster
                .certificate_authority
                .iter()
                .any(|a| a.sha256_fingerprint == e.issuer)
    });
    if let Some(ca) = chain.iter().find(|c| in_ca(c)) {
        out.push(check(
            "client-cert-issued-by-ca",
            CheckStatus::Ok,
            format!(
                "the client certificate chains by signature to {}, which certificate-authority also trusts for the server; clusters that use one CA for servers and clients (kubeadm) accept such a certificate",
                ca.subject
            ),
        ));
    } else if failed_edge.is_some() {
        out.push(check(
            "client-cert-signature-mismatch",
            CheckStatus::Error,
            format!(
                "the client certificate's issuer is named {}, and certificate-authority holds a CA of that name, but its key did not sign this certificate: the CA was regenerated or the credentials belong to another cluster; the API server will most likely answer 401 Unauthorized",
                top.issuer
            ),
        ));
    } else {
        out.push(check(
            "client-cert-issuer-not-in-kubeconfig",
            CheckStatus::Warn,
            format!(
                "the client certificate was issued by {}, which this kubeconfig does not contain. certificate-authority only says which *server* to trust; the API server checks clients against its own --client-ca-file. That is normal for clusters with a separate client CA, but if the API server does not trust {} every request gets 401 Unauthorized",
                top.issuer, top.issuer
            ),
        ));
    }
    match r.user.client_key.as_ref().and_then(|k| k.matches_certificate) {
        Some(true) => out.push(check(
            "client-key-matches-cert",
            CheckStatus::Ok,
            "the client key's public half is the client certificate's public key",
        )),
        Some(false) => out.push(check(
            "client-key-mismatch",
            CheckStatus::Error,
            "the client key does not belong to the client certificate: the TLS handshake will fail (kubectl: \"tls: private key does not match public key\")",
        )),
        None => out.push(check(
            "client-key-unverified",
            CheckStatus::Warn,
            "could not tell whether the client key belongs to the certificate (unsupported key type)",
        )),
    }
    let eku = &leaf.extended_key_usage;
    if eku.is_empty() {
        out.push(check(
            "client-cert-client-auth",
            CheckStatus::Ok,
            "the client certificate has no extended key usage, so it may be used for client authentication",
        ));
    } else if eku
        .iter()
        .any(|e| e == "TLS Web Client Authentication" || e == "Any Extended Key Usage")
    {
        out.push(check(
            "client-cert-client-auth",
            CheckStatus::Ok,
            "the client certificate allows TLS Web Client Authentication",
        ));
    } else {
        out.push(check(
            "client-cert-missing-client-auth",
            CheckStatus::Error,
            format!(
                "the client certificate's extended key usage ({}) lacks TLS Web Client Authentication: the API server rejects it",
                eku.join(", ")
            ),
        ));
    }
    match &r.user.identity {
        Some(id) if id.user.is_empty() => out.push(check(
            "client-cert-no-common-name",
            CheckStatus::Error,
            "the client certificate has no CN: Kubernetes takes the user name from the CN, so it cannot authenticate you",
        )),
        Some(id) if id.groups.iter().any(|g| g == "system:masters") => {
            {
                out.push(check(
                    "identity-system-masters",
                    CheckStatus::Warn,
                    format!(
                        "user '{}' is in group system:masters, which bypasses RBAC and cannot be revoked short of rotating the CA; keep such credentials for break-glass use",
                        id.user
                    ),
                ));
            }
        }
        _ => {}
    }
}

/// Key sizes and signature algorithms that today's clients refuse.
fn algorithms(r: &CredentialReport, out: &mut Vec<Check>) {
    let mut weak = Vec::new();
    for c in r.all_certificates() {
        if c.public_key.algorithm == "RSA" && c.public_key.bits < 2048 {
            weak.push(format!("{} ({} bits)", c.subject, c.public_key.bits));
        }
        let sha1 = c.signature_algorithm.starts_with("sha1")
            || c.signature_algorithm.starts_with("md5")
            || c.signature_algorithm == "ecdsa-with-SHA1";
        if sha1 && !c.self_signed {
            out.push(check(
                "weak-signature",
                CheckStatus::Error,
                format!(
                    "{} is signed with {}, which Go (kubectl ≥ 1.24) and rustls reject",
                    c.subject, c.signature_algorithm
                ),
            ));
        }
        if c.version == 1 {
            out.push(check(
                "cert-version-1",
                CheckStatus::Warn,
                format!(
                    "{} is an X.509 v1 certificate: kubectl accepts it, but rustls-based tools reject it (UnsupportedCertVersion)",
                    c.subject
                ),
            ));
        }
    }
    if let Some(k) = &r.user.client_key
        && k.algorithm == "RSA"
        && k.bits < 2048
    {
        weak.push(format!("the client key ({} bits)", k.bits));
    }
    if weak.is_empty() {
        out.push(check(
            "key-sizes",
            CheckStatus::Ok,
            "no RSA key is shorter than 2048 bits",
        ));
    } else {
        out.push(check(
            "weak-key",
            CheckStatus::Error,
            format!(
                "RSA keys shorter than 2048 bits: {}; rustls refuses them and NIST retired them in 2013",
                weak.join(", ")
            ),
        ));
    }
}

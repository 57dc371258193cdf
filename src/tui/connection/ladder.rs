//! The connection as a ladder of rungs, client on the left, server on the right, built purely
//! from a `ConnectionReport` and the kubeconfig's credential report. A failure is the last rung:
//! the ladder stops where the real connection stopped, with why and what would fix it.

use x509_parser::prelude::FromDer;

use super::probe::{ConnectionReport, HttpStep};
use crate::client::HandshakeReport;
use crate::client::explain::HandshakeStep;
use crate::client::kubectl_words;
use crate::pki::{self, CertSummary, CheckStatus, CredentialReport};

/// Which way the message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrow {
    ToServer,
    ToClient,
    /// Something the client checks on its own (no message).
    Local,
    /// A request and its response.
    RoundTrip,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub why: String,
    pub fix: String,
    /// The lines kubectl prints for the same failure, to match against.
    pub kubectl_says: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    pub arrow: Arrow,
    pub title: String,
    pub status: CheckStatus,
    /// One line beside the arrow.
    pub summary: String,
    /// Label → value rows for the detail pane.
    pub details: Vec<(String, String)>,
    pub failure: Option<Failure>,
}

fn rung(arrow: Arrow, title: &str, summary: impl Into<String>) -> Rung {
    Rung {
        arrow,
        title: title.to_string(),
        status: CheckStatus::Ok,
        summary: summary.into(),
        details: Vec::new(),
        failure: None,
    }
}

impl Rung {
    fn row(mut self, label: &str, value: impl Into<String>) -> Rung {
        self.details.push((label.to_string(), value.into()));
        self
    }

    fn failed(mut self, why: impl Into<String>, fix: impl Into<String>) -> Rung {
        self.status = CheckStatus::Error;
        self.failure = Some(Failure {
            why: why.into(),
            fix: fix.into(),
            kubectl_says: Vec::new(),
        });
        self
    }

    fn failed_with(mut self, f: Failure) -> Rung {
        self.status = CheckStatus::Error;
        self.failure = Some(f);
        self
    }

    fn says(mut self, lines: Vec<String>) -> Rung {
        if let Some(f) = self.failure.as_mut() {
            f.kubectl_says = lines;
        }
        self
    }
}

fn ms(d: Option<std::time::Duration>) -> String {
    d.map_or("—".into(), |d| {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    })
}

fn dn(der: &[u8]) -> String {
    x509_parser::x509::X509Name::from_der(der)
        .map(|(_, n)| pki::names::rfc2253(&n))
        .unwrap_or_else(|_| "(unreadable name)".into())
}

/// The whole ladder; the last rung is the failure when there was one.
pub fn build(report: &ConnectionReport, creds: Option<&CredentialReport>) -> Vec<Rung> {
    let hs = match &report.handshake {
        Ok(hs) => hs,
        Err(e) => {
            return vec![
                rung(Arrow::Local, "configuration", "nothing was sent").failed(
                    e.clone(),
                    "fix the kubeconfig entry named above (view 1 shows where it comes from)",
                ),
            ];
        }
    };
    let mut out = handshake_rungs(hs, creds);
    if out.last().is_some_and(|r| r.failure.is_some()) {
        also_expired(&mut out, creds);
        return out;
    }
    for step in &report.requests {
        let r = request_rung(step, creds);
        let stop = r.failure.is_some();
        out.push(r);
        if stop {
            break;
        }
    }
    out
}

/// A failure before the client certificate was judged hides its next problem: say it too.
fn also_expired(rungs: &mut [Rung], creds: Option<&CredentialReport>) {
    let Some(check) = creds.and_then(|c| {
        c.checks
            .iter()
            .find(|k| k.id == "client-cert-expired" && k.status == CheckStatus::Error)
    }) else {
        return;
    };
    if let Some(f) = rungs.last_mut().and_then(|r| r.failure.as_mut())
        && !f.why.contains("expired")
    {
        let sep = if f.why.ends_with('.') { " " } else { ". " };
        f.why.push_str(&format!(
            "{sep}Also: {} — once the server is trusted, it would refuse this client certificate next.",
            check.message
        ));
    }
}

fn fail_at(hs: &HandshakeReport, step: HandshakeStep) -> Option<Failure> {
    hs.failure
        .as_ref()
        .filter(|f| f.step == step)
        .map(|f| Failure {
            why: f.message.clone(),
            fix: f.fix.clone(),
            kubectl_says: f.kubectl_says.clone(),
        })
}

/// What the ClientHello carries as SNI: rustls, like Go's crypto/tls, sends no SNI for an IP
/// address (RFC 6066 allows only DNS names), so the certificate has to list the IP itself.
fn sni(server_name: &str) -> String {
    if server_name.parse::<std::net::IpAddr>().is_ok() {
        format!(
            "none: {server_name} is an IP address, which TLS never sends as SNI; the server's certificate must list it as an IP SAN"
        )
    } else {
        server_name.to_string()
    }
}

fn handshake_rungs(hs: &HandshakeReport, creds: Option<&CredentialReport>) -> Vec<Rung> {
    let mut out = Vec::new();
    let t = &hs.target;
    let mut tcp = rung(
        Arrow::ToServer,
        "TCP connect",
        format!("{}:{}", t.host, t.port),
    )
    .row("server", t.url.clone())
    .row("address", hs.peer_address.clone().unwrap_or("—".into()))
    .row("took", ms(hs.tcp_connect_time));
    if let Some(f) = fail_at(hs, HandshakeStep::TcpConnect) {
        tcp = tcp.failed_with(f);
        out.push(tcp);
        return out;
    }
    out.push(tcp);

    let mut hello = rung(
        Arrow::ToServer,
        "ClientHello",
        format!(
            "offers {} · ALPN {}",
            hs.offered_versions.join(", "),
            hs.offered_alpn.join(", ")
        ),
    )
    .row("versions", hs.offered_versions.join(", "))
    .row("ALPN", hs.offered_alpn.join(", "))
    .row("SNI", sni(&t.server_name))
    .row("why", "the client says which TLS versions, ciphers and HTTP versions it speaks, and which server name it wants");
    if let Some(f) = fail_at(hs, HandshakeStep::ClientHello) {
        hello = hello.failed_with(f);
        out.push(hello);
        return out;
    }
    out.push(hello);

    let not_done = "(not recorded: the handshake did not finish)";
    let mut server_hello = rung(
        Arrow::ToClient,
        "ServerHello",
        match (&hs.tls_version, &hs.cipher_suite) {
            (Some(v), Some(c)) => format!("chooses {v} · {c}"),
            _ => "chooses a version and cipher".into(),
        },
    )
    .row("version", hs.tls_version.clone().unwrap_or(not_done.into()))
    .row("cipher", hs.cipher_suite.clone().unwrap_or(not_done.into()))
    .row(
        "key exchange",
        hs.key_exchange_group.clone().unwrap_or(not_done.into()),
    )
    .row(
        "ALPN",
        hs.alpn
            .clone()
            .unwrap_or("none: HTTP/1.1".into())
            .to_string(),
    );
    if let Some(f) = fail_at(hs, HandshakeStep::ServerHello) {
        server_hello = server_hello.failed_with(f);
        out.push(server_hello);
        return out;
    }
    out.push(server_hello);

    let mut cert = server_certificate(hs, creds);
    if let Some(f) = fail_at(hs, HandshakeStep::ServerCertificate) {
        cert = cert.failed_with(f);
        out.push(cert);
        return out;
    }
    out.push(cert);

    let client_cert = creds.and_then(|c| c.user.client_certificate.first());
    let names: Vec<String> = hs
        .record
        .acceptable_ca_names
        .iter()
        .map(|n| dn(n))
        .collect();
    let mut request = if hs.record.client_certificate_requested {
        let wanted = if names.is_empty() {
            "any CA".to_string()
        } else {
            names.join("; ")
        };
        let mut r = rung(
            Arrow::ToClient,
            "CertificateRequest",
            format!("send a certificate from: {wanted}"),
        )
        .row("CAs named", wanted);
        if let Some(c) = client_cert {
            let matched = names.is_empty() || names.contains(&c.issuer);
            r = r.row("your issuer", c.issuer.clone()).row(
                "match",
                if matched {
                    "✓ your certificate's issuer is one the server named"
                } else {
                    "! your certificate's issuer is not among them: expect 401 Unauthorized"
                },
            );
            if !matched {
                r.status = CheckStatus::Warn;
            }
        }
        r
    } else {
        rung(
            Arrow::ToClient,
            "CertificateRequest",
            "not sent: the server does not ask for a client certificate",
        )
        .row(
            "meaning",
            "identity must come from a token or other header; a certificate would not be used",
        )
    };
    if let Some(f) = fail_at(hs, HandshakeStep::CertificateRequest) {
        request = request.failed_with(f);
        out.push(request);
        return out;
    }
    out.push(request);

    let mut sent = match (hs.record.client_certificate_sent, client_cert) {
        (true, Some(c)) => {
            let id = identity_of(c);
            let mut r = rung(Arrow::ToServer, "Certificate", format!("sends {}", c.subject))
                .row("subject", c.subject.clone())
                .row("issuer", c.issuer.clone())
                .row("identity", id)
                .row("proof", "CertificateVerify: a signature with the private key, so the server knows the client holds it");
            if let Some(check) = creds.and_then(|cr| {
                cr.checks
                    .iter()
                    .find(|c| c.id == "client-cert-expired" && c.status == CheckStatus::Error)
            }) {
                r.status = CheckStatus::Warn;
                r = r.row("!", check.message.clone());
            }
            r
        }
        (true, None) => rung(
            Arrow::ToServer,
            "Certificate",
            "sends a certificate (from an exec plugin)",
        ),
        (false, _) => rung(
            Arrow::ToServer,
            "Certificate",
            "sends none: the server will treat the requests as anonymous or read a token",
        ),
    };
    if let Some(f) = fail_at(hs, HandshakeStep::ClientCertificate) {
        sent = sent.failed_with(f);
        out.push(sent);
        return out;
    }
    out.push(sent);

    let mut fin = rung(
        Arrow::ToClient,
        "Finished",
        format!("encrypted channel ready in {}", ms(hs.handshake_time)),
    )
    .row("handshake", ms(hs.handshake_time))
    .row(
        "meaning",
        "both sides proved they derived the same keys; from here every byte is encrypted",
    );
    if let Some(f) = fail_at(hs, HandshakeStep::Finished) {
        fin = fin.failed_with(f);
    }
    out.push(fin);
    out
}

/// `CN=jane,O=developers` → `user jane, groups developers` (what kube-apiserver maps it to).
fn identity_of(c: &CertSummary) -> String {
    let user = c.extra.common_name.clone().unwrap_or("(no CN)".into());
    if c.extra.organizations.is_empty() {
        format!("user {user}, no groups")
    } else {
        format!("user {user}, groups {}", c.extra.organizations.join(", "))
    }
}

fn server_certificate(hs: &HandshakeReport, creds: Option<&CredentialReport>) -> Rung {
    let chain: Vec<CertSummary> = match creds {
        Some(cr) => crate::client::server_report::server_report(cr, hs).chain,
        None => hs
            .record
            .server_chain
            .iter()
            .enumerate()
            .filter_map(|(i, d)| pki::cert::summarize(d, "presented by the server", i).ok())
            .collect(),
    };
    let cas: &[CertSummary] = creds.map_or(&[], |c| &c.cluster.certificate_authority);
    let leaf = chain.first();
    let mut r = rung(
        Arrow::ToClient,
        "Certificate (server)",
        leaf.map_or("the server's chain".into(), |l| {
            format!("{} · {} certificate(s)", l.subject, chain.len())
        }),
    );
    if let Some(l) = leaf {
        let sans: Vec<String> = l
            .san
            .dns
            .iter()
            .map(|d| format!("DNS:{d}"))
            .chain(l.san.ip.iter().map(|ip| format!("IP:{ip}")))
            .collect();
        r = r.row("SANs", sans.join(", "));
        let name = &hs.target.server_name;
        let matched = l
            .san
            .dns
            .iter()
            .find(|d| san_matches(d, name))
            .map(|d| format!("DNS:{d}"))
            .or_else(|| {
                l.san
                    .ip
                    .iter()
                    .find(|ip| *ip == name)
                    .map(|ip| format!("IP:{ip}"))
            });
        r = r.row(
            "name",
            match matched {
                Some(m) => format!("✓ {name:?} matches {m}"),
                None => format!("✗ {name:?} is not among the SANs"),
            },
        );
        r = r.row("valid", format!("{} → {}", l.not_before, l.not_after));
    }
    match (&hs.record.server_verified, hs.record.verification_skipped) {
        (Some(Ok(())), _) => {
            r = r.row(
                "verdict",
                "✓ the chain leads to a CA in certificate-authority-data, and the name matches",
            );
        }
        (Some(Err(e)), true) => {
            r.status = CheckStatus::Warn;
            r = r.row(
                "verdict",
                format!("! {e} — ignored: insecure-skip-tls-verify is set"),
            );
        }
        _ => {}
    }
    for (i, c) in chain.iter().enumerate() {
        let link = match c
            .issued_by
            .as_deref()
            .and_then(|fp| cas.iter().position(|ca| ca.sha256_fingerprint == fp))
        {
            Some(n) => format!("✓ signed by CA #{} of the kubeconfig", n + 1),
            None if c.self_signed => "self-signed, and not in the kubeconfig".into(),
            None if c.issued_by.is_some() => "✓ signed by the next certificate".into(),
            None => "✗ signed by no certificate the kubeconfig has".into(),
        };
        r = r.row(
            &format!("#{i}"),
            format!("{}  ← {}  [{link}]", c.subject, c.issuer),
        );
    }
    r
}

/// DNS SAN matching as webpki does it: exact (case-insensitive) or one leading `*.` label.
fn san_matches(san: &str, name: &str) -> bool {
    let (san, name) = (san.to_ascii_lowercase(), name.to_ascii_lowercase());
    match san.strip_prefix("*.") {
        Some(rest) => name
            .split_once('.')
            .is_some_and(|(first, tail)| !first.is_empty() && tail == rest),
        None => san == name,
    }
}

fn request_rung(step: &HttpStep, creds: Option<&CredentialReport>) -> Rung {
    // The ladder has room for a short title; the details give the whole path.
    let short = step
        .path
        .rsplit('/')
        .next()
        .filter(|_| step.path.len() > 16);
    let title = match short {
        Some(last) => format!("{} …/{last}", step.method),
        None => format!("{} {}", step.method, step.path),
    };
    let resp = match &step.result {
        Ok(r) => r,
        Err(e) => {
            return rung(Arrow::ToServer, &title, "no answer")
                .failed(
                    e.0.clone(),
                    "check the server URL and that the API server is up",
                )
                .says(e.1.map(kubectl_words::remote_alert).into_iter().collect());
        }
    };
    let json = resp.json().unwrap_or(serde_json::Value::Null);
    let head = format!("{} {}", resp.status, reason(resp.status));
    let mut r = rung(Arrow::RoundTrip, &title, head.clone())
        .row(
            "request",
            format!("{} {} ({})", step.method, step.path, resp.http_version),
        )
        .row("response", head);
    match resp.status {
        200..=299 => {}
        401 => {
            let said = json["message"].as_str().unwrap_or_default();
            return unauthorized(r, creds).says(kubectl_words::unauthorized(said));
        }
        403 => {
            let msg = json["message"].as_str().unwrap_or_default().to_string();
            return r.failed(
                format!("403 Forbidden: the server knows who you are, but no RBAC rule allows this request. {msg}"),
                "ask an admin for a Role/ClusterRole and binding that grants it (try: kubectl auth can-i --list)",
            );
        }
        code => {
            let msg = json["message"].as_str().unwrap_or_default().to_string();
            return r.failed(
                format!("{code} {}: {msg}", reason(code)),
                "check the server URL: it should be a Kubernetes API server",
            );
        }
    }
    match step.path {
        // etcd's own answer on its client port (the API server's chain to etcd).
        "/version" if json.get("etcdserver").is_some() => {
            let server = json["etcdserver"].as_str().unwrap_or("?");
            let cluster = json["etcdcluster"].as_str().unwrap_or("?");
            r.summary = format!("etcd {server} · cluster {cluster}");
            r = r
                .row("etcdserver", server)
                .row("etcdcluster", cluster)
                .row(
                    "meaning",
                    "etcd's release; the API server stores every object here, over gRPC on this same connection",
                );
        }
        "/health" => {
            let healthy = json["health"].as_str() == Some("true");
            r.summary = if healthy { "healthy" } else { "not healthy" }.into();
            r = r.row("health", json["health"].as_str().unwrap_or("?")).row(
                "meaning",
                "what kube-apiserver's /readyz etcd check asks: can etcd serve a read now",
            );
            if !healthy {
                let reason = json["reason"].as_str().unwrap_or_default().to_string();
                return r.failed(
                    format!("etcd says it is not healthy: {reason}"),
                    "a member without a leader cannot serve: check etcd's log and its members",
                );
            }
        }
        "/version" => {
            r.summary = format!(
                "{} · {}",
                json["gitVersion"].as_str().unwrap_or("?"),
                json["platform"].as_str().unwrap_or("?")
            );
            r = r
                .row("gitVersion", json["gitVersion"].as_str().unwrap_or("?"))
                .row("platform", json["platform"].as_str().unwrap_or("?"))
                .row(
                    "meaning",
                    "the server's Kubernetes release: kubectl compares it with its own",
                );
        }
        "/api" => {
            r.summary = format!(
                "{} · versions {}",
                json["kind"].as_str().unwrap_or("?"),
                json["versions"]
            );
            r = r
                .row("body", serde_json::to_string(&json).unwrap_or_default())
                .row(
                    "meaning",
                    "APIVersions: the legacy core group serves v1 — the seed's curl answer",
                );
        }
        _ => {
            let user = json
                .pointer("/status/userInfo/username")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let groups: Vec<&str> = json
                .pointer("/status/userInfo/groups")
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|g| g.as_str()).collect())
                .unwrap_or_default();
            r.summary = format!("you are {user} in [{}]", groups.join(", "));
            r = r.row(
                "server says",
                format!("user {user}, groups {}", groups.join(", ")),
            );
            if let Some(c) = creds.and_then(|c| c.user.client_certificate.first()) {
                r = r.row("cert says", format!("{}  ({})", identity_of(c), c.subject));
                let same = c.extra.common_name.as_deref() == Some(user);
                r = r.row(
                    "agree",
                    if same {
                        "✓ the server took your identity from the certificate (CN → user, O → groups, plus system:authenticated)"
                    } else {
                        "! the server names someone else: impersonation, a token, or a proxy is in play"
                    },
                );
            }
        }
    }
    r
}

fn unauthorized(r: Rung, creds: Option<&CredentialReport>) -> Rung {
    let expired = creds.and_then(|c| {
        c.checks
            .iter()
            .find(|k| k.id == "client-cert-expired" && k.status == CheckStatus::Error)
    });
    let (why, fix) = match expired {
        Some(k) => (
            format!("401 Unauthorized: the TLS handshake succeeded, but the server refused the client certificate as an identity — {}", k.message),
            "get a new client certificate from the cluster's CA (kubeadm: kubeadm kubeconfig user --client-name=NAME)".to_string(),
        ),
        None => (
            "401 Unauthorized: the connection was let in, but the server did not accept who you are: the client certificate's issuer is not in its --client-ca-file, it expired, or no credentials were sent".to_string(),
            "use a client certificate signed by the CA the API server trusts for clients (compare the CertificateRequest's CA names with your certificate's issuer), or a valid token".to_string(),
        ),
    };
    r.failed(why, fix)
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TLS 1.3: the handshake completes, then the server's alert ends the first request.
    #[test]
    fn an_alert_after_the_handshake_gives_kubectl_s_remote_error() {
        let step = HttpStep {
            method: "GET",
            path: "/version",
            result: Err(crate::client::http::RequestError(
                "connection error: received fatal alert: UnknownCA".into(),
                Some(rustls::AlertDescription::UnknownCA),
            )),
        };
        let r = request_rung(&step, None);
        let f = r.failure.expect("a failure");
        assert_eq!(
            f.kubectl_says,
            ["Unable to connect to the server: remote error: tls: unknown certificate authority"]
        );
        let plain = HttpStep {
            result: Err(crate::client::http::RequestError("timed out".into(), None)),
            ..step
        };
        assert!(
            request_rung(&plain, None)
                .failure
                .expect("a failure")
                .kubectl_says
                .is_empty()
        );
    }

    /// What the ClientHello rung says of SNI is what rustls puts on the wire: a server that
    /// records each hello's SNI sees none for an IP address and the name for a DNS name.
    #[test]
    fn the_sni_row_says_what_the_client_hello_carries() {
        use rustls::server::{ClientHello, ResolvesServerCert};
        use std::sync::{Arc, Mutex};
        #[derive(Debug, Default)]
        struct Seen(Mutex<Vec<Option<String>>>);
        impl ResolvesServerCert for Seen {
            fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<rustls::sign::CertifiedKey>> {
                let sni = hello.server_name().map(String::from);
                self.0.lock().expect("lock").push(sni);
                None
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let seen = Arc::new(Seen::default());
        let server = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_no_client_auth()
                .with_cert_resolver(seen.clone()),
        );
        let client = Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
        );
        for name in ["127.0.0.1", "::1", "kubernetes.default.svc"] {
            let sn = rustls::pki_types::ServerName::try_from(name.to_string()).expect("name");
            let mut c = rustls::ClientConnection::new(client.clone(), sn).expect("client");
            let mut s = rustls::ServerConnection::new(server.clone()).expect("server");
            let mut wire = Vec::new();
            c.write_tls(&mut wire).expect("hello");
            s.read_tls(&mut wire.as_slice()).expect("read");
            let _ = s.process_new_packets();
        }
        let seen = seen.0.lock().expect("lock").clone();
        assert_eq!(seen, [None, None, Some("kubernetes.default.svc".into())]);
        assert!(sni("127.0.0.1").starts_with("none: 127.0.0.1 is an IP address"));
        assert!(sni("::1").starts_with("none: ::1 is an IP address"));
        assert_eq!(sni("kubernetes.default.svc"), "kubernetes.default.svc");
    }

    #[test]
    fn wildcard_sans_cover_one_label() {
        assert!(san_matches("*.example.com", "api.example.com"));
        assert!(!san_matches("*.example.com", "a.b.example.com"));
        assert!(san_matches("Kubernetes", "kubernetes"));
        assert!(!san_matches("kubernetes", "localhost"));
    }
}

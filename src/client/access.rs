//! After a successful handshake, the two answers that still stop a client: 401 (the server does
//! not accept the credentials as an identity) and 403 (it knows who you are, RBAC says no to
//! listing pods in the context's namespace, which every view of kexplore needs).

use x509_parser::prelude::{FromDer, X509Certificate};
use x509_parser::x509::X509Name;

use super::cluster::status_message;
use super::error::ClientError;
use super::exec::ExecError;
use super::exec_context::ExecOutcome;
use super::explain::{Explanation, HandshakeStep};
use super::handshake::HandshakeReport;
use super::http::ApiClient;
use super::kubectl_words;
use crate::kubeconfig::ResolvedContext;

/// None when the server lets this client in and lets it list pods; else what stops it.
pub async fn check(
    ctx: &ResolvedContext,
    hs: &HandshakeReport,
    exec: &ExecOutcome,
) -> Option<Explanation> {
    // The plugin already failed for the handshake: running it again (a second login prompt)
    // would only fail the same way.
    if let Some(e) = &exec.error {
        return Some(exec_failed(&ctx.user.name, e));
    }
    let api = match ApiClient::connect(ctx).await {
        Ok(a) => a,
        Err(ClientError::Exec { user, error }) => return Some(exec_failed(&user, &error)),
        Err(e) => return Some(request_failed(e.to_string())),
    };
    let r = match api.get("/api").await {
        Ok(r) => r,
        // In TLS 1.3 the client's handshake ends before the server has judged the client
        // certificate; a server that refuses it closes the connection on the first request.
        Err(e) => {
            let how = format!(
                "the server closed the connection after the handshake ({})",
                e.0
            );
            let mut f =
                rejected_certificate(ctx, hs, exec, &how).unwrap_or_else(|| request_failed(e.0));
            f.kubectl_says = e.1.map(kubectl_words::remote_alert).into_iter().collect();
            return Some(f);
        }
    };
    if r.status == 401 {
        let said = status_message(&r.body);
        let how = format!("401 Unauthorized ({said})");
        let mut f =
            rejected_certificate(ctx, hs, exec, &how).unwrap_or_else(|| unauthorized(ctx, &how));
        f.kubectl_says = kubectl_words::unauthorized(&said);
        return Some(f);
    }
    if !(200..300).contains(&r.status) {
        return Some(unexpected(hs, r.status, &r.body));
    }
    let ns = if ctx.namespace.is_empty() {
        "default"
    } else {
        ctx.namespace.as_str()
    };
    let r = match api
        .get(&format!("/api/v1/namespaces/{ns}/pods?limit=1"))
        .await
    {
        Ok(r) => r,
        Err(e) => return Some(request_failed(e.0)),
    };
    (r.status == 403).then(|| Explanation {
        step: HandshakeStep::Request,
        cause: "forbidden",
        message: format!(
            "403 Forbidden: the server knows who you are, but no RBAC rule lets you list pods in namespace {ns:?}: {}",
            status_message(&r.body)
        ),
        fix: format!(
            "ask for a Role and RoleBinding granting get/list/watch on pods in {ns:?} (check with: kubectl auth can-i list pods -n {ns}), or pick a context whose namespace you may use"
        ),
        kubectl_says: vec![kubectl_words::forbidden(&status_message(&r.body))],
    })
}

/// `GET /api` answered neither 2xx nor 401: say what the server said, and the likely reason.
fn unexpected(hs: &HandshakeReport, code: u16, body: &[u8]) -> Explanation {
    let said = page_title(body).unwrap_or_else(|| status_message(body));
    if hs.record.client_certificate_requested && !hs.record.client_certificate_sent {
        return Explanation {
            step: HandshakeStep::Request,
            cause: "client-cert-required",
            message: format!(
                "the server asked for a client certificate during the handshake, none was sent, and it answered {code}: {said}"
            ),
            fix: "add client-certificate-data and client-key-data (issued by a CA the server names) to the user".into(),
            kubectl_says: Vec::new(),
        };
    }
    Explanation {
        step: HandshakeStep::Request,
        cause: "unexpected-status",
        message: format!("GET /api answered {code}: {said}"),
        fix: "check that the server URL points at a Kubernetes API server (not a proxy or another service)".into(),
        kubectl_says: Vec::new(),
    }
}

/// An HTML error page's `<title>` (what nginx and most proxies answer with).
fn page_title(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let start = text.find("<title>")? + "<title>".len();
    let end = text[start..].find("</title>")? + start;
    Some(text[start..end].trim().to_string())
}

/// The exec plugin gave no credential, so no request could be sent: say which and how to fix it
/// (a missing command's installHint is the fix its authors wrote).
fn exec_failed(user: &str, error: &ExecError) -> Explanation {
    let (cause, fix) = match error {
        ExecError::NotFound { command, hint } => (
            "exec-plugin-not-found",
            match hint {
                Some(h) => h.trim().to_string(),
                None => format!(
                    "install {command:?} or correct the exec command of user '{user}' (a bare name is looked up in PATH, a path is relative to the kubeconfig)"
                ),
            },
        ),
        ExecError::NeedsTerminal { .. } => (
            "exec-plugin-needs-terminal",
            "run kexplore from a terminal, or set interactiveMode: IfAvailable".to_string(),
        ),
        ExecError::TimedOut { .. } => (
            "exec-plugin-timed-out",
            "run the plugin by hand to see where it waits (a login prompt?)".to_string(),
        ),
        _ => (
            "exec-plugin-failed",
            "run the plugin by hand with the same args and env to see why it fails".to_string(),
        ),
    };
    Explanation {
        step: HandshakeStep::Request,
        cause,
        message: format!("user '{user}' gets its credentials from an exec plugin: {error}"),
        fix,
        kubectl_says: Vec::new(),
    }
}

fn request_failed(why: String) -> Explanation {
    Explanation {
        step: HandshakeStep::Request,
        cause: "request-failed",
        message: format!("the handshake succeeded but a request did not: {why}"),
        fix: "check that the server URL is a Kubernetes API server".into(),
        kubectl_says: Vec::new(),
    }
}

fn name(n: &X509Name<'_>) -> String {
    crate::pki::names::rfc2253(n)
}

/// A 401 without a client certificate: the token (or nothing) was not accepted.
fn unauthorized(ctx: &ResolvedContext, how: &str) -> Explanation {
    Explanation {
        step: HandshakeStep::Request,
        cause: "unauthorized",
        message: format!(
            "{how}: the server did not accept the credentials ({}) as an identity",
            if ctx.user.token.is_some() || ctx.user.exec.is_some() {
                "a bearer token"
            } else {
                "none were sent"
            }
        ),
        fix: "get a current token (kubectl config view --minify shows which user this is), or a client certificate the server trusts".into(),
        kubectl_says: Vec::new(),
    }
}

/// Why a server refused the client certificate it was sent; None when none was sent.
fn rejected_certificate(
    ctx: &ResolvedContext,
    hs: &HandshakeReport,
    exec: &ExecOutcome,
    how: &str,
) -> Option<Explanation> {
    if !hs.record.client_certificate_sent {
        return None;
    }
    let step = HandshakeStep::Request;
    let der = ctx
        .user
        .client_certificate
        .as_ref()
        .and_then(|m| {
            rustls::pki_types::pem::PemObject::pem_slice_iter(&m.bytes)
                .filter_map(|c: Result<rustls::pki_types::CertificateDer<'static>, _>| c.ok())
                .next()
                .map(|c| c.to_vec())
        })
        .or_else(|| exec.certificate.clone())?;
    let (_, c) = X509Certificate::from_der(&der).ok()?;
    let (subject, issuer) = (name(c.subject()), name(c.issuer()));
    if c.version().0 == 0 {
        return Some(Explanation {
            step,
            cause: "x509-v1-client-certificate",
            message: format!(
                "{how}: the client certificate ({subject}) is X.509 version 1; Go's kube-apiserver accepts v1 client certificates, but this server rejects them as rustls/webpki does (UnsupportedCertVersion: only version 3)"
            ),
            fix: "reissue the client certificate as X.509 v3 (openssl x509 -req … -extfile with extendedKeyUsage=clientAuth)".into(),
            kubectl_says: Vec::new(),
        });
    }
    let accepted: Vec<String> = hs
        .record
        .acceptable_ca_names
        .iter()
        .filter_map(|der| X509Name::from_der(der).ok().map(|(_, n)| name(&n)))
        .collect();
    let named = if accepted.is_empty() {
        String::new()
    } else {
        format!(
            "; it named these client CAs in its CertificateRequest: {}",
            accepted.join("; ")
        )
    };
    let expired = c.validity().time_to_expiration().is_none();
    Some(Explanation {
        step,
        cause: "client-cert-rejected",
        message: format!(
            "{how}: the TLS handshake succeeded, but the server does not accept the client certificate {subject} (issued by {issuer}){}{named}",
            if expired { ", which has expired" } else { "" }
        ),
        fix: "use a client certificate issued by the server's client CA (kube-apiserver --client-ca-file) and still valid".into(),
        kubectl_says: Vec::new(),
    })
}

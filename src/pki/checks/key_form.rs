//! Whether the client key is in a form every tool reads: kubectl and curl are often pointed at
//! the same credentials, and a key only some of them accept fails far from its cause.

use super::check;
use crate::kubeconfig::ResolvedContext;
use crate::pki::report::{Check, CheckStatus, CredentialReport};

/// A shell word for `s`: single-quoted when it holds anything a shell would interpret.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

pub(super) fn key_form(ctx: &ResolvedContext, r: &CredentialReport, out: &mut Vec<Check>) {
    let Some(rewrite) = r.user.client_key.as_ref().and_then(|k| k.pkcs8_v2.as_ref()) else {
        return;
    };
    let file = ctx
        .user
        .client_key
        .as_ref()
        .and_then(|m| m.expose().origin.file.clone());
    let (input, whence) = match &file {
        Some(path) => (shell_word(&path.display().to_string()), String::new()),
        None => (
            "client.key".to_string(),
            " (with client-key-data base64-decoded into client.key)".to_string(),
        ),
    };
    let readers = if rewrite.rustls_reads() {
        "kubectl (Go) and rustls read it"
    } else {
        "kubectl (Go) reads it, rustls does not"
    };
    out.push(check(
        "client-key-pkcs8-v2",
        CheckStatus::Warn,
        format!(
            "the client key ({}) is PKCS#8 v2 (RFC 5958: version 1 with the public key appended, as ring and rcgen write it): {readers}, but OpenSSL 3.0 and the tools built on it cannot (openssl pkey and s_client: \"unsupported\", curl: \"unable to set private key file\"); rewrite it as PKCS#8 v1, which all of them read{whence}: {}",
            rewrite.algorithm,
            rewrite.command(&input, "client-pkcs8-v1.key")
        ),
    ));
}

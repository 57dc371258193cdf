//! The context as a connection uses it once the exec plugin has answered. client-go runs the
//! plugin when it is the user's only credential (no token, basic auth or client certificate in
//! the kubeconfig); a client certificate and key it returns are presented in the TLS handshake
//! exactly as kubeconfig ones would be, so the handshake and the HTTP client share this step.

use std::time::Duration;

use super::exec::{ExecCredential, ExecError};
use super::exec_cache;
use crate::kubeconfig::{Material, Origin, ResolvedContext, Secret};

/// How long a plugin may take (a login flow can prompt).
pub const EXEC_TIMEOUT: Duration = Duration::from_secs(60);

/// The plugin's kubeconfig fields, for messages that name where a certificate came from.
pub const EXEC_CERTIFICATE_FIELD: &str = "exec clientCertificateData";
const EXEC_KEY_FIELD: &str = "exec clientKeyData";

/// Whether client-go would run the user's exec plugin for this context.
pub fn uses_exec(ctx: &ResolvedContext) -> bool {
    let u = &ctx.user;
    u.exec.is_some() && u.token.is_none() && u.username.is_none() && u.client_certificate.is_none()
}

/// Runs the exec plugin when the context uses one (cached, see `exec_cache`) and returns the
/// context with the plugin's client certificate and key in place, plus what the plugin
/// returned. Without a plugin: the context unchanged and `None`.
pub async fn with_exec_credential(
    ctx: &ResolvedContext,
) -> Result<(ResolvedContext, Option<ExecCredential>), ExecError> {
    let mut ctx = ctx.clone();
    let Some(exec_config) = ctx.user.exec.clone().filter(|_| uses_exec(&ctx)) else {
        return Ok((ctx, None));
    };
    let cluster = ctx.cluster.clone();
    let cred = tokio::task::spawn_blocking(move || {
        exec_cache::credential(&exec_config, &cluster, EXEC_TIMEOUT)
    })
    .await
    .map_err(|e| ExecError::Failed {
        command: ctx
            .user
            .exec
            .as_ref()
            .map(|e| e.command.clone())
            .unwrap_or_default(),
        status: format!("the task running it stopped: {e}"),
        stderr: String::new(),
    })??;
    if let (Some(c), Some(k)) = (&cred.client_certificate_pem, &cred.client_key_pem) {
        let origin = |field| Origin {
            kubeconfig: ctx.user.source.clone(),
            entry_kind: "user",
            entry_name: ctx.user.name.clone(),
            field,
            file: None,
        };
        ctx.user.client_certificate = Some(Material {
            origin: origin(EXEC_CERTIFICATE_FIELD),
            bytes: c.clone().into_bytes(),
        });
        ctx.user.client_key = Some(Secret::new(Material {
            origin: origin(EXEC_KEY_FIELD),
            bytes: k.expose().clone().into_bytes(),
        }));
    }
    Ok((ctx, Some(cred)))
}

/// What the exec plugin contributed to a handshake.
#[derive(Debug, Clone, Default)]
pub struct ExecOutcome {
    /// The client certificate (DER, leaf) it returned, which the handshake offered.
    pub certificate: Option<Vec<u8>>,
    /// Why it gave nothing to offer (missing, failed, a bad answer); the requests after the
    /// handshake would fail for the same reason.
    pub error: Option<ExecError>,
}

//! `kexplore certs`: decode and check the selected context's credentials.

use std::io::Write as _;

use super::{CommandError, CommandResult};
use crate::cli::{CertsArgs, GlobalArgs, OutputFormat};
use crate::client::exec_context::ExecOutcome;
use crate::client::{self, HandshakeReport};
use crate::kubeconfig::{Kubeconfig, KubeconfigError, Selection};
use crate::pki::{self, CheckStatus, CredentialReport};

/// Performs the real handshake and adds the contract's `server` object to the report.
fn connect(
    ctx: &crate::kubeconfig::ResolvedContext,
    report: &mut CredentialReport,
) -> Result<(HandshakeReport, ExecOutcome), CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the async runtime: {e}")))?;
    let hs = runtime.block_on(async {
        let (mut hs, exec) = client::handshake_with_exec(ctx).await?;
        // A completed handshake can still end in 401 or 403: the same report says so.
        if hs.succeeded() {
            hs.failure = client::access::check(ctx, &hs, &exec).await;
        }
        Ok::<_, client::ClientError>((hs, exec))
    });
    let (hs, exec) = hs.map_err(|e| CommandError::Input(e.to_string()))?;
    report.server = Some(client::server_report::server_report(report, &hs));
    Ok((hs, exec))
}

pub fn run(global: &GlobalArgs, args: &CertsArgs) -> CommandResult {
    let selection = Selection::from_environment(global.kubeconfig.as_deref()).ok_or_else(|| {
        CommandError::Input(
            "no kubeconfig found: --kubeconfig was not given, KUBECONFIG is not set and there is no home directory".into(),
        )
    })?;
    let config = Kubeconfig::load(&selection)?;
    let ctx = config
        .resolve(global.context.as_deref())
        .map_err(|e| match e {
            // These name no file by themselves; say which kubeconfig was searched.
            KubeconfigError::UnknownContext { .. } | KubeconfigError::NoCurrentContext { .. } => {
                CommandError::Input(format!("{}: {e}", where_from(&selection)))
            }
            other => other.into(),
        })?;
    // Unreadable certificate or key material is bad input (exit 2), like a malformed kubeconfig.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let mut report = pki::inspect_at(&ctx, now).map_err(|e| CommandError::Input(e.to_string()))?;
    let handshake = if args.connect {
        Some(connect(&ctx, &mut report)?)
    } else {
        None
    };
    let text = match global.output {
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&report)
                .map_err(|e| CommandError::Failed(format!("cannot encode the report: {e}")))?;
            s.push('\n');
            s
        }
        OutputFormat::Text => {
            let mut t = pki::render::text(&report, now);
            if let (Some((hs, exec)), Some(server)) = (&handshake, &report.server) {
                t.push_str(&client::server_report::render_text(
                    &report, hs, exec, server,
                ));
            }
            t
        }
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if handshake.as_ref().is_some_and(|(hs, _)| !hs.succeeded()) {
        return Ok(1);
    }
    if args.check && report.worst() == CheckStatus::Error {
        return Ok(1);
    }
    Ok(0)
}

fn where_from(selection: &Selection) -> String {
    match selection {
        Selection::Explicit(p) | Selection::Home(p) => p.display().to_string(),
        Selection::EnvList(_) => selection.describe(),
    }
}

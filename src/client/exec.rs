//! Exec credential plugins (client.authentication.k8s.io v1 and v1beta1), run the way client-go
//! runs them: the command with its args and env on top of ours, `KUBERNETES_EXEC_INFO` describing
//! the request (and the cluster when `provideClusterInfo` is set), the answer checked strictly.

use std::io::{IsTerminal as _, Read as _};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;

use crate::kubeconfig::model::ExecConfig;
use crate::kubeconfig::{ResolvedCluster, Secret};

/// What a plugin returned.
#[derive(Debug, Clone)]
pub struct ExecCredential {
    pub token: Option<Secret<String>>,
    pub client_certificate_pem: Option<String>,
    pub client_key_pem: Option<Secret<String>>,
    /// RFC 3339, as the plugin sent it.
    pub expiration_timestamp: Option<String>,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ExecError {
    #[error("exec plugin {command:?} not found{}", hint.as_ref().map(|h| format!(": {h}")).unwrap_or_default())]
    NotFound {
        command: String,
        hint: Option<String>,
    },
    #[error("exec plugin {command:?} failed ({status}){}", stderr_suffix(stderr))]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("exec plugin {command:?} did not finish within {seconds}s")]
    TimedOut { command: String, seconds: u64 },
    #[error("exec plugin {command:?}: {problem}")]
    BadAnswer { command: String, problem: String },
    #[error(
        "exec plugin {command:?} needs an interactive terminal (interactiveMode: Always), and there is none: standard input is not a terminal{}",
        if *tui { " (the TUI keeps the terminal; run `kubectl get --raw /version` once to log in, or use `kexplore certs --connect`)" } else { "" }
    )]
    NeedsTerminal { command: String, tui: bool },
    #[error(
        "exec plugin {command:?} failed ({status}){}; interactiveMode is Never, so it ran without a terminal (spec.interactive false) — if it needs to prompt, set interactiveMode: IfAvailable and run from a terminal",
        stderr_suffix(stderr)
    )]
    FailedWithoutTerminal {
        command: String,
        status: String,
        stderr: String,
    },
    #[error(
        "exec plugin {command:?}: apiVersion {version:?} is not supported (use client.authentication.k8s.io/v1 or v1beta1)"
    )]
    UnsupportedVersion { command: String, version: String },
}

fn stderr_suffix(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    api_version: Option<String>,
    kind: Option<String>,
    status: Option<AnswerStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnswerStatus {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    expiration_timestamp: Option<String>,
}

/// The `KUBERNETES_EXEC_INFO` document client-go passes to the plugin.
pub fn exec_info(
    exec: &ExecConfig,
    cluster: &ResolvedCluster,
    interactive: bool,
) -> serde_json::Value {
    let mut spec = serde_json::json!({ "interactive": interactive });
    if exec.provide_cluster_info == Some(true) {
        let mut c = serde_json::json!({ "server": cluster.server });
        if let Some(n) = &cluster.tls_server_name {
            c["tls-server-name"] = n.clone().into();
        }
        if cluster.insecure_skip_tls_verify {
            c["insecure-skip-tls-verify"] = true.into();
        }
        if let Some(ca) = &cluster.certificate_authority {
            c["certificate-authority-data"] = base64::engine::general_purpose::STANDARD
                .encode(&ca.bytes)
                .into();
        }
        if let Some(p) = &cluster.proxy_url {
            c["proxy-url"] = p.clone().into();
        }
        if cluster.disable_compression {
            c["disable-compression"] = true.into();
        }
        if let Some(ext) = &cluster.exec_extension {
            c["config"] = serde_json::to_value(ext).unwrap_or(serde_json::Value::Null);
        }
        spec["cluster"] = c;
    }
    serde_json::json!({ "kind": "ExecCredential", "apiVersion": exec.api_version, "spec": spec })
}

/// Set while the TUI owns the terminal: a plugin must not read keys or draw prompts over it.
static NO_TERMINAL: AtomicBool = AtomicBool::new(false);

/// The TUI calls this before taking the terminal: plugins then run as if there were none.
pub fn forbid_terminal() {
    NO_TERMINAL.store(true, Ordering::Relaxed);
}

fn terminal_available() -> bool {
    !NO_TERMINAL.load(Ordering::Relaxed) && std::io::stdin().is_terminal()
}

/// Runs the plugin (handing it the terminal only when its interactiveMode allows and there is
/// one) and checks its answer. Blocking: call it from `spawn_blocking` in async code.
pub fn run(
    exec: &ExecConfig,
    cluster: &ResolvedCluster,
    timeout: Duration,
) -> Result<ExecCredential, ExecError> {
    let command = exec.command.clone();
    if !matches!(
        exec.api_version.as_str(),
        "client.authentication.k8s.io/v1" | "client.authentication.k8s.io/v1beta1"
    ) {
        return Err(ExecError::UnsupportedVersion {
            command,
            version: exec.api_version.clone(),
        });
    }
    // client-go: Never never hands over stdin; IfAvailable (v1beta1's default) and Always do
    // when stdin is a terminal, and Always without one is an error.
    let terminal = terminal_available();
    let interactive = match exec.interactive_mode.as_deref() {
        Some("Never") => false,
        Some("Always") if !terminal => {
            return Err(ExecError::NeedsTerminal {
                command,
                tui: NO_TERMINAL.load(Ordering::Relaxed),
            });
        }
        _ => terminal,
    };
    let info = exec_info(exec, cluster, interactive);
    let mut cmd = Command::new(&exec.command);
    cmd.args(exec.args.iter().flatten())
        .envs(
            exec.env
                .iter()
                .flatten()
                .map(|e| (e.name.clone(), e.value.clone())),
        )
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdout(Stdio::piped());
    if interactive {
        // The plugin talks to the user itself: prompts on stderr, answers on stdin.
        cmd.stdin(Stdio::inherit()).stderr(Stdio::inherit());
    } else {
        cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ExecError::NotFound {
                command,
                hint: exec.install_hint.clone(),
            });
        }
        Err(e) => {
            return Err(ExecError::Failed {
                command,
                status: e.to_string(),
                stderr: String::new(),
            });
        }
    };
    // Read both pipes on threads so a chatty plugin cannot block on a full pipe.
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ExecError::TimedOut {
                    command,
                    seconds: timeout.as_secs(),
                });
            }
            Err(e) => {
                return Err(ExecError::Failed {
                    command,
                    status: e.to_string(),
                    stderr: String::new(),
                });
            }
        }
    };
    let out = out_thread.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&err_thread.join().unwrap_or_default()).into_owned();
    if !status.success() {
        let status = status.to_string();
        return Err(if exec.interactive_mode.as_deref() == Some("Never") {
            ExecError::FailedWithoutTerminal {
                command,
                status,
                stderr: err,
            }
        } else {
            ExecError::Failed {
                command,
                status,
                stderr: err,
            }
        });
    }
    parse_answer(&command, &exec.api_version, &out)
}

/// Checks a plugin's stdout as client-go does.
pub fn parse_answer(
    command: &str,
    api_version: &str,
    out: &[u8],
) -> Result<ExecCredential, ExecError> {
    let bad = |problem: String| ExecError::BadAnswer {
        command: command.to_string(),
        problem,
    };
    let answer: Answer = serde_json::from_slice(out)
        .map_err(|e| bad(format!("the output is not an ExecCredential in JSON: {e}")))?;
    if answer.kind.as_deref() != Some("ExecCredential") {
        return Err(bad(format!(
            "returned kind {:?}, expected ExecCredential",
            answer.kind.unwrap_or_default()
        )));
    }
    if answer.api_version.as_deref() != Some(api_version) {
        return Err(bad(format!(
            "is configured for {api_version} but returned {:?}",
            answer.api_version.unwrap_or_default()
        )));
    }
    let status = answer
        .status
        .ok_or_else(|| bad("did not return a status field".into()))?;
    let token = status.token.filter(|t| !t.is_empty());
    let cert = status.client_certificate_data.filter(|t| !t.is_empty());
    let key = status.client_key_data.filter(|t| !t.is_empty());
    if cert.is_some() != key.is_some() {
        return Err(bad(
            "returned only one of clientCertificateData and clientKeyData; both are required"
                .into(),
        ));
    }
    if token.is_none() && cert.is_none() {
        return Err(bad(
            "returned neither a token nor a client certificate and key".into(),
        ));
    }
    Ok(ExecCredential {
        token: token.map(Secret::new),
        client_certificate_pem: cert,
        client_key_pem: key.map(Secret::new),
        expiration_timestamp: status.expiration_timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "client.authentication.k8s.io/v1";

    #[test]
    fn answers_are_checked_like_client_go() {
        let ok = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let c = parse_answer("p", V1, ok).unwrap();
        assert_eq!(c.token.unwrap().expose(), "t0k");
        assert_eq!(
            c.expiration_timestamp.as_deref(),
            Some("2030-01-01T00:00:00Z")
        );
        let e = parse_answer("p", "client.authentication.k8s.io/v1beta1", ok).unwrap_err();
        assert!(
            e.to_string()
                .contains("is configured for client.authentication.k8s.io/v1beta1"),
            "{e}"
        );
        let half = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x"}}"#;
        assert!(
            parse_answer("p", V1, half)
                .unwrap_err()
                .to_string()
                .contains("both are required")
        );
        let none = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}"#;
        assert!(
            parse_answer("p", V1, none)
                .unwrap_err()
                .to_string()
                .contains("neither a token")
        );
        assert!(
            parse_answer("p", V1, b"oops")
                .unwrap_err()
                .to_string()
                .contains("not an ExecCredential")
        );
    }
}

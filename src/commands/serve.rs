//! `kexplore serve`: run the embedded API server until Ctrl-C / SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;

use super::{CommandError, CommandResult};
use crate::apiserver::authn::TokenFile;
use crate::apiserver::pki::{self, ClusterPki};
use crate::apiserver::server::{self, ServeOptions};
use crate::cli::{GlobalArgs, ServeArgs};

/// The URL clients use: a wildcard listen address is reached on loopback.
pub fn server_url(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) if a.ip().is_unspecified() => format!("https://127.0.0.1:{}", a.port()),
        SocketAddr::V6(a) if a.ip().is_unspecified() => format!("https://[::1]:{}", a.port()),
        SocketAddr::V6(a) => format!("https://[{}]:{}", a.ip(), a.port()),
        SocketAddr::V4(a) => format!("https://{a}"),
    }
}

pub fn load_pki(dir: Option<&std::path::Path>) -> Result<ClusterPki, CommandError> {
    match dir {
        Some(d) => pki::load_or_create(d).map_err(CommandError::Input),
        None => pki::mint().map_err(CommandError::Failed),
    }
}

pub fn run(global: &GlobalArgs, args: &ServeArgs) -> CommandResult {
    let _ = global;
    let tokens = match &args.token_auth_file {
        Some(p) => TokenFile::load(p).map_err(CommandError::Input)?,
        None => TokenFile::default(),
    };
    for s in &args.scenario {
        if !s.is_file() {
            return Err(CommandError::Input(format!(
                "{}: no such scenario file",
                s.display()
            )));
        }
    }
    let pki = load_pki(args.pki_dir.as_deref())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async {
        // Registered before "listening on" is printed: a SIGTERM sent the moment a supervisor
        // sees that line must shut down gracefully, not hit the default action.
        let signals = Signals::register();
        let opts = ServeOptions {
            listen: args.listen,
            pki: pki.clone(),
            tokens,
            audit_log: args.audit_log_path.clone(),
            demo: !args.no_demo,
            scenarios: args.scenario.clone(),
            control_loops: true,
        };
        let running = server::start(opts).await.map_err(|e| {
            if e.contains("cannot listen") {
                CommandError::Failed(e)
            } else {
                CommandError::Input(e)
            }
        })?;
        let url = server_url(running.addr);
        if let Some(path) = &args.kubeconfig_out {
            pki::write_atomic_private(path, &pki::kubeconfig_yaml(&pki, &url))
                .map_err(CommandError::Failed)?;
        }
        let mut out = std::io::stdout();
        let _ = writeln!(out, "listening on {url}");
        let _ = out.flush();
        signals.wait().await;
        running.shutdown().await;
        Ok(0)
    })
}

/// SIGTERM and SIGINT, listened for from the moment they are registered.
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn register() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    async fn wait(mut self) {
        let term = async {
            match self.term.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        let int = async {
            match self.int.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        };
        tokio::select! {
            _ = term => {}
            _ = int => {}
        }
    }
}

//! `kexplore serve`: run the embedded API server until Ctrl-C / SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;

use super::{CommandError, CommandResult};
use crate::apiserver::controllers::leader_election;
use crate::apiserver::controllers::placement::KubeScheduler;
use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::request::components::Leadership;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::etcd::EtcdStore;
use crate::apiserver::storage::etcd_config::EtcdOptions;
use crate::apiserver::storage::etcd_local::LocalEtcd;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::service_alloc::ServiceRanges;
use crate::apiserver::storage::store::{HistoryLimits, Store};
use crate::apiserver::transport::limits::Limits;
use crate::apiserver::transport::pki::{self, ClusterPki};
use crate::apiserver::transport::server::{self, ServeOptions};
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

/// The server's limits as the flags set them.
pub fn limits(args: &ServeArgs) -> Limits {
    Limits {
        max_request_body_bytes: usize::try_from(args.max_resource_write_bytes)
            .unwrap_or(usize::MAX),
        max_header_bytes: usize::try_from(args.max_header_bytes).unwrap_or(usize::MAX),
        read_header_timeout: args.read_header_timeout,
        request_timeout: args.request_timeout,
        idle_timeout: args.idle_timeout,
        http2_keepalive_interval: args.http2_keepalive_interval,
        max_connections: args.max_connections,
        max_watches: args.max_watches,
        max_requests_inflight: args.max_requests_inflight,
        max_mutating_requests_inflight: args.max_mutating_requests_inflight,
        shutdown_grace_period: args.shutdown_grace_period,
        node_monitor_grace_period: args.node_monitor_grace_period,
        horizontal_pod_autoscaler_sync_period: args.horizontal_pod_autoscaler_sync_period,
        history: HistoryLimits {
            max_events: usize::try_from(args.watch_history_events).unwrap_or(usize::MAX),
            max_bytes: usize::try_from(args.watch_history_bytes).unwrap_or(usize::MAX),
        },
        services: ServiceRanges {
            cluster_ip: args.service_cluster_ip_range,
            node_ports: args.service_node_port_range,
        },
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
    let scheduler_profiles = match &args.scheduler_config {
        Some(p) => Some(KubeScheduler::profiles_from_file(p).map_err(CommandError::Input)?),
        None => None,
    };
    let pki = load_pki(args.pki_dir.as_deref())?;
    // Started here, on the main thread: etcd dies with the thread that started it when
    // kexplore itself is killed, and is stopped when `local` drops (any return below).
    let local = match args.etcd {
        true => Some(
            LocalEtcd::start_members(
                args.pki_dir.as_deref(),
                args.etcd_data_dir.as_deref(),
                usize::from(args.etcd_members),
                args.etcd_compaction_interval,
            )
            .map_err(CommandError::Input)?,
        ),
        false => None,
    };
    let etcd = match &local {
        Some(l) => Some(l.options.clone()),
        None if !args.etcd_servers.is_empty() => Some(EtcdOptions {
            servers: args.etcd_servers.clone(),
            cafile: args.etcd_cafile.clone(),
            certfile: args.etcd_certfile.clone(),
            keyfile: args.etcd_keyfile.clone(),
            prefix: args.etcd_prefix.clone(),
            compaction_interval: args.etcd_compaction_interval,
        }),
        None => None,
    };
    let limits = limits(args);
    let store: Box<dyn Storage> = match &etcd {
        Some(o) => {
            Box::new(EtcdStore::connect(o.clone(), limits.history).map_err(CommandError::Input)?)
        }
        None => Box::new(Store::new(limits.history)),
    };
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
            service_account_issuer: Some(args.service_account_issuer.clone()),
            simulated_run: std::time::Duration::from_secs(args.simulated_run_seconds),
            scheduler_profiles,
        };
        let running = server::start_on(opts, limits, store).await.map_err(|e| {
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
        if let Some(o) = &etcd {
            let kept = args.etcd_data_dir.is_some();
            let _ = writeln!(out, "{}", etcd_banner(o, local.as_ref(), kept));
        }
        if let Some(id) = &running.identity {
            // Which replica holds a Lease: `kubectl get lease -n kube-system` shows this name.
            let _ = writeln!(out, "leader election identity: {id}");
        }
        let _ = out.flush();
        // After the banner, so "listening on" stays the first line a supervisor reads.
        tokio::spawn(report_leadership(running.api.clone()));
        signals.wait().await;
        running.shutdown().await;
        Ok(0)
    })
}

/// Where the cluster is kept, and the etcdctl line that reads the demo pod back. An etcd
/// started here without `--etcd-data-dir` keeps its data in a scratch directory removed on
/// exit: the banner says so, since a restart then finds an empty cluster.
fn etcd_banner(o: &EtcdOptions, local: Option<&LocalEtcd>, data_kept: bool) -> String {
    let whose = match local {
        Some(l) if data_kept => format!(" (started by kexplore; its log: {})", l.log.display()),
        Some(l) => format!(
            " (started by kexplore, its data removed on exit: keep it with --etcd-data-dir DIR; its log: {})",
            l.log.display()
        ),
        None => String::new(),
    };
    format!(
        "etcd {}{whose}, keys under {}\nread a pod back: {}",
        o.servers.join(","),
        o.etcd_key("/registry/"),
        o.etcdctl_get(&o.etcd_key("/registry/pods/default/app"))
    )
}

/// Each leadership change of this replica, as it happens, in kube-scheduler's words for the
/// Lease and what now runs or stops here: in a workshop on HA, the terminal of the replica that
/// takes over says so.
async fn report_leadership(api: std::sync::Arc<Api>) {
    let mut changes = api.components.leadership_changes();
    let mut seen = 0;
    loop {
        for change in api.components.leadership_since(seen) {
            seen += 1;
            let _ = writeln!(std::io::stdout(), "{}", leadership_line(change));
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}

fn leadership_line(change: Leadership) -> String {
    let ns = leader_election::NAMESPACE;
    match change {
        Leadership::Acquired(lease) => format!(
            "successfully acquired lease {ns}/{lease}; this replica now runs {}",
            leader_election::guards(lease)
        ),
        Leadership::Lost(lease) => format!(
            "lost lease {ns}/{lease} (not renewed within the renew deadline); this replica stopped {} and stands for election again",
            leader_election::guards(lease)
        ),
    }
}

/// SIGTERM and SIGINT, listened for from the moment they are registered.
pub(crate) struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(crate) fn register() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    pub(crate) async fn wait(mut self) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn serve_args(argv: &[&str]) -> ServeArgs {
        let cli = crate::cli::Cli::try_parse_from(argv).expect("parses");
        match cli.command {
            Some(crate::cli::Command::Serve(a)) => *a,
            _ => panic!("not serve"),
        }
    }

    #[test]
    fn flag_defaults_are_the_servers_defaults() {
        assert_eq!(
            limits(&serve_args(&["kexplore", "serve"])),
            Limits::default()
        );
    }

    #[test]
    fn flags_set_every_limit() {
        let l = limits(&serve_args(&[
            "kexplore",
            "serve",
            "--max-resource-write-bytes=1024",
            "--max-header-bytes=16384",
            "--read-header-timeout=5s",
            "--request-timeout=2s",
            "--idle-timeout=1m30s",
            "--http2-keepalive-interval=0",
            "--max-connections=10",
            "--max-watches=2",
            "--max-requests-inflight=3",
            "--max-mutating-requests-inflight=4",
            "--shutdown-grace-period=500ms",
            "--watch-history-events=50",
            "--watch-history-bytes=4096",
            "--node-monitor-grace-period=4s",
            "--horizontal-pod-autoscaler-sync-period=1m",
        ]));
        let want = Limits {
            max_request_body_bytes: 1024,
            max_header_bytes: 16384,
            read_header_timeout: std::time::Duration::from_secs(5),
            request_timeout: std::time::Duration::from_secs(2),
            idle_timeout: std::time::Duration::from_secs(90),
            http2_keepalive_interval: std::time::Duration::ZERO,
            max_connections: 10,
            max_watches: 2,
            max_requests_inflight: 3,
            max_mutating_requests_inflight: 4,
            shutdown_grace_period: std::time::Duration::from_millis(500),
            history: HistoryLimits {
                max_events: 50,
                max_bytes: 4096,
            },
            services: ServiceRanges::default(),
            node_monitor_grace_period: std::time::Duration::from_secs(4),
            horizontal_pod_autoscaler_sync_period: std::time::Duration::from_secs(60),
        };
        assert_eq!(l, want);
        for bad in [
            "--idle-timeout=90",
            "--max-header-bytes=100",
            "--max-resource-write-bytes=0",
            "--node-monitor-grace-period=500ms",
            "--horizontal-pod-autoscaler-sync-period=0",
        ] {
            assert!(
                crate::cli::Cli::try_parse_from(["kexplore", "serve", bad]).is_err(),
                "{bad} accepted"
            );
        }
    }
}

//! The HTTPS server: accept TCP, complete TLS (client certificate requested, verdict deferred),
//! learn the connection's facts once, then serve HTTP/1.1 or HTTP/2 (ALPN) through `chain::handle`.
//! Also starts the control loops (scheduler, kubelets) and stops everything on shutdown.
//! The connection-level limits live here: the connection cap, header size and read timeout,
//! the idle timeout, HTTP/2 keep-alive, accept() back-off and the graceful shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls_pki_types::pem::PemObject;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use crate::apiserver::controllers::bootstrap;
use crate::apiserver::controllers::kubelet;
use crate::apiserver::controllers::leader_election;
use crate::apiserver::controllers::manager::{self, on_own_thread};
use crate::apiserver::controllers::scheduler_loop;
use crate::apiserver::controllers::{endpoints, kubelet_node};
use crate::apiserver::filters::audit::AuditLog;
use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::filters::chain;
use crate::apiserver::filters::sa_token::{self, ServiceAccountTokens};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::store::Store;
use crate::apiserver::transport::activity::Activity;
use crate::apiserver::transport::body_read::TimedBody;
use crate::apiserver::transport::limits::Limits;
use crate::apiserver::transport::linger::Linger;
use crate::apiserver::transport::pki::ClusterPki;
use crate::apiserver::transport::tls::{self, ConnInfo, DeferredClientVerifier};

/// A TLS handshake that has not finished by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How to run the embedded server.
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub pki: ClusterPki,
    pub tokens: TokenFile,
    pub audit_log: Option<PathBuf>,
    /// Preload the seed's demo cluster (nodes and their running pods).
    pub demo: bool,
    pub scenarios: Vec<PathBuf>,
    /// Run the scheduler loop and simulated kubelets.
    pub control_loops: bool,
    /// `--service-account-issuer`: the `iss` of the tokens TokenRequest signs (and the API
    /// audience); `None` is kubeadm's `https://kubernetes.default.svc.cluster.local`.
    pub service_account_issuer: Option<String>,
    /// How long a simulated container runs before it exits 0, for pods that restart `Never`
    /// or `OnFailure` (Jobs); other pods keep running.
    pub simulated_run: Duration,
    /// kube-scheduler's profiles (`--scheduler-config`); `None`: its default profile alone.
    pub scheduler_profiles: Option<Vec<crate::scheduler::Profile>>,
}

/// A running server; dropping it without `shutdown` leaves the tasks to the runtime.
pub struct Running {
    pub addr: SocketAddr,
    pub api: Arc<Api>,
    /// The name this replica stands for its Leases under (`spec.holderIdentity`), when its
    /// control loops run.
    pub identity: Option<String>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
    grace: Duration,
}

impl Running {
    /// Stop accepting, let in-flight requests finish within the grace period (watches end at
    /// once, cleanly), then cut whatever is left and stop the control loops.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        // The accept loop enforces the grace period on connections; this bounds the rest.
        let bound = self.grace + Duration::from_secs(2);
        if tokio::time::timeout(bound, drain).await.is_err() {
            self.tasks.abort_all();
        }
    }
}

fn tls_config(
    pki: &ClusterPki,
) -> Result<(rustls::ServerConfig, Arc<DeferredClientVerifier>), String> {
    let ca = CertificateDer::from(pki.ca.cert_der.clone());
    let serving = CertificateDer::from(pki.serving.cert_der.clone());
    let key = PrivateKeyDer::from_pem_slice(pki.serving.key_pem.expose().as_bytes())
        .map_err(|e| format!("serving key: {e}"))?;
    let verifier = Arc::new(DeferredClientVerifier::new(&ca).map_err(|e| e.to_string())?);
    let cfg =
        tls::server_config(vec![serving, ca], key, verifier.clone()).map_err(|e| e.to_string())?;
    Ok((cfg, verifier))
}

/// Bind, bootstrap the cluster state, and start serving with the default limits.
pub async fn start(opts: ServeOptions) -> Result<Running, String> {
    start_with_limits(opts, Limits::default()).await
}

/// Bind, bootstrap the cluster state, and start serving. Returns once accepting.
pub async fn start_with_limits(opts: ServeOptions, limits: Limits) -> Result<Running, String> {
    let store = Box::new(Store::new(limits.history));
    start_on(opts, limits, store).await
}

/// Bind, bootstrap the cluster state on `store` (the in-memory store or etcd), and start
/// serving. Returns once accepting.
pub(crate) async fn start_on(
    opts: ServeOptions,
    limits: Limits,
    store: Box<dyn Storage>,
) -> Result<Running, String> {
    let audit = match &opts.audit_log {
        Some(p) => Some(AuditLog::open(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };
    let mut api = Api::with_store(opts.tokens.clone(), audit, &limits, store);
    let issuer = opts
        .service_account_issuer
        .as_deref()
        .unwrap_or(sa_token::DEFAULT_ISSUER);
    api.service_accounts = Some(ServiceAccountTokens::from_pem(
        &opts.pki.service_account_key,
        issuer,
    )?);
    api.root_ca = Some(opts.pki.ca.cert_pem.clone());
    api.cluster_signer =
        crate::pki::mint::Authority::from_pem(&opts.pki.ca.cert_pem, &opts.pki.ca.key_pem).ok();
    if let Ok(mut d) = api.simulated_run.lock() {
        *d = opts.simulated_run;
    }
    let api = Arc::new(api);
    bootstrap::system(&api);
    if opts.demo {
        bootstrap::demo(&api);
    }
    for s in &opts.scenarios {
        bootstrap::load_scenario(&api, s)?;
    }
    let (cfg, verifier) = tls_config(&opts.pki)?;
    let listener = TcpListener::bind(opts.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if let Ok(mut a) = api.server_address.lock() {
        *a = addr.to_string();
    }
    endpoints::kubernetes_service(&api, addr);
    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let identity = opts.control_loops.then(leader_election::identity);
    if let Some(identity) = identity.clone() {
        // Each component stands for its Lease, as it would beside other replicas on one store.
        let profiles = opts.scheduler_profiles.clone();
        let timings = leader_election::Timings::default();
        let grace = limits.node_monitor_grace_period;
        let hpa_sync = limits.horizontal_pod_autoscaler_sync_period;
        let renew = kubelet_node::renew_interval(grace);
        tasks.spawn(leader_election::lead(
            api.clone(),
            leader_election::KUBE_SCHEDULER,
            identity.clone(),
            timings,
            stop_rx.clone(),
            move |api, stop| on_own_thread(scheduler_loop::run(api, stop, profiles.clone())),
        ));
        tasks.spawn(leader_election::lead(
            api.clone(),
            leader_election::SIMULATED_KUBELETS,
            identity.clone(),
            timings,
            stop_rx.clone(),
            move |api, stop| on_own_thread(kubelet::run(api, renew, stop)),
        ));
        // kube-controller-manager's controllers, each a loop of its own (controllers/manager.rs).
        tasks.spawn(leader_election::lead(
            api.clone(),
            leader_election::KUBE_CONTROLLER_MANAGER,
            identity,
            timings,
            stop_rx.clone(),
            move |api, stop| manager::run(api, stop, grace, hpa_sync),
        ));
    }
    let grace = limits.shutdown_grace_period;
    let shared = Arc::new(Shared {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(cfg)),
        verifier,
        api: api.clone(),
        limits,
    });
    tasks.spawn(accept_loop(listener, shared, stop_rx));
    Ok(Running {
        addr,
        api,
        identity,
        stop,
        tasks,
        grace,
    })
}

/// What every connection task needs.
struct Shared {
    acceptor: tokio_rustls::TlsAcceptor,
    verifier: Arc<DeferredClientVerifier>,
    api: Arc<Api>,
    limits: Limits,
}

/// Resolves once the server is stopping (also when it already was).
async fn stopping(stop: &mut watch::Receiver<bool>) {
    // An error means the sender is gone: the server is going away as well.
    let _ = stop.wait_for(|s| *s).await;
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let cap = match shared.limits.max_connections {
        0 => Semaphore::MAX_PERMITS,
        n => n,
    };
    let slots = Arc::new(Semaphore::new(cap));
    let mut conns = JoinSet::new();
    // Go's net/http back-off: 5 ms doubling to 1 s while accept() fails (EMFILE and the like),
    // instead of spinning on an error that will not clear by itself.
    let mut backoff = Duration::ZERO;
    'serve: loop {
        // At the cap, wait for a connection to end before accepting: new clients wait in the
        // kernel's listen backlog meanwhile.
        let slot = tokio::select! {
            _ = stopping(&mut stop) => break 'serve,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue 'serve,
            s = slots.clone().acquire_owned() => match s {
                Ok(s) => s,
                Err(_) => break 'serve,
            },
        };
        let accepted = loop {
            tokio::select! {
                _ = stopping(&mut stop) => break 'serve,
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
                a = listener.accept() => break a,
            }
        };
        match accepted {
            Ok((tcp, remote)) => {
                backoff = Duration::ZERO;
                let _ = tcp.set_nodelay(true);
                conns.spawn(serve_conn(tcp, remote, shared.clone(), stop.clone(), slot));
            }
            Err(_) => {
                drop(slot);
                backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                tokio::select! {
                    _ = stopping(&mut stop) => break 'serve,
                    _ = tokio::time::sleep(backoff) => {}
                }
            }
        }
    }
    // Stop accepting: new connections are refused from here on.
    drop(listener);
    let drain = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(shared.limits.shutdown_grace_period, drain)
        .await
        .is_err()
    {
        conns.abort_all();
    }
}

async fn serve_conn(
    tcp: tokio::net::TcpStream,
    remote: SocketAddr,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    // A handshake that stalls or fails is the client's problem: drop it quietly.
    let handshake = shared.acceptor.accept(Linger::new(tcp));
    let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await else {
        return;
    };
    let conn = Arc::new(ConnInfo::from_tls(
        tls.get_ref().1,
        Some(remote),
        &shared.verifier,
    ));
    let activity = Activity::new();
    let svc = {
        let (api, activity, stop) = (shared.api.clone(), activity.clone(), stop.clone());
        let request_timeout = shared.limits.request_timeout;
        service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
            let busy = activity.begin();
            let req = req.map(|b| TimedBody::new(b, request_timeout));
            let (api, conn, mut stop) = (api.clone(), conn.clone(), stop.clone());
            async move {
                let resp = chain::handle(&api, &conn, req).await;
                // A streamed answer (a watch) keeps the request in flight until it ends, and
                // ends cleanly when the server stops; a whole one is done once handed over.
                let resp = resp.map(|b| {
                    if b.is_stream() {
                        b.hold(busy)
                            .end_when(async move { stopping(&mut stop).await })
                    } else {
                        drop(busy);
                        b
                    }
                });
                Ok::<_, std::convert::Infallible>(resp)
            }
        })
    };
    let limits = &shared.limits;
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    // A client that trickles its request head (slowloris) is closed like kube-apiserver's
    // Go server closes it; hyper enforces the timeout only with a timer.
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(non_zero(limits.read_header_timeout))
        .max_buf_size(
            limits
                .max_header_bytes
                .max(crate::apiserver::transport::limits::MIN_MAX_HEADER_BYTES),
        );
    // Larger HTTP/2 windows: list responses are ~150 KiB and informers multiplex many watches.
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(non_zero(limits.http2_keepalive_interval))
        .keep_alive_timeout(limits.http2_keepalive_interval.max(Duration::from_secs(1)))
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
        .initial_stream_window_size(4 * 1024 * 1024)
        .initial_connection_window_size(16 * 1024 * 1024)
        .max_concurrent_streams(1000);
    let serving = builder.serve_connection(TokioIo::new(tls), svc);
    tokio::pin!(serving);
    let idle = async {
        match limits.idle_timeout {
            Duration::ZERO => std::future::pending().await,
            t => activity.idle_for(t).await,
        }
    };
    tokio::select! {
        _ = serving.as_mut() => return,
        _ = stopping(&mut stop) => {}
        _ = idle => {}
    }
    // HTTP/1.1: close once the request in flight (if any) is answered; HTTP/2: GOAWAY, then
    // close once the open streams are done. Bounded: a peer that stops reading must not keep
    // the connection forever.
    serving.as_mut().graceful_shutdown();
    let bound = limits.shutdown_grace_period.max(Duration::from_secs(1));
    let _ = tokio::time::timeout(bound, serving).await;
}

fn non_zero(d: Duration) -> Option<Duration> {
    (!d.is_zero()).then_some(d)
}

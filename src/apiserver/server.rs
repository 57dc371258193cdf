//! The HTTPS server: accept TCP, complete TLS (client certificate requested, verdict deferred),
//! learn the connection's facts once, then serve HTTP/1.1 or HTTP/2 (ALPN) through `api::handle`.
//! Also starts the control loops (scheduler, kubelets) and stops everything on shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls_pki_types::pem::PemObject;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::api::{self, Api};
use super::audit::AuditLog;
use super::authn::TokenFile;
use super::pki::ClusterPki;
use super::tls::{self, ConnInfo, DeferredClientVerifier};
use super::{bootstrap, kubelet, scheduler_loop};

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
}

/// A running server; dropping it without `shutdown` leaves the tasks to the runtime.
pub struct Running {
    pub addr: SocketAddr,
    pub api: Arc<Api>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl Running {
    /// Stop accepting, give in-flight requests a moment, then end every connection and loop.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(2), drain)
            .await
            .is_err()
        {
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

/// Bind, bootstrap the cluster state, and start serving. Returns once accepting.
pub async fn start(opts: ServeOptions) -> Result<Running, String> {
    let audit = match &opts.audit_log {
        Some(p) => Some(AuditLog::open(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };
    let api = Arc::new(Api::new(opts.tokens.clone(), audit));
    bootstrap::system(&api);
    if opts.demo {
        bootstrap::demo(&api);
    }
    for s in &opts.scenarios {
        bootstrap::load_scenario(&api, s)?;
    }
    let (cfg, verifier) = tls_config(&opts.pki)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = TcpListener::bind(opts.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if let Ok(mut a) = api.server_address.lock() {
        *a = addr.to_string();
    }
    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    if opts.control_loops {
        tasks.spawn(scheduler_loop::run(api.clone(), stop_rx.clone()));
        tasks.spawn(kubelet::run(api.clone(), stop_rx.clone()));
    }
    let accept_api = api.clone();
    tasks.spawn(accept_loop(
        listener, acceptor, verifier, accept_api, stop_rx,
    ));
    Ok(Running {
        addr,
        api,
        stop,
        tasks,
    })
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    verifier: Arc<DeferredClientVerifier>,
    api: Arc<Api>,
    mut stop: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => {
                let Ok((tcp, remote)) = accepted else { continue };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let verifier = verifier.clone();
                let api = api.clone();
                let stop = stop.clone();
                conns.spawn(serve_conn(tcp, remote, acceptor, verifier, api, stop));
            }
        }
    }
    // Give connections a moment to finish, then cut the rest (long watches included).
    let drain = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_millis(500), drain)
        .await
        .is_err()
    {
        conns.abort_all();
    }
}

async fn serve_conn(
    tcp: tokio::net::TcpStream,
    remote: SocketAddr,
    acceptor: tokio_rustls::TlsAcceptor,
    verifier: Arc<DeferredClientVerifier>,
    api: Arc<Api>,
    mut stop: watch::Receiver<bool>,
) {
    // A handshake that stalls or fails is the client's problem: drop it quietly.
    let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
    else {
        return;
    };
    let conn = Arc::new(ConnInfo::from_tls(tls.get_ref().1, Some(remote), &verifier));
    let svc = service_fn(move |req| {
        let api = api.clone();
        let conn = conn.clone();
        async move { Ok::<_, std::convert::Infallible>(api::handle(&api, &conn, req).await) }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    // Larger HTTP/2 windows: list responses are ~150 KiB and informers multiplex many watches.
    // A client that trickles its request head (slowloris) is closed like kube-apiserver's
    // Go server closes it; hyper enforces the timeout only with a timer.
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(std::time::Duration::from_secs(30));
    builder
        .http2()
        .initial_stream_window_size(4 * 1024 * 1024)
        .initial_connection_window_size(16 * 1024 * 1024)
        .max_concurrent_streams(1000);
    let serving = builder.serve_connection(TokioIo::new(tls), svc);
    tokio::pin!(serving);
    tokio::select! {
        _ = serving.as_mut() => {}
        _ = stop.changed() => {}
    }
}

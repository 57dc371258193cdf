//! What a handler runs with: the server's shared state ([`Api`]), the request in hand ([`Ctx`]) and
//! what it answers ([`Reply`]) before encoding. Every stage may import this; it imports only the
//! types of the state it holds (store, authorizer, tokens, audit log, limiter), never a handler.

use std::sync::{Arc, Mutex};

use hyper::body::Bytes;
use serde_json::Value;

use crate::apiserver::codec::body::{ApiBody, Format};
use crate::apiserver::filters::audit::AuditLog;
use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::filters::authz::Authorizer;
use crate::apiserver::filters::inflight::Limiter;
use crate::apiserver::filters::sa_token::ServiceAccountTokens;
use crate::apiserver::request::info::RequestInfo;
use crate::apiserver::request::trace::{RequestTrace, TraceLog};
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::container_logs::ContainerLogs;
use crate::apiserver::storage::event_correlator::EventCorrelator;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::list_cache::ListCache;
use crate::apiserver::storage::service_alloc::ServiceAllocator;
use crate::apiserver::storage::store::{Store, Write};
use crate::apiserver::transport::limits::Limits;

/// How long a simulated Job container runs unless `serve --simulated-run-seconds` says.
pub const DEFAULT_SIMULATED_RUN: std::time::Duration = std::time::Duration::from_secs(3);

/// The server's state, shared by every connection and by the control loops.
pub struct Api {
    /// The storage backend every handler and control loop reads and writes through.
    pub(crate) store: Box<dyn Storage>,
    pub traces: TraceLog,
    pub(crate) authorizer: Authorizer,
    pub(crate) tokens: TokenFile,
    /// The service-account token signer and authenticator (`None` only if no key could be made).
    pub(crate) service_accounts: Option<ServiceAccountTokens>,
    /// The cluster CA's certificate (PEM), which the root CA publisher puts in every
    /// namespace's `kube-root-ca.crt` (`None` only for a server made without a PKI).
    pub(crate) root_ca: Option<String>,
    /// The cluster CA with its key: kube-controller-manager's `--cluster-signing-cert-file` and
    /// `--cluster-signing-key-file`, with which the CSR signer issues certificates.
    pub(crate) cluster_signer: Option<crate::pki::mint::Authority>,
    pub(crate) audit: Option<AuditLog>,
    /// `host:port` clients reach us at (for APIVersions' serverAddressByClientCIDRs).
    pub(crate) server_address: Mutex<String>,
    pub limiter: Limiter,
    /// Largest request body accepted (`--max-resource-write-bytes`).
    pub(crate) max_request_body_bytes: usize,
    /// Encoded JSON lists by request, valid while the store revision is unchanged.
    pub(crate) list_cache: ListCache,
    /// Services' ClusterIPs and NodePorts: the ranges, and what creates in flight hold.
    pub(crate) services: ServiceAllocator,
    /// What the simulated kubelets wrote about each container (`pods/log`).
    pub(crate) container_logs: ContainerLogs,
    /// client-go's event correlator, shared by the kubelets and controllers that record Events.
    pub(crate) events: EventCorrelator,
    /// How long a simulated container of a pod that restarts `Never` or `OnFailure` runs
    /// before it exits 0 (`serve --simulated-run-seconds`).
    pub(crate) simulated_run: std::sync::Mutex<std::time::Duration>,
    /// The control-plane components this process runs (`componentstatuses`).
    pub(crate) components: crate::apiserver::request::components::Components,
    /// `apiserver_request_total` and `apiserver_request_duration_seconds` (`/metrics`).
    pub(crate) request_metrics: crate::apiserver::request::metrics::RequestMetrics,
}

impl Api {
    /// The store's latest revision (for tests and benchmarks outside the crate).
    pub fn current_rv(&self) -> u64 {
        self.store.current_rv()
    }

    /// Wakes on every store revision (for tests outside the crate).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.store.changes()
    }

    pub fn new(tokens: TokenFile, audit: Option<AuditLog>) -> Self {
        Api::with_limits(tokens, audit, &Limits::default())
    }

    /// The state with the request-level limits of `limits` (the connection-level ones are the
    /// server's).
    pub(crate) fn with_limits(tokens: TokenFile, audit: Option<AuditLog>, limits: &Limits) -> Self {
        Api::with_store(tokens, audit, limits, Box::new(Store::new(limits.history)))
    }

    /// The state on a given storage backend (etcd, or the in-memory store).
    pub(crate) fn with_store(
        tokens: TokenFile,
        audit: Option<AuditLog>,
        limits: &Limits,
        store: Box<dyn Storage>,
    ) -> Self {
        let mut limiter = Limiter::new(
            limits.max_requests_inflight,
            limits.max_mutating_requests_inflight,
        );
        limiter.max_watches = limits.max_watches;
        Api {
            store,
            traces: TraceLog::default(),
            authorizer: Authorizer::default(),
            tokens,
            service_accounts: ServiceAccountTokens::ephemeral().ok(),
            root_ca: None,
            cluster_signer: None,
            audit,
            server_address: Mutex::new(String::new()),
            limiter,
            max_request_body_bytes: limits.max_request_body_bytes,
            list_cache: ListCache::default(),
            services: ServiceAllocator::new(limits.services),
            container_logs: ContainerLogs::default(),
            events: EventCorrelator::default(),
            simulated_run: std::sync::Mutex::new(DEFAULT_SIMULATED_RUN),
            components: Default::default(),
            request_metrics: Default::default(),
        }
    }
}

/// What a handler produces before encoding.
pub(crate) enum Reply {
    /// An object or list, as JSON.
    Object { code: u16, value: Value },
    /// Pre-encoded bytes.
    Raw {
        code: u16,
        content_type: &'static str,
        body: Bytes,
    },
    /// A watch stream.
    Stream {
        content_type: &'static str,
        body: ApiBody,
    },
}

/// Everything a handler needs about the request.
pub(crate) struct Ctx<'a> {
    pub(crate) api: &'a Arc<Api>,
    pub(crate) info: &'a RequestInfo,
    pub(crate) user: &'a UserInfo,
    pub(crate) body: Bytes,
    pub(crate) content_type: String,
    pub(crate) accept: Option<String>,
    pub(crate) user_agent: String,
    pub(crate) format: Format,
    pub(crate) trace: &'a mut RequestTrace,
    pub(crate) warnings: Vec<String>,
    /// Whether this request's writes are kept: set by the router's `dryRun` gate before any
    /// handler runs, and passed to every store write the handlers make.
    pub(crate) write: Write,
}

//! What view 3 shows, gathered in one go off the UI thread: a real recorded TLS handshake with
//! the context's server, then the three requests a client makes to learn where it is and who it
//! is (`GET /version`, `GET /api`, a SelfSubjectReview). No terminal here; the ladder is built
//! from this record by `ladder`.

use reqwest::Method;

use crate::client::HandshakeReport;
use crate::client::http::{ApiClient, ApiResponse, RequestError};
use crate::kubeconfig::ResolvedContext;

/// One HTTP request of the ladder and what came back (or why nothing did).
#[derive(Debug, Clone)]
pub struct HttpStep {
    pub method: &'static str,
    pub path: &'static str,
    pub result: Result<ApiResponse, RequestError>,
}

/// Everything view 3 knows about one connection attempt.
#[derive(Debug, Clone)]
pub struct ConnectionReport {
    pub context: String,
    pub server_url: String,
    /// `Err` when no handshake could even be attempted (unusable URL, unreadable key).
    pub handshake: Result<HandshakeReport, String>,
    /// Empty when the handshake failed: nothing was sent.
    pub requests: Vec<HttpStep>,
}

pub const SELF_SUBJECT_REVIEW: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// The requests of the ladder, in order: where am I, what does it serve, who am I.
const REQUESTS: [(&str, &str); 3] = [
    ("GET", "/version"),
    ("GET", "/api"),
    ("POST", SELF_SUBJECT_REVIEW),
];

/// What the API server asks etcd over HTTP on its client port, after the handshake: its
/// release and its health (the gRPC calls that store objects ride the same connection).
const ETCD_REQUESTS: [(&str, &str); 2] = [("GET", "/version"), ("GET", "/health")];

/// Whom view 3 connects to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The context's API server: where am I, what does it serve, who am I.
    ApiServer,
    /// etcd, as the API server connects to it (`E`): its release and health.
    Etcd,
}

/// The report of a connection that could not even be attempted (no usable context).
pub fn unattempted(context: String, why: String) -> ConnectionReport {
    ConnectionReport {
        context,
        server_url: String::new(),
        handshake: Err(why),
        requests: Vec::new(),
    }
}

/// The handshake with the context's server, then, when it completed, the peer's requests.
pub async fn probe(ctx: &ResolvedContext, peer: Peer) -> ConnectionReport {
    let mut report = ConnectionReport {
        context: ctx.context_name.clone(),
        server_url: ctx.cluster.server.clone(),
        handshake: Err(String::new()),
        requests: Vec::new(),
    };
    let hs = match crate::client::handshake(ctx).await {
        Ok(hs) => hs,
        Err(e) => {
            report.handshake = Err(e.to_string());
            return report;
        }
    };
    let ok = hs.succeeded();
    report.handshake = Ok(hs);
    if !ok {
        return report;
    }
    let requests = match peer {
        Peer::ApiServer => &REQUESTS[..],
        Peer::Etcd => &ETCD_REQUESTS[..],
    };
    let client = match ApiClient::connect(ctx).await {
        Ok(c) => c,
        Err(e) => {
            report.requests.push(HttpStep {
                method: "GET",
                path: requests[0].1,
                result: Err(RequestError(e.to_string(), None)),
            });
            return report;
        }
    };
    for &(method, path) in requests {
        let result = if method == "POST" {
            let body = br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
            client
                .send(
                    Method::POST,
                    path,
                    Some((body.to_vec(), "application/json")),
                )
                .await
        } else {
            client.get(path).await
        };
        report.requests.push(HttpStep {
            method,
            path,
            result,
        });
    }
    report
}

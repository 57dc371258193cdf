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
const ETCD_REQUESTS: [&str; 2] = ["/version", "/health"];

/// View 3 on the API server's chain to etcd: the same handshake, then etcd's own endpoints.
pub async fn probe_etcd(ctx: &ResolvedContext) -> ConnectionReport {
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
    match ApiClient::connect(ctx).await {
        Ok(client) => {
            for path in ETCD_REQUESTS {
                let result = client.get(path).await;
                report.requests.push(HttpStep {
                    method: "GET",
                    path,
                    result,
                });
            }
        }
        Err(e) => report.requests.push(HttpStep {
            method: "GET",
            path: ETCD_REQUESTS[0],
            result: Err(RequestError(e.to_string(), None)),
        }),
    }
    report
}

pub async fn probe(ctx: &ResolvedContext) -> ConnectionReport {
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
    let client = match ApiClient::connect(ctx).await {
        Ok(c) => c,
        Err(e) => {
            report.requests.push(HttpStep {
                method: "GET",
                path: "/version",
                result: Err(RequestError(e.to_string(), None)),
            });
            return report;
        }
    };
    for (method, path) in REQUESTS {
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

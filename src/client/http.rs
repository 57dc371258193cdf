//! HTTP to the API server over the recorded mTLS configuration, with kubectl's header-based
//! credentials: bearer token (tokenFile re-read per request, so rotation works), exec plugins,
//! basic auth, and impersonation headers.

use std::time::Duration;

use reqwest::Method;

use super::config::build_client_config;
use super::error::ClientError;
use super::exec_cache;
use super::exec_context::{EXEC_TIMEOUT, with_exec_credential};
use super::recorder::Recorder;
use crate::kubeconfig::model::ExecConfig;
use crate::kubeconfig::{ResolvedCluster, ResolvedContext, Secret, Token};

pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// A watch ends after this long at the latest; callers re-establish it from the last resourceVersion.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone)]
enum HeaderAuth {
    None,
    Bearer(Secret<String>),
    BearerFile(std::path::PathBuf),
    Basic {
        user: String,
        password: Option<Secret<String>>,
    },
    /// An exec plugin's token, taken from the process-wide cache at every request so an expired
    /// one is fetched again, and dropped after a 401.
    Exec(Box<(ExecConfig, ResolvedCluster)>),
}

/// A response as the caller needs it for display: status, protocol, type and body.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub status: u16,
    pub http_version: String,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

impl ApiResponse {
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

#[derive(Debug, Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    auth: HeaderAuth,
    impersonate: crate::kubeconfig::Impersonation,
    /// What the TLS handshake of the latest connection revealed.
    pub recorder: Recorder,
    /// Whether credentials came from an exec plugin (for display).
    pub used_exec_plugin: bool,
}

impl ApiClient {
    /// Builds a client for the context; runs its exec plugin first when it has one.
    pub async fn connect(ctx: &ResolvedContext) -> Result<ApiClient, ClientError> {
        let mut auth = match (&ctx.user.token, &ctx.user.username) {
            (Some(Token::Inline(t)), _) => HeaderAuth::Bearer(t.clone()),
            (Some(Token::File { path, .. }), _) => HeaderAuth::BearerFile(path.clone()),
            (None, Some(u)) => HeaderAuth::Basic {
                user: u.clone(),
                password: ctx.user.password.clone(),
            },
            (None, None) => HeaderAuth::None,
        };
        let (ctx, cred) = with_exec_credential(ctx)
            .await
            .map_err(|e| ClientError::Exec {
                user: ctx.user.name.clone(),
                error: e,
            })?;
        let used_exec_plugin = cred.is_some();
        if let (Some(cred), Some(exec_config)) = (&cred, &ctx.user.exec)
            && cred.token.is_some()
        {
            auth = HeaderAuth::Exec(Box::new((exec_config.clone(), ctx.cluster.clone())));
        }
        let (config, recorder) = build_client_config(&ctx)?;
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(config)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(super::handshake::CONNECT_TIMEOUT);
        if let Some(proxy) = &ctx.cluster.proxy_url {
            let p = reqwest::Proxy::all(proxy.as_str()).map_err(|e| ClientError::BadServerUrl {
                url: proxy.clone(),
                reason: format!("proxy-url is not usable: {e}"),
            })?;
            builder = builder.proxy(p);
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Tls(e.to_string()))?;
        Ok(ApiClient {
            http,
            base: ctx.cluster.server.trim_end_matches('/').to_string(),
            auth,
            impersonate: ctx.user.impersonate.clone(),
            recorder,
            used_exec_plugin,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn get(&self, path: &str) -> Result<ApiResponse, RequestError> {
        self.send(Method::GET, path, None).await
    }

    /// A request with this client's credentials and impersonation headers, and the exec
    /// plugin's token when one was used (to drop it after a 401).
    async fn request(
        &self,
        method: Method,
        path: &str,
    ) -> Result<(reqwest::RequestBuilder, Option<String>), RequestError> {
        let mut req = self
            .http
            .request(method, self.url(path))
            .header("Accept", "application/json");
        let mut exec_token = None;
        req = match &self.auth {
            HeaderAuth::Exec(plugin) => {
                let plugin = plugin.clone();
                let cred = tokio::task::spawn_blocking(move || {
                    exec_cache::credential(&plugin.0, &plugin.1, EXEC_TIMEOUT)
                })
                .await
                .map_err(|e| RequestError(format!("exec plugin task: {e}"), None))?
                .map_err(|e| RequestError(e.to_string(), None))?;
                let token = cred.token.map(|t| t.expose().clone()).ok_or_else(|| {
                    RequestError("the exec plugin no longer returns a token".into(), None)
                })?;
                exec_token = Some(token.clone());
                req.bearer_auth(token)
            }
            HeaderAuth::None => req,
            HeaderAuth::Bearer(t) => req.bearer_auth(t.expose()),
            HeaderAuth::BearerFile(path) => {
                let token = std::fs::read_to_string(path).map_err(|e| {
                    RequestError(format!("tokenFile {}: {e}", path.display()), None)
                })?;
                req.bearer_auth(token.trim())
            }
            HeaderAuth::Basic { user, password } => {
                req.basic_auth(user, password.as_ref().map(|p| p.expose().clone()))
            }
        };
        if let Some(user) = &self.impersonate.user {
            req = req.header("Impersonate-User", user);
            if let Some(uid) = &self.impersonate.uid {
                req = req.header("Impersonate-Uid", uid);
            }
            for g in &self.impersonate.groups {
                req = req.header("Impersonate-Group", g);
            }
            for (k, vs) in &self.impersonate.extra {
                for v in vs {
                    req = req.header(format!("Impersonate-Extra-{k}"), v);
                }
            }
        }
        Ok((req, exec_token))
    }

    /// Starts a long-running GET (a watch): the body is read as it arrives.
    pub async fn stream(&self, path: &str) -> Result<reqwest::Response, RequestError> {
        self.request(Method::GET, path)
            .await?
            .0
            .timeout(WATCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| describe_reqwest(&e))
    }

    /// Sends one request; `body` is (bytes, content type).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<(Vec<u8>, &str)>,
    ) -> Result<ApiResponse, RequestError> {
        self.send_with_headers(method, path, body, &[]).await
    }

    /// `send` with extra headers (an `Audit-ID` the caller wants the server's trace under).
    pub async fn send_with_headers(
        &self,
        method: Method,
        path: &str,
        body: Option<(Vec<u8>, &str)>,
        headers: &[(&str, &str)],
    ) -> Result<ApiResponse, RequestError> {
        let mut retried = false;
        let resp = loop {
            let (mut req, exec_token) = self.request(method.clone(), path).await?;
            for (k, v) in headers {
                req = req.header(*k, *v);
            }
            if let Some((bytes, content_type)) = &body {
                req = req
                    .header("Content-Type", *content_type)
                    .body(bytes.clone());
            }
            let resp = req.send().await.map_err(|e| describe_reqwest(&e))?;
            // client-go hands the first 401 back to its caller and refreshes behind it; a tool
            // that wants the request done runs the plugin again and retries once.
            match (&self.auth, exec_token) {
                (HeaderAuth::Exec(plugin), Some(token)) if resp.status() == 401 && !retried => {
                    exec_cache::reject(&plugin.0, &plugin.1, &token);
                    retried = true;
                }
                _ => break resp,
            }
        };
        let status = resp.status().as_u16();
        let http_version = format!("{:?}", resp.version());
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = resp
            .bytes()
            .await
            .map_err(|e| describe_reqwest(&e))?
            .to_vec();
        Ok(ApiResponse {
            status,
            http_version,
            content_type,
            body,
        })
    }
}

/// A request that got no HTTP answer (connection, TLS or timeout).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct RequestError(
    pub String,
    /// The TLS alert the server ended the connection with, if that is what happened (with TLS
    /// 1.3 a refused client certificate surfaces here, after the handshake).
    pub Option<rustls::AlertDescription>,
);

/// reqwest nests the real cause (a rustls error, a refused connection) several sources deep.
fn describe_reqwest(e: &reqwest::Error) -> RequestError {
    let mut parts = vec![e.to_string()];
    let mut alert = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        // io::Error's source() skips the error it wraps, so look inside it too.
        let tls = s.downcast_ref::<rustls::Error>().or_else(|| {
            s.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(rustls::Error::AlertReceived(a)) = tls {
            alert = Some(*a);
        }
        source = s.source();
    }
    RequestError(parts.join(": "), alert)
}

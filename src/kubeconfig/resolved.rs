//! The result of resolving one context: everything a client needs, with inline data decoded
//! and referenced files read, and each piece remembering where it came from.

use std::fmt;
use std::path::PathBuf;

use super::model::{ExecConfig, ProviderConfig};
use super::secret::Secret;

/// Where a piece of credential material came from, so every message can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The kubeconfig file that defined the entry.
    pub kubeconfig: PathBuf,
    /// `cluster` or `user`.
    pub entry_kind: &'static str,
    /// The name of the cluster or user entry.
    pub entry_name: String,
    /// The kubeconfig field, e.g. `client-certificate-data`.
    pub field: &'static str,
    /// For file references: the resolved absolute path that was read.
    pub file: Option<PathBuf>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} '{}' in {}: {}",
            self.entry_kind,
            self.entry_name,
            self.kubeconfig.display(),
            self.field
        )?;
        if let Some(file) = &self.file {
            write!(f, " ({})", file.display())?;
        }
        Ok(())
    }
}

/// Bytes of a certificate bundle or key as kubectl would hand them to TLS (normally PEM text),
/// after base64 decoding (`*-data`) or reading the referenced file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Material {
    pub origin: Origin,
    pub bytes: Vec<u8>,
}

/// A warning found while resolving (not fatal): e.g. both `-data` and a file set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveWarning {
    /// Stable kebab-case id, reused as a check id (e.g. `data-and-file-both-set`).
    pub id: &'static str,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct ResolvedCluster {
    pub name: String,
    pub source: PathBuf,
    pub server: String,
    pub tls_server_name: Option<String>,
    pub insecure_skip_tls_verify: bool,
    pub proxy_url: Option<String>,
    pub disable_compression: bool,
    /// The CA bundle the client trusts for the server (`certificate-authority[-data]`);
    /// `None` means the system roots.
    pub certificate_authority: Option<Material>,
    /// The `client.authentication.k8s.io/exec` extension, handed to exec plugins.
    pub exec_extension: Option<serde_yaml::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Inline(Secret<String>),
    /// `tokenFile`: the resolved path and its contents when it was read.
    File {
        path: PathBuf,
        value: Secret<String>,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Impersonation {
    pub user: Option<String>,
    pub uid: Option<String>,
    pub groups: Vec<String>,
    pub extra: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Clone)]
pub struct ResolvedUser {
    pub name: String,
    pub source: PathBuf,
    pub client_certificate: Option<Material>,
    pub client_key: Option<Secret<Material>>,
    pub token: Option<Token>,
    pub username: Option<String>,
    pub password: Option<Secret<String>>,
    /// The exec plugin as configured; `command` already resolved against the kubeconfig's
    /// directory when it contains a path separator.
    pub exec: Option<ExecConfig>,
    pub auth_provider: Option<ProviderConfig>,
    pub impersonate: Impersonation,
}

/// How this user authenticates, in the contract's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    ClientCertificate,
    Token,
    Exec,
    Basic,
    None,
}

impl AuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientCertificate => "client-certificate",
            AuthMethod::Token => "token",
            AuthMethod::Exec => "exec",
            AuthMethod::Basic => "basic",
            AuthMethod::None => "none",
        }
    }
}

impl ResolvedUser {
    /// The method client-go would use first: a client certificate is presented in the TLS
    /// handshake whatever else is set; among the header methods a token wins over exec and basic.
    pub fn auth_method(&self) -> AuthMethod {
        if self.client_certificate.is_some() {
            AuthMethod::ClientCertificate
        } else if self.token.is_some() {
            AuthMethod::Token
        } else if self.exec.is_some() {
            AuthMethod::Exec
        } else if self.username.is_some() || self.password.is_some() {
            AuthMethod::Basic
        } else {
            AuthMethod::None
        }
    }
}

/// One context, resolved: the only way to get one is `Kubeconfig::resolve`.
#[derive(Debug, Clone)]
pub struct ResolvedContext {
    /// The kubeconfig files that were loaded, in precedence order.
    pub kubeconfig_files: Vec<PathBuf>,
    pub context_name: String,
    /// The file that defined the context.
    pub context_source: PathBuf,
    /// The context's namespace, `default` when it names none.
    pub namespace: String,
    pub cluster: ResolvedCluster,
    pub user: ResolvedUser,
    pub warnings: Vec<ResolveWarning>,
}

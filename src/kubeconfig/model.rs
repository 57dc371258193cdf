//! The kubeconfig file format (clientcmd/api/v1), as serde types.
//! Unknown fields are ignored, as client-go ignores them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub struct Config {
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferences: Option<serde_yaml::Value>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub users: Vec<NamedAuthInfo>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<serde_yaml::Value>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct NamedCluster {
    pub name: String,
    #[serde(default)]
    pub cluster: Cluster,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub struct Cluster {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_skip_tls_verify: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authority: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authority_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_compression: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<NamedExtension>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct NamedExtension {
    pub name: String,
    #[serde(default)]
    pub extension: serde_yaml::Value,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct NamedAuthInfo {
    pub name: String,
    #[serde(default)]
    pub user: AuthInfo,
}

/// A kubeconfig user. `Debug` is hand-written so secrets never reach a log.
#[derive(Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub struct AuthInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_certificate_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key_data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(rename = "tokenFile", default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub impersonate: Option<String>,
    #[serde(rename = "as-uid", default, skip_serializing_if = "Option::is_none")]
    pub impersonate_uid: Option<String>,
    #[serde(rename = "as-groups", default, skip_serializing_if = "Option::is_none")]
    pub impersonate_groups: Option<Vec<String>>,
    #[serde(
        rename = "as-user-extra",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub impersonate_user_extra: Option<std::collections::BTreeMap<String, Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_provider: Option<ProviderConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<NamedExtension>>,
}

impl std::fmt::Debug for AuthInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |o: &Option<String>| o.as_ref().map(|_| "<redacted>");
        f.debug_struct("AuthInfo")
            .field("client_certificate", &self.client_certificate)
            .field(
                "client_certificate_data",
                &self.client_certificate_data.as_ref().map(|d| d.len()),
            )
            .field("client_key", &self.client_key)
            .field("client_key_data", &shown(&self.client_key_data))
            .field("token", &shown(&self.token))
            .field("token_file", &self.token_file)
            .field("username", &self.username)
            .field("password", &shown(&self.password))
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    /// Provider settings; may hold refresh tokens, so never printed whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    #[serde(default)]
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<ExecEnvVar>>,
    #[serde(default)]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provide_cluster_info: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive_mode: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct ExecEnvVar {
    pub name: String,
    #[serde(default)]
    pub value: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct NamedContext {
    pub name: String,
    #[serde(default)]
    pub context: Context,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Context {
    #[serde(default)]
    pub cluster: String,
    #[serde(default)]
    pub user: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<NamedExtension>>,
}

/// kubectl writes `clusters: null` for an empty list; accept it.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

//! Resolving one context into credential material, as client-go's clientcmd does before it
//! builds a client: inline data wins over files, relative paths resolve against the file that
//! named them, and everything that cannot be used is an error naming the file and field.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::error::KubeconfigError;
use super::load::io_reason;
use super::merged::Kubeconfig;
use super::model::{AuthInfo, Cluster};
use super::resolved::*;
use super::secret::Secret;

impl Kubeconfig {
    /// Resolves `context` (or `current-context` when `None`).
    pub fn resolve(&self, context: Option<&str>) -> Result<ResolvedContext, KubeconfigError> {
        let name = match context {
            Some(n) => n.to_string(),
            None => match &self.current_context {
                Some(c) => c.value.clone(),
                None => {
                    return Err(KubeconfigError::NoCurrentContext {
                        known: self.context_names(),
                    });
                }
            },
        };
        let ctx = self
            .context(&name)
            .ok_or_else(|| KubeconfigError::UnknownContext {
                name: name.clone(),
                known: self.context_names(),
            })?;
        let broken = |what: String| KubeconfigError::BrokenContext {
            context: name.clone(),
            source_file: ctx.source.clone(),
            what,
        };
        if ctx.value.context.cluster.is_empty() {
            return Err(broken("names no cluster".into()));
        }
        let cluster = self.cluster(&ctx.value.context.cluster).ok_or_else(|| {
            broken(format!(
                "names cluster '{}', which is not defined in any kubeconfig file",
                ctx.value.context.cluster
            ))
        })?;
        let mut warnings = Vec::new();
        let resolved_cluster = resolve_cluster(
            &cluster.value.name,
            &cluster.source,
            &cluster.value.cluster,
            &mut warnings,
        )?;
        let resolved_user = if ctx.value.context.user.is_empty() {
            empty_user(&ctx.source)
        } else {
            let user = self.user(&ctx.value.context.user).ok_or_else(|| {
                broken(format!(
                    "names user '{}', which is not defined in any kubeconfig file",
                    ctx.value.context.user
                ))
            })?;
            resolve_user(
                &user.value.name,
                &user.source,
                &user.value.user,
                &mut warnings,
            )?
        };
        Ok(ResolvedContext {
            kubeconfig_files: self.loaded_files(),
            context_name: name.clone(),
            context_source: ctx.source.clone(),
            namespace: ctx
                .value
                .context
                .namespace
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "default".into()),
            cluster: resolved_cluster,
            user: resolved_user,
            warnings,
        })
    }
}

fn empty_user(source: &Path) -> ResolvedUser {
    ResolvedUser {
        name: String::new(),
        source: source.to_path_buf(),
        client_certificate: None,
        client_key: None,
        token: None,
        username: None,
        password: None,
        exec: None,
        auth_provider: None,
        impersonate: Impersonation::default(),
    }
}

/// Names one entry of a kubeconfig file, for errors and origins.
struct Entry<'a> {
    kind: &'static str,
    name: &'a str,
    source: &'a Path,
}

impl Entry<'_> {
    fn error(&self, field: &'static str, problem: impl Into<String>) -> KubeconfigError {
        KubeconfigError::BadField {
            source_file: self.source.to_path_buf(),
            entry_kind: self.kind,
            entry_name: self.name.to_string(),
            field,
            problem: problem.into(),
        }
    }

    fn origin(&self, field: &'static str, file: Option<PathBuf>) -> Origin {
        Origin {
            kubeconfig: self.source.to_path_buf(),
            entry_kind: self.kind,
            entry_name: self.name.to_string(),
            field,
            file,
        }
    }

    /// A path as kubectl resolves it: relative to the directory of the file that named it.
    fn path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.source.parent().unwrap_or(Path::new(".")).join(p)
        }
    }

    /// `X-data` (base64) or `X` (a file), data winning as in client-go.
    fn material(
        &self,
        data_field: &'static str,
        data: Option<&String>,
        file_field: &'static str,
        file: Option<&String>,
        warnings: &mut Vec<ResolveWarning>,
    ) -> Result<Option<Material>, KubeconfigError> {
        let data = data.filter(|d| !d.is_empty());
        let file = file.filter(|f| !f.is_empty());
        if data.is_some() && file.is_some() {
            warnings.push(ResolveWarning {
                id: "data-and-file-both-set",
                message: format!(
                    "{} '{}' in {}: both {data_field} and {file_field} are set; {data_field} is used",
                    self.kind,
                    self.name,
                    self.source.display()
                ),
            });
        }
        if let Some(d) = data {
            let bytes = decode_base64(d)
                .map_err(|e| self.error(data_field, format!("is not valid base64: {e}")))?;
            if bytes.is_empty() {
                return Err(self.error(data_field, "decodes to nothing"));
            }
            return Ok(Some(Material {
                origin: self.origin(data_field, None),
                bytes,
            }));
        }
        if let Some(f) = file {
            let path = self.path(f);
            let bytes = read_bounded(&path)
                .map_err(|e| self.error(file_field, format!("{}: {e}", path.display())))?;
            return Ok(Some(Material {
                origin: self.origin(file_field, Some(path)),
                bytes,
            }));
        }
        Ok(None)
    }
}

/// The largest certificate bundle, key or token file kexplore reads. Real ones are a few KiB;
/// the cap keeps a kubeconfig that names `/dev/zero` or a huge file from exhausting memory.
pub const MAX_REFERENCED_FILE: u64 = 4 * 1024 * 1024;

/// Reads a referenced file: a regular file (not a FIFO or device that could block forever)
/// of at most `MAX_REFERENCED_FILE` bytes.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path).map_err(|e| io_reason(&e))?;
    if meta.is_dir() {
        return Err("is a directory".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_REFERENCED_FILE {
        return Err(format!(
            "is {} bytes, more than the {} a certificate, key or token file can be",
            meta.len(),
            MAX_REFERENCED_FILE
        ));
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_REFERENCED_FILE + 1).read_to_end(&mut buf))
        .map_err(|e| io_reason(&e))?;
    if buf.len() as u64 > MAX_REFERENCED_FILE {
        return Err("grew past the size limit while being read".into());
    }
    Ok(buf)
}

/// Go's `base64.StdEncoding` as used for `[]byte` fields: standard alphabet, padded;
/// line breaks are tolerated because people paste wrapped base64.
pub fn decode_base64(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let compact: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(compact)
}

fn resolve_cluster(
    name: &str,
    source: &Path,
    c: &Cluster,
    warnings: &mut Vec<ResolveWarning>,
) -> Result<ResolvedCluster, KubeconfigError> {
    let entry = Entry {
        kind: "cluster",
        name,
        source,
    };
    let server = c
        .server
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| entry.error("server", "is not set"))?;
    let certificate_authority = entry.material(
        "certificate-authority-data",
        c.certificate_authority_data.as_ref(),
        "certificate-authority",
        c.certificate_authority.as_ref(),
        warnings,
    )?;
    let exec_extension = c
        .extensions
        .iter()
        .flatten()
        .find(|e| e.name == "client.authentication.k8s.io/exec")
        .map(|e| e.extension.clone());
    Ok(ResolvedCluster {
        name: name.to_string(),
        source: source.to_path_buf(),
        server,
        tls_server_name: c.tls_server_name.clone().filter(|s| !s.is_empty()),
        insecure_skip_tls_verify: c.insecure_skip_tls_verify.unwrap_or(false),
        proxy_url: c.proxy_url.clone().filter(|s| !s.is_empty()),
        disable_compression: c.disable_compression.unwrap_or(false),
        certificate_authority,
        exec_extension,
    })
}

fn resolve_user(
    name: &str,
    source: &Path,
    u: &AuthInfo,
    warnings: &mut Vec<ResolveWarning>,
) -> Result<ResolvedUser, KubeconfigError> {
    let entry = Entry {
        kind: "user",
        name,
        source,
    };
    let client_certificate = entry.material(
        "client-certificate-data",
        u.client_certificate_data.as_ref(),
        "client-certificate",
        u.client_certificate.as_ref(),
        warnings,
    )?;
    let client_key = entry.material(
        "client-key-data",
        u.client_key_data.as_ref(),
        "client-key",
        u.client_key.as_ref(),
        warnings,
    )?;
    match (&client_certificate, &client_key) {
        (Some(_), None) => {
            return Err(entry.error(
                "client-key-data",
                "is missing: client-key-data or client-key must be set to use the client certificate",
            ));
        }
        (None, Some(_)) => {
            return Err(entry.error(
                "client-certificate-data",
                "is missing: client-certificate-data or client-certificate must be set to use the client key",
            ));
        }
        _ => {}
    }

    let token = match (
        u.token.as_ref().filter(|t| !t.is_empty()),
        u.token_file.as_ref().filter(|t| !t.is_empty()),
    ) {
        (Some(t), _) => Some(Token::Inline(Secret::new(t.clone()))),
        (None, Some(f)) => {
            let path = entry.path(f);
            let bytes = read_bounded(&path)
                .map_err(|e| entry.error("tokenFile", format!("{}: {e}", path.display())))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                entry.error("tokenFile", format!("{}: not UTF-8 text", path.display()))
            })?;
            Some(Token::File {
                path,
                value: Secret::new(text.trim().to_string()),
            })
        }
        (None, None) => None,
    };
    let has_basic = u.username.as_ref().is_some_and(|s| !s.is_empty())
        || u.password.as_ref().is_some_and(|s| !s.is_empty());
    if token.is_some() && has_basic {
        warnings.push(ResolveWarning {
            id: "more-than-one-auth-method",
            message: format!(
                "user '{name}' in {}: more than one authentication method found: token and username/password",
                source.display()
            ),
        });
    }

    let exec = u.exec.clone().map(|mut exec| {
        // Bare names go through $PATH; names with a separator are files relative to the kubeconfig.
        if exec.command.contains(std::path::MAIN_SEPARATOR) || exec.command.contains('/') {
            exec.command = entry.path(&exec.command).display().to_string();
        }
        exec
    });
    if let Some(exec) = &exec {
        exec_warnings(&entry, exec, warnings);
        if u.auth_provider.is_some() {
            warnings.push(ResolveWarning {
                id: "exec-and-auth-provider",
                message: format!(
                    "user '{name}' in {}: exec and auth-provider are both set, which kubectl rejects",
                    source.display()
                ),
            });
        }
    }
    let impersonate = Impersonation {
        user: u.impersonate.clone().filter(|s| !s.is_empty()),
        uid: u.impersonate_uid.clone().filter(|s| !s.is_empty()),
        groups: u.impersonate_groups.clone().unwrap_or_default(),
        extra: u
            .impersonate_user_extra
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect(),
    };
    if impersonate.user.is_none()
        && (impersonate.uid.is_some()
            || !impersonate.groups.is_empty()
            || !impersonate.extra.is_empty())
    {
        warnings.push(ResolveWarning {
            id: "impersonation-without-user",
            message: format!(
                "user '{name}' in {}: as-uid, as-groups or as-user-extra are set without as, which kubectl rejects",
                source.display()
            ),
        });
    }
    Ok(ResolvedUser {
        name: name.to_string(),
        source: source.to_path_buf(),
        client_certificate,
        client_key: client_key.map(Secret::new),
        token,
        username: u.username.clone().filter(|s| !s.is_empty()),
        password: u
            .password
            .clone()
            .filter(|s| !s.is_empty())
            .map(Secret::new),
        exec,
        auth_provider: u.auth_provider.clone(),
        impersonate,
    })
}

fn exec_warnings(
    entry: &Entry<'_>,
    exec: &super::model::ExecConfig,
    warnings: &mut Vec<ResolveWarning>,
) {
    let at = format!("user '{}' in {}", entry.name, entry.source.display());
    match exec.api_version.as_str() {
        "client.authentication.k8s.io/v1" => {
            if exec.interactive_mode.as_deref().unwrap_or("").is_empty() {
                warnings.push(ResolveWarning {
                    id: "exec-interactive-mode-missing",
                    message: format!("{at}: exec.interactiveMode must be set for client.authentication.k8s.io/v1"),
                });
            }
        }
        "client.authentication.k8s.io/v1beta1" => {}
        other => warnings.push(ResolveWarning {
            id: "exec-api-version-unsupported",
            message: format!(
                "{at}: exec.apiVersion '{other}' is not supported; use client.authentication.k8s.io/v1 or v1beta1"
            ),
        }),
    }
    if let Some(mode) = exec.interactive_mode.as_deref()
        && !matches!(mode, "" | "Never" | "IfAvailable" | "Always")
    {
        warnings.push(ResolveWarning {
            id: "exec-interactive-mode-invalid",
            message: format!(
                "{at}: exec.interactiveMode '{mode}' is not one of Never, IfAvailable, Always"
            ),
        });
    }
    if exec.command.is_empty() {
        warnings.push(ResolveWarning {
            id: "exec-command-missing",
            message: format!("{at}: exec.command is empty"),
        });
    }
}

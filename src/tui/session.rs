//! Turning a kubeconfig and a context name into what the views show: the resolved facts and
//! the credential report, each possibly an error kept as plain words so the views can show it
//! in place. No terminal here: the effects runner calls this off the UI thread.

use std::path::Path;
use std::sync::Arc;

use crate::kubeconfig::{Kubeconfig, KubeconfigError, ResolvedContext, Selection};
use crate::pki::{self, CredentialReport};

/// Where the kubeconfig came from, or why there is none.
#[derive(Debug, Clone)]
pub enum Source {
    Loaded {
        kubeconfig: Arc<Kubeconfig>,
        /// How it was selected, e.g. `--kubeconfig x.yaml` or `KUBECONFIG=a:b`.
        selection: String,
    },
    /// Nothing to load: `looked` says where kexplore looked, in kubectl's order.
    NotFound { looked: String },
}

/// The facts of a resolved context the views need (no key material).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFacts {
    pub cluster: String,
    pub server: String,
    pub user: String,
    pub auth: String,
    pub namespace: String,
    pub ca_origin: Option<String>,
    pub cert_origin: Option<String>,
    pub warnings: Vec<String>,
}

/// One context as resolved and inspected; either step may have failed.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedContext {
    /// The context's name; empty when no context could be chosen.
    pub name: String,
    pub resolved: Result<ContextFacts, String>,
    /// `None` when resolving failed, so there was nothing to inspect.
    pub report: Option<Result<CredentialReport, String>>,
}

impl LoadedContext {
    pub fn report(&self) -> Option<&CredentialReport> {
        self.report.as_ref().and_then(|r| r.as_ref().ok())
    }
}

/// Why the TUI cannot start: a bad input the user must fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Kubeconfig(#[from] KubeconfigError),
}

/// Loads the kubeconfig as kubectl selects it. A missing kubeconfig is not an error (the
/// TUI says so in view 1); a malformed one is, and so is an unknown `--context`.
pub fn open(explicit: Option<&Path>, context: Option<&str>) -> Result<Source, StartError> {
    let Some(selection) = Selection::from_environment(explicit) else {
        return Ok(Source::NotFound {
            looked: "--kubeconfig not given, KUBECONFIG not set, and no home directory".into(),
        });
    };
    let kubeconfig = match Kubeconfig::load(&selection) {
        Ok(k) => k,
        Err(KubeconfigError::NotFound(looked)) => return Ok(Source::NotFound { looked }),
        Err(e) => return Err(e.into()),
    };
    if let Some(name) = context
        && kubeconfig.context(name).is_none()
    {
        return Err(KubeconfigError::UnknownContext {
            name: name.to_string(),
            known: kubeconfig.context_names(),
        }
        .into());
    }
    Ok(Source::Loaded {
        kubeconfig: Arc::new(kubeconfig),
        selection: selection.describe(),
    })
}

/// Resolves and inspects one context (`None`: the current context).
pub fn load_context(kubeconfig: &Kubeconfig, name: Option<&str>) -> LoadedContext {
    let shown_name = name
        .map(str::to_string)
        .or_else(|| kubeconfig.current_context.as_ref().map(|c| c.value.clone()))
        .unwrap_or_default();
    match kubeconfig.resolve(name) {
        Ok(ctx) => {
            let report = pki::inspect(&ctx).map_err(|e| e.to_string());
            LoadedContext {
                name: ctx.context_name.clone(),
                resolved: Ok(facts(&ctx)),
                report: Some(report),
            }
        }
        Err(e) => LoadedContext {
            name: shown_name,
            resolved: Err(e.to_string()),
            report: None,
        },
    }
}

fn facts(ctx: &ResolvedContext) -> ContextFacts {
    ContextFacts {
        cluster: ctx.cluster.name.clone(),
        server: ctx.cluster.server.clone(),
        user: ctx.user.name.clone(),
        auth: ctx.user.auth_method().as_str().to_string(),
        namespace: ctx.namespace.clone(),
        ca_origin: ctx
            .cluster
            .certificate_authority
            .as_ref()
            .map(|m| m.origin.to_string()),
        cert_origin: ctx
            .user
            .client_certificate
            .as_ref()
            .map(|m| m.origin.to_string()),
        warnings: ctx.warnings.iter().map(|w| w.message.clone()).collect(),
    }
}

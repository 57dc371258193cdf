//! `kexplore --embedded` (and `kexplore` with no kubeconfig): the embedded API server started
//! in-process on a loopback port with a freshly minted PKI, and a private kubeconfig for it, so
//! every view explores a real mTLS server instead of a pretend one. The TUI then loads that
//! kubeconfig like any other: views 1 and 2 show its certificates, 3–5 talk to it.

use std::path::{Path, PathBuf};

use std::time::Duration;

use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::storage::etcd::EtcdStore;
use crate::apiserver::storage::etcd_local::LocalEtcd;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::storage::store::Store;
use crate::apiserver::transport::limits::Limits;
use crate::apiserver::transport::pki;
use crate::apiserver::transport::server::{self, Running, ServeOptions};

/// A running embedded server and the kubeconfig written for it. `stop` must be called (the
/// TUI does it after restoring the terminal) to end the server and remove the kubeconfig.
pub struct Embedded {
    ca: crate::pki::mint::Minted,
    pub url: String,
    pub kubeconfig: PathBuf,
    dir: PathBuf,
    running: Option<Running>,
    /// `--etcd`: the local etcd the cluster lives in, stopped after the server.
    etcd: Option<LocalEtcd>,
}

impl Embedded {
    /// Starts the server on `rt` and writes its kubeconfig (mode 0600) in a private directory.
    /// With `etcd`, the cluster lives in a local etcd started for it (`serve --etcd`).
    pub fn start(
        rt: &tokio::runtime::Runtime,
        scenarios: &[PathBuf],
        etcd: bool,
        scheduler_profiles: Option<Vec<crate::scheduler::Profile>>,
    ) -> Result<Embedded, String> {
        for s in scenarios {
            if !s.is_file() {
                return Err(format!("--scenario {}: no such file", s.display()));
            }
        }
        let pki = pki::mint()?;
        let opts = ServeOptions {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            pki: pki.clone(),
            tokens: TokenFile::default(),
            audit_log: None,
            demo: true,
            scenarios: scenarios.to_vec(),
            control_loops: true,
            service_account_issuer: None,
            simulated_run: crate::apiserver::request::context::DEFAULT_SIMULATED_RUN,
            scheduler_profiles,
        };
        let limits = Limits::default();
        let local = match etcd {
            true => Some(LocalEtcd::start(None, None, Duration::from_secs(300))?),
            false => None,
        };
        let store: Box<dyn Storage> = match &local {
            Some(l) => Box::new(EtcdStore::connect(l.options.clone(), limits.history)?),
            None => Box::new(Store::new(limits.history)),
        };
        let running = rt.block_on(server::start_on(opts, limits, store))?;
        let url = format!("https://{}", running.addr);
        let dir = private_dir()?;
        let kubeconfig = dir.join("kubeconfig");
        let written = pki::write_atomic_private(&kubeconfig, &pki::kubeconfig_yaml(&pki, &url))
            .and_then(|()| match &local {
                Some(l) => pki::write_atomic_private(
                    &dir.join(ETCD_KUBECONFIG),
                    &etcd_client_kubeconfig(&l.options),
                ),
                None => Ok(()),
            });
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&dir);
            rt.block_on(running.shutdown());
            return Err(e);
        }
        Ok(Embedded {
            ca: pki.ca.clone(),
            url,
            kubeconfig,
            dir,
            running: Some(running),
            etcd: local,
        })
    }

    /// The cluster's CA (certificate and key): lessons mint deliberately broken clients.
    pub fn ca(&self) -> &crate::pki::mint::Minted {
        &self.ca
    }

    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// Ends the server and removes the private kubeconfig.
    pub fn stop(mut self, rt: &tokio::runtime::Runtime) {
        if let Some(r) = self.running.take() {
            rt.block_on(r.shutdown());
        }
        drop(self.etcd.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The API server's own client of etcd, written as a kubeconfig so views 2 and 3 decode,
/// check and connect with it like any other credential.
const ETCD_KUBECONFIG: &str = "apiserver-etcd-client.kubeconfig";
/// Its one context's name.
pub const ETCD_CONTEXT: &str = "kube-apiserver-to-etcd";

/// kube-apiserver's `--etcd-servers`, `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile`
/// as a kubeconfig (file references, so view 1 and 2 show where each piece lives).
fn etcd_client_kubeconfig(o: &crate::apiserver::storage::etcd_config::EtcdOptions) -> String {
    let path = |p: &Option<PathBuf>| {
        serde_json::to_string(&p.as_ref().map(|p| p.display().to_string())).unwrap_or_default()
    };
    let server =
        serde_json::to_string(o.servers.first().map_or("", String::as_str)).unwrap_or_default();
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: {ETCD_CONTEXT}\nclusters:\n- name: etcd\n  cluster:\n    server: {server}\n    certificate-authority: {}\nusers:\n- name: kube-apiserver-etcd-client\n  user:\n    client-certificate: {}\n    client-key: {}\ncontexts:\n- name: {ETCD_CONTEXT}\n  context: {{cluster: etcd, user: kube-apiserver-etcd-client}}\n",
        path(&o.cafile),
        path(&o.certfile),
        path(&o.keyfile),
    )
}

/// What the views say about the embedded cluster kexplore started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedFacts {
    pub url: String,
    /// Its private kubeconfig, removed when kexplore exits.
    pub kubeconfig: PathBuf,
    /// Why it runs instead of a kubeconfig of the user's (`fallback_note`); `None` with
    /// `--embedded`.
    pub instead_of: Option<String>,
    /// With `--etcd`: the API server's etcd client credentials as a kubeconfig.
    pub etcd_kubeconfig: Option<PathBuf>,
}

impl Embedded {
    pub fn facts(&self, instead_of: Option<String>) -> EmbeddedFacts {
        EmbeddedFacts {
            url: self.url.clone(),
            kubeconfig: self.kubeconfig.clone(),
            instead_of,
            etcd_kubeconfig: self.etcd.as_ref().map(|_| self.dir.join(ETCD_KUBECONFIG)),
        }
    }
}

impl EmbeddedFacts {
    /// The line that lets the user's own kubectl talk to this cluster while kexplore runs.
    pub fn kubectl_line(&self) -> String {
        format!(
            "kubectl --kubeconfig {} get pods",
            self.kubeconfig.display()
        )
    }
}

/// Why kexplore started its cluster when no kubeconfig was found: `looked` (where it looked,
/// e.g. a `KUBECONFIG` naming missing files), what kubectl does then (no contexts, so requests
/// go to http://localhost:8080 and are refused), and what kexplore did instead.
pub fn fallback_note(looked: &str) -> String {
    format!(
        "{looked}: kubectl would run with no contexts and try http://localhost:8080. kexplore started its embedded cluster instead."
    )
}

/// Private directories to remove however the process ends: the embedded kubeconfig holds a
/// private key. Normal exits remove them as they go; `remove_private_files` is for the signal
/// handler in main.rs, which exits without unwinding.
static PRIVATE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

pub fn remember_private(dir: &Path) {
    if let Ok(mut v) = PRIVATE.lock() {
        v.push(dir.to_path_buf());
    }
}

pub fn remove_private_files() {
    if let Ok(mut v) = PRIVATE.lock() {
        for d in v.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A directory only this user can read (the kubeconfig in it holds a private key), removed at exit.
fn private_dir() -> Result<PathBuf, String> {
    let dir = crate::scratch::private_dir("tui")?;
    remember_private(&dir);
    Ok(dir)
}

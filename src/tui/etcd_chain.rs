//! The third trust chain (`--embedded --etcd`): the API server's own client of etcd — the
//! etcd CA, the `kube-apiserver-etcd-client` certificate and etcd's server certificate, as
//! kubeadm lays them out. It is loaded from a kubeconfig the embedded cluster writes with
//! kube-apiserver's `--etcd-*` files, so views 2 and 3 decode, check and connect with it by
//! the same code as the user's own credentials.

use std::path::{Path, PathBuf};

use super::connection::ConnState;
use super::session::{self, LoadedContext};
use crate::kubeconfig::Kubeconfig;

/// Which chain views 2 and 3 show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Chain {
    /// The kubeconfig's: client ↔ API server.
    #[default]
    Client,
    /// The API server's: API server → etcd.
    Etcd,
}

#[derive(Debug)]
pub struct EtcdChain {
    pub kubeconfig: PathBuf,
    /// Its one context, resolved and inspected.
    pub context: LoadedContext,
    /// View 3's handshake with etcd.
    pub conn: ConnState,
}

pub fn load(path: &Path, context: &str) -> EtcdChain {
    let context = match Kubeconfig::load_file(path) {
        Ok(kc) => session::load_context(&kc, Some(context)),
        Err(e) => LoadedContext {
            name: context.to_string(),
            resolved: Err(e.to_string()),
            report: None,
        },
    };
    EtcdChain {
        kubeconfig: path.to_path_buf(),
        context,
        conn: ConnState::default(),
    }
}

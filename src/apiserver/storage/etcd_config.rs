//! kube-apiserver's etcd flags as `kexplore serve` takes them, the key layout they imply, and
//! the etcdctl line that reads a key back with the same endpoints and certificates.

use std::path::PathBuf;
use std::time::Duration;

/// The longest one etcd round trip may take before the request gets a 504: well inside the
/// minute a client waits, so a hung etcd answers as a timeout rather than a hung request.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// kube-apiserver's etcd flags, as `kexplore serve` takes them.
#[derive(Debug, Clone)]
pub struct EtcdOptions {
    /// `--etcd-servers`: client URLs of the members.
    pub servers: Vec<String>,
    pub cafile: Option<PathBuf>,
    pub certfile: Option<PathBuf>,
    pub keyfile: Option<PathBuf>,
    /// `--etcd-prefix`, default `/registry`.
    pub prefix: String,
    /// `--etcd-compaction-interval`, default 5m; zero: never compact.
    pub compaction_interval: Duration,
}

impl EtcdOptions {
    /// The etcdctl command that prints `key` (an etcd key) with these endpoints and
    /// certificates, ready to copy.
    pub fn etcdctl_get(&self, key: &str) -> String {
        self.etcdctl(&["get", key])
    }

    /// The etcdctl command running `args` with these endpoints and certificates.
    pub fn etcdctl(&self, args: &[&str]) -> String {
        let mut words = vec![
            "etcdctl".to_string(),
            "--endpoints".into(),
            self.servers.join(","),
        ];
        for (flag, file) in [
            ("--cacert", &self.cafile),
            ("--cert", &self.certfile),
            ("--key", &self.keyfile),
        ] {
            if let Some(f) = file {
                words.push(flag.into());
                words.push(f.display().to_string());
            }
        }
        words.extend(args.iter().map(|a| a.to_string()));
        words
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The etcd key of the server's `key` under `--etcd-prefix`.
    pub fn etcd_key(&self, key: &str) -> String {
        Keys::new(&self.prefix).to_etcd(key)
    }
}

fn shell_word(w: &str) -> String {
    let plain = w
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@".contains(c));
    match plain && !w.is_empty() {
        true => w.to_string(),
        false => format!("'{}'", w.replace('\'', r"'\''")),
    }
}

/// How kube-apiserver's keys map onto etcd's: the server's `/registry/<resource>/…` keys live
/// under `--etcd-prefix` (`path.Join("/", prefix)` plus `/`, as upstream's `prepareKey`).
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    /// The prefix with one trailing slash: `/registry/`.
    root: String,
}

/// The root under which the server's own keys are named, whatever the etcd prefix.
const SERVER_ROOT: &str = "/registry/";

impl Keys {
    pub(crate) fn new(prefix: &str) -> Keys {
        let trimmed = prefix.trim_matches('/');
        let root = match trimmed {
            "" => "/".to_string(),
            p => format!("/{p}/"),
        };
        Keys { root }
    }

    pub(crate) fn root(&self) -> &str {
        &self.root
    }

    /// `/registry/pods/default/app` → the etcd key under the configured prefix.
    pub(crate) fn to_etcd(&self, key: &str) -> String {
        format!(
            "{}{}",
            self.root,
            key.strip_prefix(SERVER_ROOT).unwrap_or(key)
        )
    }

    /// An etcd key back to the server's name for it; None outside the prefix.
    pub(crate) fn server_key(&self, key: &[u8]) -> Option<String> {
        let key = std::str::from_utf8(key).ok()?;
        Some(format!("{SERVER_ROOT}{}", key.strip_prefix(&self.root)?))
    }
}

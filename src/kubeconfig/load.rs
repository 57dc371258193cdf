//! Which kubeconfig files to read, and reading them, as kubectl does: `--kubeconfig` alone,
//! else every entry of `$KUBECONFIG`, else `~/.kube/config`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::error::KubeconfigError;
use super::merged::Kubeconfig;
use super::model::Config;

/// Where the kubeconfig comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// `--kubeconfig PATH`: exactly that file, which must exist.
    Explicit(PathBuf),
    /// `$KUBECONFIG`: a list; missing entries are skipped, the rest merged first-wins.
    EnvList(Vec<PathBuf>),
    /// `~/.kube/config`.
    Home(PathBuf),
}

impl Selection {
    /// Applies kubectl's precedence to the flag, the environment variable and the home directory.
    pub fn choose(
        explicit: Option<&Path>,
        env: Option<OsString>,
        home: Option<PathBuf>,
    ) -> Option<Selection> {
        if let Some(p) = explicit {
            return Some(Selection::Explicit(p.to_path_buf()));
        }
        if let Some(env) = env {
            let mut list: Vec<PathBuf> = Vec::new();
            for p in std::env::split_paths(&env) {
                if p.as_os_str().is_empty() || list.contains(&p) {
                    continue;
                }
                list.push(p);
            }
            if !list.is_empty() {
                return Some(Selection::EnvList(list));
            }
        }
        home.map(|h| Selection::Home(h.join(".kube").join("config")))
    }

    /// The selection for this process: the flag, `$KUBECONFIG`, then `$HOME`.
    pub fn from_environment(explicit: Option<&Path>) -> Option<Selection> {
        Selection::choose(explicit, std::env::var_os("KUBECONFIG"), dirs::home_dir())
    }

    pub fn describe(&self) -> String {
        match self {
            Selection::Explicit(p) => format!("--kubeconfig {}", p.display()),
            Selection::EnvList(l) => format!(
                "KUBECONFIG={}",
                l.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            ),
            Selection::Home(p) => p.display().to_string(),
        }
    }
}

impl Kubeconfig {
    /// Loads and merges the selected files. Fails when nothing could be loaded or when any
    /// existing file is unreadable or malformed (kubectl refuses those too).
    pub fn load(selection: &Selection) -> Result<Kubeconfig, KubeconfigError> {
        match selection {
            Selection::Explicit(p) => {
                let config = read_file(p)?;
                Ok(Kubeconfig::merge(vec![(absolute(p), Some(config))]))
            }
            Selection::Home(p) => {
                if !p.exists() {
                    return Err(KubeconfigError::NotFound(format!(
                        "{} does not exist, KUBECONFIG is not set and --kubeconfig was not given",
                        p.display()
                    )));
                }
                let config = read_file(p)?;
                Ok(Kubeconfig::merge(vec![(absolute(p), Some(config))]))
            }
            Selection::EnvList(list) => {
                let mut files = Vec::new();
                for p in list {
                    if p.exists() {
                        files.push((absolute(p), Some(read_file(p)?)));
                    } else {
                        files.push((absolute(p), None));
                    }
                }
                if files.iter().all(|(_, c)| c.is_none()) {
                    return Err(KubeconfigError::NotFound(format!(
                        "none of the files in {} exists",
                        selection.describe()
                    )));
                }
                Ok(Kubeconfig::merge(files))
            }
        }
    }

    /// Loads one file, as `--kubeconfig` would.
    pub fn load_file(path: &Path) -> Result<Kubeconfig, KubeconfigError> {
        Kubeconfig::load(&Selection::Explicit(path.to_path_buf()))
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Reads and parses one kubeconfig file.
pub fn read_file(path: &Path) -> Result<Config, KubeconfigError> {
    let text = read_kubeconfig_bytes(path)?;
    parse(path, &text)
}

/// Kubeconfigs are small; anything beyond this is not one (and must not exhaust memory).
pub const MAX_KUBECONFIG: u64 = 16 * 1024 * 1024;

fn read_kubeconfig_bytes(path: &Path) -> Result<Vec<u8>, KubeconfigError> {
    use std::io::Read as _;
    let unreadable = |reason: String| KubeconfigError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let meta = std::fs::metadata(path).map_err(|e| unreadable(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(unreadable("is a directory".into()));
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_KUBECONFIG + 1).read_to_end(&mut buf))
        .map_err(|e| unreadable(io_reason(&e)))?;
    if buf.len() as u64 > MAX_KUBECONFIG {
        return Err(unreadable(format!(
            "larger than {} MiB, which no kubeconfig is",
            MAX_KUBECONFIG / 1024 / 1024
        )));
    }
    Ok(buf)
}

/// Parses kubeconfig text; `path` only names the file in messages.
pub fn parse(path: &Path, text: &[u8]) -> Result<Config, KubeconfigError> {
    let text = std::str::from_utf8(text).map_err(|e| KubeconfigError::NotYaml {
        path: path.to_path_buf(),
        reason: format!("not UTF-8 text ({e})"),
    })?;
    if text.trim().is_empty() {
        return Err(KubeconfigError::Empty {
            path: path.to_path_buf(),
        });
    }
    let value: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| KubeconfigError::NotYaml {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let not_kubeconfig = |reason: String| KubeconfigError::NotKubeconfig {
        path: path.to_path_buf(),
        reason,
    };
    let map = match &value {
        serde_yaml::Value::Mapping(m) => m,
        serde_yaml::Value::Null => {
            return Err(KubeconfigError::Empty {
                path: path.to_path_buf(),
            });
        }
        other => {
            return Err(not_kubeconfig(format!(
                "the document is a {}, not a mapping",
                yaml_kind(other)
            )));
        }
    };
    if let Some(kind) = map.get("kind")
        && kind.as_str() != Some("Config")
    {
        return Err(not_kubeconfig(format!(
            "kind is {}, expected Config",
            serde_yaml::to_string(kind).unwrap_or_default().trim()
        )));
    }
    const KNOWN: [&str; 4] = ["clusters", "users", "contexts", "current-context"];
    if !KNOWN.iter().any(|k| map.contains_key(*k)) {
        return Err(not_kubeconfig(
            "it has none of clusters, users, contexts or current-context".to_string(),
        ));
    }
    serde_yaml::from_value(value).map_err(|e| not_kubeconfig(e.to_string()))
}

fn yaml_kind(v: &serde_yaml::Value) -> &'static str {
    match v {
        serde_yaml::Value::Null => "null",
        serde_yaml::Value::Bool(_) => "boolean",
        serde_yaml::Value::Number(_) => "number",
        serde_yaml::Value::String(_) => "string",
        serde_yaml::Value::Sequence(_) => "list",
        serde_yaml::Value::Mapping(_) => "mapping",
        serde_yaml::Value::Tagged(_) => "tagged value",
    }
}

pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
        _ => e.to_string(),
    }
}

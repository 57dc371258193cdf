//! The merged view of one or more kubeconfig files, each entry remembering its file.

use std::path::PathBuf;

use super::model::{Config, NamedAuthInfo, NamedCluster, NamedContext};

/// A value and the kubeconfig file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    Loaded,
    /// Listed in $KUBECONFIG but absent: kubectl skips such files silently.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: PathBuf,
    pub state: FileState,
}

/// The merge of every file, first-wins per name as client-go's clientcmd does it.
#[derive(Debug, Clone, Default)]
pub struct Kubeconfig {
    pub files: Vec<SourceFile>,
    pub current_context: Option<Sourced<String>>,
    pub preferences: Option<Sourced<serde_yaml::Value>>,
    pub clusters: Vec<Sourced<NamedCluster>>,
    pub users: Vec<Sourced<NamedAuthInfo>>,
    pub contexts: Vec<Sourced<NamedContext>>,
}

impl Kubeconfig {
    /// Merges parsed files in precedence order: the first file to define a name wins the whole
    /// entry; `current-context` and `preferences` come from the first file that sets them.
    pub fn merge(files: Vec<(PathBuf, Option<Config>)>) -> Kubeconfig {
        let mut out = Kubeconfig::default();
        for (path, config) in files {
            let Some(config) = config else {
                out.files.push(SourceFile {
                    path,
                    state: FileState::Missing,
                });
                continue;
            };
            out.files.push(SourceFile {
                path: path.clone(),
                state: FileState::Loaded,
            });
            if out.current_context.is_none()
                && let Some(cc) = config.current_context.filter(|c| !c.is_empty())
            {
                out.current_context = Some(Sourced {
                    value: cc,
                    source: path.clone(),
                });
            }
            if out.preferences.is_none()
                && let Some(p) = config.preferences.filter(|p| !is_empty_yaml(p))
            {
                out.preferences = Some(Sourced {
                    value: p,
                    source: path.clone(),
                });
            }
            for c in config.clusters {
                if !out.clusters.iter().any(|e| e.value.name == c.name) {
                    out.clusters.push(Sourced {
                        value: c,
                        source: path.clone(),
                    });
                }
            }
            for u in config.users {
                if !out.users.iter().any(|e| e.value.name == u.name) {
                    out.users.push(Sourced {
                        value: u,
                        source: path.clone(),
                    });
                }
            }
            for c in config.contexts {
                if !out.contexts.iter().any(|e| e.value.name == c.name) {
                    out.contexts.push(Sourced {
                        value: c,
                        source: path.clone(),
                    });
                }
            }
        }
        out
    }

    /// The files that were actually read.
    pub fn loaded_files(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|f| f.state == FileState::Loaded)
            .map(|f| f.path.clone())
            .collect()
    }

    pub fn context_names(&self) -> Vec<String> {
        self.contexts.iter().map(|c| c.value.name.clone()).collect()
    }

    pub fn cluster(&self, name: &str) -> Option<&Sourced<NamedCluster>> {
        self.clusters.iter().find(|c| c.value.name == name)
    }

    pub fn user(&self, name: &str) -> Option<&Sourced<NamedAuthInfo>> {
        self.users.iter().find(|u| u.value.name == name)
    }

    pub fn context(&self, name: &str) -> Option<&Sourced<NamedContext>> {
        self.contexts.iter().find(|c| c.value.name == name)
    }

    /// The merged document, as `kubectl config view --merge --raw` would print it
    /// (entries sorted by name, as kubectl prints them).
    pub fn to_config(&self) -> Config {
        let mut clusters: Vec<_> = self.clusters.iter().map(|c| c.value.clone()).collect();
        let mut users: Vec<_> = self.users.iter().map(|c| c.value.clone()).collect();
        let mut contexts: Vec<_> = self.contexts.iter().map(|c| c.value.clone()).collect();
        clusters.sort_by(|a, b| a.name.cmp(&b.name));
        users.sort_by(|a, b| a.name.cmp(&b.name));
        contexts.sort_by(|a, b| a.name.cmp(&b.name));
        Config {
            api_version: Some("v1".into()),
            kind: Some("Config".into()),
            // kubectl always prints `preferences: {}`; matching it keeps the two comparable.
            preferences: Some(
                self.preferences
                    .as_ref()
                    .map(|p| p.value.clone())
                    .unwrap_or_else(|| serde_yaml::Value::Mapping(Default::default())),
            ),
            clusters,
            users,
            contexts,
            current_context: self.current_context.as_ref().map(|c| c.value.clone()),
            extensions: None,
        }
    }
}

fn is_empty_yaml(v: &serde_yaml::Value) -> bool {
    match v {
        serde_yaml::Value::Null => true,
        serde_yaml::Value::Mapping(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubeconfig::load::parse;

    fn cfg(text: &str) -> Config {
        parse(std::path::Path::new("t.yaml"), text.as_bytes()).expect("test kubeconfig parses")
    }

    #[test]
    fn first_file_wins_whole_entries_and_current_context() {
        let a = cfg(
            "current-context: ''\nclusters:\n- name: c\n  cluster: {server: https://a}\nusers:\n- name: u\n  user: {token: a}\n",
        );
        let b = cfg(
            "current-context: ctx\nclusters:\n- name: c\n  cluster: {server: https://b, insecure-skip-tls-verify: true}\n- name: d\n  cluster: {server: https://d}\nusers:\n- name: u\n  user: {username: zed}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\n",
        );
        let k = Kubeconfig::merge(vec![
            ("a".into(), Some(a)),
            ("missing".into(), None),
            ("b".into(), Some(b)),
        ]);
        let c = k.cluster("c").unwrap();
        assert_eq!(c.value.cluster.server.as_deref(), Some("https://a"));
        // The later file's extra field for the same name is discarded, not deep-merged.
        assert_eq!(c.value.cluster.insecure_skip_tls_verify, None);
        assert_eq!(c.source, std::path::PathBuf::from("a"));
        assert_eq!(k.user("u").unwrap().value.user.username, None);
        assert_eq!(
            k.cluster("d").unwrap().source,
            std::path::PathBuf::from("b")
        );
        // An empty current-context does not count as set.
        assert_eq!(k.current_context.as_ref().unwrap().value, "ctx");
        assert_eq!(k.files[1].state, FileState::Missing);
        assert_eq!(
            k.loaded_files(),
            vec![std::path::PathBuf::from("a"), "b".into()]
        );
    }
}

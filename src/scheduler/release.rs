//! Which kube-scheduler release a simulation models and why — said in the same words by
//! `kexplore schedule`, view 5 and the journey, so a user comparing them sees one story:
//! the default (`version::NEWEST`), `--kube-version`, or the live server's `/version`.

use serde::Serialize;

use super::version::{KubeVersion, NEWEST};

/// How the modelled release was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// No server and no `--kube-version`: the default, the newest modelled release.
    Default,
    /// `--kube-version` (or a caller that fixed the release).
    Asked,
    /// The server's `/version` names a modelled release: that one.
    Server,
    /// The server's release is not modelled: the nearest modelled one.
    NearestToServer,
    /// The server did not say which release it is, or said something that names none.
    ServerUnknown,
}

/// The release modelled, why, and the server's own `gitVersion` when there is a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Modelling {
    #[serde(rename = "modelled")]
    pub version: KubeVersion,
    pub basis: Basis,
    /// `/version`'s gitVersion, as the server sent it.
    pub server: Option<String>,
    /// The sentence every front end prints.
    pub summary: String,
}

impl Modelling {
    fn new(version: KubeVersion, basis: Basis, server: Option<String>) -> Modelling {
        let mut m = Modelling {
            version,
            basis,
            server,
            summary: String::new(),
        };
        m.summary = m.describe();
        m
    }

    /// No server, no choice: `version::NEWEST`.
    pub fn default_release() -> Modelling {
        Modelling::new(NEWEST, Basis::Default, None)
    }

    /// A release the user (or the caller) chose, beside the server's when there is one.
    pub fn asked(version: KubeVersion, server: Option<String>) -> Modelling {
        Modelling::new(version, Basis::Asked, server)
    }

    /// The release to model for a server whose `/version` said `git_version` (None: it did
    /// not answer): its own when modelled, else the nearest modelled, else the default.
    pub fn for_server(git_version: Option<&str>) -> Modelling {
        let server = git_version.map(str::to_string);
        let Some(minor) = git_version.and_then(server_minor) else {
            return Modelling::new(NEWEST, Basis::ServerUnknown, server);
        };
        let version = KubeVersion::nearest_modelled(minor);
        let basis = if version.minor == minor {
            Basis::Server
        } else {
            Basis::NearestToServer
        };
        Modelling::new(version, basis, server)
    }

    fn describe(&self) -> String {
        let v = self.version;
        let server = self.server.as_deref().unwrap_or("");
        match self.basis {
            Basis::Default => {
                format!("modelling kube-scheduler {v}, the default (the newest modelled release)")
            }
            Basis::Asked if self.server.is_none() => {
                format!("modelling kube-scheduler {v} (--kube-version)")
            }
            Basis::Asked if self.server.as_deref().and_then(server_minor) == Some(v.minor) => {
                format!(
                    "modelling kube-scheduler {v} (--kube-version), the server's release ({server})"
                )
            }
            Basis::Asked => {
                format!("modelling kube-scheduler {v} (--kube-version); the server is {server}")
            }
            Basis::Server => {
                format!("modelling kube-scheduler {v}, the server's release ({server})")
            }
            Basis::NearestToServer => format!(
                "modelling kube-scheduler {v}, the modelled release nearest to the server's {server}"
            ),
            Basis::ServerUnknown if self.server.is_none() => format!(
                "modelling kube-scheduler {v}, the default: the server did not report its release (/version)"
            ),
            Basis::ServerUnknown => format!(
                "modelling kube-scheduler {v}, the default: the server's version {server:?} names no release"
            ),
        }
    }
}

impl Default for Modelling {
    fn default() -> Self {
        Modelling::default_release()
    }
}

/// The minor release of a Kubernetes 1.x gitVersion ("v1.30.2+k3s1" → 30).
fn server_minor(git_version: &str) -> Option<u32> {
    let t = git_version.trim().trim_start_matches('v');
    let mut parts = t.split(['.', '-', '+']);
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    (major == 1).then_some(minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_basis_says_what_was_done() {
        let m = Modelling::for_server(Some("v1.33.1-kexplore"));
        assert_eq!((m.version.minor, m.basis), (33, Basis::Server));
        assert_eq!(
            m.summary,
            "modelling kube-scheduler v1.33, the server's release (v1.33.1-kexplore)"
        );
        let m = Modelling::for_server(Some("v1.22.3"));
        assert_eq!((m.version.minor, m.basis), (25, Basis::NearestToServer));
        assert_eq!(
            m.summary,
            "modelling kube-scheduler v1.25, the modelled release nearest to the server's v1.22.3"
        );
        assert_eq!(
            Modelling::for_server(Some("v1.30.2+k3s1")).version.minor,
            30
        );
        let m = Modelling::for_server(None);
        assert_eq!((m.version, m.basis), (NEWEST, Basis::ServerUnknown));
        assert!(
            m.summary.contains("did not report its release"),
            "{}",
            m.summary
        );
        let m = Modelling::for_server(Some("garbage"));
        assert!(
            m.summary.contains("\"garbage\" names no release"),
            "{}",
            m.summary
        );
        let asked = KubeVersion::parse("1.30").unwrap();
        assert_eq!(
            Modelling::asked(asked, Some("v1.33.1".into())).summary,
            "modelling kube-scheduler v1.30 (--kube-version); the server is v1.33.1"
        );
        assert_eq!(
            Modelling::default_release().summary,
            format!("modelling kube-scheduler {NEWEST}, the default (the newest modelled release)")
        );
    }
}

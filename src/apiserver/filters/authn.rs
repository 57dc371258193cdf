//! Authentication: client certificate (CN → user, O → groups), then bearer token from a static
//! token file, else anonymous — which this server allows only on the public-info paths
//! (`/healthz`, `/livez`, `/readyz`, `/version`), as kube-apiserver's structured authentication
//! configuration does with `anonymous.conditions`; elsewhere no credentials is a 401.
//! A credential that fails is a 401 everywhere, never anonymous (`union.NewFailOnError`).
//! The outcome table follows specs/apiserver.md §2.1. Bearer tokens go to the static token file,
//! then to the service-account token authenticator (`sa_token.rs`), as upstream's union does.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::{Value, json};

use crate::apiserver::filters::sa_token::ServiceAccountTokens;
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::interface::Storage;
use crate::apiserver::transport::tls::{ConnInfo, cert_facts};

/// What upstream's system:public-info-viewer lets everyone, anonymous included, `get`.
pub(crate) const PUBLIC_INFO_URLS: [&str; 5] =
    ["/healthz", "/livez", "/readyz", "/version", "/version/"];

/// One row of a `--token-auth-file`. The token itself is only ever compared, never shown.
#[derive(Clone)]
struct TokenUser {
    user: String,
    uid: String,
    groups: Vec<String>,
}

/// Static tokens (`token,user,uid,"group1,group2"`), keyed by token.
#[derive(Clone, Default)]
pub struct TokenFile {
    tokens: HashMap<String, TokenUser>,
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenFile({} tokens)", self.tokens.len())
    }
}

/// Split one CSV line, honouring double quotes (`""` is a literal quote).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

impl TokenFile {
    pub fn parse(path: &Path, text: &str) -> Result<Self, String> {
        let mut tokens = HashMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let f = csv_fields(line);
            if f.len() < 3 {
                return Err(format!(
                    "token file '{}' must have at least 3 columns (token, user name, user uid), found {}",
                    path.display(),
                    f.len()
                ));
            }
            if f[0].is_empty() {
                continue;
            }
            let groups = f
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            tokens.insert(
                f[0].clone(),
                TokenUser {
                    user: f[1].clone(),
                    uid: f[2].clone(),
                    groups,
                },
            );
        }
        Ok(TokenFile { tokens })
    }

    /// The user a static token stands for.
    pub(crate) fn user(&self, token: &str) -> Option<UserInfo> {
        self.tokens.get(token).map(|t| UserInfo {
            username: t.user.clone(),
            uid: t.uid.clone(),
            groups: t.groups.clone(),
            extra: BTreeMap::new(),
        })
    }

    pub(crate) fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(path, &text)
    }
}

/// The result of authentication, with the detail the trace shows.
#[derive(Debug, Clone)]
pub(crate) struct AuthnOutcome {
    pub(crate) user: Option<UserInfo>,
    pub(crate) detail: Value,
}

/// Run the authenticator chain for one request to `path`, without service-account tokens.
#[cfg(test)]
pub(crate) fn authenticate(
    conn: &ConnInfo,
    authorization: Option<&str>,
    tokens: &TokenFile,
    path: &str,
) -> AuthnOutcome {
    authenticate_with(conn, authorization, tokens, None, path)
}

/// Run the authenticator chain for one request to `path`; `sa` accepts service-account tokens
/// against the objects in its store.
pub(crate) fn authenticate_with(
    conn: &ConnInfo,
    authorization: Option<&str>,
    tokens: &TokenFile,
    sa: Option<(&ServiceAccountTokens, &dyn Storage)>,
    path: &str,
) -> AuthnOutcome {
    let mut errors: Vec<String> = Vec::new();
    let mut detail = serde_json::Map::new();
    // 1. x509 client certificate.
    if let (Some(leaf), Some(verdict)) = (conn.client_chain.first(), &conn.chain_verdict) {
        let facts = conn.client_facts.clone().or_else(|| cert_facts(leaf));
        detail.insert("client_certificate".into(), json!(facts));
        match (verdict, facts) {
            (Ok(()), Some(f)) if !f.common_name.is_empty() => {
                let mut extra = BTreeMap::new();
                extra.insert(
                    "authentication.kubernetes.io/credential-id".to_string(),
                    vec![format!("X509SHA256={}", f.sha256)],
                );
                let user = UserInfo {
                    username: f.common_name.clone(),
                    uid: String::new(),
                    groups: f.organizations.clone(),
                    extra,
                };
                detail.insert("verified".into(), json!(true));
                return finish(Some(user), "x509", detail);
            }
            (Ok(()), _) => {
                detail.insert("verified".into(), json!(true));
                detail.insert(
                    "note".into(),
                    json!("certificate has an empty CN: the x509 authenticator abstains"),
                );
            }
            (Err(e), f) => {
                let serial = f.map(|f| f.serial).unwrap_or_default();
                detail.insert("verified".into(), json!(false));
                errors.push(format!("verifying certificate SN={serial} failed: {e}"));
            }
        }
    }
    // 2. Bearer token.
    if let Some(h) = authorization {
        let mut fields = h.split_whitespace();
        let scheme = fields.next().unwrap_or_default();
        let token = fields.next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() {
            match tokens.user(token) {
                Some(user) => {
                    detail.insert("token".into(), json!("static token file (token not shown)"));
                    return finish(Some(user), "token", detail);
                }
                None => match sa
                    .and_then(|(sa, store)| sa.authenticate(store, token, sa.audiences(), now()))
                {
                    Some(Ok(accepted)) => {
                        detail.insert(
                            "token".into(),
                            json!("service account token (token not shown)"),
                        );
                        detail.insert("audiences".into(), json!(accepted.audiences));
                        return finish(Some(accepted.user), "serviceaccount-token", detail);
                    }
                    Some(Err(e)) => errors.push(e),
                    None => errors.push("invalid bearer token".into()),
                },
            }
        }
    }
    if !errors.is_empty() {
        detail.insert("errors".into(), json!(errors));
        return finish(None, "none", detail);
    }
    // 3. Anonymous, on the public-info paths only; RBAC then decides (system:public-info-viewer).
    if PUBLIC_INFO_URLS.contains(&path) {
        let user = UserInfo {
            username: "system:anonymous".into(),
            groups: vec!["system:unauthenticated".into()],
            ..UserInfo::default()
        };
        return finish(Some(user), "anonymous", detail);
    }
    detail.insert(
        "anonymous".into(),
        json!("anonymous requests are allowed only on /healthz, /livez, /readyz and /version"),
    );
    finish(None, "anonymous", detail)
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn finish(
    user: Option<UserInfo>,
    method: &'static str,
    mut detail: serde_json::Map<String, Value>,
) -> AuthnOutcome {
    // The authenticated-group adder.
    let user = user.map(|mut u| {
        if u.username != "system:anonymous"
            && !u.in_group("system:authenticated")
            && !u.in_group("system:unauthenticated")
        {
            u.groups.push("system:authenticated".into());
        }
        u
    });
    detail.insert("method".into(), json!(method));
    if let Some(u) = &user {
        detail.insert("user".into(), json!(u.username));
        detail.insert("groups".into(), json!(u.groups));
    }
    AuthnOutcome {
        user,
        detail: Value::Object(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_rows() {
        let t = TokenFile::parse(
            Path::new("t.csv"),
            "abc,jane,u1,\"developers,qa\"\n,skip,u\nxyz,bob,u2\n",
        )
        .unwrap_or_default();
        let c = ConnInfo::default();
        let o = authenticate(&c, Some("Bearer abc"), &t, "/api");
        let u = o.user.unwrap_or_default();
        assert_eq!(u.username, "jane");
        assert_eq!(u.groups, vec!["developers", "qa", "system:authenticated"]);
        assert!(
            authenticate(&c, Some("Bearer nope"), &t, "/api")
                .user
                .is_none()
        );
        assert!(authenticate(&c, None, &t, "/api").user.is_none());
        assert!(TokenFile::parse(Path::new("t.csv"), "a,b\n").is_err());
    }

    #[test]
    fn anonymous_only_on_public_info_paths_and_never_after_a_failed_credential() {
        let t = TokenFile::parse(Path::new("t.csv"), "abc,jane,u1\n").unwrap_or_default();
        let c = ConnInfo::default();
        for path in PUBLIC_INFO_URLS {
            let u = authenticate(&c, None, &t, path).user.unwrap_or_default();
            assert_eq!(u.username, "system:anonymous", "{path}");
            assert_eq!(u.groups, vec!["system:unauthenticated"]);
            assert!(
                authenticate(&c, Some("Bearer nope"), &t, path)
                    .user
                    .is_none()
            );
        }
        for path in ["/api", "/readyz/ping", "/healthz/", "/versions"] {
            assert!(authenticate(&c, None, &t, path).user.is_none(), "{path}");
        }
    }
}

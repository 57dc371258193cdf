//! RequestInfo: what a URL and method mean to Kubernetes (verb, group, resource, namespace, name),
//! parsed once before authentication so every later stage and the trace speak the same words.

use std::collections::HashMap;

use hyper::Method;

/// The subresources of a namespace itself (upstream's `namespaceSubresources`): under
/// `/namespaces/<ns>/` they name no namespaced resource.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The parsed request attributes (upstream `request.RequestInfo`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RequestInfo {
    pub is_resource_request: bool,
    pub path: String,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection;
    /// lowercase HTTP method for non-resource paths.
    pub verb: String,
    pub api_prefix: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    #[serde(skip)]
    pub query: HashMap<String, String>,
    /// The query as sent, for parameters that may repeat (`dryRun=All&dryRun=foo`).
    #[serde(skip)]
    pub raw_query: String,
}

impl RequestInfo {
    /// `pods` or `pods/binding`, as RBAC and the 403 text use it.
    pub fn resource_with_sub(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    pub fn query(&self, key: &str) -> Option<&str> {
        self.query.get(key).map(String::as_str)
    }

    /// Every value of a repeatable parameter, in order (Go's `url.Values[key]`).
    pub fn query_all(&self, key: &str) -> Vec<String> {
        self.raw_query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
            .filter(|(k, _)| percent_decode(k) == key)
            .map(|(_, v)| percent_decode(v))
            .collect()
    }
}

/// Percent-decode a query component (`+` is a space, as Go's url.ParseQuery does).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_query(q: Option<&str>) -> HashMap<String, String> {
    let mut m = HashMap::new();
    for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        m.entry(percent_decode(k))
            .or_insert_with(|| percent_decode(v));
    }
    m
}

/// Parse like upstream's `RequestInfoFactory.NewRequestInfo`.
pub fn parse(method: &Method, path: &str, query: Option<&str>) -> RequestInfo {
    let raw_query = query.unwrap_or_default().to_string();
    let query = parse_query(query);
    let mut info = RequestInfo {
        path: path.to_string(),
        verb: method.as_str().to_ascii_lowercase(),
        query,
        raw_query,
        ..Default::default()
    };
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let (prefix, rest) = match parts.split_first() {
        Some((&"api", rest)) => ("api", rest),
        Some((&"apis", rest)) => ("apis", rest),
        _ => return info,
    };
    let mut rest: Vec<&str> = rest.to_vec();
    if prefix == "apis" {
        if rest.len() < 2 {
            return info; // /apis, /apis/<group>: discovery
        }
        info.api_group = rest.remove(0).to_string();
    } else if rest.is_empty() {
        return info;
    }
    info.api_prefix = prefix.to_string();
    info.api_version = rest.remove(0).to_string();
    if rest.is_empty() {
        return info; // /api/v1: discovery
    }
    info.is_resource_request = true;
    let mut watch_prefix = false;
    if rest.first() == Some(&"watch") {
        rest.remove(0);
        watch_prefix = true;
    }
    if rest.first() == Some(&"namespaces") && rest.len() >= 2 {
        // /namespaces/<ns> itself is the namespace object, /namespaces/<ns>/status and
        // /finalize its subresources; deeper paths are namespaced resources.
        info.namespace = rest[1].to_string();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest.drain(0..2);
        } else if rest.len() == 2 {
            info.resource = "namespaces".into();
            info.name = rest[1].to_string();
            rest.clear();
        }
    }
    if !rest.is_empty() {
        info.resource = rest[0].to_string();
        if let Some(n) = rest.get(1) {
            info.name = n.to_string();
        }
        if let Some(s) = rest.get(2) {
            info.subresource = s.to_string();
        }
        if rest.len() > 3 {
            info.is_resource_request = false; // unknown depth: treat as a non-resource path
        }
    } else if info.resource.is_empty() {
        info.resource = "namespaces".into();
    }
    let watching = watch_prefix
        || matches!(info.query("watch"), Some(v) if !v.is_empty() && v != "0" && v != "false");
    info.verb = match *method {
        Method::POST => "create".into(),
        Method::GET | Method::HEAD => {
            if watching {
                "watch".into()
            } else if info.name.is_empty() {
                "list".into()
            } else {
                "get".into()
            }
        }
        Method::PUT => "update".into(),
        Method::PATCH => "patch".into(),
        Method::DELETE => {
            if info.name.is_empty() {
                "deletecollection".into()
            } else {
                "delete".into()
            }
        }
        _ => method.as_str().to_ascii_lowercase(),
    };
    // A list/watch pinned to one name by fieldSelector is about that name (resourceNames rules).
    if matches!(info.verb.as_str(), "list" | "watch")
        && info.name.is_empty()
        && let Some(fs) = info.query("fieldSelector")
    {
        let fs = fs.to_string();
        for term in fs.split(',') {
            if let Some(v) = term.strip_prefix("metadata.name=") {
                info.name = v.trim_start_matches('=').to_string();
            }
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_paths() {
        let i = parse(&Method::POST, "/api/v1/namespaces/default/pods", None);
        assert_eq!(
            (i.verb.as_str(), i.namespace.as_str(), i.resource.as_str()),
            ("create", "default", "pods")
        );
        let i = parse(
            &Method::POST,
            "/api/v1/namespaces/default/pods/app/binding",
            None,
        );
        assert_eq!(
            (i.name.as_str(), i.subresource.as_str()),
            ("app", "binding")
        );
        let i = parse(&Method::GET, "/api/v1/namespaces/foo", None);
        assert_eq!(
            (
                i.verb.as_str(),
                i.resource.as_str(),
                i.name.as_str(),
                i.namespace.as_str()
            ),
            ("get", "namespaces", "foo", "foo")
        );
        for sub in NAMESPACE_SUBRESOURCES {
            let i = parse(&Method::PUT, &format!("/api/v1/namespaces/foo/{sub}"), None);
            assert_eq!(
                (
                    i.verb.as_str(),
                    i.resource.as_str(),
                    i.name.as_str(),
                    i.subresource.as_str(),
                    i.namespace.as_str()
                ),
                ("update", "namespaces", "foo", sub, "foo")
            );
        }
        let i = parse(
            &Method::GET,
            "/api/v1/pods",
            Some("watch=true&fieldSelector=metadata.name%3Dapp"),
        );
        assert_eq!((i.verb.as_str(), i.name.as_str()), ("watch", "app"));
        let i = parse(&Method::GET, "/api", None);
        assert!(!i.is_resource_request);
        assert_eq!(i.verb, "get");
        let i = parse(
            &Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            None,
        );
        assert_eq!(
            (i.api_group.as_str(), i.resource.as_str(), i.verb.as_str()),
            ("rbac.authorization.k8s.io", "clusterroles", "list")
        );
    }

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%3Db+c%2"), "a=b c%2");
    }
}

//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`; the `Impersonate-*` headers), as
//! kube-apiserver's impersonation filter does it: every identity asked for is authorized with
//! the verb `impersonate` for the requesting user, then the request continues as that identity.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::apiserver::filters::authz::{self, Attributes, Authorizer};
use crate::apiserver::request::status::ApiError;
use crate::apiserver::request::user::UserInfo;
use crate::apiserver::storage::interface::Storage;

/// What the headers ask to act as.
#[derive(Debug, Default, PartialEq)]
pub struct Requested {
    pub user: Option<String>,
    pub uid: Option<String>,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The identity asked for by `Impersonate-*` headers; None when there are none.
pub fn requested(headers: &hyper::HeaderMap) -> Result<Option<Requested>, ApiError> {
    let mut r = Requested::default();
    let mut any = false;
    for (name, value) in headers {
        let name = name.as_str();
        let Some(what) = name.strip_prefix("impersonate-") else {
            continue;
        };
        any = true;
        let value = value
            .to_str()
            .map_err(|_| ApiError::bad_request(format!("invalid {name} header value")))?
            .to_string();
        match what {
            "user" => r.user = Some(value),
            "uid" => r.uid = Some(value),
            "group" => r.groups.push(value),
            _ => match what.strip_prefix("extra-") {
                // Header names are case-insensitive, so the key travels percent-encoded.
                Some(key) => r.extra.entry(unescape(key)).or_default().push(value),
                None => continue,
            },
        }
    }
    if !any {
        return Ok(None);
    }
    if r.user.is_none() {
        return Err(ApiError::bad_request(format!(
            "requested {} without impersonating a user",
            describe(&r)
        )));
    }
    Ok(Some(r))
}

/// Authorize every part of `r` for `actor` and return the identity to continue as, with the
/// checks made (for the trace). A part not allowed is kube-apiserver's 403.
pub fn impersonate(
    authorizer: &Authorizer,
    store: &dyn Storage,
    actor: &UserInfo,
    r: &Requested,
) -> Result<(UserInfo, Value), ApiError> {
    let username = r.user.clone().unwrap_or_default();
    let mut checks = vec![match service_account(&username) {
        Some((ns, name)) => attrs("", "serviceaccounts", "", ns, name),
        None => attrs("", "users", "", "", &username),
    }];
    for g in &r.groups {
        checks.push(attrs("", "groups", "", "", g));
    }
    if let Some(uid) = &r.uid {
        checks.push(attrs("authentication.k8s.io", "uids", "", "", uid));
    }
    for (k, values) in &r.extra {
        for v in values {
            checks.push(attrs("authentication.k8s.io", "userextras", k, "", v));
        }
    }
    let mut trace = Vec::new();
    for a in &checks {
        let d = authorizer.authorize(store, actor, a);
        trace.push(authz::trace_detail(a, &d));
        if !d.allowed {
            let res = if a.subresource.is_empty() {
                a.resource.clone()
            } else {
                format!("{}/{}", a.resource, a.subresource)
            };
            return Err(ApiError::forbidden(
                &a.group,
                &res,
                &a.name,
                &authz::forbidden_text(&actor.username, a),
                &d.reason,
            ));
        }
    }
    let mut groups = r.groups.clone();
    if let Some((ns, _)) = service_account(&username) {
        for g in [
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{ns}"),
        ] {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    if username == "system:anonymous" {
        if !groups.iter().any(|g| g == "system:unauthenticated") {
            groups.push("system:unauthenticated".into());
        }
    } else if !groups
        .iter()
        .any(|g| g == "system:authenticated" || g == "system:unauthenticated")
    {
        groups.push("system:authenticated".into());
    }
    let user = UserInfo {
        username,
        uid: r.uid.clone().unwrap_or_default(),
        groups,
        extra: r.extra.clone(),
    };
    Ok((
        user.clone(),
        json!({"actingAs": actor.username, "impersonatedUser": user, "checks": trace}),
    ))
}

fn attrs(group: &str, resource: &str, sub: &str, ns: &str, name: &str) -> Attributes {
    Attributes {
        verb: "impersonate".into(),
        resource_request: true,
        group: group.into(),
        resource: resource.into(),
        subresource: sub.into(),
        namespace: ns.into(),
        name: name.into(),
        path: String::new(),
    }
}

/// `system:serviceaccount:NS:NAME` → (NS, NAME).
fn service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then_some((ns, name))
}

fn describe(r: &Requested) -> String {
    let mut parts: Vec<String> = r.groups.iter().map(|g| format!("group {g:?}")).collect();
    if let Some(u) = &r.uid {
        parts.push(format!("uid {u:?}"));
    }
    for (k, vs) in &r.extra {
        parts.extend(vs.iter().map(|v| format!("extra {k}={v:?}")));
    }
    format!("[{}]", parts.join(" "))
}

/// Percent-decoding of an extra key (`Impersonate-Extra-reason%2Fkind` → `reason/kind`).
fn unescape(key: &str) -> String {
    let b = key.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> hyper::HeaderMap {
        let mut h = hyper::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                hyper::header::HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    #[test]
    fn headers_are_read_like_the_impersonation_filter() {
        assert_eq!(requested(&headers(&[("accept", "x")])).ok(), Some(None));
        let r = requested(&headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "developers"),
            ("Impersonate-Group", "qa"),
            ("Impersonate-Extra-Reason%2Fkind", "audit"),
        ]))
        .ok()
        .flatten()
        .unwrap_or_default();
        assert_eq!(r.user.as_deref(), Some("jane"));
        assert_eq!(r.groups, ["developers", "qa"]);
        assert_eq!(r.extra.get("reason/kind"), Some(&vec!["audit".to_string()]));
        let e = requested(&headers(&[("Impersonate-Group", "developers")]))
            .err()
            .map(|e| (e.code, e.message))
            .unwrap_or_default();
        assert_eq!(
            e,
            (
                400,
                "requested [group \"developers\"] without impersonating a user".to_string()
            )
        );
    }

    #[test]
    fn service_accounts_and_the_authenticated_group() {
        assert_eq!(
            service_account("system:serviceaccount:default:builder"),
            Some(("default", "builder"))
        );
        assert_eq!(service_account("system:serviceaccount:default"), None);
        let store = crate::apiserver::storage::store::Store::default();
        let admin = UserInfo {
            username: "kexplore-admin".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        };
        let r = Requested {
            user: Some("system:serviceaccount:ci:builder".into()),
            ..Default::default()
        };
        let (u, _) = impersonate(&Authorizer::default(), &store, &admin, &r)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ci",
                "system:authenticated"
            ]
        );
        // Without a rule that allows it, impersonating is 403 with upstream's words.
        let jane = UserInfo {
            username: "jane".into(),
            uid: String::new(),
            groups: vec!["developers".into(), "system:authenticated".into()],
            extra: BTreeMap::new(),
        };
        let r = Requested {
            user: Some("kexplore-admin".into()),
            ..Default::default()
        };
        let e = impersonate(&Authorizer::default(), &store, &jane, &r)
            .err()
            .unwrap_or_else(|| panic!("jane may not impersonate"));
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "users \"kexplore-admin\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
    }
}

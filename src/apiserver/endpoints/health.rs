//! `/healthz`, `/livez`, `/readyz` and their single checks, answered as kube-apiserver's
//! `server/healthz` does: `ok`, or with `?verbose` one `[+]<check> ok` line per check and
//! `<endpoint> check passed`; a failing check is a 500 whose reason is withheld.

use hyper::body::Bytes;

use crate::apiserver::request::context::Reply;
use crate::apiserver::request::info::RequestInfo;
use crate::apiserver::request::status::ApiError;
use crate::apiserver::storage::interface::Storage;

/// The endpoints kube-apiserver installs, each with the checks it runs there.
pub(crate) const ENDPOINTS: [&str; 3] = ["healthz", "livez", "readyz"];

/// One named check and its result. Upstream's `ping` is always ok; on etcd, kube-apiserver's
/// `etcd` check (on every endpoint) and `etcd-readiness` (on `/readyz` only) probe it.
struct Check {
    name: &'static str,
    result: Result<(), String>,
}

fn checks(endpoint: &str, store: &dyn Storage) -> Vec<Check> {
    let mut all = vec![Check {
        name: "ping",
        result: Ok(()),
    }];
    if let Some((name, result)) = store.health() {
        if endpoint == "readyz" {
            all.push(Check {
                name,
                result: result.clone(),
            });
            all.push(Check {
                name: "etcd-readiness",
                result,
            });
        } else {
            all.push(Check { name, result });
        }
    }
    all
}

fn text(code: u16, body: String) -> Result<Reply, ApiError> {
    Ok(Reply::Raw {
        code,
        content_type: "text/plain; charset=utf-8",
        body: Bytes::from(body),
    })
}

/// `GET /<endpoint>` or `GET /<endpoint>/<check>`; `None` when the path is neither.
pub(crate) fn serve(
    store: &dyn Storage,
    info: &RequestInfo,
    parts: &[&str],
) -> Option<Result<Reply, ApiError>> {
    let (endpoint, single) = match parts {
        [e] => (*e, None),
        [e, c] => (*e, Some(*c)),
        _ => return None,
    };
    if !ENDPOINTS.contains(&endpoint) {
        return None;
    }
    let all = checks(endpoint, store);
    if let Some(name) = single {
        let check = all.iter().find(|c| c.name == name)?;
        return Some(match &check.result {
            Ok(()) => text(200, "ok".into()),
            Err(e) => text(500, format!("internal server error: {e}\n")),
        });
    }
    let excluded: Vec<&str> = info.query("exclude").into_iter().collect();
    let mut lines = String::new();
    let mut failed = false;
    for c in &all {
        if excluded.contains(&c.name) {
            lines.push_str(&format!("[+]{} excluded: ok\n", c.name));
        } else if c.result.is_ok() {
            lines.push_str(&format!("[+]{} ok\n", c.name));
        } else {
            failed = true;
            lines.push_str(&format!("[-]{} failed: reason withheld\n", c.name));
        }
    }
    let unmatched: Vec<String> = excluded
        .iter()
        .filter(|e| !all.iter().any(|c| c.name == **e))
        .map(|e| format!("{e:?}"))
        .collect();
    if !unmatched.is_empty() {
        lines.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unmatched.join(",")
        ));
    }
    Some(if failed {
        text(500, format!("{lines}{endpoint} check failed\n"))
    } else if info.query("verbose").is_some() {
        text(200, format!("{lines}{endpoint} check passed\n"))
    } else {
        text(200, "ok".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::request::info as request_info;
    use hyper::Method;

    fn body(path: &str, query: Option<&str>) -> Option<(u16, String)> {
        let info = request_info::parse(&Method::GET, path, query);
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let store = crate::apiserver::storage::store::Store::default();
        match serve(&store, &info, &parts)? {
            Ok(Reply::Raw { code, body, .. }) => {
                Some((code, String::from_utf8_lossy(&body).into_owned()))
            }
            _ => None,
        }
    }

    #[test]
    fn each_endpoint_plain_and_verbose() {
        for e in ENDPOINTS {
            let path = format!("/{e}");
            assert_eq!(body(&path, None), Some((200, "ok".into())));
            assert_eq!(
                body(&path, Some("verbose")),
                Some((200, format!("[+]ping ok\n{e} check passed\n")))
            );
            assert_eq!(
                body(&path, Some("verbose&exclude=nope")),
                Some((
                    200,
                    format!(
                        "[+]ping ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\n{e} check passed\n"
                    )
                ))
            );
            assert_eq!(
                body(&format!("{path}/ping"), None),
                Some((200, "ok".into()))
            );
            assert_eq!(body(&format!("{path}/etcd"), None), None);
        }
        assert_eq!(body("/version", None), None);
    }
}

//! Reading a live cluster as kubectl does: lists in pages (`limit`/`continue`, restarting once
//! when the continue token expired) and watches from the list's resourceVersion, so thousands of
//! nodes neither arrive in one giant response nor go stale.

use serde::de::DeserializeOwned;

use super::http::{ApiClient, RequestError};

/// kubectl's page size for `get`.
pub const PAGE_SIZE: u32 = 500;

#[derive(Debug, Clone)]
pub struct Listed<T> {
    pub items: Vec<T>,
    /// The collection's resourceVersion, where a watch continues from.
    pub resource_version: String,
    pub pages: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// RBAC said no: the caller shows what it may see and says what it may not.
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("the server answered {code}: {message}")]
    Status { code: u16, message: String },
    #[error("{0}")]
    Request(String),
    #[error("cannot decode the server's answer: {0}")]
    Decode(String),
}

impl From<RequestError> for ListError {
    fn from(e: RequestError) -> Self {
        ListError::Request(e.0)
    }
}

/// The `message` of a kube-apiserver `Status`, or the body's first line.
pub fn status_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            String::from_utf8_lossy(body)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
}

fn with_query(path: &str, query: &str) -> String {
    if path.contains('?') {
        format!("{path}&{query}")
    } else {
        format!("{path}?{query}")
    }
}

/// How far one collection's list has got: items so far and, from the server's
/// `remainingItemCount`, how many in all; what went wrong on the way and how it was recovered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListProgress {
    pub loaded: u64,
    /// `None` until a page says (servers omit the count with a label or field selector).
    pub total: Option<u64>,
    pub pages: usize,
    /// The last recovery, in plain words ("connection dropped after 48,000: resumed").
    pub note: Option<String>,
    pub done: bool,
}

/// A page of a list, decoded straight into its items (no intermediate JSON tree).
#[derive(serde::Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
struct Page<T> {
    #[serde(default)]
    metadata: PageMeta,
    #[serde(default)]
    items: Option<Vec<T>>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PageMeta {
    resource_version: Option<String>,
    #[serde(rename = "continue")]
    next: Option<String>,
    remaining_item_count: Option<i64>,
}

/// A page that failed in transit is asked for again this many times (same continue token).
const RESUMES: usize = 3;

/// Lists every item of a collection path (e.g. `/api/v1/nodes`), page by page.
pub async fn list_all<T: DeserializeOwned>(
    api: &ApiClient,
    path: &str,
    page_size: u32,
) -> Result<Listed<T>, ListError> {
    list_paged(api, path, page_size, |_: &ListProgress| {}, |t: T| t).await
}

/// A server's remainingItemCount is only a hint: it never reserves more than this many items.
const MAX_RESERVE: usize = 1 << 20;

/// `list_all`, reporting progress after each page and passing each item through `map` as it is
/// decoded (to drop fields the caller never reads, or pair it with what the caller keeps
/// beside it, without a second list of every item). A page whose connection dropped
/// is asked for again with the same continue token; an expired token (410) lists again from
/// the start, once, as kubectl does. Either way `progress` says so.
pub async fn list_paged<T: DeserializeOwned, U>(
    api: &ApiClient,
    path: &str,
    page_size: u32,
    mut progress: impl FnMut(&ListProgress),
    mut map: impl FnMut(T) -> U,
) -> Result<Listed<U>, ListError> {
    let mut restarted = false;
    let mut note: Option<String> = None;
    'restart: loop {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        let mut rv = String::new();
        let mut resumes = 0;
        loop {
            let mut query = format!("limit={page_size}");
            if let Some(t) = &token {
                query.push_str(&format!("&continue={}", percent_encode(t)));
            }
            let resp = match api.get(&with_query(path, &query)).await {
                Ok(r) => r,
                // Mid-list, the pages so far stay good: ask for the next one again.
                Err(e) if token.is_some() && resumes < RESUMES => {
                    resumes += 1;
                    note = Some(format!(
                        "connection dropped after {} items ({e}): resumed from the last page",
                        items.len()
                    ));
                    tokio::time::sleep(std::time::Duration::from_millis(200 * resumes as u64))
                        .await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            match resp.status {
                200 => {}
                403 => return Err(ListError::Forbidden(status_message(&resp.body))),
                // The continue token expired (compaction): start over once, as kubectl does.
                410 if token.is_some() && !restarted => {
                    restarted = true;
                    note = Some(format!(
                        "the continue token expired after {} items (410 Gone): listed again from the start",
                        items.len()
                    ));
                    continue 'restart;
                }
                code => {
                    return Err(ListError::Status {
                        code,
                        message: status_message(&resp.body),
                    });
                }
            }
            pages += 1;
            let page: Page<T> =
                serde_json::from_slice(&resp.body).map_err(|e| ListError::Decode(e.to_string()))?;
            drop(resp);
            // Every page of a kube-apiserver list is served at the first page's version; a
            // server whose later pages are newer would make a watch from the last one miss
            // what changed in between (a pod deleted after page 1 stays forever). From the
            // first, such changes come again, which a cache keyed by name absorbs.
            if rv.is_empty() {
                rv = page.metadata.resource_version.unwrap_or_default();
            }
            let next = page.metadata.next.filter(|c| !c.is_empty());
            let remaining = page
                .metadata
                .remaining_item_count
                .and_then(|r| u64::try_from(r).ok());
            if pages == 1 {
                // Sized once from the first page's count: grown by doubling, a 150,000-pod
                // list held the old and the new buffer at once (565 MB of 920 MB at the peak).
                let total =
                    page.items.as_ref().map_or(0, Vec::len) + remaining.unwrap_or(0) as usize;
                items.reserve_exact(total.min(MAX_RESERVE));
            }
            items.extend(page.items.into_iter().flatten().map(&mut map));
            let loaded = items.len() as u64;
            progress(&ListProgress {
                loaded,
                total: match (&next, remaining) {
                    (None, _) => Some(loaded),
                    (Some(_), r) => r.map(|r| loaded + r),
                },
                pages,
                note: note.clone(),
                done: next.is_none(),
            });
            match next {
                Some(t) => token = Some(t),
                None => {
                    return Ok(Listed {
                        items,
                        resource_version: rv,
                        pages,
                    });
                }
            }
        }
    }
}

pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<T> {
    Added(T),
    Modified(T),
    Deleted(T),
    /// Only a resourceVersion: the server's progress marker.
    Bookmark(String),
    /// An `ERROR` event (e.g. 410 Gone: the caller must list again).
    Error {
        code: u16,
        message: String,
    },
}

/// Watches `path` from `resource_version`, calling `on_event` for each event until it returns
/// false, the server ends the stream, or an error event arrives. Returns the last
/// resourceVersion seen, from which the caller can continue.
pub async fn watch<T: DeserializeOwned>(
    api: &ApiClient,
    path: &str,
    resource_version: &str,
    mut on_event: impl FnMut(WatchEvent<T>) -> bool,
) -> Result<String, ListError> {
    let query = format!(
        "watch=true&allowWatchBookmarks=true&resourceVersion={}",
        percent_encode(resource_version)
    );
    let mut resp = api.stream(&with_query(path, &query)).await?;
    let status = resp.status().as_u16();
    if status != 200 {
        let body = resp.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
        return Err(match status {
            403 => ListError::Forbidden(status_message(&body)),
            code => ListError::Status {
                code,
                message: status_message(&body),
            },
        });
    }
    let mut last_rv = resource_version.to_string();
    let mut buf: Vec<u8> = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ListError::Request(e.to_string()))?
    {
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (event, rv) = decode_event::<T>(&line)?;
            if let Some(rv) = rv {
                last_rv = rv;
            }
            let stop = matches!(event, WatchEvent::Error { .. });
            if !on_event(event) || stop {
                return Ok(last_rv);
            }
        }
    }
    Ok(last_rv)
}

/// One line of a watch stream: `{"type": "ADDED", "object": {...}}`.
pub fn decode_event<T: DeserializeOwned>(
    line: &[u8],
) -> Result<(WatchEvent<T>, Option<String>), ListError> {
    let mut v: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| ListError::Decode(e.to_string()))?;
    let kind = v["type"].as_str().unwrap_or("").to_string();
    let object = v
        .get_mut("object")
        .map(std::mem::take)
        .unwrap_or(serde_json::Value::Null);
    let rv = object["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string);
    let decode = |o: serde_json::Value| {
        serde_json::from_value::<T>(o).map_err(|e| ListError::Decode(e.to_string()))
    };
    let event = match kind.as_str() {
        "ADDED" => WatchEvent::Added(decode(object)?),
        "MODIFIED" => WatchEvent::Modified(decode(object)?),
        "DELETED" => WatchEvent::Deleted(decode(object)?),
        "BOOKMARK" => WatchEvent::Bookmark(rv.clone().unwrap_or_default()),
        "ERROR" => WatchEvent::Error {
            code: object["code"].as_u64().unwrap_or(0) as u16,
            message: object["message"].as_str().unwrap_or("").to_string(),
        },
        other => {
            return Err(ListError::Decode(format!(
                "unknown watch event type {other:?}"
            )));
        }
    };
    Ok((event, rv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    #[test]
    fn watch_lines_decode_with_their_resource_version() {
        let (e, rv) = decode_event::<Pod>(br#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","resourceVersion":"7"}}}"#).unwrap();
        assert!(matches!(e, WatchEvent::Added(p) if p.metadata.name.as_deref() == Some("a")));
        assert_eq!(rv.as_deref(), Some("7"));
        let (e, _) = decode_event::<Pod>(br#"{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: 1 (5)"}}"#).unwrap();
        assert_eq!(
            e,
            WatchEvent::Error {
                code: 410,
                message: "too old resource version: 1 (5)".into()
            }
        );
        assert!(decode_event::<Pod>(b"{\"type\":\"WHAT\",\"object\":{}}").is_err());
        assert!(decode_event::<Pod>(b"not json").is_err());
    }

    #[test]
    fn continue_tokens_are_escaped() {
        assert_eq!(percent_encode("eyJ2Ijo+/="), "eyJ2Ijo%2B%2F%3D");
    }
}

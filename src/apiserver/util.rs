//! Small shared helpers: server time in Kubernetes' formats, random UUIDs.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// RFC 3339, whole seconds, UTC (`metav1.Time`).
pub fn rfc3339(t: OffsetDateTime) -> String {
    let t = t.replace_nanosecond(0).unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_default()
}

pub fn now() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// RFC 3339 with microseconds (`metav1.MicroTime`).
pub fn now_micro() -> String {
    rfc3339_micro(OffsetDateTime::now_utc())
}

/// RFC 3339 with microseconds, UTC (`metav1.MicroTime`).
pub fn rfc3339_micro(t: OffsetDateTime) -> String {
    let t = t
        .replace_nanosecond(t.nanosecond() / 1000 * 1000)
        .unwrap_or(t);
    let s = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"
    );
    t.format(&s).unwrap_or_default()
}

pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// A random (version 4) UUID: object uids and audit IDs.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The five characters a `generateName` gets (upstream `utilrand.String(5)`: consonants and
/// digits that cannot spell words or be misread).
pub fn random_suffix() -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| ALPHANUMS[usize::from(*b) % ALPHANUMS.len()] as char)
        .collect()
}

/// kubectl's HumanDuration (`apimachinery/pkg/util/duration`).
pub fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    let y = d / 365;
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        if s % 60 == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{}s", s % 60)
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{}m", m % 60)
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        if h % 24 == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{}h", h % 24)
        }
    } else if y < 2 {
        format!("{d}d")
    } else if y < 8 {
        if d % 365 == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{}d", d % 365)
        }
    } else {
        format!("{y}y")
    }
}

/// The age of a timestamp, as kubectl prints it.
pub fn age(ts: Option<&str>) -> String {
    match ts.and_then(parse_time) {
        Some(t) => human_duration((OffsetDateTime::now_utc() - t).whole_seconds()),
        None => "<unknown>".into(),
    }
}

/// Sets `next`'s metadata.generation to `current`'s plus one (1 when it has none): a spec
/// change, however it is written (update, scale, ephemeral containers).
/// The strings of a JSON list (a user's groups, a token's audiences); none when it is not one.
pub(crate) fn strings(v: Option<&serde_json::Value>) -> Vec<String> {
    v.and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn next_generation(next: &mut serde_json::Value, current: &serde_json::Value) {
    let generation = current
        .pointer("/metadata/generation")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(1);
    next["metadata"]["generation"] = serde_json::json!(generation + 1);
}

/// Puts condition `c` in `list`, replacing the one of its type and keeping that one's
/// lastTransitionTime while the status stays (how every controller and kubelet writes them).
pub(crate) fn set_condition(list: &mut Vec<serde_json::Value>, mut c: serde_json::Value) {
    match list.iter_mut().find(|x| x["type"] == c["type"]) {
        Some(old) => {
            if old["status"] == c["status"] {
                c["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = c;
        }
        None => list.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(50 * 3600), "2d2h");
    }

    #[test]
    fn uuids_are_version_4_and_distinct_across_pool_refills() {
        let ids: std::collections::HashSet<String> = (0..2000).map(|_| uuid()).collect();
        assert_eq!(ids.len(), 2000);
        for id in &ids {
            let parts: Vec<&str> = id.split('-').collect();
            let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
            assert_eq!(lens, [8, 4, 4, 4, 12], "{id}");
            assert!(id.bytes().all(|c| c == b'-' || c.is_ascii_hexdigit()));
            assert!(!id.bytes().any(|c| c.is_ascii_uppercase()));
            assert_eq!(&parts[2][..1], "4", "{id}");
            assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{id}");
        }
    }
}

/// Which JSON texts can hold one of some keys, without parsing them: a text holds a key only
/// where it holds the key in quotes, or a `\u` escape that might spell it (serde_json, which
/// writes what the store keeps, escapes no letter; another writer, etcdctl, might). Control
/// loops look at every changed object for a few keys most objects lack.
pub(crate) struct KeySearch {
    keys: Vec<memchr::memmem::Finder<'static>>,
    escape: memchr::memmem::Finder<'static>,
}

impl KeySearch {
    pub(crate) fn new(keys: &[&str]) -> KeySearch {
        KeySearch {
            keys: keys
                .iter()
                .map(|k| memchr::memmem::Finder::new(format!("\"{k}\"").as_bytes()).into_owned())
                .collect(),
            escape: memchr::memmem::Finder::new(b"\\u").into_owned(),
        }
    }

    pub(crate) fn may_hold(&self, json: &[u8]) -> bool {
        self.keys.iter().any(|f| f.find(json).is_some()) || self.escape.find(json).is_some()
    }
}

/// `Value::pointer` without its allocations: serde_json unescapes every token into a new
/// String, which made pointer lookups a third of the controllers' CPU on 1,000 pods. Paths
/// with an escape (`~0`, `~1`) still go through `pointer`.
pub(crate) trait At {
    fn at(&self, path: &str) -> Option<&serde_json::Value>;
    fn at_mut(&mut self, path: &str) -> Option<&mut serde_json::Value>;
}

impl At for serde_json::Value {
    fn at(&self, path: &str) -> Option<&serde_json::Value> {
        if path.contains('~') || !(path.is_empty() || path.starts_with('/')) {
            return self.pointer(path);
        }
        let mut cur = self;
        for tok in path.split('/').skip(1) {
            cur = match cur {
                serde_json::Value::Object(m) => m.get(tok)?,
                serde_json::Value::Array(a) => a.get(tok.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    fn at_mut(&mut self, path: &str) -> Option<&mut serde_json::Value> {
        if path.contains('~') || !(path.is_empty() || path.starts_with('/')) {
            return self.pointer_mut(path);
        }
        let mut cur = self;
        for tok in path.split('/').skip(1) {
            cur = match cur {
                serde_json::Value::Object(m) => m.get_mut(tok)?,
                serde_json::Value::Array(a) => a.get_mut(tok.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }
}

#[cfg(test)]
mod at_tests {
    use super::At;
    use serde_json::json;

    #[test]
    fn a_key_is_found_in_quotes_or_maybe_behind_an_escape() {
        let search = super::KeySearch::new(&["ownerReferences", "finalizers"]);
        assert!(search.may_hold(br#"{"metadata":{"finalizers":["x"]}}"#));
        assert!(search.may_hold(br#"{"metadata":{"owner\u0052eferences":[]}}"#));
        assert!(!search.may_hold(br#"{"metadata":{"name":"ownerReferences-less"}}"#));
    }

    #[test]
    fn at_reads_what_pointer_reads() {
        let v = json!({"a": {"b/c": 1, "d": [10, {"e": "x"}], "": 2}, "~": 3});
        for p in [
            "", "/a", "/a/d/0", "/a/d/1/e", "/a/b~1c", "/~0", "/a/", "/a/d/9", "/a/d/x", "/z", "a",
        ] {
            assert_eq!(v.at(p), v.pointer(p), "{p}");
            let (mut a, mut b) = (v.clone(), v.clone());
            assert_eq!(a.at_mut(p), b.pointer_mut(p), "{p}");
        }
    }
}

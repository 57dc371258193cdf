//! Label and field selectors as list and watch use them (specs/apiserver.md §8.3).

use serde_json::Value;

use crate::apiserver::registry::strategies;
use crate::apiserver::request::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    Gt(String, i64),
    Lt(String, i64),
}

/// A parsed label selector; terms are ANDed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<LabelReq>);

/// Split on commas outside parentheses.
fn split_terms(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn set_values(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_string()).collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let bad = |t: &str| {
            ApiError::bad_request(format!(
                "unable to parse requirement: found '{t}', expected: identifier"
            ))
        };
        let mut reqs = Vec::new();
        for t in split_terms(s) {
            let req = if let Some(k) = t.strip_prefix('!') {
                LabelReq::NotExists(k.trim().to_string())
            } else if let Some((k, v)) = t.split_once("!=") {
                LabelReq::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once("==") {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once('=') {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once(" notin ") {
                LabelReq::NotIn(k.trim().into(), set_values(v).ok_or_else(|| bad(&t))?)
            } else if let Some((k, v)) = t.split_once(" in ") {
                LabelReq::In(k.trim().into(), set_values(v).ok_or_else(|| bad(&t))?)
            } else if let Some((k, v)) = t.split_once('>') {
                LabelReq::Gt(k.trim().into(), v.trim().parse().map_err(|_| bad(&t))?)
            } else if let Some((k, v)) = t.split_once('<') {
                LabelReq::Lt(k.trim().into(), v.trim().parse().map_err(|_| bad(&t))?)
            } else if t
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            {
                LabelReq::Exists(t.clone())
            } else {
                return Err(bad(&t));
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::Gt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            LabelReq::Lt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// A parsed field selector: (field, value, equal?) terms, ANDed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, String, bool)>);

/// The fields each kind supports, and where they live in the object.
fn field_value(kind: &str, field: &str, obj: &Value) -> Option<Option<String>> {
    let s = |p: &str| {
        obj.pointer(p).map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
    };
    let common = match field {
        "metadata.name" => Some(s("/metadata/name")),
        "metadata.namespace" => Some(s("/metadata/namespace")),
        _ => None,
    };
    if common.is_some() {
        return common;
    }
    strategies::of_kind(kind).and_then(|k| k.field(field, obj))
}

impl FieldSelector {
    pub fn parse(kind: &str, s: &str) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for t in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (f, v, eq) = if let Some((f, v)) = t.split_once("!=") {
                (f, v, false)
            } else if let Some((f, v)) = t.split_once("==") {
                (f, v, true)
            } else if let Some((f, v)) = t.split_once('=') {
                (f, v, true)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{t}'"
                )));
            };
            if field_value(kind, f, &Value::Null).is_none() {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
            terms.push((f.to_string(), v.to_string(), eq));
        }
        Ok(FieldSelector(terms))
    }

    pub fn matches(&self, kind: &str, obj: &Value) -> bool {
        self.0.iter().all(|(f, v, eq)| {
            let actual = field_value(kind, f, obj).flatten().unwrap_or_default();
            (actual == *v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels() {
        let o = json!({"metadata": {"labels": {"app": "web", "tier": "fe"}}});
        for (sel, want) in [
            ("app=web", true),
            ("app!=web", false),
            ("app in (web,db)", true),
            ("tier notin (fe)", false),
            ("app,!x", true),
            ("x", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).map(|s| s.matches(&o)).ok(),
                Some(want),
                "{sel}"
            );
        }
    }

    #[test]
    fn fields() {
        let p = json!({"metadata": {"name": "app"}, "spec": {"nodeName": ""}});
        assert_eq!(
            FieldSelector::parse("Pod", "spec.nodeName=")
                .map(|s| s.matches("Pod", &p))
                .ok(),
            Some(true)
        );
        assert_eq!(
            FieldSelector::parse("Pod", "spec.nodeName!=")
                .map(|s| s.matches("Pod", &p))
                .ok(),
            Some(false)
        );
        let e = FieldSelector::parse("Pod", "spec.foo=bar")
            .err()
            .map(|e| e.message);
        assert_eq!(e.as_deref(), Some("field label not supported: spec.foo"));
    }
}

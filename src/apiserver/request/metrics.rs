//! kube-apiserver's request metrics (upstream `apiserver/pkg/endpoints/metrics`):
//! `apiserver_request_total` and `apiserver_request_duration_seconds`, labelled as upstream
//! labels them — the verb from the HTTP method (LIST, WATCH, APPLY, CONNECT), the scope of the
//! route, the dry run — for every request to a served resource and to the health endpoints.
//! A watch or a log stream is counted when it ends, with its whole length, as upstream's
//! handler returns only then.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::apiserver::request::info::RequestInfo;

/// Upstream's buckets for the request latency histogram, in seconds.
const BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

const TOTAL_HELP: &str = "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.";
const DURATION_HELP: &str = "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.";

/// One request's labels but its code, already in exposition form (sorted by name, as the
/// Prometheus client writes them): `component="apiserver",dry_run="",…,version="v1"`.
#[derive(Debug, Clone)]
pub(crate) struct Labels(String);

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// One set of labels: its counts by code and its latencies.
#[derive(Default)]
struct Series {
    totals: BTreeMap<u16, u64>,
    durations: Histogram,
}

/// Every request's count and latency since the server started.
#[derive(Default)]
pub(crate) struct RequestMetrics(Mutex<HashMap<String, Series>>);

/// A label value as the text format quotes it.
fn push_escaped(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// The labels of a request, or None for one upstream does not instrument (a path no route
/// serves, discovery, OpenAPI). `served`: the resource is one this server serves.
pub(crate) fn labels(
    info: &RequestInfo,
    method: &str,
    content_type: &str,
    served: bool,
) -> Option<Labels> {
    let pairs: [(&str, String); 8] = if info.is_resource_request {
        if !served {
            return None;
        }
        let verb = match (info.verb.as_str(), method) {
            _ if matches!(
                info.subresource.as_str(),
                "log" | "exec" | "portforward" | "attach" | "proxy"
            ) =>
            {
                "CONNECT"
            }
            ("watch", _) => "WATCH",
            ("list", _) => "LIST",
            ("get", _) => "GET",
            (_, "PATCH") if content_type.starts_with("application/apply-patch") => "APPLY",
            (_, "POST" | "PUT" | "PATCH" | "DELETE") => method,
            _ => "other",
        };
        // The route's scope: an item path or a create acts on one object; a collection is its
        // namespace's or the cluster's. By verb, not by name: a list or watch of
        // `fieldSelector=metadata.name=x` carries that name in its RequestInfo (for RBAC), and
        // is still a collection's route.
        let collection = matches!(info.verb.as_str(), "list" | "watch" | "deletecollection");
        let scope = if !collection {
            "resource"
        } else if !info.namespace.is_empty() {
            "namespace"
        } else {
            "cluster"
        };
        [
            ("component", "apiserver".into()),
            ("dry_run", dry_run(info)),
            ("group", info.api_group.clone()),
            ("resource", info.resource.clone()),
            ("scope", scope.into()),
            ("subresource", info.subresource.clone()),
            ("verb", verb.into()),
            ("version", info.api_version.clone()),
        ]
    } else {
        // The health endpoints report themselves, with the path as their subresource.
        let path = info.path.trim_end_matches('/');
        let root = path.split('/').nth(1).unwrap_or_default();
        if !matches!(root, "healthz" | "livez" | "readyz") {
            return None;
        }
        [
            ("component", String::new()),
            ("dry_run", String::new()),
            ("group", String::new()),
            ("resource", String::new()),
            ("scope", String::new()),
            ("subresource", path.into()),
            ("verb", "GET".into()),
            ("version", String::new()),
        ]
    };
    let mut s = String::with_capacity(160);
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(k);
        s.push_str("=\"");
        push_escaped(&mut s, v);
        s.push('"');
    }
    Some(Labels(s))
}

/// Upstream's `cleanDryRun`: the values deduplicated and sorted, or `invalid`.
fn dry_run(info: &RequestInfo) -> String {
    let mut values = info.query_all("dryRun");
    if values.iter().any(|v| v != "All") {
        return "invalid".into();
    }
    values.sort();
    values.dedup();
    values.join(",")
}

impl RequestMetrics {
    /// A request that started at `started` has ended with `code`.
    pub(crate) fn record(&self, labels: &Labels, code: u16, started: Instant) {
        self.observe(labels, code, started.elapsed());
    }

    fn observe(&self, labels: &Labels, code: u16, took: Duration) {
        let secs = took.as_secs_f64();
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Looked up before inserting: the labels are copied once per series, not per request.
        if !g.contains_key(&labels.0) {
            g.insert(labels.0.clone(), Series::default());
        }
        let Some(series) = g.get_mut(&labels.0) else {
            return;
        };
        *series.totals.entry(code).or_default() += 1;
        let h = &mut series.durations;
        h.count += 1;
        h.sum += secs;
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            h.counts[i] += 1;
        }
    }

    /// The two families in Prometheus' text format.
    pub(crate) fn write_text(&self, out: &mut String) {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Series in label order, as the Prometheus client writes them.
        let mut all: Vec<(&String, &Series)> = g.iter().collect();
        all.sort_by_key(|(labels, _)| *labels);
        let _ = writeln!(
            out,
            "# HELP apiserver_request_duration_seconds {DURATION_HELP}"
        );
        let _ = writeln!(out, "# TYPE apiserver_request_duration_seconds histogram");
        for (labels, series) in &all {
            let h = &series.durations;
            let mut cumulative = 0;
            for (b, n) in BUCKETS.iter().zip(h.counts) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_bucket{{{labels},le=\"{b}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_sum{{{labels}}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_count{{{labels}}} {}",
                h.count
            );
        }
        let _ = writeln!(out, "# HELP apiserver_request_total {TOTAL_HELP}");
        let _ = writeln!(out, "# TYPE apiserver_request_total counter");
        for (labels, series) in &all {
            for (code, n) in &series.totals {
                let _ = writeln!(
                    out,
                    "apiserver_request_total{{code=\"{code}\",{labels}}} {n}"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::request::info as request_info;
    use hyper::Method;

    fn of(method: Method, path: &str, query: Option<&str>, ct: &str) -> Option<String> {
        let info = request_info::parse(&method, path, query);
        labels(&info, method.as_str(), ct, true).map(|l| l.0)
    }

    #[test]
    fn verbs_and_scopes_as_upstream_reports_them() {
        let l = of(Method::GET, "/api/v1/namespaces/default/pods", None, "").unwrap_or_default();
        assert_eq!(
            l,
            r#"component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1""#
        );
        let l = of(
            Method::GET,
            "/api/v1/namespaces/a/pods",
            Some("fieldSelector=metadata.name%3Dp"),
            "",
        )
        .unwrap_or_default();
        assert!(
            l.contains(r#"scope="namespace""#) && l.contains(r#"verb="LIST""#),
            "{l}"
        );
        let l = of(Method::GET, "/api/v1/pods", Some("watch=true"), "").unwrap_or_default();
        assert!(
            l.contains(r#"scope="cluster""#) && l.contains(r#"verb="WATCH""#),
            "{l}"
        );
        let l = of(
            Method::POST,
            "/apis/apps/v1/namespaces/a/deployments",
            Some("dryRun=All"),
            "",
        )
        .unwrap_or_default();
        assert!(
            l.contains(r#"dry_run="All",group="apps""#)
                && l.contains(r#"scope="resource""#)
                && l.contains(r#"verb="POST""#),
            "{l}"
        );
        let l = of(
            Method::PATCH,
            "/api/v1/namespaces/a/pods/p",
            None,
            "application/apply-patch+yaml",
        )
        .unwrap_or_default();
        assert!(l.contains(r#"verb="APPLY""#), "{l}");
        let l = of(Method::GET, "/api/v1/namespaces/a/pods/p/log", None, "").unwrap_or_default();
        assert!(l.contains(r#"subresource="log",verb="CONNECT""#), "{l}");
        let l = of(Method::DELETE, "/api/v1/namespaces/a/pods", None, "").unwrap_or_default();
        assert!(
            l.contains(r#"scope="namespace""#) && l.contains(r#"verb="DELETE""#),
            "{l}"
        );
        let l = of(Method::GET, "/readyz", Some("verbose"), "").unwrap_or_default();
        assert_eq!(
            l,
            r#"component="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version="""#
        );
        assert!(of(Method::GET, "/apis", None, "").is_none());
        let l = of(
            Method::DELETE,
            "/api/v1/namespaces/a/pods/p",
            Some("dryRun=Bogus"),
            "",
        );
        assert!(l.unwrap_or_default().contains(r#"dry_run="invalid""#));
    }

    #[test]
    fn counts_by_code_and_latency_in_upstreams_buckets() {
        let m = RequestMetrics::default();
        let info = request_info::parse(&Method::GET, "/api/v1/namespaces/a/pods/p", None);
        let l = labels(&info, "GET", "", true).expect("served");
        m.observe(&l, 200, Duration::from_millis(3));
        m.observe(&l, 200, Duration::from_millis(30));
        m.observe(&l, 404, Duration::from_secs(90));
        let mut out = String::new();
        m.write_text(&mut out);
        let l = &l.0;
        for want in [
            format!("apiserver_request_total{{code=\"200\",{l}}} 2"),
            format!("apiserver_request_total{{code=\"404\",{l}}} 1"),
            format!("apiserver_request_duration_seconds_bucket{{{l},le=\"0.005\"}} 1"),
            format!("apiserver_request_duration_seconds_bucket{{{l},le=\"0.05\"}} 2"),
            format!("apiserver_request_duration_seconds_bucket{{{l},le=\"60\"}} 2"),
            format!("apiserver_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} 3"),
            format!("apiserver_request_duration_seconds_count{{{l}}} 3"),
        ] {
            assert!(out.contains(&format!("{want}\n")), "no {want} in\n{out}");
        }
    }
}

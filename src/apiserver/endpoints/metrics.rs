//! `GET /metrics`: kube-apiserver's metrics in Prometheus' text format, the families a
//! workshop reads (`kubectl get --raw /metrics | grep apiserver_request_total`): the request
//! counts and latencies (`request/metrics.rs`), the objects stored per resource, the build,
//! and the process's CPU, memory and start time. Families are written in name order, as the
//! Prometheus client writes them.

use std::fmt::Write as _;

use hyper::body::Bytes;
use serde_json::Value;

use crate::apiserver::registry::discovery;
use crate::apiserver::registry::resources::RESOURCES;
use crate::apiserver::request::context::{Api, Reply};
use crate::apiserver::request::status::{ApiError, group_resource};

/// What the Prometheus client answers a scraper that asks for no other format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores";

pub(crate) fn serve(api: &Api) -> Result<Reply, ApiError> {
    let mut out = String::new();
    api.request_metrics.write_text(&mut out);
    storage_objects(api, &mut out);
    build_info(&mut out);
    process(&mut out);
    Ok(Reply::Raw {
        code: 200,
        content_type: CONTENT_TYPE,
        body: Bytes::from(out),
    })
}

/// `apiserver_storage_objects`: the keys under each stored resource's prefix, counted now
/// (upstream counts every minute; "the time of last check" is this request).
fn storage_objects(api: &Api, out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."
    );
    let _ = writeln!(out, "# TYPE apiserver_storage_objects gauge");
    let at = api.store.current_rv();
    let mut rows: Vec<(String, i64)> = Vec::new();
    let mut keys: Vec<&str> = Vec::new();
    for def in RESOURCES
        .iter()
        .filter(|d| d.stored() && d.verbs.contains(&"list"))
    {
        // A kind served in two versions or groups (events.k8s.io's Events) is one set of
        // keys, counted under the first name it is served by.
        if keys.contains(&def.key) {
            continue;
        }
        keys.push(def.key);
        let resource = group_resource(def.group, def.plural);
        let count = match api.store.list_keys_at(&def.prefix_for(""), "", at, 1, true) {
            Ok(page) => page
                .remaining_from_start
                .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)),
            Err(_) => -1,
        };
        rows.push((resource, count));
    }
    rows.sort();
    for (resource, count) in rows {
        let _ = writeln!(
            out,
            "apiserver_storage_objects{{resource=\"{resource}\"}} {count}"
        );
    }
}

/// `kubernetes_build_info`, from the same facts `/version` answers.
fn build_info(out: &mut String) {
    let v = discovery::version();
    let s = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let _ = writeln!(
        out,
        "# HELP kubernetes_build_info [ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running."
    );
    let _ = writeln!(out, "# TYPE kubernetes_build_info gauge");
    let _ = writeln!(
        out,
        "kubernetes_build_info{{build_date=\"{}\",compiler=\"{}\",git_commit=\"{}\",git_tree_state=\"{}\",git_version=\"{}\",go_version=\"{}\",major=\"{}\",minor=\"{}\",platform=\"{}\"}} 1",
        s("buildDate"),
        s("compiler"),
        s("gitCommit"),
        s("gitTreeState"),
        s("gitVersion"),
        s("goVersion"),
        s("major"),
        s("minor"),
        s("platform"),
    );
}

/// The process collector's three most read figures, from `/proc/self` (left out where
/// `/proc` cannot be read).
fn process(out: &mut String) {
    let Some(p) = ProcessStats::read() else {
        return;
    };
    for (name, kind, help, value) in [
        (
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            p.cpu_seconds,
        ),
        (
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            p.resident_bytes,
        ),
        (
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since unix epoch in seconds.",
            p.start_time,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name} {value}");
    }
}

struct ProcessStats {
    cpu_seconds: f64,
    resident_bytes: f64,
    start_time: f64,
}

impl ProcessStats {
    /// Clock ticks are 100 a second and pages 4 KiB on every Linux this runs on (what
    /// `sysconf` says there); the start is the boot time plus the process's start in ticks.
    fn read() -> Option<ProcessStats> {
        const TICKS: f64 = 100.0;
        const PAGE: f64 = 4096.0;
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Fields after the command, which may hold spaces, start after its last ')'.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
        // `rest` starts at field 3 (state): utime is field 14, stime 15, starttime 22.
        let (utime, stime, start) = (num(11)?, num(12)?, num(19)?);
        let rss_pages: f64 = std::fs::read_to_string("/proc/self/statm")
            .ok()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let btime: f64 = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        Some(ProcessStats {
            cpu_seconds: (utime + stime) / TICKS,
            resident_bytes: rss_pages * PAGE,
            start_time: btime + start / TICKS,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_figures_are_this_process() {
        let p = ProcessStats::read().expect("/proc");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        // Started before now and not before the test binary could have been built.
        assert!(
            p.start_time <= now + 1.0 && p.start_time > now - 3600.0,
            "{}",
            p.start_time
        );
        assert!(p.resident_bytes > 1e6, "{}", p.resident_bytes);
        assert!(p.cpu_seconds >= 0.0);
    }

    #[test]
    fn every_stored_resource_is_counted_once_by_its_qualified_name() {
        let api = Api::new(Default::default(), None);
        let mut out = String::new();
        storage_objects(&api, &mut out);
        assert!(
            out.contains("apiserver_storage_objects{resource=\"pods\"} 0\n"),
            "{out}"
        );
        assert!(
            out.contains("apiserver_storage_objects{resource=\"deployments.apps\"} 0\n"),
            "{out}"
        );
        let hpa = "apiserver_storage_objects{resource=\"horizontalpodautoscalers.autoscaling\"}";
        assert_eq!(out.matches(hpa).count(), 1, "{out}");
    }
}

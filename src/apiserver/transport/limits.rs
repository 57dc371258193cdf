//! The server's limits and timeouts, one struct so `kexplore serve` flags, the in-process
//! embedded server and tests all configure the same things. Defaults follow kube-apiserver (and
//! the Go `http.Server` it configures) where it has a value; the rest are kexplore's own caps.

use std::time::Duration;

/// Every limit the embedded server enforces. A count or duration of 0 means "no limit" for the
/// ones documented so (kube-apiserver's convention for its in-flight flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted (kube-apiserver `MaxRequestBodyBytes`, 3 MiB) → 413.
    pub max_request_body_bytes: usize,
    /// Largest request head (request line + headers; HTTP/2 header list) → 431.
    /// Go's `http.DefaultMaxHeaderBytes`, which kube-apiserver keeps.
    pub max_header_bytes: usize,
    /// Time a client has to send a complete request head (Go's `ReadHeaderTimeout`).
    pub read_header_timeout: Duration,
    /// Time a request's body has to arrive once its head has (kube-apiserver's
    /// `--request-timeout`, 60 s → 504; here it bounds the body, not the handler). 0: none.
    pub request_timeout: Duration,
    /// A connection with no request in flight for this long is closed (HTTP/2: GOAWAY).
    /// Go's `IdleTimeout`, 90 s in kube-apiserver. 0: never.
    pub idle_timeout: Duration,
    /// HTTP/2 PING interval while streams are open, so a vanished peer holding a watch is
    /// noticed; the connection closes when a PING is not answered within the same interval.
    /// 0: no pings.
    pub http2_keepalive_interval: Duration,
    /// Connections served at once; beyond it new connections wait in the listen backlog.
    /// 0: no cap.
    pub max_connections: usize,
    /// Watches served at once; beyond it a watch gets 429 with Retry-After. 0: no cap.
    pub max_watches: usize,
    /// `--max-requests-inflight`: non-mutating requests at once (watches exempt). 0: no limit.
    pub max_requests_inflight: usize,
    /// `--max-mutating-requests-inflight`. 0: no limit.
    pub max_mutating_requests_inflight: usize,
    /// On shutdown, how long in-flight requests get to finish before connections are cut.
    pub shutdown_grace_period: Duration,
    /// How much change history the store keeps for watches and for reads at past revisions
    /// (continue tokens, `resourceVersionMatch=Exact`); older revisions answer 410.
    pub history: crate::apiserver::storage::store::HistoryLimits,
    /// `--service-cluster-ip-range` and `--service-node-port-range`: where Services' ClusterIPs
    /// and NodePorts come from.
    pub services: crate::apiserver::storage::service_alloc::ServiceRanges,
    /// The node lifecycle controller's `--node-monitor-grace-period`: a node whose kubelet has
    /// not renewed its Lease for this long becomes Ready=Unknown and unreachable-tainted. The
    /// simulated kubelets renew at most a fifth of it apart.
    pub node_monitor_grace_period: Duration,
    /// kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`.
    pub horizontal_pod_autoscaler_sync_period: Duration,
}

/// `--node-monitor-grace-period`'s default: 40 s up to 1.31, 50 s from 1.32 (kubernetes#126287);
/// the server reports 1.33.
pub const DEFAULT_NODE_MONITOR_GRACE_PERIOD: Duration = Duration::from_secs(50);

/// `--horizontal-pod-autoscaler-sync-period`'s default.
pub const DEFAULT_HPA_SYNC_PERIOD: Duration = Duration::from_secs(15);

pub(crate) const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;
pub(crate) const DEFAULT_MAX_HEADER_BYTES: usize = 1024 * 1024;
/// hyper refuses a read buffer smaller than this.
pub(crate) const MIN_MAX_HEADER_BYTES: usize = 8192;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_request_body_bytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            read_header_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(90),
            http2_keepalive_interval: Duration::from_secs(30),
            // Above the 10,000 raw connections of the hostile-input table, below the 20,000
            // open files this machine allows a process.
            max_connections: 16_384,
            // Ten times the benchmark's 1,000 concurrent watchers.
            max_watches: 10_000,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            shutdown_grace_period: Duration::from_secs(10),
            history: crate::apiserver::storage::store::HistoryLimits::default(),
            services: crate::apiserver::storage::service_alloc::ServiceRanges::default(),
            node_monitor_grace_period: DEFAULT_NODE_MONITOR_GRACE_PERIOD,
            horizontal_pod_autoscaler_sync_period: DEFAULT_HPA_SYNC_PERIOD,
        }
    }
}

/// A Go-style duration as kube-apiserver flags take them: `90s`, `1m30s`, `500ms`, `0`.
/// Units: `ms`, `s`, `m`, `h`; a bare `0` is zero.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    let bad =
        || format!("invalid duration {text:?}: use a number with a unit, e.g. 90s, 1m30s, 500ms");
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let part = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.checked_mul(60).ok_or_else(bad)?),
            "h" => Duration::from_secs(n.checked_mul(3600).ok_or_else(bad)?),
            _ => return Err(bad()),
        };
        total = total.checked_add(part).ok_or_else(bad)?;
        rest = &rest[unit_len..];
    }
    Ok(total)
}

/// `--node-monitor-grace-period`: a duration of at least 1s (the kubelets renew their Leases a
/// fifth of it apart, and a zero period would take every node away at once).
pub(crate) fn parse_node_monitor_grace_period(text: &str) -> Result<Duration, String> {
    at_least_a_second(text, "the grace period")
}

fn at_least_a_second(text: &str, what: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_secs(1) {
        return Err(format!("{text:?} is too short: {what} is at least 1s"));
    }
    Ok(d)
}

/// `--horizontal-pod-autoscaler-sync-period`: at least 1s (kube-controller-manager refuses
/// nothing here, but a zero period would reconcile every HPA on every wake-up of its loop).
pub(crate) fn parse_sync_period(text: &str) -> Result<Duration, String> {
    at_least_a_second(text, "the sync period")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_go_writes_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in [
            "",
            "90",
            "s",
            "1.5s",
            "-1s",
            "10x",
            "1m30",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }
}

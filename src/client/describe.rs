//! A pod described as `kubectl describe pod` does, from what the server answers: the pod,
//! then its events (`involvedObject` field selectors, oldest first). Plain lines: the TUI's `d`
//! shows them, and anything else may print them.

use serde_json::Value;

use super::http::ApiClient;
use crate::apiserver::util::{age, human_duration};

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn or_none(x: &str) -> &str {
    if x.is_empty() { "<none>" } else { x }
}

/// `k=v,k2=v2` (kubectl prints one per line; one line keeps the overlay short).
fn pairs(v: Option<&Value>) -> String {
    let Some(m) = v.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    m.iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(",")
}

fn requests(c: &Value) -> String {
    match c.pointer("/resources/requests").and_then(Value::as_object) {
        Some(r) if !r.is_empty() => r
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "<none>".into(),
    }
}

/// The last time an event happened, by the field its writer set (events.k8s.io writers set
/// eventTime; core/v1 writers lastTimestamp).
fn last_seen(e: &Value) -> &str {
    [
        "/lastTimestamp",
        "/eventTime",
        "/series/lastObservedTime",
        "/firstTimestamp",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .map(|p| s(e, p))
    .find(|t| !t.is_empty())
    .unwrap_or_default()
}

/// A container's State (or, `field` "lastState", its Last State) as `kubectl describe` prints
/// it: Running, Waiting with its reason (and message), Terminated with its reason and exit code.
fn state_lines(st: Option<&Value>, field: &str) -> Vec<String> {
    let state = st.and_then(|st| st.get(field)).and_then(Value::as_object);
    let label = if field == "state" {
        "State:    "
    } else {
        "Last State:"
    };
    let Some((kind, detail)) = state.and_then(|m| m.iter().next()) else {
        return vec![format!("    {label} Waiting")];
    };
    let mut out = vec![format!(
        "    {label} {}",
        match kind.as_str() {
            "running" => "Running",
            "terminated" => "Terminated",
            _ => "Waiting",
        }
    )];
    for (key, label) in [("reason", "Reason"), ("message", "Message")] {
        if let Some(v) = detail
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        {
            out.push(format!("      {label}:  {v}"));
        }
    }
    if let Some(code) = detail.get("exitCode").and_then(Value::as_i64) {
        out.push(format!("      Exit Code:  {code}"));
    }
    out
}

/// The lines `kubectl describe pod` prints for these fields, then the events.
pub fn lines(pod: &Value, events: &[Value]) -> Vec<String> {
    let mut out = vec![
        format!("Name:             {}", s(pod, "/metadata/name")),
        format!("Namespace:        {}", s(pod, "/metadata/namespace")),
        format!(
            "Priority:         {}",
            pod.pointer("/spec/priority")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        ),
        format!(
            "Service Account:  {}",
            or_none(s(pod, "/spec/serviceAccountName"))
        ),
        format!("Node:             {}", or_none(s(pod, "/spec/nodeName"))),
        format!("Start Time:       {}", or_none(s(pod, "/status/startTime"))),
        format!(
            "Labels:           {}",
            pairs(pod.pointer("/metadata/labels"))
        ),
        format!("Status:           {}", or_none(s(pod, "/status/phase"))),
        format!("IP:               {}", or_none(s(pod, "/status/podIP"))),
    ];
    if let Some(owner) = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|o| o.iter().find(|r| r["controller"] == Value::Bool(true)))
    {
        out.push(format!(
            "Controlled By:    {}/{}",
            s(owner, "/kind"),
            s(owner, "/name")
        ));
    }
    for (heading, spec, statuses) in [
        (
            "Init Containers:",
            "/spec/initContainers",
            "/status/initContainerStatuses",
        ),
        (
            "Containers:",
            "/spec/containers",
            "/status/containerStatuses",
        ),
    ] {
        let Some(containers) = pod.pointer(spec).and_then(Value::as_array) else {
            continue;
        };
        out.push(heading.into());
        let statuses = pod.pointer(statuses).and_then(Value::as_array);
        for c in containers {
            let name = s(c, "/name");
            out.push(format!("  {name}:"));
            out.push(format!("    Image:     {}", s(c, "/image")));
            let st = statuses
                .into_iter()
                .flatten()
                .find(|st| s(st, "/name") == name);
            out.extend(state_lines(st, "state"));
            // Printed only when there is one, as kubectl does: a container restarted.
            let last = st.and_then(|st| st.get("lastState"));
            if last
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
            {
                out.extend(state_lines(st, "lastState"));
            }
            out.push(format!(
                "    Ready:     {}",
                st.and_then(|st| st.get("ready"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ));
            out.push(format!(
                "    Restart Count:  {}",
                st.and_then(|st| st.get("restartCount"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            ));
            out.push(format!("    Requests:  {}", requests(c)));
        }
    }
    let conditions = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty());
    if let Some(conditions) = conditions {
        out.push("Conditions:".into());
        out.push("  Type              Status".into());
        for c in conditions {
            out.push(format!("  {:<17} {}", s(c, "/type"), s(c, "/status")));
        }
    }
    out.push(format!(
        "Node-Selectors:   {}",
        pairs(pod.pointer("/spec/nodeSelector"))
    ));
    let tolerations: Vec<String> = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            let mut x = s(t, "/key").to_string();
            match s(t, "/operator") {
                "Exists" => {}
                _ if !s(t, "/value").is_empty() => x.push_str(&format!("={}", s(t, "/value"))),
                _ => {}
            }
            if !s(t, "/effect").is_empty() {
                x.push_str(&format!(":{}", s(t, "/effect")));
            }
            if let Some(secs) = t.get("tolerationSeconds").and_then(Value::as_i64) {
                x.push_str(&format!(" for {secs}s"));
            }
            if x.is_empty() { "op=Exists".into() } else { x }
        })
        .collect();
    out.push(format!(
        "Tolerations:      {}",
        if tolerations.is_empty() {
            "<none>".to_string()
        } else {
            tolerations.join(", ")
        }
    ));
    if events.is_empty() {
        out.push("Events:           <none>".into());
        return out;
    }
    out.push("Events:".into());
    out.push("  Type     Reason            Age   From               Message".into());
    let mut events: Vec<&Value> = events.iter().collect();
    events.sort_by(|a, b| last_seen(a).cmp(last_seen(b)));
    for e in events {
        let from = [
            "/source/component",
            "/reportingComponent",
            "/reportingController",
        ]
        .iter()
        .map(|p| s(e, p))
        .find(|x| !x.is_empty())
        .unwrap_or_default();
        let count = e.get("count").and_then(Value::as_i64).unwrap_or(1);
        let mut when = age(Some(last_seen(e)));
        if count > 1 {
            // kubectl: "3m (x4 over 10m)".
            let first = s(e, "/firstTimestamp");
            let over = crate::apiserver::util::parse_time(first)
                .map(|t| human_duration((time::OffsetDateTime::now_utc() - t).whole_seconds()));
            when = match over {
                Some(o) => format!("{when} (x{count} over {o})"),
                None => format!("{when} (x{count})"),
            };
        }
        out.push(format!(
            "  {:<8} {:<17} {:<5} {:<18} {}",
            or_none(s(e, "/type")),
            s(e, "/reason"),
            when,
            from,
            s(e, "/message").trim()
        ));
    }
    out
}

/// Reads pod `namespace/name` and its events from the server, as `kubectl describe` does.
pub async fn describe_pod(
    api: &ApiClient,
    namespace: &str,
    name: &str,
) -> Result<Vec<String>, String> {
    let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
    let r = api
        .get(&path)
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    let pod = r.json().unwrap_or(Value::Null);
    if r.status != 200 {
        let why = s(&pod, "/message");
        return Err(format!("GET {path}: HTTP {} {why}", r.status));
    }
    let selector = format!(
        "involvedObject.name={name},involvedObject.namespace={namespace},involvedObject.kind=Pod"
    );
    let path = format!(
        "/api/v1/namespaces/{namespace}/events?fieldSelector={}",
        super::cluster::percent_encode(&selector)
    );
    let mut out = Vec::new();
    let events = match api.get(&path).await {
        Ok(r) if r.status == 200 => r
            .json()
            .and_then(|l| l.get("items").and_then(Value::as_array).cloned())
            .unwrap_or_default(),
        Ok(r) => {
            out.push(format!(
                "(events not shown: GET {path} answered HTTP {})",
                r.status
            ));
            Vec::new()
        }
        Err(e) => {
            out.push(format!("(events not shown: GET {path}: {e})"));
            Vec::new()
        }
    };
    let mut lines = lines(&pod, &events);
    lines.extend(out);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_a_pending_pod_with_its_scheduling_event() {
        let pod = json!({
            "metadata": {"name": "big", "namespace": "default", "labels": {"run": "big"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "64"}}}],
                     "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                      "effect": "NoExecute", "tolerationSeconds": 300}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False"}]}
        });
        let events = [json!({
            "type": "Warning", "reason": "FailedScheduling", "count": 1,
            "lastTimestamp": "2026-01-01T00:00:00Z",
            "source": {"component": "default-scheduler"},
            "message": "0/4 nodes are available: 3 Insufficient cpu."
        })];
        let text = lines(&pod, &events).join("\n");
        for want in [
            "Name:             big",
            "Node:             <none>",
            "Status:           Pending",
            "Labels:           run=big",
            "    Requests:  cpu: 64",
            "  PodScheduled      False",
            "Tolerations:      node.kubernetes.io/not-ready:NoExecute for 300s",
            "Warning  FailedScheduling",
            "default-scheduler",
            "0/4 nodes are available: 3 Insufficient cpu.",
        ] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
        assert!(
            lines(&pod, &[])
                .join("\n")
                .contains("Events:           <none>")
        );
    }

    /// A pod held by its init container and its configuration: both lists, each container's
    /// state with the reason and message a kubelet gave.
    #[test]
    fn describes_init_containers_and_why_a_container_waits() {
        let pod = json!({
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {"initContainers": [{"name": "migrate", "image": "busybox"}],
                     "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Pending",
                "initContainerStatuses": [{"name": "migrate", "ready": true, "state": {"terminated":
                    {"exitCode": 0, "reason": "Completed"}}}],
                "containerStatuses": [{"name": "app", "ready": false, "state": {"waiting":
                    {"reason": "CreateContainerConfigError", "message": "configmap \"cfg\" not found"}}}]}
        });
        let text = lines(&pod, &[]).join("\n");
        let want = "Init Containers:\n  migrate:\n    Image:     busybox\n    State:     Terminated\n      Reason:  Completed\n      Exit Code:  0\n    Ready:     true\n    Restart Count:  0\n    Requests:  <none>\nContainers:\n  app:\n    Image:     nginx\n    State:     Waiting\n      Reason:  CreateContainerConfigError\n      Message:  configmap \"cfg\" not found\n    Ready:     false\n    Restart Count:  0";
        assert!(text.contains(want), "{want}\nin\n{text}");
    }

    /// A container in CrashLoopBackOff: its Last State (the instance that failed) and how many
    /// times it was restarted, as kubectl describe prints them.
    #[test]
    fn describes_a_restarted_containers_last_state_and_restarts() {
        let pod = json!({
            "metadata": {"name": "crash", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
            "status": {"phase": "Running",
                "containerStatuses": [{"name": "app", "ready": false, "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 3, "reason": "Error"}}}]}
        });
        let text = lines(&pod, &[]).join("\n");
        let want = "    State:     Waiting\n      Reason:  CrashLoopBackOff\n    Last State: Terminated\n      Reason:  Error\n      Exit Code:  3\n    Ready:     false\n    Restart Count:  2";
        assert!(text.contains(want), "{want}\nin\n{text}");
    }
}

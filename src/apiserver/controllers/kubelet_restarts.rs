//! Containers that exit (`kubelet_completion::exit_code`) run, exit and are started again as
//! long as the pod's restart policy says, then the pod ends. They are restarted as the kubelet
//! restarts them: the first time at once, then after a back-off counted from the exit, 10 s
//! doubling up to 5 minutes (upstream's `backOffPeriod` and `MaxContainerBackOff`), meanwhile
//! waiting in CrashLoopBackOff with upstream's message and BackOff event. Each restart counts in
//! `restartCount`, the instance before it is the container's `lastState`, and
//! `kubectl logs --previous` reads that instance's lines.

use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_completion::{
    exit_code, exited, finish, log, restarts, run_for, terminated,
};
use crate::apiserver::controllers::kubelet_containers::{
    CRASH_LOOP, STEP, State, pull_image, start_container,
};
use crate::apiserver::controllers::kubelet_images::NodeImages;
use crate::apiserver::controllers::kubelet_probes as probes;
use crate::apiserver::controllers::kubelet_report::{
    cond, containers, event, not_ready, s, set_status, step, still_starting,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::util;

/// The back-off before the restart that follows `restarts` earlier ones: none before the first,
/// then 10 s, 20 s, … up to 300 s.
pub(crate) fn backoff(restarts: i64) -> Duration {
    if restarts <= 0 {
        return Duration::ZERO;
    }
    let doubled = 10u64 << (restarts - 1).min(5);
    Duration::from_secs(doubled.min(300))
}

/// A duration as Go prints it (`10s`, `1m20s`, `5m0s`): the back-off message's words.
pub(crate) fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m{}s", secs / 60, secs % 60)
    }
}

/// `format.Pod`: `name_namespace(uid)`.
pub(crate) fn pod_ref(pod: &Value) -> String {
    format!(
        "{}_{}({})",
        s(pod, "/metadata/name"),
        s(pod, "/metadata/namespace"),
        s(pod, "/metadata/uid")
    )
}

/// Lets a Running pod's containers run for their time and exit with their code (`exit_code`),
/// restarted as long as the restart policy says, until the pod ends.
/// Returns early, changing nothing more, when the pod is deleted or replaced meanwhile (the
/// kubelet then stops it).
pub(crate) async fn run_until_done(
    api: &Api,
    pod: &Value,
    (started_at, already): (&str, Duration),
    node_images: &NodeImages,
) {
    let Some(mut code) = exit_code(pod) else {
        return;
    };
    let (mut since, mut already) = (started_at.to_string(), already);
    loop {
        if !run_for(api, pod, already).await {
            return;
        }
        // The code is the pod's annotation as it stands when the run time ends, so annotating a
        // running pod decides how it exits.
        if let Some(now) = still_starting(api, pod).and_then(|p| exit_code(&p)) {
            code = now;
        }
        if !restarts(pod, code) {
            finish(api, pod, &since, code);
            return;
        }
        match exited_then_restarted(api, pod, code, &since, node_images).await {
            Some(at) => (since, already) = (at, Duration::ZERO),
            None => return,
        }
    }
}

/// The pod's containers exited with `code` (running since `since`) and are started again after
/// their back-off: when they started. None when the pod went away meanwhile.
pub(crate) async fn exited_then_restarted(
    api: &Api,
    pod: &Value,
    code: i32,
    since: &str,
    node_images: &NodeImages,
) -> Option<String> {
    let node = s(pod, "/spec/nodeName").to_string();
    let app = containers(pod, "containers");
    let names: Vec<&str> = app.iter().map(|c| s(c, "/name")).collect();
    for name in &names {
        log(api, pod, name, &exited(code));
    }
    let state = terminated(code, since, &util::now());
    let now = util::now();
    let p = set_status(api, pod, |st| {
        each_status(st, "containerStatuses", |c| {
            let mut state = state.clone();
            state["terminated"]["containerID"] = c["containerID"].clone();
            c["state"] = state;
            c["ready"] = json!(false);
            c["started"] = json!(false);
        });
        unready(st, &names.join(" "), &now);
    })?;
    let restarts = p
        .pointer("/status/containerStatuses/0/restartCount")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    step(
        api,
        &p,
        "Exited",
        json!({"exitCode": code, "restartCount": restarts, "note": "simulated: the run time elapsed, no process ran"}),
    );
    let wait = backoff(restarts);
    if wait.is_zero() {
        tokio::time::sleep(STEP).await;
    } else {
        crash_loop(api, &p, (&node, &names), wait).await?;
    }
    let p = still_starting(api, pod)?;
    let mut started = Vec::new();
    for c in &app {
        let cname = s(c, "/name");
        let field = format!("spec.containers{{{cname}}}");
        api.container_logs.restarted(s(&p, "/metadata/uid"), cname);
        // The image is on the node: it ran before.
        let _ = pull_image(api, &p, &node, c, &field, node_images).await;
        started.push((
            cname.to_string(),
            start_container(api, &p, &node, (cname, &field)),
        ));
    }
    let at = started
        .iter()
        .find_map(|(_, st)| match st {
            State::Running(at) => Some(at.clone()),
            State::Waiting(..) | State::Completed(..) => None,
        })
        .unwrap_or_else(util::now);
    ready_after_restart(api, pod, &app, &started).await?;
    Some(at)
}

/// Waits out the back-off in CrashLoopBackOff; None when the pod went away meanwhile.
async fn crash_loop(
    api: &Api,
    pod: &Value,
    (node, names): (&str, &[&str]),
    wait: Duration,
) -> Option<()> {
    let who = pod_ref(pod);
    let message = |name: &str| {
        format!(
            "back-off {} restarting failed container={name} pod={who}",
            go_duration(wait)
        )
    };
    let p = set_status(api, pod, |st| {
        each_status(st, "containerStatuses", |c| {
            let name = s(c, "/name").to_string();
            c["lastState"] = c["state"].clone();
            c["state"] =
                json!({"waiting": {"reason": "CrashLoopBackOff", "message": message(&name)}});
        });
    })?;
    for name in names {
        event(
            api,
            &p,
            node,
            &format!("spec.containers{{{name}}}"),
            ("Warning", "BackOff"),
            &format!("Back-off restarting failed container {name} in pod {who}"),
        );
    }
    step(
        api,
        &p,
        CRASH_LOOP,
        json!({"backOff": go_duration(wait), "containers": names.join(" ")}),
    );
    sit_out(api, pod, wait).await
}

/// Waits `wait` (a back-off) while the pod stays; None as soon as it goes away.
pub(crate) async fn sit_out(api: &Api, pod: &Value, wait: Duration) -> Option<()> {
    let until = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(250)).await;
        still_starting(api, pod)?;
    }
    Some(())
}

/// The restarted containers run: each status counts the restart and keeps the instance before
/// as its lastState; ready as their probes say (`kubelet_probes`), rewritten as they pass.
async fn ready_after_restart(
    api: &Api,
    pod: &Value,
    app: &[Value],
    started: &[(String, State)],
) -> Option<()> {
    let gates = probes::gates(app, started);
    let mut first = true;
    loop {
        let (unstarted, unready_now) = probes::pending(&gates, time::OffsetDateTime::now_utc());
        let now = util::now();
        let p = set_status(api, pod, |st| {
            each_status(st, "containerStatuses", |c| {
                let name = s(c, "/name").to_string();
                let Some(State::Running(at)) =
                    started.iter().find(|(n, _)| *n == name).map(|(_, st)| st)
                else {
                    return;
                };
                if first {
                    if c["state"].get("terminated").is_some() {
                        c["lastState"] = c["state"].clone();
                    }
                    let n = c["restartCount"].as_i64().unwrap_or(0);
                    c["restartCount"] = json!(n + 1);
                }
                c["state"] = json!({"running": {"startedAt": at}});
                c["started"] = json!(!unstarted.contains(&name.as_str()));
                c["ready"] = json!(!unready_now.contains(&name.as_str()));
            });
            if unready_now.is_empty() {
                set_condition(st, cond("Ready", "True", &now));
                set_condition(st, cond("ContainersReady", "True", &now));
            } else {
                unready(st, &unready_now.join(" "), &now);
            }
        })?;
        if first {
            step(
                api,
                &p,
                "Restarted",
                json!({"restartCount": p.pointer("/status/containerStatuses/0/restartCount")}),
            );
        }
        first = false;
        let Some(next) = probes::next_change(&gates, time::OffsetDateTime::now_utc()) else {
            return Some(());
        };
        let wait = next - time::OffsetDateTime::now_utc();
        tokio::time::sleep(Duration::try_from(wait).unwrap_or_default()).await;
        still_starting(api, pod)?;
    }
}

/// Applies `f` to each status of one of the pod's lists (`containerStatuses`,
/// `initContainerStatuses`).
pub(crate) fn each_status(status: &mut Value, list: &str, mut f: impl FnMut(&mut Value)) {
    if let Some(list) = status.get_mut(list).and_then(Value::as_array_mut) {
        list.iter_mut().for_each(&mut f);
    }
}

/// Replaces the pod condition of `c`'s type (`util::set_condition`).
fn set_condition(status: &mut Value, c: Value) {
    if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        util::set_condition(list, c);
    }
}

/// Ready and ContainersReady False for the named containers.
fn unready(status: &mut Value, names: &str, now: &str) {
    set_condition(status, not_ready("Ready", names, now));
    set_condition(status, not_ready("ContainersReady", names, now));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_from_10s_to_5_minutes_after_an_immediate_first_restart() {
        let waits: Vec<String> = (0..8).map(|n| go_duration(backoff(n))).collect();
        assert_eq!(
            waits,
            ["0s", "10s", "20s", "40s", "1m20s", "2m40s", "5m0s", "5m0s"]
        );
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_stays() {
        let mut st = json!({"conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": "t0", "reason": "ContainersNotReady"}]});
        set_condition(&mut st, not_ready("Ready", "app", "t1"));
        assert_eq!(st["conditions"][0]["lastTransitionTime"], "t0");
        set_condition(&mut st, cond("Ready", "True", "t2"));
        assert_eq!(st["conditions"][0]["lastTransitionTime"], "t2");
        assert_eq!(st["conditions"][0]["status"], "True");
    }
}

//! Init containers, as a kubelet runs them before the app containers: one after another, each
//! pulled, started and run to completion (exit 0, reason Completed, after the pod's simulated
//! run time) before the next starts; a restartable one (`restartPolicy: Always`, a sidecar) is
//! started and left running. Meanwhile the pod is Pending with Initialized False, and
//! `kubectl get` says `Init:1/2`, then `PodInitializing`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::apiserver::controllers::kubelet_completion as completion;
use crate::apiserver::controllers::kubelet_containers::{
    Backoff, CONFIG_ERROR, POD_INITIALIZING, POLL, STEP, State, config_failed, container_statuses,
    image_refusal, init_container_statuses, pull_image, ran_since, refusal_events, start_container,
};
use crate::apiserver::controllers::kubelet_images::NodeImages;
use crate::apiserver::controllers::kubelet_init_failure::{self as init_failure, Exit};
use crate::apiserver::controllers::kubelet_refs as refs;
use crate::apiserver::controllers::kubelet_report::{
    cond, containers, not_ready, s, set_status, step, still_starting,
};
use crate::apiserver::registry::core::pod::restartable_init as restartable;
use crate::apiserver::request::context::Api;
use crate::apiserver::util;

/// Every container of the list waiting to be initialized.
pub(crate) fn initializing(containers: &[Value]) -> Vec<(String, State)> {
    containers
        .iter()
        .map(|c| {
            (
                s(c, "/name").to_string(),
                State::Waiting(POD_INITIALIZING, String::new()),
            )
        })
        .collect()
}

/// The Initialized condition while init containers have not all completed (their names).
pub(crate) fn not_initialized(incomplete: &[&str], now: &str) -> Value {
    json!({"type": "Initialized", "status": "False", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": "ContainersNotInitialized",
        "message": format!("containers with incomplete status: [{}]", incomplete.join(" "))})
}

/// The pod's status as its init containers stand: Pending with its sandbox (and so its IP),
/// the app containers waiting with PodInitializing.
fn report(api: &Api, pod: &Value, ip: &str, (inits, states): (&[Value], &[(String, State)])) {
    let app = containers(pod, "containers");
    let now = util::now();
    let incomplete: Vec<&str> = inits
        .iter()
        .zip(states)
        .filter(|(c, (_, st))| match st {
            State::Completed(..) => false,
            State::Running(_) => !restartable(c),
            State::Waiting(..) => true,
        })
        .map(|(_, (n, _))| n.as_str())
        .collect();
    let initialized = if incomplete.is_empty() {
        cond("Initialized", "True", &now)
    } else {
        not_initialized(&incomplete, &now)
    };
    let names = app
        .iter()
        .map(|c| s(c, "/name"))
        .collect::<Vec<_>>()
        .join(" ");
    set_status(api, pod, |st| {
        st["phase"] = json!("Pending");
        st["podIP"] = json!(ip);
        st["podIPs"] = json!([{"ip": ip}]);
        st["conditions"] = json!([
            cond("PodReadyToStartContainers", "True", &now),
            initialized,
            not_ready("Ready", &names, &now),
            not_ready("ContainersReady", &names, &now),
            cond("PodScheduled", "True", &now)
        ]);
        let mut statuses = init_container_statuses(inits, states);
        keep_restarts(st, &mut statuses);
        st["initContainerStatuses"] = json!(statuses);
        st["containerStatuses"] = json!(container_statuses(&app, &initializing(&app)));
    });
}

/// What the stored statuses say of each init container's earlier runs (restartCount,
/// lastState), carried into the statuses written from its state now.
fn keep_restarts(status: &Value, next: &mut [Value]) {
    let Some(before) = status["initContainerStatuses"].as_array() else {
        return;
    };
    for c in next.iter_mut() {
        let Some(old) = before.iter().find(|o| o["name"] == c["name"]) else {
            continue;
        };
        if let Some(n) = old["restartCount"].as_i64().filter(|n| *n > 0) {
            c["restartCount"] = json!(n);
        }
        if let Some(last) = old
            .get("lastState")
            .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        {
            c["lastState"] = last.clone();
        }
    }
}

/// Runs the pod's init containers in order; true once every one completed (or, a sidecar,
/// started). False when the pod went away meanwhile. An init container whose image cannot be
/// had holds the pod Pending as reported (`Init:ErrImageNeverPull`, `Init:InvalidImageName`)
/// until a sync finds it (see `kubelet_containers::image_refusal`). `before`: what its status
/// says they already did (`kubelet_containers::already`), which a resumed start does not do
/// again; one interrupted while it ran runs for the rest of its time.
pub(crate) async fn run(
    api: &Api,
    (pod, ip, node): (&Value, &str, &str),
    node_images: &NodeImages,
    before: &[(String, State)],
) -> bool {
    let mut inits = containers(pod, "initContainers");
    let mut states = initializing(&inits);
    for i in 0..inits.len() {
        let cname = s(&inits[i], "/name").to_string();
        let (at, already) = match before.iter().find(|(n, _)| *n == cname) {
            Some((_, done @ State::Completed(..))) => {
                states[i].1 = done.clone();
                continue;
            }
            Some((_, State::Running(at))) => (at.clone(), ran_since(at)),
            Some((_, State::Waiting(..))) | None => {
                let Some(at) = start(
                    api,
                    (pod, ip, node),
                    node_images,
                    (&mut inits, &mut states, i),
                )
                .await
                else {
                    return false;
                };
                (at, Duration::ZERO)
            }
        };
        states[i].1 = State::Running(at.clone());
        report(api, pod, ip, (&inits, &states));
        let c = &inits[i];
        if restartable(c) {
            continue;
        }
        let (mut at, mut already) = (at, already);
        loop {
            if !completion::run_for(api, pod, already).await {
                return false;
            }
            match init_failure::exit(api, pod, (&inits, i), &at, node_images).await {
                Exit::Completed => break,
                Exit::Restarted(again) => (at, already) = (again, Duration::ZERO),
                Exit::Ended => return false,
            }
        }
        completion::log(api, pod, &cname, &completion::exited(0));
        states[i].1 = State::Completed(at, util::now());
        step(
            api,
            pod,
            "Completed",
            json!({"container": cname, "exitCode": 0, "note": "an init container: the next starts after it"}),
        );
    }
    report(api, pod, ip, (&inits, &states));
    true
}

/// Pulls and starts the `i`th init container once its image can be had and its environment
/// made: when it started. None when the pod went away. `inits` follows the pod's spec while
/// an image is waited for (`kubectl set image` changes an init container's).
async fn start(
    api: &Api,
    (pod, ip, node): (&Value, &str, &str),
    node_images: &NodeImages,
    (inits, states, i): (&mut Vec<Value>, &mut [(String, State)], usize),
) -> Option<String> {
    let cname = s(&inits[i], "/name").to_string();
    let field = format!("spec.initContainers{{{cname}}}");
    tokio::time::sleep(STEP / 2).await;
    if let Err((reason, message)) = pull_image(api, pod, node, &inits[i], &field, node_images).await
    {
        states[i].1 = State::Waiting(reason, message);
        report(api, pod, ip, (inits, states));
        // Asked for again on each sync, its refusal repeated on the back-off.
        let mut retry = Backoff::default();
        loop {
            tokio::time::sleep(POLL).await;
            let now_pod = still_starting(api, pod)?;
            let now = containers(&now_pod, "initContainers");
            if let Some(c) = now.iter().find(|c| s(c, "/name") == cname) {
                inits[i] = c.clone();
            }
            let due = retry.due();
            match image_refusal(node, &inits[i], node_images) {
                None => {
                    if pull_image(api, &now_pod, node, &inits[i], &field, node_images)
                        .await
                        .is_ok()
                    {
                        break;
                    }
                }
                Some(refusal) => {
                    if due {
                        refusal_events(api, &now_pod, (node, &field), &refusal);
                    }
                }
            }
        }
    }
    let c = &inits[i];
    let cname = cname.as_str();
    // Its environment, waited for as long as it cannot be made.
    let mut retry = Backoff::default();
    let mut first = true;
    while let Some(why) = refs::config_error(api, pod, c) {
        if first || retry.due() {
            config_failed(api, pod, node, (cname, &field), &why, first);
        }
        if first {
            states[i].1 = State::Waiting(CONFIG_ERROR, why);
            report(api, pod, ip, (inits, states));
            first = false;
        }
        tokio::time::sleep(POLL).await;
        still_starting(api, pod)?;
    }
    match start_container(api, pod, node, (cname, &field)) {
        State::Running(at) => Some(at),
        State::Waiting(..) | State::Completed(..) => None,
    }
}

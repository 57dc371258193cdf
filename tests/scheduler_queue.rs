//! The embedded scheduler's queue against `kexplore serve`, driven with curl: a pod that fits no
//! node gets its FailedScheduling event and PodScheduled=False condition, and so does another
//! pod created under the same name once the first is deleted. (The queue kept its failures by
//! name: the second pod inherited the first's backoff and, its message being the same, was
//! never told it was unschedulable.)

use std::time::Duration;

use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::{ServeProcess, wait_for};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn huge() -> String {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge"},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "100"}}}]}})
    .to_string()
}

fn create(srv: &ServeProcess) -> String {
    let (code, body) = srv.curl_admin(
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-d",
            &huge(),
        ],
        PODS,
    );
    assert_eq!(code, 201, "{body}");
    let pod: Value = serde_json::from_str(&body).expect("the pod");
    pod["metadata"]["uid"].as_str().expect("a uid").to_string()
}

/// The pod's PodScheduled=False reason, once the scheduler wrote it.
fn unschedulable(srv: &ServeProcess) -> Option<Value> {
    let (_, body) = srv.curl_admin(&[], &format!("{PODS}/huge"));
    let pod: Value = serde_json::from_str(&body).ok()?;
    let cond = pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "PodScheduled" && c["status"] == "False")?
        .clone();
    Some(json!({"uid": pod["metadata"]["uid"], "reason": cond["reason"]}))
}

/// The FailedScheduling events that name pod `uid`.
fn failed_scheduling(srv: &ServeProcess, uid: &str) -> usize {
    let (_, body) = srv.curl_admin(
        &[],
        &format!("/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid%3D{uid}"),
    );
    let list: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["reason"] == "FailedScheduling")
        .count()
}

#[test]
fn a_pod_made_again_under_an_unschedulable_pods_name_is_told_so_too() {
    let srv = ServeProcess::start(&[]);
    let wait = Duration::from_secs(20);
    for round in 0..2 {
        let uid = create(&srv);
        let seen = wait_for(wait, || {
            unschedulable(&srv).filter(|c| c["uid"] == json!(uid.as_str()))
        });
        assert_eq!(
            seen.map(|c| c["reason"].clone()),
            Some(json!("Unschedulable")),
            "round {round}: the pod was never marked unschedulable"
        );
        assert!(
            wait_for(wait, || (failed_scheduling(&srv, &uid) > 0).then_some(())).is_some(),
            "round {round}: no FailedScheduling event for {uid}"
        );
        let (code, body) = srv.curl_admin(
            &["-X", "DELETE"],
            &format!("{PODS}/huge?gracePeriodSeconds=0"),
        );
        assert_eq!(code, 200, "{body}");
        assert!(
            wait_for(wait, || {
                (srv.curl_admin(&[], &format!("{PODS}/huge")).0 == 404).then_some(())
            })
            .is_some(),
            "the pod is gone"
        );
    }
}

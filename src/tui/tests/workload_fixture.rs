//! A Deployment's run for view 4's tests: its request and pods built on the recorded pod run
//! (`data/journey.json`), with the ReplicaSet and the controllers' Events as the embedded
//! server's controllers write them.

use serde_json::{Value, json};

use crate::journey::build::Collected;
use crate::journey::workload::WorkloadCollected;
use crate::tui::journey::JourneyState;

use super::journey_data;

pub const DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web"},
 "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
          "template": {"metadata": {"labels": {"app": "web"}},
                       "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}"#;

pub const PODS: [(&str, &str); 3] = [
    ("web-7f9d59dc7f-w7ljj", "node-2"),
    ("web-7f9d59dc7f-tjbld", "node-1"),
    ("web-7f9d59dc7f-n4mr8", "node-3"),
];

fn pod(name: &str, node: &str) -> Collected {
    let mut c = journey_data::collected();
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7f9d59dc7f",
                    "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true});
    let mut p = c.final_pod.clone().unwrap_or(Value::Null);
    p["metadata"]["name"] = json!(name);
    p["metadata"]["ownerReferences"] = json!([rs]);
    p["spec"]["nodeName"] = json!(node);
    c.final_pod = Some(p);
    c.pod = format!("default/{name}");
    c.handshake = None;
    c.create = None;
    c.created_by = Some(json!({"controller": "replicaset-controller",
                               "owner": "ReplicaSet default/web-7f9d59dc7f",
                               "ownerReferences": [rs]}));
    c
}

pub fn collected() -> WorkloadCollected {
    let mut request = journey_data::collected();
    request.pod = "default/web".into();
    let event = |kind: &str, name: &str, reason: &str, message: &str| {
        json!({"involvedObject": {"kind": kind, "name": name}, "reason": reason,
               "type": "Normal", "message": message,
               "source": {"component": format!("{}-controller", kind.to_lowercase())}})
    };
    let mut events = vec![event(
        "Deployment",
        "web",
        "ScalingReplicaSet",
        "Scaled up replica set web-7f9d59dc7f from 0 to 3",
    )];
    for (name, _) in PODS {
        events.push(event(
            "ReplicaSet",
            "web-7f9d59dc7f",
            "SuccessfulCreate",
            &format!("Created pod: {name}"),
        ));
    }
    WorkloadCollected {
        kind: "Deployment".into(),
        name: "default/web".into(),
        request,
        workload: Some(serde_json::from_str(DEPLOYMENT).unwrap_or(Value::Null)),
        replicasets: vec![
            json!({"metadata": {"name": "web-7f9d59dc7f", "uid": "rs-uid",
            "labels": {"app": "web", "pod-template-hash": "7f9d59dc7f"},
            "annotations": {"deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                 "uid": "d-uid", "controller": true}]},
            "spec": {"replicas": 3}}),
        ],
        events,
        pods: PODS.iter().map(|(n, node)| pod(n, node)).collect(),
        pods_total: 3,
        timed_out: false,
    }
}

/// View 4's state with the Deployment sent and every pod running.
pub fn state() -> JourneyState {
    let mut j = JourneyState::new("web.json".into(), Some(DEPLOYMENT), true);
    j.workload = Some(collected());
    j
}

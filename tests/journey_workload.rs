//! `kexplore journey -f WORKLOAD`: the workload's request, its controllers' work (read back
//! from the objects they created and the Events they recorded) and every pod's journey, with
//! PodTopologySpread's system defaults explained from the pod's real owner.

use std::collections::BTreeSet;

use serde_json::Value;

mod apiserver_support;
mod remote_support;
use apiserver_support::ServeProcess;
use remote_support::{kexplore, request, stdout};

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
"#;

const STAGES: [&str; 12] = [
    "tls-handshake",
    "authentication",
    "authorization",
    "admission",
    "validation",
    "storage",
    "response",
    "watch",
    "filter",
    "score",
    "binding",
    "kubelet",
];

fn stage<'a>(stages: &'a Value, name: &str) -> &'a Value {
    stages
        .as_array()
        .and_then(|s| s.iter().find(|s| s["stage"] == name))
        .unwrap_or(&Value::Null)
}

fn names(stages: &Value) -> Vec<&str> {
    stages
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["stage"].as_str()).collect())
        .unwrap_or_default()
}

fn manifest(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("workload.yaml");
    std::fs::write(&path, text).expect("write");
    let p = path.to_str().unwrap_or_default().to_string();
    (dir, p)
}

#[test]
fn a_deployment_s_journey_goes_through_its_replicaset_to_three_spread_pods() {
    let (_dir, path) = manifest(DEPLOYMENT);
    let out = kexplore(&["journey", "-f", &path, "--embedded", "-o", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    // The contract's pod journey stays at the top: the first pod's.
    assert_eq!(names(&j["stages"]), STAGES, "{j}");
    assert_eq!(j["pod"], j["pods"][0]["pod"]);
    assert_eq!(j["workload"]["kind"], "Deployment");
    assert_eq!(j["workload"]["name"], "default/web");
    let w = &j["workload"]["stages"];
    assert_eq!(
        names(w),
        [
            &STAGES[..7],
            &["deployment-controller", "replicaset-controller"]
        ]
        .concat()
    );
    for s in [
        "authentication",
        "authorization",
        "admission",
        "validation",
        "storage",
    ] {
        assert_eq!(
            (
                stage(w, s)["status"].as_str(),
                stage(w, s)["source"].as_str()
            ),
            (Some("ok"), Some("reported")),
            "{s}"
        );
    }
    assert_eq!(
        stage(w, "storage")["detail"]["key"],
        "/registry/deployments/default/web"
    );
    let dc = stage(w, "deployment-controller");
    assert_eq!(dc["status"], "ok", "{dc}");
    let rs = &dc["detail"]["replicasets"][0];
    let hash = rs["pod-template-hash"].as_str().unwrap_or_default();
    assert!(!hash.is_empty(), "{rs}");
    assert_eq!(rs["name"], format!("web-{hash}"));
    assert_eq!(rs["revision"], "1");
    assert_eq!(rs["ownerReferences"][0]["kind"], "Deployment");
    assert!(
        dc["detail"]["events"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["reason"] == "ScalingReplicaSet"
                && e["message"] == format!("Scaled up replica set web-{hash} from 0 to 3"))),
        "{dc}"
    );
    let rc = stage(w, "replicaset-controller");
    assert_eq!(rc["status"], "ok", "{rc}");
    let created: Vec<&Value> = rc["detail"]["events"]
        .as_array()
        .map(|e| {
            e.iter()
                .filter(|e| e["reason"] == "SuccessfulCreate")
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(created.len(), 3, "{rc}");

    let pods = j["pods"].as_array().cloned().unwrap_or_default();
    assert_eq!(pods.len(), 3, "{j}");
    let mut nodes = BTreeSet::new();
    for (i, p) in pods.iter().enumerate() {
        let st = &p["stages"];
        assert_eq!(names(st), STAGES, "{p}");
        for s in [
            "admission",
            "validation",
            "storage",
            "filter",
            "score",
            "binding",
            "kubelet",
        ] {
            assert_eq!(
                (
                    stage(st, s)["status"].as_str(),
                    stage(st, s)["source"].as_str()
                ),
                (Some("ok"), Some("reported")),
                "{s} of {}",
                p["pod"]
            );
        }
        // The controller wrote it in-process: no connection, no request to authenticate.
        assert_eq!(stage(st, "tls-handshake")["status"], "skipped");
        assert_eq!(stage(st, "authentication")["status"], "skipped");
        assert!(
            stage(st, "tls-handshake")["detail"]["note"]
                .as_str()
                .is_some_and(|n| n.contains(&format!(
                    "replicaset-controller for ReplicaSet default/web-{hash}"
                ))),
            "{p}"
        );
        let node = stage(st, "binding")["detail"]["node"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_eq!(stage(st, "score")["detail"]["selected"], node.as_str());
        nodes.insert(node.clone());
        // PodTopologySpread's system defaults, from the real owner: the i-th pod finds i pods
        // of its ReplicaSet already placed, and goes where its skew is smallest.
        let spread = &stage(st, "score")["detail"]["spread"];
        assert_eq!(spread["constraints_from"], "system defaults", "{spread}");
        assert_eq!(spread["owner"]["kind"], "ReplicaSet");
        assert_eq!(spread["owner"]["name"], format!("web-{hash}"));
        assert_eq!(
            spread["owner"]["selector"],
            format!("app=web,pod-template-hash={hash}")
        );
        let host = &spread["constraints"][0];
        assert_eq!(host["topologyKey"], "kubernetes.io/hostname");
        assert_eq!(host["maxSkew"], 3);
        let placed: i64 = host["domains"]
            .as_array()
            .map(|d| d.iter().filter_map(|d| d["matching"].as_i64()).sum())
            .unwrap_or(-1);
        assert_eq!(placed, i as i64, "{spread}");
        let on = |n: &str| {
            spread["nodes"]
                .as_array()
                .and_then(|a| a.iter().find(|x| x["node"] == n))
                .cloned()
                .unwrap_or(Value::Null)
        };
        assert_eq!(on(&node)["constraints"][0]["matching"], 0, "{spread}");
        assert_eq!(on(&node)["normalized"], 100, "{spread}");
    }
    assert_eq!(nodes.len(), 3, "three pods on three nodes: {nodes:?}");

    let out = kexplore(&["journey", "-f", &path, "--embedded"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in [
        "Deployment default/web via https://127.0.0.1:",
        "✓ deployment-controller [reported]",
        "Event Normal ScalingReplicaSet on Deployment web: Scaled up replica set web-",
        "✓ replicaset-controller [reported]",
        "Event Normal SuccessfulCreate on ReplicaSet web-",
        "3 pod(s), each on its own journey:",
        "PodTopologySpread: no constraints of its own, so the system defaults count the pods selected by ReplicaSet web-",
        "skew if here",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    assert_eq!(text.matches("\n✓ kubelet ").count(), 3, "{text}");
}

#[test]
fn a_remote_workload_journey_is_a_dry_run_that_creates_no_replicaset() {
    let srv = ServeProcess::start(&[]);
    let (_dir, path) = manifest(DEPLOYMENT);
    let kc = srv.kubeconfig();
    let kc_s = kc.to_str().unwrap_or_default();
    let out = kexplore(&["journey", "--kubeconfig", kc_s, "-f", &path, "-o", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    assert_eq!(j["dry_run"], Value::Bool(true));
    assert_eq!(names(&j["stages"]), STAGES);
    let w = &j["workload"]["stages"];
    for s in ["authentication", "authorization", "admission", "validation"] {
        assert_eq!(stage(w, s)["status"], "ok", "{s}: {j}");
    }
    let dc = stage(w, "deployment-controller");
    assert_eq!(
        (dc["status"].as_str(), dc["source"].as_str()),
        (Some("skipped"), Some("inferred"))
    );
    assert!(
        dc["detail"]["explanation"]
            .as_str()
            .is_some_and(|e| e.contains("no ReplicaSet is created")),
        "{dc}"
    );
    assert_eq!(j["pods"], Value::Array(Vec::new()));
    let (code, list) = request(
        &kc,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments",
        None,
    );
    assert_eq!(code, 200);
    assert_eq!(list["items"], Value::Array(Vec::new()), "nothing stored");
    let text = stdout(&kexplore(&["journey", "--kubeconfig", kc_s, "-f", &path]));
    assert!(
        text.contains("dry run (dryRun=All): the server checked the Deployment and stored nothing, so no controller acts on it and no pod exists"),
        "{text}"
    );
}

#[test]
fn daemonset_and_statefulset_journeys_name_their_own_controllers() {
    let (_dir, path) = manifest(
        r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
"#,
    );
    let out = kexplore(&["journey", "-f", &path, "--embedded", "-o", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    let sc = stage(&j["workload"]["stages"], "statefulset-controller");
    assert_eq!(sc["status"], "ok", "{sc}");
    let pods: Vec<&str> = j["pods"]
        .as_array()
        .map(|p| p.iter().filter_map(|p| p["pod"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(pods, ["default/db-0", "default/db-1"]);
    assert_eq!(
        j["pods"][1]["stages"][9]["detail"]["spread"]["owner"]["kind"],
        "StatefulSet"
    );

    let (_dir, path) = manifest(
        r#"
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "busybox:1.36"}]
"#,
    );
    let out = kexplore(&["journey", "-f", &path, "--embedded", "-o", "json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    let dc = stage(&j["workload"]["stages"], "daemonset-controller");
    assert_eq!(dc["status"], "ok", "{dc}");
    let nodes: BTreeSet<&str> = j["pods"]
        .as_array()
        .map(|p| {
            p.iter()
                .filter_map(|p| p["stages"][10]["detail"]["node"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        Some(nodes.len() as u64),
        dc["detail"]["replicas"].as_u64(),
        "one pod per eligible node: {dc}"
    );
}

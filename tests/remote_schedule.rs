//! `kexplore schedule` without -f: the live cluster of `kexplore serve` (a separate process)
//! through its kubeconfig — "why is my pod Pending?", a bound pod's real node next to the
//! simulation's, and a user RBAC keeps from listing nodes.

use serde_json::Value;

mod apiserver_support;
mod remote_support;
use apiserver_support::{SEED_POD, ServeProcess, wait_for};
use remote_support::{kexplore, request, stderr, stdout};

fn scenario(name: &str) -> String {
    format!("{}/scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn schedule_json(kc: &str, extra: &[&str]) -> Value {
    let mut args = vec!["schedule", "--kubeconfig", kc, "-o", "json"];
    args.extend_from_slice(extra);
    let out = kexplore(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn a_pending_pod_is_explained_per_node_from_the_live_cluster() {
    let srv = ServeProcess::start(&["--no-demo", "--scenario", &scenario("unschedulable.yaml")]);
    let kc = srv.kubeconfig();
    let kc = kc.to_str().unwrap_or_default();
    let j = schedule_json(kc, &[]);
    let pods = j["pods"].as_array().cloned().unwrap_or_default();
    assert_eq!(pods.len(), 1, "{j}");
    assert_eq!(pods[0]["pod"], "default/batch-job");
    assert_eq!(pods[0]["nodes_total"], 5);
    assert!(pods[0]["selected"].is_null());
    let msg = pods[0]["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("0/5 nodes are available: 1 Insufficient cpu"),
        "{msg}"
    );
    assert_eq!(j["cluster"]["server_version"], "v1.33.1-kexplore");
    assert_eq!(j["kube_version"], "v1.33");
    // One account of the release, shared with view 5: the server's own.
    assert_eq!(j["release"]["basis"], "server");
    assert_eq!(j["release"]["server"], "v1.33.1-kexplore");
    assert_eq!(
        j["release"]["summary"],
        "modelling kube-scheduler v1.33, the server's release (v1.33.1-kexplore)"
    );
    // The cluster's claims, volumes and classes were listed: VolumeBinding is judged.
    let filters = j["modelled"]["filters"].to_string();
    assert!(filters.contains("NodeResourcesFit") && filters.contains("VolumeBinding"));
    let not_simulated = j["modelled"]["not_simulated"].to_string();
    assert!(!not_simulated.contains("VolumeBinding") && not_simulated.contains("VolumeZone"));

    let out = kexplore(&["schedule", "--kubeconfig", kc, "--pod", "default/batch-job"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for want in [
        "server v1.33.1-kexplore\nmodelling kube-scheduler v1.33, the server's release (v1.33.1-kexplore)",
        "filter plugins judged:",
        "cordoned    ✗ fail  NodeUnschedulable",
        "Result: unschedulable",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    // Another release asked for: said beside the server's, and that is what is simulated.
    let j = schedule_json(kc, &["--kube-version", "1.30"]);
    assert_eq!(j["kube_version"], "v1.30");
    assert_eq!(j["pods"][0]["kube_version"], "v1.30");
    assert_eq!(
        j["release"]["summary"],
        "modelling kube-scheduler v1.30 (--kube-version); the server is v1.33.1-kexplore"
    );
    // A pod that is not there is a failure of the run, with its name.
    let out = kexplore(&["schedule", "--kubeconfig", kc, "--pod", "default/nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--pod default/nope: no such pod"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bound_pod_is_compared_with_the_real_choice() {
    let srv = ServeProcess::start(&[]);
    let kc = srv.kubeconfig();
    // The served cluster's scheduler binds it; the simulation runs the same profile.
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(SEED_POD),
    );
    assert_eq!(code, 201, "{body}");
    let node = wait_for(std::time::Duration::from_secs(15), || {
        let (_, p) = request(&kc, "GET", "/api/v1/namespaces/default/pods/app", None);
        p["spec"]["nodeName"].as_str().map(str::to_string)
    })
    .expect("the pod was bound");
    let kc = kc.to_str().unwrap_or_default();
    let j = schedule_json(kc, &["--pod", "default/app"]);
    let c = &j["comparisons"][0];
    assert_eq!(c["actual"], Value::from(node.clone()), "{j}");
    assert_eq!(c["simulated"], Value::from(node), "{j}");
    assert_eq!(c["agrees"], true);
    // A demo pod placed by its manifest, not by a scheduler: they differ, and it says why.
    let j = schedule_json(kc, &["--pod", "demo/workload-node-1"]);
    let c = &j["comparisons"][0];
    assert_eq!(c["actual"], "node-1", "{j}");
    if c["agrees"] == false {
        let reasons = c["reasons"].to_string();
        assert!(reasons.contains("bypasses the scheduler"), "{reasons}");
        assert!(reasons.contains("plugins not simulated"), "{reasons}");
    }
}

/// "Why is my pod Pending?" when the answer is its claim: kube-scheduler's words for a claim
/// nothing has bound, and for one that does not exist.
#[test]
fn a_pod_waiting_for_its_claim_is_explained_from_the_live_cluster() {
    let srv = ServeProcess::start(&["--no-demo", "--scenario", &scenario("unschedulable.yaml")]);
    let kc = srv.kubeconfig();
    let kc = kc.to_str().unwrap_or_default();
    let claim = r#"{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}"#;
    let pod = |name: &str, claim: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{name}"}}, "spec": {{
            "containers": [{{"name": "c", "image": "postgres"}}],
            "volumes": [{{"name": "d", "persistentVolumeClaim": {{"claimName": "{claim}"}}}}]}}}}"#
        )
    };
    for (path, body) in [
        (
            "/api/v1/namespaces/default/persistentvolumeclaims",
            claim.to_string(),
        ),
        ("/api/v1/namespaces/default/pods", pod("db", "data")),
        ("/api/v1/namespaces/default/pods", pod("orphan", "nope")),
    ] {
        let (code, text) = srv.curl_admin(
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
            ],
            path,
        );
        assert_eq!(code, 201, "{path}: {text}");
    }
    for (name, want) in [
        (
            "default/db",
            "pod has unbound immediate PersistentVolumeClaims",
        ),
        ("default/orphan", "persistentvolumeclaim \"nope\" not found"),
    ] {
        let j = schedule_json(kc, &["--pod", name]);
        let msg = j["pods"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            msg.starts_with(&format!("0/5 nodes are available: {want}.")),
            "{name}: {msg}"
        );
    }
}

#[test]
fn a_user_without_node_access_gets_a_note_not_a_crash() {
    let srv = ServeProcess::start(&[]);
    let kc = srv.kubeconfig();
    let kc = kc.to_str().unwrap_or_default();
    let j = schedule_json(kc, &["--context", "jane"]);
    let hidden = j["cluster"]["not_visible"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        hidden.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.starts_with("nodes: ") && n.contains("forbidden"))),
        "{j}"
    );
    let out = kexplore(&["schedule", "--kubeconfig", kc, "--context", "jane"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("not visible to you: nodes:"),
        "{}",
        stdout(&out)
    );
}

/// What a scenario's pods say of themselves is what their spec gives: the QoS class from their
/// requests (a bound pod with requests was "Burstable" and an unbound one "BestEffort" whatever
/// they asked), and no `hostIP: ""` from a kubelet whose node has no address.
#[test]
fn scenario_pods_report_their_qos_class_and_no_empty_host_ip() {
    let srv = ServeProcess::start(&["--no-demo", "--scenario", &scenario("unschedulable.yaml")]);
    let kc = srv.kubeconfig();
    let pod = |name: &str| {
        request(
            &kc,
            "GET",
            &format!("/api/v1/namespaces/default/pods/{name}"),
            None,
        )
    };
    let (_, busy) = pod("busy");
    assert_eq!(busy["status"]["qosClass"], "Burstable", "{busy}");
    let (_, proxy) = pod("proxy");
    assert_eq!(proxy["status"]["qosClass"], "BestEffort", "{proxy}");
    let (_, pending) = pod("batch-job");
    assert_eq!(pending["status"]["qosClass"], "Burstable", "{pending}");
    // The scenario's nodes have no addresses: a pod their kubelet starts has no host IP.
    let tiny = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"tiny"},
        "spec":{"nodeName":"ports","containers":[{"name":"c","image":"nginx"}]}}"#;
    let (code, _) = request(&kc, "POST", "/api/v1/namespaces/default/pods", Some(tiny));
    assert_eq!(code, 201);
    let started = wait_for(std::time::Duration::from_secs(20), || {
        let (code, p) = pod("tiny");
        (code == 200 && p["status"]["containerStatuses"].is_array()).then_some(p)
    })
    .expect("the kubelet starts tiny");
    assert!(started["status"].get("hostIP").is_none(), "{started}");
    assert!(started["status"].get("hostIPs").is_none(), "{started}");
}

//! `kexplore journey` against `kexplore serve` running as a separate process and reached
//! through its kubeconfig: a dry run by default (nothing stored, the scheduler simulated on the
//! live cluster), `--for-real` creates and follows the pod, `--cleanup` deletes it again.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
mod remote_support;
use apiserver_support::{SEED_POD, ServeProcess, wait_for};
use remote_support::{kexplore, pod_names, request, revision, stdout, writes_besides_leases};

fn stage<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["stage"] == name))
        .unwrap_or(&Value::Null)
}

#[test]
fn a_remote_journey_is_a_dry_run_that_stores_nothing() {
    let srv = ServeProcess::start(&[]);
    let pod = srv.dir.path().join("app.json");
    std::fs::write(&pod, SEED_POD).expect("write");
    let kc = srv.kubeconfig();
    let kc_s = kc.to_str().unwrap_or_default();
    let before = pod_names(&kc);
    for round in 0..2 {
        // Twice: a stored pod would make the second create a 409 AlreadyExists.
        let out = kexplore(&[
            "journey",
            "--kubeconfig",
            kc_s,
            "-f",
            pod.to_str().unwrap_or_default(),
            "-o",
            "json",
        ]);
        let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(out.status.code(), Some(0), "round {round}: {j}");
        assert_eq!(j["dry_run"], Value::Bool(true), "{j}");
        let names: Vec<&str> = j["stages"]
            .as_array()
            .map(|s| s.iter().filter_map(|s| s["stage"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(names.len(), 12, "{j}");
        for s in ["authentication", "authorization", "admission", "validation"] {
            assert_eq!(stage(&j, s)["status"], "ok", "{s}: {j}");
        }
        assert_eq!(stage(&j, "response")["status"], "ok");
        assert_eq!(stage(&j, "response")["source"], "observed");
        assert_eq!(stage(&j, "response")["detail"]["code"], 201);
        assert_eq!(stage(&j, "storage")["status"], "skipped");
        for s in ["watch", "binding", "kubelet"] {
            assert_eq!(stage(&j, s)["status"], "skipped", "{s}");
            assert!(
                stage(&j, s)["detail"]["explanation"]
                    .as_str()
                    .is_some_and(|e| e.contains("dry run: nothing stored")),
                "{s}: {j}"
            );
        }
        // The scheduler's part, simulated on the live nodes and pods.
        for s in ["filter", "score"] {
            assert_eq!(stage(&j, s)["source"], "inferred", "{s}");
            assert_eq!(stage(&j, s)["status"], "ok", "{s}");
        }
        assert_eq!(stage(&j, "filter")["detail"]["nodes_total"], 4);
        assert_eq!(stage(&j, "score")["detail"]["selected"], "node-3");
    }
    assert_eq!(pod_names(&kc), before, "the dry runs stored a pod");
    assert_eq!(
        request(&kc, "GET", "/api/v1/namespaces/default/pods/app", None).0,
        404
    );
    if let Some(kubectl) = apiserver_support::which("kubectl") {
        let out = apiserver_support::kubectl::Kubectl::new("kubectl", &kubectl, kc_s.into())
            .run(&["get", "pods", "-A", "-o", "name"]);
        let listed = out.stdout;
        assert_eq!(out.code, 0, "{listed}{}", out.stderr);
        assert!(
            !listed.contains("pod/app\n"),
            "kubectl lists the pod: {listed}"
        );
    }
}

#[test]
fn for_real_creates_and_cleanup_deletes() {
    let srv = ServeProcess::start(&[]);
    let pod = srv.dir.path().join("app.json");
    std::fs::write(&pod, SEED_POD).expect("write");
    let kc = srv.kubeconfig();
    let kc_s = kc.to_str().unwrap_or_default();
    let pod_s = pod.to_str().unwrap_or_default();
    let out = kexplore(&[
        "journey",
        "--kubeconfig",
        kc_s,
        "-f",
        pod_s,
        "--for-real",
        "-o",
        "json",
    ]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    assert!(j.get("dry_run").is_none(), "{j}");
    assert_eq!(stage(&j, "storage")["status"], "ok");
    assert_eq!(stage(&j, "binding")["status"], "ok");
    assert!(pod_names(&kc).contains(&"default/app".to_string()));
    request(
        &kc,
        "DELETE",
        "/api/v1/namespaces/default/pods/app?gracePeriodSeconds=0",
        None,
    );
    wait_for(Duration::from_secs(10), || {
        (!pod_names(&kc).contains(&"default/app".to_string())).then_some(())
    })
    .expect("the pod is gone before the next run");

    let out = kexplore(&[
        "journey",
        "--kubeconfig",
        kc_s,
        "-f",
        pod_s,
        "--for-real",
        "--cleanup",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("cleanup: pod default/app deleted"), "{text}");
    wait_for(Duration::from_secs(20), || {
        (!pod_names(&kc).contains(&"default/app".to_string())).then_some(())
    })
    .expect("--cleanup left the pod behind");
}

#[test]
fn the_server_honours_dry_run_on_create() {
    let srv = ServeProcess::start(&[]);
    let kc = srv.kubeconfig();
    // The demo's simulated kubelets settle first, so only Leases are written unless we write.
    let before = wait_for(Duration::from_secs(15), || {
        let r = revision(&kc);
        std::thread::sleep(Duration::from_secs(1));
        (writes_besides_leases(&kc, r) == 0).then_some(r)
    })
    .expect("the served cluster settles");
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/default/pods?dryRun=All",
        Some(SEED_POD),
    );
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["metadata"]["name"], "app");
    assert!(body["metadata"]["uid"].is_string(), "{body}");
    // Admission ran: defaults and the service account are in the answer.
    assert_eq!(body["spec"]["serviceAccountName"], "default");
    assert!(body["metadata"]["resourceVersion"].is_null(), "{body}");
    assert_eq!(
        request(&kc, "GET", "/api/v1/namespaces/default/pods/app", None).0,
        404
    );
    // Nothing was written but Lease renewals, so no watcher of pods heard of it.
    assert_eq!(writes_besides_leases(&kc, before), 0);
    // Validation still runs, and only All is a dry-run value.
    let bad = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"x"}]}}"#;
    assert_eq!(
        request(
            &kc,
            "POST",
            "/api/v1/namespaces/default/pods?dryRun=All",
            Some(bad)
        )
        .0,
        422
    );
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/default/pods?dryRun=Some",
        Some(SEED_POD),
    );
    // As kube-apiserver: 422 on the CreateOptions, naming the values and the one allowed.
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All""#
    );
    // A name in use is still a conflict.
    let running = pod_names(&kc)
        .into_iter()
        .find(|p| p.starts_with("demo/"))
        .expect("a demo pod");
    let name = running.trim_start_matches("demo/");
    let pod = SEED_POD.replace("\"app\"}", &format!("\"{name}\"}}"));
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/demo/pods?dryRun=All",
        Some(&pod),
    );
    assert_eq!(code, 409, "{body}");
}

/// `kexplore serve` with its trace endpoints closed to the user (the ClusterRoleBinding that
/// opens them deleted): it tells a client only what any API server tells one.
fn serve_without_trace() -> ServeProcess {
    let srv = ServeProcess::start(&[]);
    let (code, body) = request(
        &srv.kubeconfig(),
        "DELETE",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kexplore:trace-reader",
        None,
    );
    assert_eq!(code, 200, "{body}");
    srv
}

/// A real create on a server that keeps its internals to itself: `kexplore serve` with its
/// trace endpoints closed to the user (the ClusterRoleBinding that opens them deleted), so the
/// journey learns only what any API server tells a client. Filter and score then come from the
/// simulation on the cluster listed before the create, compared with the node really bound.
#[test]
fn for_real_on_a_server_that_does_not_report_compares_the_simulation_with_the_binding() {
    let srv = serve_without_trace();
    let kc = srv.kubeconfig();
    let kc_s = kc.to_str().unwrap_or_default();
    // jane may create pods in default and, with this, list what the simulation needs.
    let (code, body) = request(
        &kc,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        Some(
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cluster-reader"},
                "rules":[{"verbs":["get","list","watch"],"apiGroups":[""],"resources":["nodes","pods","namespaces","persistentvolumeclaims","persistentvolumes"]},
                         {"verbs":["get","list","watch"],"apiGroups":["storage.k8s.io"],"resources":["storageclasses"]}]}"#,
        ),
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = request(
        &kc,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        Some(
            r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"developers-cluster-reader"},
                "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-reader"},
                "subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"developers"}]}"#,
        ),
    );
    assert_eq!(code, 201, "{body}");
    let pod = srv.dir.path().join("app.json");
    std::fs::write(&pod, SEED_POD).expect("write");
    let out = kexplore(&[
        "journey",
        "--kubeconfig",
        kc_s,
        "--context",
        "jane",
        "-f",
        pod.to_str().unwrap_or_default(),
        "--for-real",
        "--cleanup",
        "-o",
        "json",
    ]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{j}");
    // Nothing reported: the server's internals are inferred.
    for s in [
        "authentication",
        "authorization",
        "admission",
        "validation",
        "storage",
    ] {
        assert_eq!(stage(&j, s)["source"], "inferred", "{s}: {j}");
    }
    let node = stage(&j, "binding")["detail"]["node"].clone();
    assert_eq!(stage(&j, "binding")["source"], "observed", "{j}");
    assert!(node.is_string(), "{j}");
    // Per-node detail from the simulation on the live cluster.
    let filter = stage(&j, "filter");
    assert_eq!(filter["source"], "inferred");
    assert_eq!(filter["status"], "ok");
    assert_eq!(filter["detail"]["nodes_total"], 4, "{filter}");
    assert_eq!(filter["detail"]["filter"].as_array().map(Vec::len), Some(4));
    assert_eq!(
        filter["detail"]["not_visible"],
        serde_json::json!([]),
        "{filter}"
    );
    let score = stage(&j, "score");
    assert_eq!(score["source"], "inferred");
    assert!(
        score["detail"]["explanation"]
            .as_str()
            .is_some_and(|e| e.contains("listed just before the create")),
        "{score}"
    );
    let cmp = &score["detail"]["comparison"];
    assert_eq!(cmp["actual"], node, "{cmp}");
    assert_eq!(cmp["simulated"], score["detail"]["selected"], "{cmp}");
    // The embedded scheduler runs the engine the simulation runs, on the same cluster.
    assert_eq!(cmp["agrees"], true, "{cmp}");
    assert_eq!(cmp["simulated"], "node-3", "{cmp}");

    // The same run as text says it in words, once the first pod is gone.
    wait_for(Duration::from_secs(20), || {
        (!pod_names(&kc).contains(&"default/app".to_string())).then_some(())
    })
    .expect("--cleanup left the pod behind");
    let out = kexplore(&[
        "journey",
        "--kubeconfig",
        kc_s,
        "--context",
        "jane",
        "-f",
        pod.to_str().unwrap_or_default(),
        "--for-real",
        "--cleanup",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("the real scheduler bound it to node-3: the simulation agrees"),
        "{text}"
    );
}

/// A refusal from a server that keeps its internals to itself: the Status it answers with says
/// which stage refused (RBAC's 403 names the user and verb; a 409 AlreadyExists is the storage
/// write's), so that stage fails and the ones before it passed. Before, every request stage
/// read "the create failed; see the response".
#[test]
fn a_refusal_on_a_server_that_does_not_report_fails_the_stage_its_answer_names() {
    let srv = serve_without_trace();
    let kc = srv.kubeconfig();
    let kc_s = kc.to_str().unwrap_or_default();
    let journey = |file: &std::path::Path| {
        let out = kexplore(&[
            "journey",
            "--kubeconfig",
            kc_s,
            "--context",
            "jane",
            "-f",
            file.to_str().unwrap_or_default(),
            "-o",
            "json",
        ]);
        let j: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_ne!(out.status.code(), Some(0), "a refused create fails: {j}");
        j
    };
    let verdicts = |j: &Value| -> Vec<String> {
        [
            "authentication",
            "authorization",
            "admission",
            "validation",
            "storage",
        ]
        .iter()
        .map(|s| {
            assert_eq!(stage(j, s)["source"], "inferred", "{s}: {j}");
            format!("{s} {}", stage(j, s)["status"].as_str().unwrap_or("?"))
        })
        .collect()
    };

    // jane may create pods in default only.
    let elsewhere = srv.dir.path().join("system.json");
    let pod: Value = serde_json::from_str(SEED_POD).unwrap_or(Value::Null);
    let mut system = pod.clone();
    system["metadata"]["namespace"] = "kube-system".into();
    std::fs::write(&elsewhere, system.to_string()).expect("write");
    let j = journey(&elsewhere);
    assert_eq!(stage(&j, "response")["detail"]["code"], 403, "{j}");
    assert_eq!(
        verdicts(&j),
        [
            "authentication ok",
            "authorization failed",
            "admission skipped",
            "validation skipped",
            "storage skipped"
        ],
        "{j}"
    );

    // The name is taken: the dry run reaches the storage write, which refuses it.
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(SEED_POD),
    );
    assert_eq!(code, 201, "{body}");
    let app = srv.dir.path().join("app.json");
    std::fs::write(&app, SEED_POD).expect("write");
    let j = journey(&app);
    assert_eq!(stage(&j, "response")["detail"]["code"], 409, "{j}");
    assert_eq!(
        verdicts(&j),
        [
            "authentication ok",
            "authorization ok",
            "admission ok",
            "validation ok",
            "storage failed"
        ],
        "{j}"
    );
}

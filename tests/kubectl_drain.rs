//! `kubectl drain` through the Eviction API with a PodDisruptionBudget honoured, on every
//! kubectl of the machine: the server dry run finishes and evicts nothing; the real drain
//! cordons node-2, is refused with upstream's 429 while the budget is spent (kubectl retries),
//! and ends with the Deployment's pods recreated on the other nodes. With curl: the 429 body,
//! a dry-run eviction that leaves the pod, and the PDB status the disruption controller keeps.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for, which};

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

/// The live pods of app=web and their nodes.
fn web_pods(k: &Kubectl) -> Vec<(String, String, String)> {
    json(k, &["get", "pods", "-l", "app=web", "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .map(|p| {
            let s = |ptr: &str| {
                p.pointer(ptr)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            (s("/metadata/name"), s("/spec/nodeName"), s("/status/phase"))
        })
        .collect()
}

/// A Deployment of six Running pods over the workers, and a PDB allowing one disruption.
fn web_with_budget(k: &Kubectl) {
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=6",
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout=90s"]);
    k.ok(&[
        "create",
        "pdb",
        "web",
        "--selector=app=web",
        "--max-unavailable=1",
    ]);
    wait_for(Duration::from_secs(60), || {
        let p = json(k, &["get", "pdb", "web", "-o", "json"]);
        (p["status"]["disruptionsAllowed"] == 1 && p["status"]["observedGeneration"] == 1)
            .then_some(())
    })
    .unwrap_or_else(|| panic!("{}: the PDB never allowed a disruption", k.label));
}

fn drain_demo(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    // The demo's bare pod on node-2 has no controller: drain refuses such pods without --force,
    // as upstream does, so it goes first.
    k.ok(&[
        "delete",
        "pod",
        "-n",
        "demo",
        "workload-node-2",
        "--grace-period=0",
        "--force",
    ]);
    web_with_budget(&k);
    let before = web_pods(&k);
    let on_node2 = before.iter().filter(|p| p.1 == "node-2").count();
    assert!(on_node2 >= 1, "{label}: nothing on node-2: {before:?}");

    // The server dry run finishes, and nothing is evicted or cordoned.
    let dry = k.ok_out(&[
        "drain",
        "node-2",
        "--ignore-daemonsets",
        "--dry-run=server",
        "--timeout=60s",
    ]);
    let said = format!("{}{}", dry.stdout, dry.stderr);
    assert!(said.contains("(server dry run)"), "{label}: {said}");
    assert_eq!(web_pods(&k), before, "{label}: the dry run changed pods");
    let node = json(&k, &["get", "node", "node-2", "-o", "json"]);
    assert!(node["spec"]["unschedulable"].is_null(), "{label}: {node}");

    let out = k.ok_out(&["drain", "node-2", "--ignore-daemonsets", "--timeout=120s"]);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("node/node-2 cordoned"), "{label}: {said}");
    assert!(
        said.contains("evicting pod default/web-"),
        "{label}: {said}"
    );
    assert!(said.contains("node/node-2 drained"), "{label}: {said}");
    if on_node2 >= 2 {
        // One disruption at a time: the second eviction waits for the first pod's replacement.
        assert!(
            said.contains("Cannot evict pod as it would violate the pod's disruption budget."),
            "{label}: {said}"
        );
    }
    let node = json(&k, &["get", "node", "node-2", "-o", "json"]);
    assert_eq!(node["spec"]["unschedulable"], true, "{label}");
    let after = wait_for(Duration::from_secs(90), || {
        let pods = web_pods(&k);
        (pods.len() == 6 && pods.iter().all(|p| p.2 == "Running")).then_some(pods)
    })
    .unwrap_or_else(|| panic!("{label}: web never came back to 6: {:?}", web_pods(&k)));
    assert!(after.iter().all(|p| p.1 != "node-2"), "{label}: {after:?}");
    for (name, _, _) in before.iter().filter(|p| p.1 == "node-2") {
        assert!(
            !after.iter().any(|p| &p.0 == name),
            "{label}: {name} still there"
        );
    }
}

fn run(label: &str) {
    with_kubectl(label, drain_demo);
}

per_kubectl!(run);

/// `POST pods/<name>/eviction` with curl.
fn curl_evict(srv: &ServeProcess, pod: &str, query: &str) -> (u16, Value) {
    let body = format!(
        r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{pod}","namespace":"default"}}}}"#
    );
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            "-w",
            "\n%{http_code}",
            "-X",
            "POST",
        ])
        .args(["-H", "Content-Type: application/json", "--data", &body])
        .arg("--cacert")
        .arg(srv.pki("ca.crt"))
        .arg("--cert")
        .arg(srv.pki("admin.crt"))
        .arg("--key")
        .arg(srv.pki("admin.key"))
        .arg(format!(
            "{}/api/v1/namespaces/default/pods/{pod}/eviction{query}",
            srv.url
        ))
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    )
}

#[test]
fn eviction_with_curl_is_refused_by_a_spent_budget() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed here; skipping");
        return;
    }
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        web_with_budget(&k);
        let pods = web_pods(&k);
        let (first, second) = (&pods[0].0, &pods[1].0);

        // A dry run answers 201 and leaves the pod and the budget as they were.
        let (code, body) = curl_evict(&srv, first, "?dryRun=All");
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["status"], "Success", "{body}");
        assert_eq!(web_pods(&k), pods);
        let pdb = json(&k, &["get", "pdb", "web", "-o", "json"]);
        assert_eq!(pdb["status"]["disruptionsAllowed"], 1, "{pdb}");

        // The real one spends the budget: the pod is named in disruptedPods. Every node is
        // cordoned first, so its replacement stays Pending and the budget stays spent: else,
        // on a busy machine, the replacement can be Running and ready before the next request.
        let nodes = k.ok(&["get", "nodes", "-o", "name"]);
        for node in nodes.lines() {
            k.ok(&["cordon", node]);
        }
        let (code, body) = curl_evict(&srv, first, "");
        assert_eq!(code, 201, "{body}");
        let pdb = json(&k, &["get", "pdb", "web", "-o", "json"]);
        assert!(
            pdb["status"]["disruptedPods"][first].is_string()
                || pdb["status"]["disruptionsAllowed"] == 0,
            "{pdb}"
        );

        // Now a second eviction is 429 with upstream's message and cause.
        let (code, body) = curl_evict(&srv, second, "");
        assert_eq!(code, 429, "{body}");
        assert_eq!(body["reason"], "TooManyRequests", "{body}");
        assert_eq!(
            body["message"], "Cannot evict pod as it would violate the pod's disruption budget.",
            "{body}"
        );
        let cause = &body["details"]["causes"][0];
        assert_eq!(cause["reason"], "DisruptionBudget", "{body}");
        assert!(
            cause["message"].as_str().is_some_and(
                |m| m.starts_with("The disruption budget web needs 5 healthy pods and has ")
            ),
            "{body}"
        );
        assert!(web_pods(&k).iter().any(|p| &p.0 == second));

        // A missing pod is a 404, not a 429.
        let (code, body) = curl_evict(&srv, "nope", "");
        assert_eq!(code, 404, "{body}");
    });
}

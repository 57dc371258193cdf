//! Every kubectl on the machine against `kexplore serve` (with a 3 s node monitor grace period)
//! sees nodes come and go and preemption carried out: a kubelet stopped by the
//! `kexplore.dev/kubelet` annotation leaves its node Unknown with the unreachable taints, a pod
//! tolerating them for 5 s is evicted (DisruptionTarget) and replaced on another node, and the
//! node is Ready and untainted once the kubelet is back; a NotReady kubelet gives the not-ready
//! taints; a high-priority pod on a full cluster preempts a lower-priority one; a RuntimeClass
//! gives its pods their overhead and node, and their sandbox the handler the node must have.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for};

const WAIT: Duration = Duration::from_secs(90);

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

fn pods(k: &Kubectl, selector: &str) -> Vec<Value> {
    json(k, &["get", "pods", "-l", selector, "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn condition(obj: &Value, ty: &str) -> Value {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty).cloned())
        .unwrap_or(Value::Null)
}

fn taints(node: &Value) -> Vec<String> {
    node.pointer("/spec/taints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| {
            format!(
                "{}:{}",
                t["key"].as_str().unwrap_or(""),
                t["effect"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn node_status_column(k: &Kubectl, node: &str) -> String {
    let out = k.ok(&["get", "node", node, "--no-headers"]);
    out.split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

/// A Deployment whose one pod prefers node-2 and tolerates node-2's going away for 5 s only.
const AWAY: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: away}
spec:
  replicas: 1
  selector: {matchLabels: {app: away}}
  template:
    metadata: {labels: {app: away}}
    spec:
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-2]}]}
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      containers:
      - {name: app, image: nginx}
"#;

fn node_goes_away_and_comes_back(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&["--node-monitor-grace-period=3s"]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let manifest = srv.dir.path().join("away.yaml");
    std::fs::write(&manifest, AWAY).expect("write manifest");
    k.ok(&["apply", "-f", manifest.to_str().unwrap_or_default()]);
    let first = wait_for(WAIT, || {
        pods(&k, "app=away")
            .into_iter()
            .find(|p| p["status"]["phase"] == "Running" && p["spec"]["nodeName"] == "node-2")
    })
    .unwrap_or_else(|| panic!("{label}: the pod never ran on node-2"));
    let first_name = first["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    k.ok(&["annotate", "node", "node-2", "kexplore.dev/kubelet=stopped"]);
    let node = wait_for(WAIT, || {
        let n = json(&k, &["get", "node", "node-2", "-o", "json"]);
        (condition(&n, "Ready")["status"] == "Unknown"
            && taints(&n).contains(&"node.kubernetes.io/unreachable:NoExecute".to_string()))
        .then_some(n)
    })
    .unwrap_or_else(|| panic!("{label}: node-2 never became Unknown and unreachable"));
    let ready = condition(&node, "Ready");
    assert_eq!(ready["reason"], "NodeStatusUnknown", "{label}: {ready}");
    assert_eq!(
        ready["message"], "Kubelet stopped posting node status.",
        "{label}"
    );
    assert_eq!(
        taints(&node),
        [
            "node.kubernetes.io/unreachable:NoSchedule",
            "node.kubernetes.io/unreachable:NoExecute"
        ],
        "{label}"
    );
    assert_eq!(node_status_column(&k, "node-2"), "NotReady", "{label}");

    // Evicted after its 5 s: marked, deleted, and left Terminating on the silent node.
    let evicted = wait_for(WAIT, || {
        let p = json(&k, &["get", "pod", &first_name, "-o", "json"]);
        p.pointer("/metadata/deletionTimestamp")
            .is_some()
            .then_some(p)
    })
    .unwrap_or_else(|| panic!("{label}: {first_name} was never evicted"));
    let target = condition(&evicted, "DisruptionTarget");
    assert_eq!(target["status"], "True", "{label}: {target}");
    assert_eq!(target["reason"], "DeletionByTaintManager", "{label}");
    assert_eq!(
        target["message"], "Taint manager: deleting due to NoExecute taint",
        "{label}"
    );
    let events = k.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=TaintManagerEviction",
    ]);
    assert!(
        events.contains(&format!("Marking for deletion Pod default/{first_name}")),
        "{label}: {events}"
    );
    // Its ReplicaSet's replacement runs on another node.
    let replacement = wait_for(WAIT, || {
        pods(&k, "app=away").into_iter().find(|p| {
            p["metadata"]["name"] != first_name.as_str() && p["status"]["phase"] == "Running"
        })
    })
    .unwrap_or_else(|| panic!("{label}: no replacement ran"));
    assert_ne!(replacement["spec"]["nodeName"], "node-2", "{label}");

    // The kubelet back: Ready, the taints gone, the evicted pod finished.
    k.ok(&["annotate", "node", "node-2", "kexplore.dev/kubelet-"]);
    wait_for(WAIT, || {
        let n = json(&k, &["get", "node", "node-2", "-o", "json"]);
        (condition(&n, "Ready")["status"] == "True" && taints(&n).is_empty()).then_some(())
    })
    .unwrap_or_else(|| panic!("{label}: node-2 never came back Ready and untainted"));
    assert_eq!(node_status_column(&k, "node-2"), "Ready", "{label}");
    wait_for(WAIT, || {
        (!k.run(&["get", "pod", &first_name]).stderr.is_empty()).then_some(())
    })
    .unwrap_or_else(|| panic!("{label}: {first_name} stayed after its kubelet came back"));

    // A kubelet that posts Ready=False: the not-ready taints, then gone again.
    k.ok(&[
        "annotate",
        "node",
        "node-1",
        "kexplore.dev/kubelet=not-ready",
    ]);
    let sick = wait_for(WAIT, || {
        let n = json(&k, &["get", "node", "node-1", "-o", "json"]);
        taints(&n)
            .contains(&"node.kubernetes.io/not-ready:NoExecute".to_string())
            .then_some(n)
    })
    .unwrap_or_else(|| panic!("{label}: node-1 never got the not-ready taint"));
    assert_eq!(condition(&sick, "Ready")["status"], "False", "{label}");
    assert_eq!(
        condition(&sick, "Ready")["reason"],
        "KubeletNotReady",
        "{label}"
    );
    assert!(
        taints(&sick).contains(&"node.kubernetes.io/not-ready:NoSchedule".to_string()),
        "{label}: {:?}",
        taints(&sick)
    );
    k.ok(&["annotate", "node", "node-1", "kexplore.dev/kubelet-"]);
    wait_for(WAIT, || {
        let n = json(&k, &["get", "node", "node-1", "-o", "json"]);
        (condition(&n, "Ready")["status"] == "True" && taints(&n).is_empty()).then_some(())
    })
    .unwrap_or_else(|| panic!("{label}: node-1 never came back"));
}

/// Four 1500m pods fill the demo cluster's room for another 1500m pod.
const FILLER: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: filler}
spec:
  replicas: 4
  selector: {matchLabels: {app: filler}}
  template:
    metadata: {labels: {app: filler}}
    spec:
      containers:
      - {name: c, image: nginx, resources: {requests: {cpu: 1500m}}}
"#;

const URGENT: &str = r#"apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent-polite}
value: 1000000
preemptionPolicy: Never
---
apiVersion: v1
kind: Pod
metadata: {name: polite}
spec:
  priorityClassName: urgent-polite
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: 1500m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: urgent
  containers:
  - {name: c, image: nginx, resources: {requests: {cpu: 1500m}}}
"#;

fn preemption(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let filler = srv.dir.path().join("filler.yaml");
    std::fs::write(&filler, FILLER).expect("write manifest");
    k.ok(&["apply", "-f", filler.to_str().unwrap_or_default()]);
    let running = wait_for(WAIT, || {
        let ps = pods(&k, "app=filler");
        (ps.iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count()
            == 4)
            .then_some(ps)
    })
    .unwrap_or_else(|| panic!("{label}: the filler pods never all ran"));
    let mut low: Vec<String> = running
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .map(|n| format!("default/{n}"))
        .collect();
    low.extend(["demo/workload-node-1".into(), "demo/workload-node-3".into()]);

    // Every change to a pod, to see the victim's last state before it goes.
    let log_path = srv.dir.path().join("watch.json");
    let log = std::fs::File::create(&log_path).expect("watch log");
    let mut watch = k
        .cmd(&[
            "get",
            "pods",
            "-A",
            "-w",
            "-o",
            "json",
            "--output-watch-events",
        ])
        .stdout(log)
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");

    let urgent = srv.dir.path().join("urgent.yaml");
    std::fs::write(&urgent, URGENT).expect("write manifest");
    k.ok(&["apply", "-f", urgent.to_str().unwrap_or_default()]);
    let bound = wait_for(WAIT, || {
        let p = json(&k, &["get", "pod", "urgent", "-o", "json"]);
        (p["status"]["phase"] == "Running").then_some(p)
    })
    .unwrap_or_else(|| panic!("{label}: the high-priority pod never ran"));
    let node = bound["spec"]["nodeName"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        bound["status"]["nominatedNodeName"],
        node.as_str(),
        "{label}"
    );
    let uid = bound["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let events = json(
        &k,
        &[
            "get",
            "events",
            "-A",
            "--field-selector",
            "reason=Preempted",
            "-o",
            "json",
        ],
    );
    let items = events["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{label}: one victim is enough: {items:?}");
    assert_eq!(
        items[0]["message"],
        format!("Preempted by pod {uid} on node {node}"),
        "{label}"
    );
    // The victim is a filler pod or the demo's workload pod on that node, whichever the
    // candidate nodes' tie-break picks: either way one pod of priority 0.
    let victim_ns = items[0]["involvedObject"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let victim = items[0]["involvedObject"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        low.contains(&format!("{victim_ns}/{victim}")),
        "{label}: {victim_ns}/{victim} is not a low-priority pod on a full node"
    );
    wait_for(WAIT, || {
        (!k.run(&["get", "pod", "-n", &victim_ns, &victim])
            .stderr
            .is_empty())
        .then_some(())
    })
    .unwrap_or_else(|| panic!("{label}: the victim {victim} was never deleted"));

    // The victim's DisruptionTarget, as a watcher saw it before the deletion.
    let marked = wait_for(WAIT, || {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .map_while(Result::ok)
            .map(|e| e["object"].clone())
            .find(|p| {
                p["metadata"]["name"] == victim.as_str()
                    && p["metadata"]["namespace"] == victim_ns.as_str()
                    && !condition(p, "DisruptionTarget").is_null()
            })
    })
    .unwrap_or_else(|| panic!("{label}: no watch event showed {victim}'s DisruptionTarget"));
    let _ = watch.kill();
    let _ = watch.wait();
    let target = condition(&marked, "DisruptionTarget");
    assert_eq!(target["status"], "True", "{label}");
    assert_eq!(target["reason"], "PreemptionByScheduler", "{label}");
    assert_eq!(
        target["message"], "default-scheduler: preempting to accommodate a higher priority pod",
        "{label}"
    );

    // preemptionPolicy: Never waits, evicting nobody.
    let polite = json(&k, &["get", "pod", "polite", "-o", "json"]);
    assert_eq!(polite["status"]["phase"], "Pending", "{label}");
    let said = k.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=polite,reason=FailedScheduling",
    ]);
    assert!(
        said.contains("preemption: not eligible due to preemptionPolicy=Never."),
        "{label}: {said}"
    );
}

/// A RuntimeClass steers its pods: refused when the class is missing, given its overhead and
/// node selector at admission, scheduled where the selector says and the overhead fits, held by
/// a node whose runtime lacks the handler, and started once the node has it.
fn runtime_classes(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let write = |name: &str, text: &str| {
        let path = srv.dir.path().join(name);
        std::fs::write(&path, text).expect("write manifest");
        path.display().to_string()
    };
    let class = write("gvisor.yaml", GVISOR);
    k.ok(&["create", "-f", &class]);
    let table = k.ok(&["get", "runtimeclass", "gvisor"]);
    assert!(
        table.starts_with("NAME") && table.contains("HANDLER") && table.contains("runsc"),
        "{label}: {table}"
    );
    let o = k.run(&[
        "patch",
        "runtimeclass",
        "gvisor",
        "-p",
        r#"{"handler":"kata"}"#,
    ]);
    assert!(
        o.stderr
            .contains(r#"handler: Invalid value: "kata": field is immutable"#),
        "{label}: {}",
        o.stderr
    );
    let pod = |name: &str, class: &str| {
        write(
            &format!("{name}.yaml"),
            &format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{app: {name}}}}}\nspec:\n  runtimeClassName: {class}\n  containers: [{{name: c, image: nginx}}]\n"
            ),
        )
    };
    let o = k.run(&["create", "-f", &pod("kata", "kata")]);
    assert!(
        o.stderr
            .contains(r#"pods "kata" is forbidden: pod rejected: RuntimeClass "kata" not found"#),
        "{label}: {}",
        o.stderr
    );
    k.ok(&["label", "node", "node-2", "sandbox=gvisor"]);
    k.ok(&["create", "-f", &pod("sandboxed", "gvisor")]);
    let p = json(&k, &["get", "pod", "sandboxed", "-o", "json"]);
    assert_eq!(
        p["spec"]["overhead"],
        serde_json::json!({"cpu": "250m", "memory": "120Mi"}),
        "{label}"
    );
    assert_eq!(p["spec"]["nodeSelector"]["sandbox"], "gvisor", "{label}");
    // The pod requests nothing, but its sandbox's 250m do not fit in node-2's last 200m.
    let unfit = wait_for(WAIT, || {
        let said = k.ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=sandboxed,reason=FailedScheduling",
            "-o",
            "jsonpath={.items[*].message}",
        ]);
        said.contains("1 Insufficient cpu").then_some(())
    });
    assert!(unfit.is_some(), "{label}: the overhead was not counted");
    k.ok(&["label", "node", "node-3", "sandbox=gvisor"]);
    let held = wait_for(WAIT, || {
        let events = k.ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=sandboxed,reason=FailedCreatePodSandBox",
            "-o",
            "jsonpath={.items[*].message}",
        ]);
        (!events.is_empty()).then_some(events)
    });
    assert_eq!(
        held.as_deref(),
        Some(
            r#"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured"#
        ),
        "{label}"
    );
    let p = json(&k, &["get", "pod", "sandboxed", "-o", "json"]);
    assert_eq!(p["spec"]["nodeName"], "node-3", "{label}");
    assert_eq!(p["status"]["phase"], "Pending", "{label}");
    k.ok(&[
        "annotate",
        "node",
        "node-3",
        "kexplore.dev/runtime-handlers=runc,runsc",
    ]);
    let running = wait_for(WAIT, || {
        (pods(&k, "app=sandboxed")
            .first()
            .is_some_and(|p| p["status"]["phase"] == "Running"))
        .then_some(())
    });
    assert!(running.is_some(), "{label}: sandboxed never ran");
}

const GVISOR: &str = "apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
overhead:
  podFixed: {cpu: 250m, memory: 120Mi}
scheduling:
  nodeSelector: {sandbox: gvisor}
";

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        node_goes_away_and_comes_back(label, bin);
        preemption(label, bin);
        runtime_classes(label, bin);
    });
}

per_kubectl!(run_version);

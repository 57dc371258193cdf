//! Every kubectl on the machine against `kexplore serve` runs the workload demo a workshop
//! starts with: a Deployment's pods Running and spread over the workers, `scale`, `set image`
//! with `rollout status`, `rollout history` and `rollout undo`, `get all`, invalid specs
//! refused with upstream's causes, the other workload kinds (ReplicationControllers too) and
//! `cluster-info dump`; a StatefulSet deleted with `--cascade=orphan` and made again (the
//! documented way to change its volumeClaimTemplates) takes back its pods.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for};

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

/// The pods of `app=web` that are not being deleted.
fn live_pods(k: &Kubectl) -> Vec<Value> {
    json(k, &["get", "pods", "-l", "app=web", "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .collect()
}

fn running(pods: &[Value]) -> usize {
    pods.iter()
        .filter(|p| p["status"]["phase"] == "Running")
        .count()
}

fn rollout_status(k: &Kubectl) {
    let out = k.ok(&["rollout", "status", "deployment/web", "--timeout=90s"]);
    assert!(
        out.contains("deployment \"web\" successfully rolled out"),
        "{}: {out}",
        k.label
    );
}

fn deployment_demo(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=6",
    ]);
    rollout_status(&k);
    let pods = live_pods(&k);
    assert_eq!(running(&pods), 6, "{label}: {pods:?}");
    // Spread over every worker, by PodTopologySpread's system defaults and the resource scores.
    let wide = k.ok(&["get", "pods", "-l", "app=web", "-o", "wide"]);
    for node in ["node-1", "node-2", "node-3"] {
        assert!(wide.contains(node), "{label}: no pod on {node}:\n{wide}");
    }
    // Each pod: `<rs>-<5 of bcdfghjklmnpqrstvwxz2456789>`, controlled by its ReplicaSet.
    let rs = json(&k, &["get", "rs", "-l", "app=web", "-o", "json"]);
    let rs_name = rs["items"][0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let hash = rs_name.strip_prefix("web-").unwrap_or_default();
    assert!(
        !hash.is_empty()
            && hash
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
        "{label}: {rs_name}"
    );
    assert_eq!(
        rs["items"][0]["metadata"]["labels"]["pod-template-hash"], hash,
        "{label}"
    );
    assert_eq!(
        rs["items"][0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1",
        "{label}"
    );
    for p in &pods {
        let name = p["metadata"]["name"].as_str().unwrap_or_default();
        let suffix = name
            .strip_prefix(&format!("{rs_name}-"))
            .unwrap_or_default();
        assert_eq!(suffix.len(), 5, "{label}: {name}");
        let owner = &p["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "ReplicaSet", "{label}");
        assert_eq!(owner["name"], rs_name.as_str(), "{label}");
        assert_eq!(owner["controller"], true, "{label}");
        assert_eq!(owner["blockOwnerDeletion"], true, "{label}");
    }
    let d = json(&k, &["get", "deployment", "web", "-o", "json"]);
    let conditions = d["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let reason = |t: &str| {
        conditions
            .iter()
            .find(|c| c["type"] == t)
            .map(|c| c["reason"].clone())
    };
    assert_eq!(
        reason("Available"),
        Some("MinimumReplicasAvailable".into()),
        "{label}"
    );
    assert_eq!(
        reason("Progressing"),
        Some("NewReplicaSetAvailable".into()),
        "{label}"
    );
    let events = k.ok(&[
        "get",
        "events",
        "--field-selector",
        "reason=ScalingReplicaSet",
    ]);
    assert!(
        events.contains(&format!("Scaled up replica set {rs_name} from 0 to 6")),
        "{label}: {events}"
    );
    let table = k.ok(&["get", "deployment", "web"]);
    assert!(
        table.starts_with("NAME   READY   UP-TO-DATE   AVAILABLE   AGE"),
        "{label}: {table}"
    );
    assert!(
        table.contains("web    6/6     6            6"),
        "{label}: {table}"
    );
    let all = k.ok(&["get", "all"]);
    assert!(all.contains("deployment.apps/web"), "{label}: {all}");
    assert!(
        all.contains(&format!("replicaset.apps/{rs_name}")),
        "{label}: {all}"
    );

    // kubectl scale goes through the scale subresource.
    k.ok(&["scale", "deployment", "web", "--replicas=3"]);
    let three = wait_for(Duration::from_secs(30), || {
        let pods = live_pods(&k);
        (pods.len() == 3 && running(&pods) == 3).then_some(())
    });
    assert!(three.is_some(), "{label}: {:?}", live_pods(&k));
    let scale = json(
        &k,
        &[
            "get",
            "--raw",
            "/apis/apps/v1/namespaces/default/deployments/web/scale",
        ],
    );
    assert_eq!(scale["kind"], "Scale", "{label}");
    assert_eq!(scale["spec"]["replicas"], 3, "{label}");
    assert_eq!(scale["status"]["selector"], "app=web", "{label}");

    // A new image rolls out through a second ReplicaSet; undo brings the first one back.
    k.ok(&["set", "image", "deployment/web", "nginx=nginx:1.27"]);
    rollout_status(&k);
    let images: Vec<Value> = live_pods(&k)
        .iter()
        .map(|p| p["spec"]["containers"][0]["image"].clone())
        .collect();
    assert_eq!(images, vec![Value::from("nginx:1.27"); 3], "{label}");
    let history = k.ok(&["rollout", "history", "deployment/web"]);
    assert!(
        history.contains("\n1 ") && history.contains("\n2 "),
        "{label}: {history}"
    );
    k.ok(&["rollout", "undo", "deployment/web"]);
    rollout_status(&k);
    let d = json(&k, &["get", "deployment", "web", "-o", "json"]);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"], "nginx",
        "{label}"
    );
    let rss = json(&k, &["get", "rs", "-l", "app=web", "-o", "json"]);
    let revisions: Vec<(String, String)> = rss["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    // The undo reused the first ReplicaSet (same template, same name) as revision 3.
    assert_eq!(revisions.len(), 2, "{label}: {revisions:?}");
    assert!(
        revisions.contains(&(rs_name.clone(), "3".into())),
        "{label}: {revisions:?}"
    );
    let history = k.ok(&["rollout", "history", "deployment/web"]);
    assert!(
        history.contains("\n2 ") && history.contains("\n3 "),
        "{label}: {history}"
    );
}

fn invalid_specs(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let file = srv.dir.path().join("bad.yaml");
    let cases = [
        (
            "selector: {matchLabels: {app: other}}\n  replicas: 1",
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
        ),
        (
            "selector: {matchLabels: {app: web}}\n  replicas: -1",
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        ("replicas: 1", "spec.selector: Required value"),
    ];
    for (spec, cause) in cases {
        std::fs::write(
            &file,
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: bad}}\nspec:\n  {spec}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n"
            ),
        )
        .expect("write manifest");
        let path = file.to_string_lossy().to_string();
        let out = k.run(&["create", "-f", &path]);
        assert_ne!(out.code, 0, "{label}: {spec} was accepted");
        assert!(
            out.stderr.contains("Deployment \"bad\" is invalid") && out.stderr.contains(cause),
            "{label}: {spec}: {}",
            out.stderr
        );
    }
    // The selector of an existing Deployment is immutable.
    k.ok(&["create", "deployment", "web", "--image=nginx"]);
    let out = k.run(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}"#,
    ]);
    assert!(
        out.stderr.contains("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"),
        "{label}: {}",
        out.stderr
    );
}

const DAEMON_AND_STATEFUL: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: busybox}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: d, image: postgres}]}
";

fn items(k: &Kubectl, selector: &str) -> Vec<Value> {
    json(k, &["get", "pods", "-l", selector, "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .collect()
}

fn daemonset_and_statefulset(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let file = srv.dir.path().join("workloads.yaml");
    std::fs::write(&file, DAEMON_AND_STATEFUL).expect("write manifest");
    k.ok(&["apply", "-f", &file.to_string_lossy()]);
    k.ok(&["rollout", "status", "daemonset/agent", "--timeout=60s"]);
    // One pod per worker; the control plane's NoSchedule taint is not tolerated.
    let agents = items(&k, "app=agent");
    let mut nodes: Vec<String> = agents
        .iter()
        .map(|p| {
            p["spec"]["nodeName"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["node-1", "node-2", "node-3"], "{label}: {agents:?}");
    for p in &agents {
        let pinned = &p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchFields"][0];
        assert_eq!(pinned["key"], "metadata.name", "{label}");
        assert_eq!(pinned["values"][0], p["spec"]["nodeName"], "{label}");
        assert!(
            p["metadata"]["labels"]["controller-revision-hash"].is_string(),
            "{label}"
        );
    }
    let ds = k.ok(&["get", "daemonset", "agent"]);
    assert!(
        ds.starts_with(
            "NAME    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE"
        ),
        "{label}: {ds}"
    );
    assert!(
        ds.contains("agent   3         3         3       3            3           <none>"),
        "{label}: {ds}"
    );

    let out = k.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"]);
    assert!(out.contains("roll out complete"), "{label}: {out}");
    let db = items(&k, "app=db");
    let mut names: Vec<&str> = db
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["db-0", "db-1", "db-2"], "{label}");
    // OrderedReady: each pod was created once the one before it was Ready.
    let ready_at = |p: &Value| {
        p["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
            .and_then(|c| c["lastTransitionTime"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let by_name = |n: &str| {
        db.iter()
            .find(|p| p["metadata"]["name"] == n)
            .cloned()
            .unwrap_or_default()
    };
    for (before, after) in [("db-0", "db-1"), ("db-1", "db-2")] {
        let created = by_name(after)["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            created >= ready_at(&by_name(before)),
            "{label}: {after} before {before} was Ready"
        );
        assert_eq!(
            by_name(after)["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
            after,
            "{label}"
        );
    }
    // Scale down removes the highest ordinals.
    k.ok(&["scale", "statefulset", "db", "--replicas=1"]);
    let one = wait_for(Duration::from_secs(30), || {
        let names: Vec<String> = items(&k, "app=db")
            .iter()
            .filter_map(|p| p["metadata"]["name"].as_str().map(String::from))
            .collect();
        (names == ["db-0"]).then_some(())
    });
    assert!(one.is_some(), "{label}: {:?}", items(&k, "app=db"));
    let revisions = k.ok(&["get", "controllerrevisions"]);
    assert!(
        revisions.contains("daemonset.apps/agent") && revisions.contains("statefulset.apps/db"),
        "{label}: {revisions}"
    );
    replication_controller(label, &k, srv.dir.path());
}

const REPLICATION_CONTROLLER: &str = "apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: l, image: nginx}]}
";

/// A ReplicationController, which `kubectl cluster-info dump` lists beside the apps/v1 kinds:
/// its selector and labels defaulted from the template, its pods made and counted by the
/// replication manager, scaled through its scale subresource, and deleted with it.
fn replication_controller(label: &str, k: &Kubectl, dir: &Path) {
    let file = dir.join("rc.yaml");
    std::fs::write(&file, REPLICATION_CONTROLLER).expect("write manifest");
    k.ok(&["apply", "-f", &file.to_string_lossy()]);
    let rc = wait_for(Duration::from_secs(30), || {
        let rc = json(k, &["get", "rc", "legacy", "-o", "json"]);
        (rc["status"]["readyReplicas"] == 2).then_some(rc)
    });
    let rc = rc.unwrap_or_else(|| panic!("{label}: {}", k.ok(&["get", "rc,pods", "-o", "wide"])));
    assert_eq!(
        rc["spec"]["selector"],
        serde_json::json!({"app": "legacy"}),
        "{label}"
    );
    assert_eq!(
        rc["metadata"]["labels"],
        serde_json::json!({"app": "legacy"}),
        "{label}"
    );
    let pods = items(k, "app=legacy");
    assert_eq!(running(&pods), 2, "{label}: {pods:?}");
    for p in &pods {
        let owner = &p["metadata"]["ownerReferences"][0];
        assert_eq!(
            (
                &owner["apiVersion"],
                &owner["kind"],
                &owner["name"],
                &owner["controller"]
            ),
            (
                &"v1".into(),
                &"ReplicationController".into(),
                &"legacy".into(),
                &true.into()
            ),
            "{label}: {p}"
        );
    }
    let table = k.ok(&["get", "rc", "legacy", "-o", "wide"]);
    assert!(
        table.starts_with(
            "NAME     DESIRED   CURRENT   READY   AGE   CONTAINERS   IMAGES   SELECTOR"
        ) && table.contains("legacy   2         2         2")
            && table.contains("l            nginx    app=legacy"),
        "{label}: {table}"
    );
    let events = k.ok(&["describe", "rc", "legacy"]);
    assert!(
        events.contains("SuccessfulCreate  ")
            && events.contains("replication-controller  Created pod: legacy-"),
        "{label}: {events}"
    );
    k.ok(&["scale", "rc", "legacy", "--replicas=1"]);
    let one = wait_for(Duration::from_secs(30), || {
        (items(k, "app=legacy").len() == 1).then_some(())
    });
    assert!(one.is_some(), "{label}: {:?}", items(k, "app=legacy"));
    let dump = k.ok(&["cluster-info", "dump", "--namespaces", "default"]);
    for list in ["ReplicationControllerList", "ReplicaSetList", "PodList"] {
        assert!(
            dump.contains(&format!("\"kind\": \"{list}\"")),
            "{label}: cluster-info dump without {list}"
        );
    }
    k.ok(&["delete", "rc", "legacy"]);
    let gone = wait_for(Duration::from_secs(30), || {
        items(k, "app=legacy").is_empty().then_some(())
    });
    assert!(gone.is_some(), "{label}: {:?}", items(k, "app=legacy"));
}

/// A template admission refuses: the ReplicaSet controller records FailedCreate and goes on;
/// it neither panics nor spins (the other Deployment still rolls out).
fn a_refused_template_is_an_event(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let file = srv.dir.path().join("broken.yaml");
    std::fs::write(
        &file,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: broken}\nspec:\n  selector: {matchLabels: {app: broken}}\n  template:\n    metadata: {labels: {app: broken}}\n    spec: {priorityClassName: nope, containers: [{name: c, image: nginx}]}\n",
    )
    .expect("write manifest");
    k.ok(&["apply", "-f", &file.to_string_lossy()]);
    let event = wait_for(Duration::from_secs(20), || {
        let out = k.ok(&["get", "events", "--field-selector", "reason=FailedCreate"]);
        out.contains("Error creating: pods \"broken-")
            .then_some(out)
            .filter(|o| o.contains("is forbidden: no PriorityClass with name nope was found"))
    });
    assert!(event.is_some(), "{label}: no FailedCreate event");
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
    ]);
    rollout_status(&k);
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        deployment_demo(label, bin);
        invalid_specs(label, bin);
        daemonset_and_statefulset(label, bin);
        a_refused_template_is_an_event(label, bin);
    });
}

per_kubectl!(run_version);

fn stateful_set(storage: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 2
  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec: {{containers: [{{name: d, image: postgres}}]}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {storage}}}}}}}
"
    )
}

/// volumeClaimTemplates are immutable, so the docs change them by deleting the StatefulSet with
/// `--cascade=orphan` and applying it again. Upstream's controller then adopts the orphaned
/// pods and ControllerRevision: the pods run on, untouched. Here the new set found its old
/// revision's name taken, stopped there, and counted no pod.
#[test]
fn a_statefulset_made_again_adopts_its_orphaned_pods() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let file = srv.dir.path().join("db.yaml");
        let path = file.to_string_lossy().to_string();
        std::fs::write(&file, stateful_set("1Gi")).expect("write manifest");
        k.ok(&["apply", "-f", &path]);
        // Each claim template gets a claim's defaults, as the ones a cluster shows.
        let sts = json(&k, &["get", "statefulset", "db", "-o", "json"]);
        let claim = &sts["spec"]["volumeClaimTemplates"][0];
        assert_eq!(
            (&claim["spec"]["volumeMode"], &claim["status"]),
            (
                &serde_json::json!("Filesystem"),
                &serde_json::json!({"phase": "Pending"})
            ),
            "{label}: {claim}"
        );
        k.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"]);
        let uids = |k: &Kubectl| -> Vec<(String, String)> {
            let mut v: Vec<_> = items(k, "app=db")
                .iter()
                .map(|p| {
                    let owner = p["metadata"]["ownerReferences"][0]["uid"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    (
                        p["metadata"]["uid"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        owner,
                    )
                })
                .collect();
            v.sort();
            v
        };
        let before = uids(&k);
        assert_eq!(before.len(), 2, "{label}: {before:?}");
        // The reason for what follows: an apply that changes the claim templates is refused.
        std::fs::write(&file, stateful_set("2Gi")).expect("write manifest");
        let refused = k.run(&["apply", "-f", &path]);
        assert!(
            refused.stderr.contains("The StatefulSet \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"),
            "{label}: {}",
            refused.stderr
        );
        k.ok(&[
            "delete",
            "statefulset",
            "db",
            "--cascade=orphan",
            "--wait=true",
        ]);
        let orphaned = wait_for(Duration::from_secs(30), || {
            let now = uids(&k);
            now.iter().all(|(_, owner)| owner.is_empty()).then_some(now)
        });
        assert!(orphaned.is_some(), "{label}: {:?}", uids(&k));

        k.ok(&["apply", "-f", &path]);
        let set = json(&k, &["get", "statefulset", "db", "-o", "json"]);
        let uid = set["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let adopted = wait_for(Duration::from_secs(30), || {
            let now = uids(&k);
            let ready = json(&k, &["get", "statefulset", "db", "-o", "json"])["status"]["readyReplicas"]
                == 2;
            (ready && now.iter().all(|(_, owner)| *owner == uid)).then_some(now)
        });
        let adopted = adopted.unwrap_or_else(|| {
            panic!(
                "{label}: pods {:?}, set {}",
                uids(&k),
                k.ok(&["get", "statefulset", "db", "-o", "jsonpath={.status}"])
            )
        });
        let same: Vec<&String> = adopted.iter().map(|(p, _)| p).collect();
        let was: Vec<&String> = before.iter().map(|(p, _)| p).collect();
        assert_eq!(same, was, "{label}: the pods were replaced, not adopted");
        let revisions = json(&k, &["get", "controllerrevisions", "-o", "json"]);
        let owners: Vec<&str> = revisions["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["metadata"]["ownerReferences"][0]["uid"].as_str())
            .collect();
        assert_eq!(owners, [uid.as_str()], "{label}: {revisions}");
        let out = k.ok(&["rollout", "status", "statefulset/db", "--timeout=30s"]);
        assert!(out.contains("roll out complete"), "{label}: {out}");
    });
}

/// A pod template keeps the pod spec's defaults only: upstream's `SetDefaults_Pod` (a limit
/// without a request becomes the request, enableServiceLinks) applies to each pod made from it,
/// not to the template a Deployment stores. Here the template got both.
#[test]
fn a_template_gets_the_pod_specs_defaults_its_pods_the_pods() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--no-demo"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        k.ok(&["create", "deployment", "web", "--image=nginx"]);
        k.ok(&[
            "set",
            "resources",
            "deployment",
            "web",
            "--limits=cpu=200m,memory=64Mi",
        ]);
        let d = json(&k, &["get", "deployment", "web", "-o", "json"]);
        let spec = &d["spec"]["template"]["spec"];
        assert_eq!(
            spec["containers"][0]["resources"],
            serde_json::json!({"limits": {"cpu": "200m", "memory": "64Mi"}}),
            "{label}: {spec}"
        );
        assert!(spec.get("enableServiceLinks").is_none(), "{label}: {spec}");
        assert_eq!(spec["dnsPolicy"], "ClusterFirst", "{label}: {spec}");
        let pod = wait_for(Duration::from_secs(20), || {
            live_pods(&k)
                .into_iter()
                .find(|p| p["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "200m")
        });
        let pod = pod.unwrap_or_else(|| panic!("{label}: no pod of the new template"));
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["requests"],
            serde_json::json!({"cpu": "200m", "memory": "64Mi"}),
            "{label}"
        );
        assert_eq!(pod["spec"]["enableServiceLinks"], true, "{label}");
    });
}

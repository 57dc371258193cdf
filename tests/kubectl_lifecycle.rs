//! Object lifecycle against `kexplore serve`, with every kubectl: the namespace controller
//! (`delete ns` with contents → Terminating with upstream's conditions, new content refused,
//! everything deleted, then the namespace gone) and the garbage collector's three cascade modes
//! (`delete deployment` in the background, `--cascade=orphan`, `--cascade=foreground`), and the
//! root CA publisher's `kube-root-ca.crt` in every namespace, and finalizers holding what any of
//! them deletes.

use std::time::Duration;

use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for};

const LONG: Duration = Duration::from_secs(90);

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

fn items(k: &Kubectl, args: &[&str]) -> Vec<Value> {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    json(k, &a)["items"].as_array().cloned().unwrap_or_default()
}

fn condition<'a>(ns: &'a Value, ty: &str) -> &'a Value {
    ns["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == ty))
        .unwrap_or(&Value::Null)
}

/// A Deployment of `replicas` with its ReplicaSet and pods all there.
fn deployment(k: &Kubectl, name: &str, ns: &str, replicas: usize) {
    k.ok(&[
        "create",
        "deployment",
        name,
        "--image=nginx",
        &format!("--replicas={replicas}"),
        "-n",
        ns,
    ]);
    let sel = format!("app={name}");
    let up = wait_for(LONG, || {
        (items(k, &["get", "pods", "-l", &sel, "-n", ns]).len() == replicas).then_some(())
    });
    assert!(up.is_some(), "{}: {name}'s pods never came", k.label);
}

fn namespace_deletion(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    k.ok(&["create", "namespace", "shop"]);
    deployment(&k, "web", "shop", 2);
    // Content a finalizer holds keeps the namespace Terminating long enough to look at.
    k.ok(&["create", "configmap", "held", "-n", "shop"]);
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    let out = k.ok(&["delete", "namespace", "shop", "--wait=false"]);
    assert!(out.contains("namespace \"shop\" deleted"), "{label}: {out}");
    let ns = json(&k, &["get", "namespace", "shop", "-o", "json"]);
    assert_eq!(ns["status"]["phase"], "Terminating", "{label}: {ns}");
    assert!(ns["metadata"]["deletionTimestamp"].is_string(), "{label}");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]), "{label}");
    // New content is refused while it terminates.
    let o = k.run(&["create", "configmap", "late", "-n", "shop"]);
    assert!(
        o.stderr.contains(
            "unable to create new content in namespace shop because it is being terminated"
        ),
        "{label}: {}",
        o.stderr
    );
    // The workload goes; the held ConfigMap stays, and the conditions say so.
    let emptied = wait_for(LONG, || {
        let ns = json(&k, &["get", "namespace", "shop", "-o", "json"]);
        let gone = items(&k, &["get", "deployments,replicasets,pods", "-n", "shop"]).is_empty();
        (gone
            && condition(&ns, "NamespaceContentRemaining")["message"]
                == "Some resources are remaining: configmaps. has 1 resource instances")
            .then_some(ns)
    });
    let Some(ns) = emptied else {
        panic!("{label}: the namespace's workload was never deleted")
    };
    let c = condition(&ns, "NamespaceFinalizersRemaining");
    assert_eq!(c["status"], "True", "{label}: {ns}");
    assert_eq!(c["reason"], "SomeFinalizersRemain");
    assert_eq!(
        c["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    let c = condition(&ns, "NamespaceDeletionDiscoveryFailure");
    assert_eq!(
        (&c["status"], &c["reason"]),
        (&json!("False"), &json!("ResourcesDiscovered")),
        "{label}"
    );
    let held = json(
        &k,
        &["get", "configmap", "held", "-n", "shop", "-o", "json"],
    );
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{label}");
    // Its finalizer done, the ConfigMap goes, then the namespace.
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "shop",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let gone = wait_for(LONG, || {
        let o = k.run(&["get", "namespace", "shop"]);
        (o.code != 0 && o.stderr.contains(r#"namespaces "shop" not found"#)).then_some(())
    });
    assert!(gone.is_some(), "{label}: namespace shop never went");
}

fn cascades(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());

    // Background (kubectl's default): the Deployment goes, the collector takes the rest.
    deployment(&k, "bg", "default", 2);
    k.ok(&["delete", "deployment", "bg"]);
    let gone = wait_for(LONG, || {
        (items(&k, &["get", "replicasets,pods", "-l", "app=bg"]).is_empty()).then_some(())
    });
    assert!(gone.is_some(), "{label}: bg's ReplicaSet and pods stayed");

    // Orphan: the ReplicaSet and pods stay, without a reference to the gone Deployment.
    deployment(&k, "orph", "default", 2);
    k.ok(&["delete", "deployment", "orph", "--cascade=orphan"]);
    let o = k.run(&["get", "deployment", "orph"]);
    assert_ne!(o.code, 0, "{label}: the orphaning owner stayed");
    let rs = items(&k, &["get", "replicasets", "-l", "app=orph"]);
    assert_eq!(rs.len(), 1, "{label}");
    assert!(
        rs[0]["metadata"]["ownerReferences"].is_null(),
        "{label}: {}",
        rs[0]["metadata"]
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        items(&k, &["get", "pods", "-l", "app=orph"]).len(),
        2,
        "{label}: orphaned pods were deleted"
    );

    // Foreground: the owner waits, marked, until its dependents are gone.
    deployment(&k, "fg", "default", 2);
    k.ok(&[
        "delete",
        "deployment",
        "fg",
        "--cascade=foreground",
        "--wait=false",
    ]);
    let d = k.run(&["get", "deployment", "fg", "-o", "json"]);
    if d.code == 0 {
        let d: Value = serde_json::from_str(&d.stdout).unwrap_or(Value::Null);
        assert!(
            d["metadata"]["deletionTimestamp"].is_string(),
            "{label}: {d}"
        );
        assert_eq!(
            d["metadata"]["finalizers"],
            json!(["foregroundDeletion"]),
            "{label}"
        );
    }
    let gone = wait_for(LONG, || {
        (k.run(&["get", "deployment", "fg"]).code != 0).then_some(())
    });
    assert!(gone.is_some(), "{label}: fg was never removed");
    // Removed only once its ReplicaSet and pods were.
    assert!(
        items(&k, &["get", "replicasets,pods", "-l", "app=fg"]).is_empty(),
        "{label}: fg went before its dependents"
    );
}

fn create(k: &Kubectl, obj: &Value) {
    let f = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(f.path(), obj.to_string()).expect("write manifest");
    k.ok(&["create", "-f", &f.path().display().to_string()]);
}

/// What a finalizer holds is only marked deleted, whoever deletes it — the garbage collector,
/// a user, the kubelet — and goes with the update that removes its last finalizer.
fn finalizers_hold(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let meta = |o: &Value| {
        (
            o["metadata"]["deletionTimestamp"].is_string(),
            o["metadata"]["deletionGracePeriodSeconds"].clone(),
            o["metadata"]["finalizers"].clone(),
        )
    };
    let held = (true, json!(0), json!(["example.com/hold"]));
    let release = |kind: &str, name: &str| {
        k.ok(&[
            "patch",
            kind,
            name,
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ]);
        let gone = k.run(&["get", kind, name]);
        assert!(
            gone.stderr.contains("not found"),
            "{label}: {kind} {name} stayed without its finalizer: {}",
            gone.stdout
        );
    };

    // A dependent the collector deletes.
    deployment(&k, "owner", "default", 1);
    let d = json(&k, &["get", "deployment", "owner", "-o", "json"]);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dependent",
        "finalizers": ["example.com/hold"], "ownerReferences": [{"apiVersion": "apps/v1",
        "kind": "Deployment", "name": "owner", "uid": d["metadata"]["uid"]}]}});
    create(&k, &cm);
    k.ok(&["delete", "deployment", "owner"]);
    let marked = wait_for(LONG, || {
        let o = json(&k, &["get", "configmap", "dependent", "-o", "json"]);
        (meta(&o) == held).then_some(())
    });
    assert!(
        marked.is_some(),
        "{label}: the collector removed a held dependent"
    );
    release("configmap", "dependent");

    // A running pod: its containers stop by SIGTERM (exit code 143, as a process that does not
    // handle it), it stays Failed while held, its logs readable.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "held",
        "finalizers": ["example.com/hold"]},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    create(&k, &pod);
    let running = wait_for(LONG, || {
        let o = json(&k, &["get", "pod", "held", "-o", "json"]);
        (o["status"]["phase"] == "Running").then_some(())
    });
    assert!(running.is_some(), "{label}: pod held never ran");
    k.ok(&["delete", "pod", "held", "--wait=false"]);
    let stopped = wait_for(LONG, || {
        let o = json(&k, &["get", "pod", "held", "-o", "json"]);
        (o["status"]["phase"] == "Failed").then_some(o)
    });
    let Some(o) = stopped else {
        panic!("{label}: pod held was never stopped")
    };
    assert_eq!(meta(&o), held, "{label}: {}", o["metadata"]);
    let term = &o["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (term["reason"].clone(), term["exitCode"].clone()),
        (json!("Error"), json!(143)),
        "{label}: {}",
        o["status"]
    );
    let logs = k.ok(&["logs", "held"]);
    assert!(
        logs.contains("stopped on the pod's deletion"),
        "{label}: {logs}"
    );
    release("pod", "held");

    // A pod never scheduled is deleted at once: held all the same.
    let gated = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated",
        "finalizers": ["example.com/hold"]}, "spec": {"schedulingGates": [{"name": "wait"}],
        "containers": [{"name": "c", "image": "nginx"}]}});
    create(&k, &gated);
    k.ok(&["delete", "pod", "gated", "--wait=false"]);
    let o = json(&k, &["get", "pod", "gated", "-o", "json"]);
    assert_eq!(meta(&o), held, "{label}: {}", o["metadata"]);
    release("pod", "gated");
}

/// A namespace's own finalizers, as upstream: the client's stay beside the `kubernetes` one the
/// server adds, an update of the namespace cannot change them, the namespace controller removes
/// only its own, and the namespace stays Terminating until `finalize` (the recipe for a stuck
/// namespace, `kubectl replace --raw .../finalize`) empties them. Here the client's finalizer was
/// dropped at create and `finalize` was not served.
fn namespace_finalize(label: &str, bin: &std::path::Path, srv: &ServeProcess) {
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let file = |name: &str, v: Value| {
        let p = srv.dir.path().join(name);
        std::fs::write(&p, v.to_string()).expect("write manifest");
        p.to_string_lossy().into_owned()
    };
    let ns = |finalizers: Value| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "held"}, "spec": {"finalizers": finalizers}});
    let refused = k.run(&["create", "-f", &file("plain.json", ns(json!(["plain"])))]);
    assert!(
        refused.stderr.contains("The Namespace \"held\" is invalid: spec.finalizers: Invalid value: \"plain\": name is neither a standard finalizer name nor is it fully qualified"),
        "{label}: {}",
        refused.stderr
    );
    k.ok(&[
        "create",
        "-f",
        &file("held.json", ns(json!(["example.com/hold"]))),
    ]);
    let finalizers = |k: &Kubectl| {
        json(k, &["get", "namespace", "held", "-o", "json"])["spec"]["finalizers"].clone()
    };
    assert_eq!(
        finalizers(&k),
        json!(["example.com/hold", "kubernetes"]),
        "{label}"
    );
    k.ok(&[
        "patch",
        "namespace",
        "held",
        "--type=merge",
        "-p",
        r#"{"spec":{"finalizers":[]}}"#,
    ]);
    assert_eq!(
        finalizers(&k),
        json!(["example.com/hold", "kubernetes"]),
        "{label}: an update changed them"
    );
    k.ok(&["delete", "namespace", "held", "--wait=false"]);
    let own_gone = wait_for(LONG, || {
        (finalizers(&k) == json!(["example.com/hold"])).then_some(())
    });
    assert!(own_gone.is_some(), "{label}: {}", finalizers(&k));
    let still = json(&k, &["get", "namespace", "held", "-o", "json"]);
    assert_eq!(still["status"]["phase"], "Terminating", "{label}: {still}");
    let path = file("finalize.json", ns(json!([])));
    k.ok(&[
        "replace",
        "--raw",
        "/api/v1/namespaces/held/finalize",
        "-f",
        &path,
    ]);
    let gone = wait_for(LONG, || {
        let o = k.run(&["get", "namespace", "held"]);
        (o.code != 0 && o.stderr.contains(r#"namespaces "held" not found"#)).then_some(())
    });
    assert!(gone.is_some(), "{label}: finalized, the namespace stayed");
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        namespace_deletion(label, bin);
        cascades(label, bin);
        finalizers_hold(label, bin);
        namespace_finalize(label, bin, &ServeProcess::start(&[]));
    });
}

per_kubectl!(run_version);

fn curl(srv: &ServeProcess, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let mut c = std::process::Command::new("curl");
    c.args([
        "-sS",
        "--max-time",
        "20",
        "-w",
        "\n%{http_code}",
        "-X",
        method,
        "--cacert",
    ])
    .arg(srv.pki("ca.crt"))
    .arg("--cert")
    .arg(srv.pki("admin.crt"))
    .arg("--key")
    .arg(srv.pki("admin.key"));
    if let Some(b) = body {
        c.args(["-H", "Content-Type: application/json", "-d"])
            .arg(b.to_string());
    }
    let out = c.arg(format!("{}{path}", srv.url)).output().expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// The root CA publisher: every namespace, new ones too, holds `kube-root-ca.crt` with the CA
/// the kubeconfig trusts (what the pods' `kube-api-access-…` volume mounts as `ca.crt`); a
/// deleted or edited one is put back.
#[test]
fn every_namespace_holds_the_cluster_ca() {
    let srv = ServeProcess::start(&[]);
    let Some((_, bin)) = apiserver_support::kubectls().into_iter().next() else {
        eprintln!("note: no kubectl here; skipping");
        return;
    };
    let k = Kubectl::new("kubectl", &bin, srv.kubeconfig());
    let ca = std::fs::read_to_string(srv.pki_dir.join("ca.crt")).expect("ca.crt");
    let published = |ns: &str, want: &str| {
        wait_for(LONG, || {
            let o = k.run(&[
                "get",
                "configmap",
                "kube-root-ca.crt",
                "-n",
                ns,
                "-o",
                "json",
            ]);
            let cm: Value = serde_json::from_str(&o.stdout).ok()?;
            (cm["data"]["ca.crt"] == want).then_some(cm)
        })
        .unwrap_or_else(|| panic!("no kube-root-ca.crt holding the CA in {ns}"))
    };
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        published(ns, &ca);
    }
    k.ok(&["create", "namespace", "fresh"]);
    let cm = published("fresh", &ca);
    assert_eq!(
        cm["metadata"]["annotations"]["kubernetes.io/description"],
        "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
        "{cm}"
    );
    k.ok(&["delete", "configmap", "kube-root-ca.crt", "-n", "fresh"]);
    published("fresh", &ca);
    k.ok(&[
        "patch",
        "configmap",
        "kube-root-ca.crt",
        "-n",
        "fresh",
        "--type=merge",
        "-p",
        r#"{"data":{"ca.crt":"not a CA"}}"#,
    ]);
    published("fresh", &ca);
}

/// DeleteOptions refused as `ValidateDeleteOptions` refuses them, and a deletecollection that
/// orphans: the Deployments go, their ReplicaSets stay without the reference.
#[test]
fn delete_options_and_an_orphaning_deletecollection_over_curl() {
    if apiserver_support::which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let srv = ServeProcess::start(&[]);
    let Some((_, bin)) = apiserver_support::kubectls().into_iter().next() else {
        eprintln!("note: no kubectl here; skipping");
        return;
    };
    let k = Kubectl::new("kubectl", &bin, srv.kubeconfig());
    deployment(&k, "one", "default", 1);
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let (code, r) = curl(
        &srv,
        "DELETE",
        &format!("{deployments}/one"),
        Some(&json!({"propagationPolicy": "Sideways"})),
    );
    assert_eq!(code, 422, "{r}");
    assert_eq!(
        r["message"],
        r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#
    );
    let (code, r) = curl(
        &srv,
        "DELETE",
        &format!("{deployments}/one"),
        Some(&json!({"propagationPolicy": "Orphan", "orphanDependents": true})),
    );
    assert_eq!(code, 422, "{r}");
    assert!(
        r["message"].as_str().is_some_and(
            |m| m.ends_with("orphanDependents and deletionPropagation cannot be both set")
        ),
        "{r}"
    );
    // The first mark of a deletion bumps the generation (upstream's markAsDeleting): a client
    // waiting on observedGeneration learns its controller must stop acting on it.
    deployment(&k, "two", "default", 1);
    let before = items(&k, &["get", "deployments", "-l", "app=two"]);
    let generation = before[0]["metadata"]["generation"]
        .as_i64()
        .expect("generation");
    let (code, r) = curl(
        &srv,
        "DELETE",
        &format!("{deployments}/two"),
        Some(&json!({"propagationPolicy": "Orphan"})),
    );
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["metadata"]["finalizers"], json!(["orphan"]), "{r}");
    assert_eq!(r["metadata"]["generation"], generation + 1, "{r}");
    // Held by a finalizer of someone else's, it is deleting for as long as one likes: its
    // controller scales nothing but reports the new generation (upstream's syncStatusOnly).
    deployment(&k, "three", "default", 1);
    k.ok(&[
        "patch",
        "deployment",
        "three",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    k.ok(&["delete", "deployment", "three", "--wait=false"]);
    let observed = wait_for(LONG, || {
        let d = &items(&k, &["get", "deployments", "-l", "app=three"])[0];
        (d["status"]["observedGeneration"] == d["metadata"]["generation"]
            && d["metadata"]["deletionTimestamp"].is_string())
        .then_some(())
    });
    assert!(
        observed.is_some(),
        "{:?}",
        items(&k, &["get", "deployments", "-l", "app=three"])
    );
    k.ok(&[
        "patch",
        "deployment",
        "three",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let (code, r) = curl(
        &srv,
        "DELETE",
        &format!("{deployments}?labelSelector=app%3Done"),
        Some(&json!({"propagationPolicy": "Orphan"})),
    );
    assert_eq!(code, 200, "{r}");
    let gone = wait_for(LONG, || {
        (k.run(&["get", "deployment", "one"]).code != 0).then_some(())
    });
    assert!(gone.is_some(), "the orphaning Deployment stayed");
    let rs = items(&k, &["get", "replicasets", "-l", "app=one"]);
    assert_eq!(rs.len(), 1);
    assert!(rs[0]["metadata"]["ownerReferences"].is_null(), "{}", rs[0]);
}

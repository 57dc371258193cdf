//! Every kubectl on the machine (`kubectl` and `kubectl.1.27` … beside the real one) against
//! `kexplore serve` started as a process with `--listen 127.0.0.1:0 --kubeconfig-out`, each
//! with a fresh `--cache-dir`: the acceptance list of issue 4. A missing binary is a printed
//! note, not a failure.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{SEED_POD, ServeProcess, wait_for};

/// A `kubectl get pods -w` running in the background; killed on drop.
struct Watcher {
    child: Child,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn journey_for(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let pod_file = srv.dir.path().join("app.json");
    std::fs::write(&pod_file, SEED_POD).expect("write app.json");
    let pod_file = pod_file.to_string_lossy().into_owned();

    let raw = k.ok(&["get", "--raw", "/api"]);
    assert!(raw.contains("\"kind\":\"APIVersions\""), "{label}: {raw}");
    let ready = k.ok(&["get", "--raw", "/readyz?verbose"]);
    // On etcd, kube-apiserver's etcd and etcd-readiness checks probe it too.
    let want = match apiserver_support::on_etcd() {
        true => "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\nreadyz check passed\n",
        false => "[+]ping ok\nreadyz check passed\n",
    };
    assert_eq!(ready, want, "{label}");
    component_statuses(label, &k);
    let v = k.ok(&["version"]);
    assert!(
        v.contains("Server Version") && v.contains("v1.33.1-kexplore"),
        "{label}: {v}"
    );
    let nodes = k.ok(&["get", "nodes"]);
    assert!(
        nodes.starts_with("NAME")
            && nodes.contains("STATUS")
            && nodes.contains("ROLES")
            && nodes.contains("VERSION"),
        "{label}: {nodes}"
    );
    assert!(
        nodes.contains("control-plane   Ready    control-plane"),
        "{label}: {nodes}"
    );
    let wide = k.ok(&["get", "pods", "-A", "-o", "wide"]);
    assert!(
        wide.contains("NOMINATED NODE") && wide.contains("workload-node-1"),
        "{label}: {wide}"
    );

    // Watch first so the watcher sees the pod from Pending to Running. kubectl watches from
    // the revision of its first list, so once it has printed that list (the demo's pods in
    // every namespace) no later event escapes it; a fixed sleep was too short on a loaded
    // machine, and the watch began at ContainerCreating.
    let mut child = k
        .cmd(&["get", "pods", "-A", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    let mut stdout = child.stdout.take().expect("watch stdout");
    let watcher = Watcher { child };
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0
                || tx
                    .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                    .is_err()
            {
                break;
            }
        }
    });
    let mut seen = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{label}: the watch printed no list"));
    let created = k.ok(&["create", "-f", &pod_file]);
    assert_eq!(created.trim(), "pod/app created", "{label}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline
        && !seen
            .lines()
            .any(|l| l.starts_with("default ") && l.contains(" app ") && l.contains("Running"))
    {
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&chunk);
        }
    }
    drop(watcher);
    let app: String = seen
        .lines()
        .filter(|l| l.starts_with("default ") && l.split_whitespace().nth(1) == Some("app"))
        .map(|l| format!("{l}\n"))
        .collect();
    let pending = app.find("Pending");
    let running = app.find("Running");
    assert!(
        pending.is_some() && running > pending,
        "{label}: watch output was {seen:?}"
    );

    let yaml = k.ok(&["get", "pod", "app", "-o", "yaml"]);
    for want in [
        "nodeName: node-3",
        "serviceAccountName: default",
        "imagePullPolicy: Always",
        "tolerationSeconds: 300",
        "phase: Running",
        "podIP: 10.244.3.",
    ] {
        assert!(yaml.contains(want), "{label}: no {want:?} in\n{yaml}");
    }
    let describe = wait_for(Duration::from_secs(10), || {
        let d = k.ok(&["describe", "pod", "app"]);
        d.contains("Started").then_some(d)
    })
    .unwrap_or_default();
    assert!(
        describe.contains("Successfully assigned default/app to node-3"),
        "{label}: {describe}"
    );
    for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(
            describe.contains(reason),
            "{label}: no {reason} in describe"
        );
    }

    let who = k.ok(&["auth", "whoami"]);
    assert!(
        who.contains("kexplore-admin") && who.contains("system:masters"),
        "{label}: {who}"
    );
    let yes = k.run(&["auth", "can-i", "create", "pods"]);
    assert_eq!(
        (yes.code, yes.stdout.trim()),
        (0, "yes"),
        "{label}: {}",
        yes.stderr
    );
    let no = k.run(&[
        "--context",
        "jane",
        "auth",
        "can-i",
        "create",
        "pods",
        "-n",
        "kube-system",
    ]);
    assert_eq!(
        (no.code, no.stdout.trim()),
        (1, "no"),
        "{label}: {}",
        no.stderr
    );
    // What one may do, listed (`can-i --list`: a SelfSubjectRulesReview): jane's group's Role
    // in default, then the bootstrap `view` ClusterRole's reads once it is bound to her.
    let row = |list: &str, resource: &str, verbs: &str| {
        list.lines()
            .any(|l| l.split_whitespace().next() == Some(resource) && l.ends_with(verbs))
    };
    let jane = |k: &Kubectl| k.ok(&["--context", "jane", "auth", "can-i", "--list"]);
    let before = jane(&k);
    assert!(
        row(
            &before,
            "pods",
            "[create delete deletecollection get list patch update watch]"
        ) && !before.contains("deployments.apps"),
        "{label}: {before}"
    );
    k.ok(&[
        "create",
        "rolebinding",
        "jane-view",
        "--clusterrole=view",
        "--user=jane",
    ]);
    let after = jane(&k);
    assert!(
        row(&after, "deployments.apps", "[get list watch]"),
        "{label}: {after}"
    );
    let all = k.ok(&["auth", "can-i", "--list"]);
    assert!(row(&all, "*.*", "[*]"), "{label}: {all}");
    // `view` is an aggregated role: a ClusterRole labelled to feed it adds to what jane may do
    // (the label added after the create), and takes it back when deleted.
    let jane_may = |want: &str| {
        wait_for(Duration::from_secs(10), || {
            let out = k.run(&[
                "--context",
                "jane",
                "auth",
                "can-i",
                "list",
                "leases.coordination.k8s.io",
            ]);
            (out.stdout.trim() == want).then_some(())
        })
        .is_some()
    };
    assert!(jane_may("no"), "{label}");
    k.ok(&[
        "create",
        "clusterrole",
        "lease-reader",
        "--verb=get,list",
        "--resource=leases.coordination.k8s.io",
    ]);
    k.ok(&[
        "label",
        "clusterrole",
        "lease-reader",
        "rbac.authorization.k8s.io/aggregate-to-view=true",
    ]);
    assert!(
        jane_may("yes"),
        "{label}: view did not aggregate lease-reader"
    );
    k.ok(&["delete", "clusterrole", "lease-reader"]);
    assert!(jane_may("no"), "{label}: view kept lease-reader's rule");

    let deleted = k.ok(&["delete", "pod", "app"]);
    assert_eq!(deleted.trim(), "pod \"app\" deleted", "{label}");
    let gone = k.run(&["get", "pod", "app"]);
    assert!(
        gone.code != 0 && gone.stderr.contains("pods \"app\" not found"),
        "{label}: {}",
        gone.stderr
    );

    typed_creates(label, &k);
    bad_manifests(label, &k, srv.dir.path());
}

/// `kubectl create -f` of manifests whose values do not fit: the server's 400 names the field
/// as kube-apiserver's decoder does.
fn bad_manifests(label: &str, k: &Kubectl, dir: &Path) {
    let cases = [
        (
            "containers: app",
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
        ),
        (
            "containers:\n  - name: app\n    image: x\n    resources:\n      requests: [cpu]",
            "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList",
        ),
        (
            "containers:\n  - name: app\n    image: x\n    resources:\n      limits: {memory: lots}",
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got \"lots\" at spec.containers[0].resources.limits.memory)",
        ),
    ];
    let file = dir.join("bad.yaml");
    for (spec, want) in cases {
        let indented = spec.replace('\n', "\n  ");
        let yaml =
            format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  {indented}\n");
        std::fs::write(&file, &yaml).expect("write bad.yaml");
        let out = k.run(&["create", "-f", &file.to_string_lossy()]);
        assert!(
            out.code != 0
                && out.stderr.contains(&format!(
                    "Pod in version \"v1\" cannot be handled as a Pod: {want}"
                )),
            "{label}: {yaml}\n{}",
            out.stderr
        );
    }
}

/// kubectl's `create <kind>` generators use typed clients, which 1.32+ send as protobuf: each
/// object must be stored with the fields the command line gave.
fn typed_creates(label: &str, k: &Kubectl) {
    let json = |args: &[&str]| -> serde_json::Value {
        serde_json::from_str(&k.ok(args)).unwrap_or_else(|e| panic!("{label}: {args:?}: {e}"))
    };
    k.ok(&["create", "namespace", "team-a"]);
    k.ok(&[
        "create",
        "clusterrole",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
        "--resource-name=app",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "jane-reads",
        "--clusterrole=pod-reader",
        "--user=jane",
        "--group=devs",
    ]);
    k.ok(&[
        "create",
        "role",
        "editor",
        "-n",
        "team-a",
        "--verb=create",
        "--resource=pods",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "sa-edits",
        "-n",
        "team-a",
        "--role=editor",
        "--serviceaccount=team-a:default",
    ]);
    k.ok(&[
        "create",
        "priorityclass",
        "low",
        "--value=-5",
        "--description=batch",
        "--preemption-policy=Never",
    ]);
    let ns = json(&["get", "namespace", "team-a", "-o", "json"]);
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-a",
        "{label}"
    );
    let cr = json(&["get", "clusterrole", "pod-reader", "-o", "json"]);
    assert_eq!(
        cr["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["pods"], "resourceNames": ["app"], "verbs": ["get", "list"]}]),
        "{label}"
    );
    let crb = json(&["get", "clusterrolebinding", "jane-reads", "-o", "json"]);
    assert_eq!(crb["roleRef"]["name"], "pod-reader", "{label}");
    let subjects: Vec<&str> = crb["subjects"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(subjects, ["jane", "devs"], "{label}");
    let rb = json(&[
        "get",
        "rolebinding",
        "sa-edits",
        "-n",
        "team-a",
        "-o",
        "json",
    ]);
    assert_eq!(rb["subjects"][0]["kind"], "ServiceAccount", "{label}");
    assert_eq!(rb["subjects"][0]["namespace"], "team-a", "{label}");
    let pc = json(&["get", "priorityclass", "low", "-o", "json"]);
    assert_eq!(pc["value"], -5, "{label}");
    assert_eq!(pc["preemptionPolicy"], "Never", "{label}");
    assert_eq!(pc["description"], "batch", "{label}");

    k.ok(&["create", "serviceaccount", "builder", "-n", "team-a"]);
    let sa = json(&[
        "get",
        "serviceaccount",
        "builder",
        "-n",
        "team-a",
        "-o",
        "json",
    ]);
    assert_eq!(sa["metadata"]["namespace"], "team-a", "{label}");
    assert!(sa["metadata"]["uid"].is_string(), "{label}: {sa}");

    // drain --disable-eviction deletes each pod with a DeleteOptions body (protobuf from 1.32
    // on); without it drain evicts (tests/kubectl_drain.rs).
    let drained = k.ok(&[
        "drain",
        "node-1",
        "--ignore-daemonsets",
        "--force",
        "--disable-eviction",
    ]);
    assert!(
        drained.contains("node/node-1 drained"),
        "{label}: {drained}"
    );
    let left = k.ok(&[
        "get",
        "pods",
        "-A",
        "--field-selector=spec.nodeName=node-1",
        "-o",
        "name",
    ]);
    assert_eq!(left.trim(), "", "{label}: pods left on node-1");
    let node = json(&["get", "node", "node-1", "-o", "json"]);
    assert_eq!(node["spec"]["unschedulable"], true, "{label}");
}

/// `kubectl get cs`: the scheduler and controller-manager this server runs, and etcd when it
/// keeps the cluster there, each checked as the request comes; upstream's deprecation warning,
/// its 404 for a name it does not check, and its 405 for a watch.
fn component_statuses(label: &str, k: &Kubectl) {
    let out = k.ok_out(&["get", "componentstatuses"]);
    assert!(
        out.stderr
            .contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{label}: {}",
        out.stderr
    );
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let mut want = vec![
        vec!["NAME", "STATUS", "MESSAGE", "ERROR"],
        vec!["scheduler", "Healthy", "ok"],
        vec!["controller-manager", "Healthy", "ok"],
    ];
    if apiserver_support::on_etcd() {
        want.push(vec!["etcd-0", "Healthy", "ok"]);
    }
    assert_eq!(rows, want, "{label}: {}", out.stdout);
    let one = k.ok(&["get", "cs", "scheduler", "-o", "json"]);
    let one: serde_json::Value = serde_json::from_str(&one).expect("json");
    assert_eq!(
        one["conditions"],
        serde_json::json!([{"type": "Healthy", "status": "True", "message": "ok"}]),
        "{label}"
    );
    let o = k.run(&["get", "cs", "kubelet"]);
    assert!(
        o.code != 0
            && o.stderr
                .contains("Error from server (NotFound): componentstatus \"kubelet\" not found"),
        "{label}: {}",
        o.stderr
    );
    let o = k.run(&["get", "--raw", "/api/v1/componentstatuses?watch=true"]);
    assert!(
        o.code != 0
            && o.stderr
                .contains("watch is not supported on resources of kind \"componentstatuses\""),
        "{label}: {}",
        o.stderr
    );
}

fn run_version(label: &str) {
    with_kubectl(label, journey_for);
}

per_kubectl!(run_version);

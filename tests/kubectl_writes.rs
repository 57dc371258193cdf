//! Every kubectl on the machine against `kexplore serve`: a server-side dry run of every
//! writing verb leaves the cluster as it was (same objects, same resourceVersion, and a watch
//! open during the run hears nothing), and updates upstream refuses are refused with its words.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
mod remote_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for, which};
use remote_support::{request, revision, writes_besides_leases};

struct Watch {
    child: Child,
    out: PathBuf,
}

impl Watch {
    fn start(srv: &ServeProcess, path: &str, name: &str) -> Watch {
        let out = srv.dir.path().join(format!("{name}.watch"));
        let file = std::fs::File::create(&out).expect("watch output");
        let child = Command::new("curl")
            .args(["-sN", "--cacert"])
            .arg(srv.pki("ca.crt"))
            .arg("--cert")
            .arg(srv.pki("admin.crt"))
            .arg("--key")
            .arg(srv.pki("admin.key"))
            .arg(format!("{}{path}", srv.url))
            .stdout(file)
            .stderr(Stdio::null())
            .spawn()
            .expect("curl");
        Watch { child, out }
    }

    /// The events heard so far, one JSON object each.
    fn events(&self) -> Vec<Value> {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.out) {
            let _ = f.read_to_string(&mut text);
        }
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const POD: &str = "/api/v1/namespaces/demo/pods/workload-node-1";
const NODE: &str = "/api/v1/nodes/node-1";
const MANUAL: &str = "/api/v1/namespaces/default/pods/manual";
const NAMESPACE: &str = "/api/v1/namespaces/demo";

/// Write a manifest into the server's directory; its path, for `kubectl -f`.
fn manifest(srv: &ServeProcess, file: &str, text: &str) -> String {
    let path = srv.dir.path().join(file);
    std::fs::write(&path, text).expect("write manifest");
    path.to_string_lossy().into_owned()
}

fn get(srv: &ServeProcess, path: &str) -> Value {
    let (code, v) = request(&srv.kubeconfig(), "GET", path, None);
    assert_eq!(code, 200, "GET {path}: {v}");
    v
}

fn dry_runs_for(label: &str, bin: &std::path::Path) {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed here; skipping");
        return;
    }
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    // A pod no scheduler picks up, for the binding subresource.
    let manual = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"manual"},"spec":{"schedulerName":"manual","containers":[{"name":"c","image":"nginx:1.27"}]}}"#;
    assert_eq!(
        request(
            &srv.kubeconfig(),
            "POST",
            "/api/v1/namespaces/default/pods",
            Some(manual)
        )
        .0,
        201
    );
    // The demo's kubelets settle first, so only Leases are written unless we write.
    let rv = wait_for(Duration::from_secs(20), || {
        let r = revision(&srv.kubeconfig());
        std::thread::sleep(Duration::from_secs(1));
        (writes_besides_leases(&srv.kubeconfig(), r) == 0).then_some(r)
    })
    .expect("the served cluster settles");
    let before: Vec<Value> = [POD, NODE, MANUAL, NAMESPACE]
        .iter()
        .map(|p| get(&srv, p))
        .collect();
    let rv_s = rv.to_string();
    let pods = Watch::start(
        &srv,
        &format!("/api/v1/pods?watch=1&resourceVersion={rv_s}"),
        "pods",
    );
    let nodes = Watch::start(
        &srv,
        &format!("/api/v1/nodes?watch=1&resourceVersion={rv_s}"),
        "nodes",
    );
    std::thread::sleep(Duration::from_millis(500));

    let dir = srv.dir.path();
    let yaml = k.ok(&["get", "pod", "workload-node-1", "-n", "demo", "-o", "yaml"]);
    let changed = dir.join("changed.yaml");
    std::fs::write(
        &changed,
        yaml.replace("app: workload-node-1", "app: changed"),
    )
    .expect("write");
    let changed = changed.to_string_lossy().into_owned();
    let ssa = dir.join("ssa.json");
    std::fs::write(
        &ssa,
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"workload-node-1","namespace":"demo","labels":{"ssa":"dry"}}}"#,
    )
    .expect("write");
    let ssa = ssa.to_string_lossy().into_owned();
    let pod = ["-n", "demo", "pod", "workload-node-1"];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter().chain(tail).map(|s| s.to_string()).collect()
    };
    let runs: Vec<(Vec<String>, &str)> = vec![
        (
            with(&["delete"], &pod)
                .into_iter()
                .chain(["--dry-run=server".into()])
                .collect(),
            "pod \"workload-node-1\" deleted (server dry run)",
        ),
        (
            with(&["label"], &pod)
                .into_iter()
                .chain(["dry=run".into(), "--dry-run=server".into()])
                .collect(),
            "pod/workload-node-1 labeled (server dry run)",
        ),
        (
            with(&["annotate"], &pod)
                .into_iter()
                .chain(["dry=run".into(), "--dry-run=server".into()])
                .collect(),
            // kubectl 1.27 prints "annotate (server dry run)".
            "pod/workload-node-1 annotate",
        ),
        (
            with(&["cordon", "node-1", "--dry-run=server"], &[]),
            "node/node-1 cordoned (server dry run)",
        ),
        (
            with(
                &[
                    "taint",
                    "node",
                    "node-1",
                    "dry=run:NoSchedule",
                    "--dry-run=server",
                ],
                &[],
            ),
            "node/node-1 tainted",
        ),
        (
            with(&["patch"], &pod)
                .into_iter()
                .chain([
                    "-p".into(),
                    r#"{"metadata":{"labels":{"patched":"strategic"}}}"#.into(),
                    "--dry-run=server".into(),
                ])
                .collect(),
            "pod/workload-node-1 patched",
        ),
        (
            with(&["patch"], &pod)
                .into_iter()
                .chain([
                    "--type=merge".into(),
                    "-p".into(),
                    r#"{"metadata":{"labels":{"patched":"merge"}}}"#.into(),
                    "--dry-run=server".into(),
                ])
                .collect(),
            "pod/workload-node-1 patched",
        ),
        (
            with(&["patch"], &pod)
                .into_iter()
                .chain([
                    "--type=json".into(),
                    "-p".into(),
                    r#"[{"op":"add","path":"/metadata/labels/patched","value":"json"}]"#.into(),
                    "--dry-run=server".into(),
                ])
                .collect(),
            "pod/workload-node-1 patched",
        ),
        (
            with(&["patch"], &pod)
                .into_iter()
                .chain([
                    "--subresource=status".into(),
                    "--type=merge".into(),
                    "-p".into(),
                    r#"{"status":{"message":"dry"}}"#.into(),
                    "--dry-run=server".into(),
                ])
                .collect(),
            "pod/workload-node-1 patched",
        ),
        (
            with(&["replace", "-f", &changed, "--dry-run=server"], &[]),
            "pod/workload-node-1 replaced (server dry run)",
        ),
        (
            with(&["apply", "-f", &changed, "--dry-run=server"], &[]),
            "pod/workload-node-1 configured (server dry run)",
        ),
        (
            with(
                &[
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    "-f",
                    &ssa,
                    "--dry-run=server",
                ],
                &[],
            ),
            "pod/workload-node-1 serverside-applied (server dry run)",
        ),
        (
            with(
                &["run", "dry", "--image=nginx:1.27", "--dry-run=server"],
                &[],
            ),
            "pod/dry created (server dry run)",
        ),
        (
            with(&["delete", "node", "node-1", "--dry-run=server"], &[]),
            "node \"node-1\" deleted (server dry run)",
        ),
        (
            with(&["delete", "namespace", "demo", "--dry-run=server"], &[]),
            "namespace \"demo\" deleted (server dry run)",
        ),
    ];
    for (args, want) in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = k.ok(&args);
        assert!(out.contains(want), "{label}: kubectl {args:?} said {out:?}");
    }
    // diff runs a server-side dry run of the change and shows it.
    let diff = k.run(&["diff", "-f", &changed]);
    assert_eq!(
        diff.code, 1,
        "{label}: diff: {}{}",
        diff.stdout, diff.stderr
    );
    assert!(
        diff.stdout.contains("+    app: changed"),
        "{label}: {}",
        diff.stdout
    );
    // kubectl's patch carries `annotations: {}`; upstream stores (and answers) no empty map.
    assert!(
        !diff.stdout.contains("annotations"),
        "{label}: {}",
        diff.stdout
    );
    // deletecollection and binding, which kubectl does not send with a dry run.
    let kc = srv.kubeconfig();
    let (code, list) = request(
        &kc,
        "DELETE",
        "/api/v1/namespaces/demo/pods?dryRun=All",
        None,
    );
    assert_eq!(code, 200, "{label}: {list}");
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert!(
        !items.is_empty()
            && items
                .iter()
                .all(|p| p["metadata"]["deletionTimestamp"].is_string()),
        "{label}: the answer shows the pods as they would be: {list}"
    );
    let binding = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"manual"},"target":{"kind":"Node","name":"node-2"}}"#;
    let (code, body) = request(
        &kc,
        "POST",
        "/api/v1/namespaces/default/pods/manual/binding?dryRun=All",
        Some(binding),
    );
    assert_eq!(code, 201, "{label}: {body}");

    // Nothing changed, and nothing was heard.
    std::thread::sleep(Duration::from_millis(500));
    let (code, _) = request(&kc, "GET", "/api/v1/namespaces/default/pods/dry", None);
    assert_eq!(
        code, 404,
        "{label}: kubectl run --dry-run=server created the pod"
    );
    let after: Vec<Value> = [POD, NODE, MANUAL, NAMESPACE]
        .iter()
        .map(|p| get(&srv, p))
        .collect();
    assert_eq!(after, before, "{label}: an object changed");
    assert_eq!(
        writes_besides_leases(&srv.kubeconfig(), rv),
        0,
        "{label}: something besides Lease renewals was written"
    );
    assert_eq!(pods.events(), Vec::<Value>::new(), "{label}: pod watch");
    assert_eq!(nodes.events(), Vec::<Value>::new(), "{label}: node watch");

    // The watches were listening: one real write each is heard, and only that.
    k.ok(&["label", "-n", "demo", "pod", "workload-node-1", "real=yes"]);
    k.ok(&["cordon", "node-1"]);
    let heard = |w: &Watch| {
        wait_for(Duration::from_secs(10), || {
            let e = w.events();
            (!e.is_empty()).then_some(e)
        })
    };
    let p = heard(&pods).unwrap_or_default();
    assert_eq!(p.len(), 1, "{label}: {p:?}");
    assert_eq!(p[0]["type"], "MODIFIED", "{label}");
    assert_eq!(
        p[0]["object"]["metadata"]["labels"]["real"], "yes",
        "{label}"
    );
    let n = heard(&nodes).unwrap_or_default();
    assert_eq!(n[0]["object"]["spec"]["unschedulable"], true, "{label}");
    // The node lifecycle controller answers a cordon with the unschedulable taint
    // (TaintNodesByCondition); when it is quick, the watch has heard that too. Nothing else.
    for later in &n[1..] {
        assert_eq!(
            later["object"]["spec"]["taints"][0]["key"], "node.kubernetes.io/unschedulable",
            "{label}: {n:?}"
        );
    }
    assert!(n.len() <= 2, "{label}: {n:?}");

    updates_refused(&k, &srv);
    metadata_refused(&k, &srv);
    pod_spec_refused(&k, &srv);
    warned_and_canonical(&k, &srv);
}

/// Updates upstream's ValidatePodUpdate refuses: a renamed container (`replace`), a bound
/// pod's node (`patch`); the pod stays as it was.
fn updates_refused(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let before = get(srv, POD);
    let yaml = k.ok(&["get", "pod", "workload-node-1", "-n", "demo", "-o", "yaml"]);
    let renamed = srv.dir.path().join("renamed.yaml");
    std::fs::write(&renamed, yaml.replace("name: main", "name: web")).expect("write");
    let out = k.run(&["replace", "-f", renamed.to_str().unwrap_or_default()]);
    let list = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";
    assert_eq!(out.code, 1, "{label}: {}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "The Pod \"workload-node-1\" is invalid: spec: Forbidden: pod updates may not change fields other than {list}\n- spec.containers[0].name: \"main\"\n+ spec.containers[0].name: \"web\""
        )),
        "{label}: {}",
        out.stderr
    );
    let out = k.run(&[
        "patch",
        "-n",
        "demo",
        "pod",
        "workload-node-1",
        "-p",
        r#"{"spec":{"nodeName":"node-2"}}"#,
    ]);
    assert_eq!(out.code, 1, "{label}: {}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("spec: Forbidden: pod updates may not change fields other than")
            && out
                .stderr
                .contains("- spec.nodeName: \"node-1\"\n+ spec.nodeName: \"node-2\""),
        "{label}: {}",
        out.stderr
    );
    // What upstream allows still goes through: a zero Go leaves out is no change,
    k.ok(&[
        "patch",
        "-n",
        "demo",
        "pod",
        "workload-node-1",
        "-p",
        r#"{"spec":{"hostNetwork":false}}"#,
    ]);
    // and a new image.
    k.ok(&[
        "set",
        "image",
        "-n",
        "demo",
        "pod/workload-node-1",
        "main=registry.k8s.io/pause:3.9",
    ]);
    let after = get(srv, POD);
    assert_eq!(
        after["spec"]["nodeName"], before["spec"]["nodeName"],
        "{label}"
    );
    assert_eq!(after["spec"]["containers"][0]["name"], "main", "{label}");
    assert_eq!(
        after["spec"]["containers"][0]["image"], "registry.k8s.io/pause:3.9",
        "{label}"
    );
    assert_eq!(
        after["spec"]["containers"].as_array().map(Vec::len),
        Some(1),
        "{label}"
    );
}

/// ObjectMeta's rules, on create and on update, in kube-apiserver's words: a label key that is
/// no qualified name, a finalizer without a domain, an owner reference naming nothing. All three
/// were stored as sent.
fn metadata_refused(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let file = |name: &str, text: &str| {
        let p = srv.dir.path().join(name);
        std::fs::write(&p, text).expect("write manifest");
        p.to_string_lossy().into_owned()
    };
    let cm = file(
        "labelled.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  labels: {\"bad key!\": v}\n",
    );
    let out = k.run(&["create", "-f", &cm]);
    assert!(
        out.stderr.contains("The ConfigMap \"labelled\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters"),
        "{label}: {}",
        out.stderr
    );
    let pod = file(
        "held.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: held\n  finalizers: [plain]\nspec:\n  containers: [{name: c, image: nginx}]\n",
    );
    let out = k.run(&["create", "-f", &pod]);
    assert!(
        out.stderr.contains("The Pod \"held\" is invalid: metadata.finalizers[0]: Invalid value: \"plain\": name is neither a standard finalizer name nor is it fully qualified"),
        "{label}: {}",
        out.stderr
    );
    k.ok(&["create", "configmap", "owned"]);
    let out = k.run(&[
        "patch",
        "configmap",
        "owned",
        "--type=merge",
        "-p",
        r#"{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"","uid":"u"}]}}"#,
    ]);
    assert!(
        out.stderr.contains("The ConfigMap \"owned\" is invalid: metadata.ownerReferences.name: Invalid value: \"\": name must not be empty"),
        "{label}: {}",
        out.stderr
    );
    // Two controllers, and a core Event as an owner: both were stored.
    let two = r#"{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"ua","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"ub","controller":true}]}}"#;
    let out = k.run(&["patch", "configmap", "owned", "--type=merge", "-p", two]);
    assert!(
        out.stderr.contains("The ConfigMap \"owned\" is invalid: metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"a\",\"uid\":\"ua\",\"controller\":true},")
            && out.stderr.contains("Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and ReplicaSet/b"),
        "{label}: {}",
        out.stderr
    );
    let event = r#"{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Event","name":"e","uid":"ue"}]}}"#;
    let out = k.run(&["patch", "configmap", "owned", "--type=merge", "-p", event]);
    assert!(
        out.stderr.contains("The ConfigMap \"owned\" is invalid: metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"ue\"}: /v1, Kind=Event is disallowed from being an owner"),
        "{label}: {}",
        out.stderr
    );
    let stored = k.ok(&[
        "get",
        "configmap",
        "owned",
        "-o",
        "jsonpath={.metadata.ownerReferences}",
    ]);
    assert_eq!(stored.trim(), "", "{label}: an owner was stored");
    for name in ["labelled", "held"] {
        assert_ne!(
            k.run(&["get", "configmap,pod", name]).code,
            0,
            "{label}: {name} was stored"
        );
    }
}

/// A pod spec upstream's `ValidatePodSpec` refuses on eight counts, beyond its containers; all
/// of them were stored as sent (a StatefulSet's pods got its invalid serviceName as subdomain).
fn pod_spec_refused(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let faults = manifest(
        srv,
        "faults.yaml",
        r#"apiVersion: v1
kind: Pod
metadata: {name: faults}
spec:
  hostname: Bad.Host
  subdomain: Bad_Name
  activeDeadlineSeconds: 0
  nodeSelector: {"bad key!": ssd}
  volumes: [{name: data, emptyDir: {}}, {name: data, emptyDir: {}}]
  containers:
  - name: c
    image: nginx
    volumeMounts: [{name: logs, mountPath: /logs}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchLabels: {app: a}}}, {labelSelector: {matchLabels: {app: a}}}]
  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
"#,
    );
    let out = k.run(&["create", "-f", &faults]);
    let expected = [
        "The Pod \"faults\" is invalid: ",
        "* spec.volumes[1].name: Duplicate value: \"data\"",
        "* spec.containers[0].volumeMounts[0].name: Not found: \"logs\"",
        "* spec.nodeSelector: Invalid value: \"bad key!\": name part must consist of",
        "* spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1].topologyKey: Required value: can not be empty",
        "* spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        "* spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
        "* spec.hostname: Invalid value: \"Bad.Host\": a lowercase RFC 1123 label must consist of",
        "* spec.subdomain: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of",
    ];
    let mut at = 0;
    for e in expected {
        let found = out.stderr[at..].find(e);
        assert!(
            found.is_some(),
            "{label}: {e:?} (in this order) in {}",
            out.stderr
        );
        at += found.unwrap_or_default() + e.len();
    }
    assert_ne!(k.run(&["get", "pod", "faults"]).code, 0, "{label}: stored");
    // Five more kube-apiserver refuses and this server stored.
    let role = manifest(
        srv,
        "verbless.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: verbless}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: []}]\n",
    );
    let escalating = manifest(
        srv,
        "escalating.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: escalating}\nspec:\n  containers: [{name: c, image: nginx, securityContext: {privileged: true, allowPrivilegeEscalation: false}}]\n",
    );
    for (args, expected) in [
        (
            vec!["create", "namespace", "a.b"],
            "The Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots",
        ),
        (
            vec!["create", "quota", "minus", "--hard=pods=-1"],
            "ResourceQuota \"minus\" is invalid: spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0",
        ),
        (
            vec![
                "create",
                "service",
                "clusterip",
                "twice",
                "--tcp=80:80",
                "--tcp=80:8080",
            ],
            r#"Service "twice" is invalid: spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}"#,
        ),
        (
            vec!["create", "-f", &escalating],
            "The Pod \"escalating\" is invalid: spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:(*core.Capabilities)(nil), Privileged:(*bool)(0x",
        ),
        (
            vec!["create", "-f", &role],
            "The Role \"verbless\" is invalid: rules[0].verbs: Required value: verbs must contain at least one value",
        ),
    ] {
        let out = k.run(&args);
        assert!(
            out.code != 0 && out.stderr.contains(expected),
            "{label}: {args:?}: {expected:?} in {}",
            out.stderr
        );
    }
}

/// What kube-apiserver stores while it warns (its strategies' WarningsOnCreate and
/// WarningsOnUpdate), and the quantities it answers in canonical form.
fn warned_and_canonical(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let warned = manifest(
        srv,
        "warned.yaml",
        r#"apiVersion: v1
kind: Pod
metadata: {name: warned}
spec:
  containers:
  - name: a
    image: nginx
    ports: [{containerPort: 80}, {containerPort: 80}]
    env: [{name: MODE, value: one}, {name: MODE, value: two}]
    resources: {requests: {cpu: 0.5, memory: 1024Mi}, limits: {memory: 1.5Gi, cpu: "2000m"}}
"#,
    );
    let out = k.run(&["create", "-f", &warned]);
    assert_eq!(out.code, 0, "{label}: {}", out.stderr);
    for w in [
        "Warning: spec.containers[0].env[1]: hides previous definition of \"MODE\", which may be dropped when using apply",
        "Warning: spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]",
    ] {
        assert!(out.stderr.contains(w), "{label}: {w:?} in {}", out.stderr);
    }
    let resources = k.ok(&[
        "get",
        "pod",
        "warned",
        "-o",
        "jsonpath={.spec.containers[0].resources}",
    ]);
    let resources: Value = serde_json::from_str(&resources).expect("resources JSON");
    assert_eq!(
        resources,
        serde_json::json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1536Mi"}}),
        "{label}"
    );
    // A workload: its dotted name and its template, on create and when the template changes.
    let out = k.run(&["create", "deployment", "web.v2", "--image=nginx"]);
    assert!(
        out.code == 0 && out.stderr.contains("Warning: metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"),
        "{label}: {}",
        out.stderr
    );
    // (`kubectl set env` merges a repeated name itself; a JSON patch sends it as written.)
    let twice = r#"[{"op":"add","path":"/spec/template/spec/containers/0/env","value":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}]"#;
    let out = k.run(&["patch", "deployment", "web.v2", "--type=json", "-p", twice]);
    assert!(
        out.code == 0
            && out.stderr.contains("Warning: spec.template.spec.containers[0].env[1]: hides previous definition of \"A\""),
        "{label}: {}",
        out.stderr
    );
    // A Scale is written through the Deployment's strategy: a new count warns again, the
    // same count moves no generation and warns of nothing.
    for (replicas, warned) in [("2", true), ("2", false)] {
        let out = k.run(&[
            "scale",
            "deployment",
            "web.v2",
            &format!("--replicas={replicas}"),
        ]);
        assert_eq!(
            out.stderr.contains("hides previous definition"),
            warned,
            "{label}: {}",
            out.stderr
        );
    }
    for args in [
        vec!["delete", "pod", "warned", "--wait=false"],
        vec!["delete", "deployment", "web.v2"],
    ] {
        k.ok(&args);
    }
}

fn run_version(label: &str) {
    with_kubectl(label, dry_runs_for);
}

per_kubectl!(run_version);

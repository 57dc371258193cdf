//! `kubectl apply`, client-side and server-side, with every kubectl on the machine against
//! `kexplore serve` (issue 12 §A.3 and §A.6): an unchanged manifest is "unchanged" and moves no
//! resourceVersion; `--server-side` creates, records managedFields per manager, answers a
//! conflicting manager with upstream's 409 and gives way to `--force-conflicts`; `kubectl
//! scale` owns the replicas it wrote, so an apply that sets them again conflicts.

use std::path::Path;
use std::time::Duration;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for};

/// A kubectl with a directory for the manifests it applies.
struct Applier {
    k: Kubectl,
    dir: tempfile::TempDir,
}

impl std::ops::Deref for Applier {
    type Target = Kubectl;
    fn deref(&self) -> &Kubectl {
        &self.k
    }
}

impl Applier {
    /// Write `text` to a file named `name` and return its path as a string.
    fn manifest(&self, name: &str, text: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write manifest");
        p.to_string_lossy().into_owned()
    }

    fn pod_json(&self, name: &str) -> serde_json::Value {
        let o = self.ok_out(&["get", "pod", name, "-o", "json", "--show-managed-fields"]);
        serde_json::from_str(&o.stdout).expect("pod json")
    }

    /// The pod's resourceVersion once the scheduler and the kubelet are done with it.
    fn settled_rv(&self, name: &str) -> String {
        let rv = |k: &Applier| {
            k.pod_json(name)["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        wait_for(Duration::from_secs(20), || {
            let phase = self.pod_json(name)["status"]["phase"].clone();
            if phase != "Running" {
                return None;
            }
            let a = rv(self);
            std::thread::sleep(Duration::from_millis(400));
            (rv(self) == a).then_some(a)
        })
        .unwrap_or_else(|| panic!("{}: pod {name} never settled", self.label))
    }
}

fn pod(name: &str, image: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\nspec:\n  containers:\n  - name: nginx\n    image: {image}\n    ports:\n    - containerPort: 80\n"
    )
}

fn managers(pod: &serde_json::Value) -> Vec<(String, String, serde_json::Value)> {
    pod["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_string(),
                e["operation"].as_str().unwrap_or_default().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn image_path(fields: &serde_json::Value) -> Option<&serde_json::Value> {
    fields.pointer("/f:spec/f:containers/k:{\"name\":\"nginx\"}/f:image")
}

/// §A.6: a second client-side apply of the same manifest changes nothing.
fn client_side_unchanged(k: &Applier) {
    let m = k.manifest("csa.yaml", &pod("csa", "nginx:1.25", "app: csa"));
    let first = k.ok_out(&["apply", "-f", &m]);
    assert!(
        first.stdout.contains("pod/csa created"),
        "{}: {}",
        k.label,
        first.stdout
    );
    let rv = k.settled_rv("csa");
    // The create's Update entry owns the scheme's defaults too, and the labels map itself.
    let ms = managers(&k.pod_json("csa"));
    let csa = ms
        .iter()
        .find(|(m, op, _)| m == "kubectl-client-side-apply" && op == "Update")
        .map(|(_, _, f)| f.clone())
        .unwrap_or_default();
    for p in [
        "/f:spec/f:dnsPolicy",
        "/f:spec/f:containers/k:{\"name\":\"nginx\"}/f:imagePullPolicy",
        "/f:metadata/f:labels/.",
    ] {
        assert!(csa.pointer(p).is_some(), "{}: {p} in {csa}", k.label);
    }
    let second = k.ok_out(&["apply", "-f", &m]);
    assert_eq!(second.stdout.trim(), "pod/csa unchanged", "{}", k.label);
    assert_eq!(
        k.settled_rv("csa"),
        rv,
        "{}: the resourceVersion moved",
        k.label
    );
    // Moving to server-side apply: what client-side apply last applied is kubectl's to change,
    // not a conflict with "kubectl-client-side-apply".
    let newer = k.manifest("csa2.yaml", &pod("csa", "nginx:1.26", "app: csa"));
    k.ok_out(&["apply", "--server-side", "-f", &newer]);
    assert_eq!(
        k.pod_json("csa")["spec"]["containers"][0]["image"],
        "nginx:1.26",
        "{}",
        k.label
    );
    // Another manager still conflicts over the image.
    let other = k.manifest("csa3.yaml", &pod("csa", "nginx:1.27", "app: csa"));
    let refused = k.run(&[
        "apply",
        "--server-side",
        "--field-manager=zed",
        "-f",
        &other,
    ]);
    assert!(
        refused
            .stderr
            .contains("Apply failed with 1 conflict: conflict with \"kubectl")
            && refused
                .stderr
                .contains(".spec.containers[name=\"nginx\"].image"),
        "{}: {}",
        k.label,
        refused.stderr
    );
}

/// A merged list of scalars: kubectl sends `$deleteFromPrimitiveList/finalizers` to drop one.
fn client_side_drops_a_finalizer(k: &Applier) {
    let fin = |list: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: fin\n  finalizers: [{list}]\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
        )
    };
    let both = k.manifest("fin.yaml", &fin("example.com/a, example.com/b"));
    k.ok_out(&["apply", "-f", &both]);
    let one = k.manifest("fin2.yaml", &fin("example.com/a"));
    k.ok_out(&["apply", "-f", &one]);
    assert_eq!(
        k.pod_json("fin")["metadata"]["finalizers"],
        serde_json::json!(["example.com/a"]),
        "{}",
        k.label
    );
}

/// A union changes member through client-side apply: kubectl's patch lists the members to keep
/// in `$retainKeys` (a Deployment's strategy becoming Recreate drops the defaulted
/// `rollingUpdate`; a volume's emptyDir becoming a configMap), and orders lists with
/// `$setElementOrder`. Without them the first was refused as invalid and the second stored a
/// volume with two sources.
fn client_side_changes_a_union(k: &Applier) {
    let deployment = |strategy: &str, volume: &str, containers: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: union}}\nspec:\n  replicas: 1\n{strategy}  selector: {{matchLabels: {{app: union}}}}\n  template:\n    metadata: {{labels: {{app: union}}}}\n    spec:\n      containers: [{containers}]\n      volumes: [{{name: data, {volume}}}]\n"
        )
    };
    let first = deployment("", "emptyDir: {}", "{name: a, image: nginx}");
    k.ok_out(&["apply", "-f", &k.manifest("union.yaml", &first)]);
    let second = deployment(
        "  strategy: {type: Recreate}\n",
        "configMap: {name: cfg}",
        "{name: b, image: busybox}, {name: a, image: nginx}",
    );
    k.ok_out(&["apply", "-f", &k.manifest("union2.yaml", &second)]);
    let o = k.ok_out(&["get", "deployment", "union", "-o", "json"]);
    let d: serde_json::Value = serde_json::from_str(&o.stdout).expect("deployment json");
    assert_eq!(
        d["spec"]["strategy"],
        serde_json::json!({"type": "Recreate"}),
        "{}",
        k.label
    );
    let spec = &d["spec"]["template"]["spec"];
    assert_eq!(
        spec["volumes"],
        serde_json::json!([{"name": "data", "configMap": {"name": "cfg", "defaultMode": 420}}]),
        "{}",
        k.label
    );
    let names: Vec<_> = spec["containers"]
        .as_array()
        .map(|cs| cs.iter().map(|c| c["name"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        ["b", "a"],
        "{}: the order the manifest gives",
        k.label
    );
}

/// A Service's ports merge by port: kubectl 1.27 sends only the port added (with
/// `$setElementOrder/ports`), and the port already there stays; one taken out of the manifest
/// goes. The list was replaced by the patch's items, then refused as a malformed order.
fn client_side_service_ports(k: &Applier) {
    let svc = |ports: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: ports}}\nspec:\n  selector: {{app: x}}\n  ports: [{ports}]\n"
        )
    };
    let http = "{name: http, port: 80, targetPort: 8080}";
    let https = "{name: https, port: 443, targetPort: 8443}";
    let ports = |k: &Applier| {
        k.ok_out(&[
            "get",
            "service",
            "ports",
            "-o",
            "jsonpath={.spec.ports[*].port}",
        ])
        .stdout
    };
    k.ok_out(&["apply", "-f", &k.manifest("svc.yaml", &svc(http))]);
    k.ok_out(&[
        "apply",
        "-f",
        &k.manifest("svc2.yaml", &svc(&format!("{http}, {https}"))),
    ]);
    assert_eq!(ports(k), "80 443", "{}", k.label);
    k.ok_out(&["apply", "-f", &k.manifest("svc3.yaml", &svc(https))]);
    assert_eq!(ports(k), "443", "{}", k.label);
}

/// `kubectl rollout undo` of a DaemonSet sends the revision's template as a strategic merge
/// patch with `$patch: replace`: the container added since is gone again.
fn rollout_undo_replaces_the_template(k: &Applier) {
    let ds = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: a, image: busybox}]}\n";
    k.ok_out(&["apply", "-f", &k.manifest("ds.yaml", ds)]);
    let added = r#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"redis"}]}}}}"#;
    k.ok_out(&["patch", "daemonset", "agent", "-p", added]);
    let containers = |k: &Applier| {
        k.ok_out(&[
            "get",
            "ds",
            "agent",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}",
        ])
        .stdout
    };
    // A strategic merge patch puts the container the live list lacked first, as upstream's.
    assert_eq!(containers(k), "b a", "{}", k.label);
    let two = wait_for(Duration::from_secs(20), || {
        let h = k.ok_out(&["rollout", "history", "ds", "agent"]).stdout;
        h.lines().any(|l| l.starts_with('2')).then_some(())
    });
    assert!(two.is_some(), "{}: no second revision", k.label);
    k.ok_out(&["rollout", "undo", "ds", "agent"]);
    assert_eq!(containers(k), "a", "{}", k.label);
}

/// §A.3: create, re-apply, change, conflict, force, and a dropped field removed.
fn server_side(k: &Applier) {
    let m = k.manifest("ssa.yaml", &pod("ssa", "nginx:1.25", "app: ssa, tier: web"));
    // -v=6 prints each response's status: the create must be a 201, not a 404.
    let created = k.ok_out(&["apply", "--server-side", "-f", &m, "-v=6"]);
    assert!(
        created.stdout.contains("pod/ssa serverside-applied"),
        "{}: {}",
        k.label,
        created.stdout
    );
    assert!(
        created.stderr.contains("201 Created"),
        "{}: {}",
        k.label,
        created.stderr
    );
    let p = k.pod_json("ssa");
    let ms = managers(&p);
    // The applier's entry first (Apply sorts before Update); the kubelet may already have
    // written status, through the status subresource.
    assert_eq!(
        (ms[0].0.as_str(), ms[0].1.as_str()),
        ("kubectl", "Apply"),
        "{}: {ms:?}",
        k.label
    );
    assert!(
        ms[1..]
            .iter()
            .all(|(m, op, _)| m == "kubelet" && op == "Update"),
        "{}: {ms:?}",
        k.label
    );
    assert!(image_path(&ms[0].2).is_some(), "{}: {:?}", k.label, ms[0].2);
    assert!(
        ms[0].2.pointer("/f:spec/f:containers/k:{\"name\":\"nginx\"}/f:ports/k:{\"containerPort\":80,\"protocol\":\"TCP\"}/f:containerPort").is_some(),
        "{}: {:?}", k.label, ms[0].2
    );
    let shown = k.ok_out(&["get", "pod", "ssa", "-o", "yaml", "--show-managed-fields"]);
    assert!(
        shown.stdout.contains("operation: Apply"),
        "{}: {}",
        k.label,
        shown.stdout
    );
    assert!(shown.stdout.contains("fieldsType: FieldsV1"), "{}", k.label);

    let rv = k.settled_rv("ssa");
    let p = k.pod_json("ssa");
    let kubelet = p["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "kubelet");
    assert_eq!(
        kubelet.map(|e| (e["operation"].clone(), e["subresource"].clone())),
        Some((serde_json::json!("Update"), serde_json::json!("status"))),
        "{}: {p}",
        k.label
    );
    k.ok_out(&["apply", "--server-side", "-f", &m]);
    assert_eq!(
        k.settled_rv("ssa"),
        rv,
        "{}: an unchanged apply moved the resourceVersion",
        k.label
    );

    let changed = k.manifest(
        "ssa2.yaml",
        &pod("ssa", "nginx:1.26", "app: ssa, tier: web"),
    );
    k.ok_out(&["apply", "--server-side", "-f", &changed]);
    assert_eq!(
        k.pod_json("ssa")["spec"]["containers"][0]["image"],
        "nginx:1.26",
        "{}",
        k.label
    );

    // `other` co-owns `app` (same value) but not `tier`.
    let other = k.manifest("ssa3.yaml", &pod("ssa", "nginx:1.27", "app: ssa"));
    let refused = k.run(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        &other,
    ]);
    assert_eq!(
        refused.code, 1,
        "{}: {}{}",
        k.label, refused.stdout, refused.stderr
    );
    assert!(
        refused.stderr.contains(
            "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.containers[name=\"nginx\"].image"
        ),
        "{}: {}",
        k.label,
        refused.stderr
    );
    assert_eq!(
        k.pod_json("ssa")["spec"]["containers"][0]["image"],
        "nginx:1.26",
        "{}",
        k.label
    );

    k.ok_out(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        &other,
    ]);
    let p = k.pod_json("ssa");
    assert_eq!(
        p["spec"]["containers"][0]["image"], "nginx:1.27",
        "{}",
        k.label
    );
    let ms = managers(&p);
    let owner = |name: &str| {
        ms.iter()
            .find(|(m, _, _)| m == name)
            .map(|(_, _, f)| f.clone())
    };
    assert!(
        owner("other").as_ref().and_then(image_path).is_some(),
        "{}: {ms:?}",
        k.label
    );
    assert!(
        owner("kubectl").as_ref().and_then(image_path).is_none(),
        "{}: {ms:?}",
        k.label
    );

    // kubectl stops applying the `tier` label: no one else owns it, so it goes.
    let fewer = k.manifest("ssa4.yaml", &pod("ssa", "nginx:1.27", "app: ssa"));
    k.ok_out(&["apply", "--server-side", "-f", &fewer]);
    let labels = k.pod_json("ssa")["metadata"]["labels"].clone();
    assert_eq!(labels, serde_json::json!({"app": "ssa"}), "{}", k.label);
}

/// `kubectl get <what> -o json --show-managed-fields`, parsed.
fn with_managed_fields(k: &Kubectl, what: &[&str]) -> serde_json::Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&k.ok(&args)).expect("json")
}

fn run_version(label: &str) {
    with_kubectl(label, apply_with);
}

fn apply_with(label: &str, bin: &Path) {
    let server = ServeProcess::start(&[]);
    let k = Applier {
        k: Kubectl::new(label, bin, server.kubeconfig()),
        dir: tempfile::tempdir().expect("manifest dir"),
    };
    client_side_unchanged(&k);
    client_side_drops_a_finalizer(&k);
    client_side_changes_a_union(&k);
    rollout_undo_replaces_the_template(&k);
    client_side_service_ports(&k);
    server_side(&k);
}

per_kubectl!(run_version);

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx}]}
";

/// The scale subresource records its writer as upstream's ScaleHandler does: `kubectl scale`
/// (or an autoscaler) then owns spec.replicas, and an apply that still sets them conflicts, the
/// reason the docs tell HPA users to drop replicas from their manifests. Here the scale wrote
/// no entry, and the apply silently set the count back.
#[test]
fn kubectl_scale_owns_the_replicas_it_wrote() {
    with_one_kubectl(|label, bin| {
        let server = ServeProcess::start(&[]);
        let k = Applier {
            k: Kubectl::new(label, bin, server.kubeconfig()),
            dir: tempfile::tempdir().expect("manifest dir"),
        };
        let m = k.manifest("web.yaml", DEPLOYMENT);
        k.ok(&["apply", "--server-side", "-f", &m]);
        k.ok(&["scale", "deployment", "web", "--replicas=3"]);
        let d: serde_json::Value = serde_json::from_str(&k.ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "json",
            "--show-managed-fields",
        ]))
        .expect("deployment json");
        let entries = d["metadata"]["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let scale = entries.iter().find(|e| e["subresource"] == "scale");
        // The manager is the User-Agent's first part, kubectl's binary name: `kubectl.1.33` here.
        let manager = scale
            .and_then(|e| e["manager"].as_str())
            .filter(|m| m.starts_with("kubectl"))
            .unwrap_or("kubectl")
            .to_string();
        assert_eq!(
            scale.map(|e| (
                e["manager"].clone(),
                e["operation"].clone(),
                e["apiVersion"].clone(),
                e["fieldsV1"].clone()
            )),
            Some((
                serde_json::json!(manager),
                serde_json::json!("Update"),
                serde_json::json!("apps/v1"),
                serde_json::json!({"f:spec": {"f:replicas": {}}})
            )),
            "{label}: {entries:?}"
        );
        let applied = entries
            .iter()
            .find(|e| e["operation"] == "Apply")
            .expect("the apply's entry");
        assert!(
            applied.pointer("/fieldsV1/f:spec/f:replicas").is_none(),
            "{label}: the applier still owns the replicas: {applied}"
        );
        let refused = k.run(&["apply", "--server-side", "-f", &m]);
        assert_eq!(
            refused.code, 1,
            "{label}: {}{}",
            refused.stdout, refused.stderr
        );
        assert!(
            refused.stderr.contains(&format!(
                "Apply failed with 1 conflict: conflict with \"{manager}\" with subresource \"scale\" using apps/v1 at "
            )) && refused.stderr.contains(": .spec.replicas"),
            "{label}: {}",
            refused.stderr
        );
        let replicas = |k: &Applier| {
            k.ok(&[
                "get",
                "deployment",
                "web",
                "-o",
                "jsonpath={.spec.replicas}",
            ])
        };
        assert_eq!(replicas(&k), "3", "{label}");
        k.ok(&["apply", "--server-side", "--force-conflicts", "-f", &m]);
        assert_eq!(replicas(&k), "2", "{label}");
    });
}

/// The control loops' writes are kube-controller-manager's in managedFields, as upstream's:
/// the Deployment's revision annotation (an Update) and its status (subresource `status`),
/// and the ReplicaSet's pods, whose template fields it owns. A server-side apply of the same
/// manifest then conflicts with none of them.
#[test]
fn controllers_writes_are_kube_controller_managers() {
    with_one_kubectl(|label, bin| {
        let server = ServeProcess::start(&[]);
        let k = Applier {
            k: Kubectl::new(label, bin, server.kubeconfig()),
            dir: tempfile::tempdir().expect("manifest dir"),
        };
        let m = k.manifest("web.yaml", DEPLOYMENT);
        k.ok(&["apply", "--server-side", "-f", &m]);
        let get = |what: &[&str]| with_managed_fields(&k, what);
        let owned = |obj: &serde_json::Value, sub: &str| -> Option<serde_json::Value> {
            obj["metadata"]["managedFields"]
                .as_array()?
                .iter()
                .find(|e| {
                    e["manager"] == "kube-controller-manager"
                        && e["operation"] == "Update"
                        && e["subresource"].as_str().unwrap_or_default() == sub
                })
                .map(|e| e["fieldsV1"].clone())
        };
        let d = wait_for(Duration::from_secs(20), || {
            let d = get(&["deployment", "web"]);
            (d["status"]["availableReplicas"] == 2 && owned(&d, "status").is_some()).then_some(d)
        })
        .unwrap_or_else(|| panic!("{label}: web never available with its status owned"));
        let main = owned(&d, "").unwrap_or_else(|| panic!("{label}: no Update entry: {d}"));
        assert_eq!(
            main,
            serde_json::json!({"f:metadata": {"f:annotations": {
                ".": {}, "f:deployment.kubernetes.io/revision": {}}}}),
            "{label}"
        );
        let status = owned(&d, "status").unwrap_or_default();
        for f in [
            "f:availableReplicas",
            "f:conditions",
            "f:observedGeneration",
        ] {
            assert!(
                status["f:status"].get(f).is_some(),
                "{label}: {f}: {status}"
            );
        }
        let pods = get(&["pods", "-l", "app=web"]);
        let pod = &pods["items"][0];
        let fields = owned(pod, "").unwrap_or_else(|| panic!("{label}: {pod}"));
        assert!(
            fields
                .pointer("/f:metadata/f:ownerReferences")
                .is_some_and(|o| o
                    .as_object()
                    .is_some_and(|m| m.keys().any(|k| k.starts_with("k:{\"uid\":")))),
            "{label}: {fields}"
        );
        assert!(
            fields
                .pointer("/f:spec/f:containers")
                .is_some_and(|c| c.as_object().is_some_and(|m| !m.is_empty())),
            "{label}: {fields}"
        );
        let applied = k.run(&["apply", "--server-side", "-f", &m]);
        assert_eq!(applied.code, 0, "{label}: {}", applied.stderr);
    });
}

/// A create records what the scheme's defaults added, and no entry when it owns nothing, as
/// upstream's field manager: `kubectl create namespace` owns the `kubernetes.io/metadata.name`
/// label SetDefaults_Namespace adds; `kubectl create serviceaccount` sends only a name and the
/// namespace's `default` account is made of one, so neither has managedFields. Here the
/// namespace's label was nobody's and both accounts showed an entry owning `{}`.
#[test]
fn a_create_owns_what_the_defaults_added_and_no_entry_owns_nothing() {
    with_one_kubectl(|label, bin| {
        let server = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, server.kubeconfig());
        let get = |what: &[&str]| with_managed_fields(&k, what);
        k.ok(&["create", "namespace", "shop"]);
        let ns = get(&["namespace", "shop"]);
        let entries = ns["metadata"]["managedFields"].as_array().cloned();
        let entry = entries
            .iter()
            .flatten()
            .find(|e| e["operation"] == "Update" && e["manager"] == "kubectl-create");
        // Only the label: `spec: {}` as kubectl sends it is what the zero Namespace holds too.
        assert_eq!(
            entry.map(|e| &e["fieldsV1"]),
            Some(
                &serde_json::json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})
            ),
            "{label}: {entries:?}"
        );
        k.ok(&["create", "serviceaccount", "bot", "-n", "shop"]);
        let made = wait_for(Duration::from_secs(20), || {
            k.run(&["get", "serviceaccount", "default", "-n", "shop"])
                .code
                .eq(&0)
                .then_some(())
        });
        assert!(
            made.is_some(),
            "{label}: shop never got its default account"
        );
        for name in ["bot", "default"] {
            let sa = get(&["serviceaccount", name, "-n", "shop"]);
            assert!(
                sa["metadata"].get("managedFields").is_none(),
                "{label}: {name}: {sa}"
            );
        }
    });
}

/// What a fresh cluster holds carries the managedFields of upstream's writer of it: the
/// `default` namespace, the bootstrap ClusterRoles and their bindings and the built-in
/// PriorityClasses are kube-apiserver's, `kube-root-ca.crt` is kube-controller-manager's, and an
/// aggregated role's rules are the aggregation controller's (kube-controller-manager) beside
/// kube-apiserver's aggregationRule. They had no managedFields at all.
#[test]
fn a_fresh_clusters_objects_are_their_writers() {
    with_one_kubectl(|label, bin| {
        let server = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, server.kubeconfig());
        let owners = |what: &[&str]| -> Vec<(String, serde_json::Value)> {
            let o = with_managed_fields(&k, what);
            o["metadata"]["managedFields"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    assert_eq!(e["operation"], "Update", "{label}: {what:?}: {e}");
                    (
                        e["manager"].as_str().unwrap_or_default().to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        };
        let apiserver = |what: &[&str]| {
            let o = owners(what);
            assert_eq!(o.len(), 1, "{label}: {what:?}: {o:?}");
            assert_eq!(o[0].0, "kube-apiserver", "{label}: {what:?}");
            o[0].1.clone()
        };
        let ns = apiserver(&["namespace", "default"]);
        assert_eq!(
            ns,
            serde_json::json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}}),
            "{label}"
        );
        let role = apiserver(&["clusterrole", "cluster-admin"]);
        assert!(role.get("f:rules").is_some(), "{label}: {role}");
        apiserver(&["clusterrolebinding", "cluster-admin"]);
        let pc = apiserver(&["priorityclass", "system-node-critical"]);
        assert!(pc.get("f:value").is_some(), "{label}: {pc}");
        let admin = owners(&["clusterrole", "admin"]);
        let by = |m: &str| {
            admin
                .iter()
                .find(|(who, _)| who == m)
                .map(|(_, f)| f.clone())
        };
        let kcm = by("kube-controller-manager").unwrap_or_default();
        let api = by("kube-apiserver").unwrap_or_default();
        assert!(kcm.get("f:rules").is_some(), "{label}: {admin:?}");
        assert!(
            api.get("f:aggregationRule").is_some() && api.get("f:rules").is_none(),
            "{label}: {admin:?}"
        );
        let ca = owners(&["configmap", "kube-root-ca.crt", "-n", "default"]);
        assert_eq!(
            ca.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(),
            vec!["kube-controller-manager"],
            "{label}"
        );
    });
}

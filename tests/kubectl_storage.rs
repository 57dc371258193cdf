//! Storage as a workshop meets it, with kubectl 1.27 and 1.33 against `kexplore serve`: a pod
//! whose claim nothing satisfies stays Pending with kube-scheduler's words, and runs once an
//! administrator's PersistentVolume that fits is bound to the claim; a pod
//! naming a missing claim is refused before any node; a WaitForFirstConsumer class binds its
//! claim only when a pod uses it, on the node the volume lives on; a deleted claim leaves its
//! volume Released; a claim naming no class gets the demo's default, whose provisioner makes its
//! volume on its pod's node and deletes it with the claim; a StatefulSet's pods get claims of
//! their own and come back to their volumes' node; StorageClasses and
//! PersistentVolumes print as upstream's tables.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for};

fn apply(k: &Kubectl, srv: &ServeProcess, name: &str, yaml: &str) {
    let file = srv.dir.path().join(name);
    std::fs::write(&file, yaml).expect("write manifest");
    k.ok(&["apply", "-f", &file.to_string_lossy()]);
}

fn field(k: &Kubectl, args: &[&str], path: &str) -> String {
    let jsonpath = format!("-o=jsonpath={{{path}}}");
    let mut all = args.to_vec();
    all.push(&jsonpath);
    k.run(&all).stdout
}

/// The messages of the events about one object.
fn events(k: &Kubectl, kind: &str, name: &str) -> Vec<String> {
    let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
    let out = k.ok(&["get", "events", "--field-selector", &selector, "-o", "json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_default();
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} {}",
                e["reason"].as_str().unwrap_or(""),
                e["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn wait_event(k: &Kubectl, kind: &str, name: &str, needle: &str) {
    let seen = wait_for(Duration::from_secs(30), || {
        events(k, kind, name)
            .into_iter()
            .find(|m| m.contains(needle))
    });
    assert!(
        seen.is_some(),
        "{}: no event on {kind} {name} with {needle:?}: {:?}",
        k.label,
        events(k, kind, name)
    );
}

fn wait_field(k: &Kubectl, args: &[&str], path: &str, want: &str) {
    let got = wait_for(Duration::from_secs(30), || {
        (field(k, args, path) == want).then_some(())
    });
    assert!(
        got.is_some(),
        "{}: {args:?} {path} is {:?}, not {want:?}",
        k.label,
        field(k, args, path)
    );
}

const CLAIM_AND_POD: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: \"\"
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers: [{name: db, image: postgres}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
";

/// Too small for the claim: it stays Available.
const SMALL: &str = "apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-small}
spec:
  capacity: {storage: 512Mi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/small}
";

/// Big enough. (Which of several fitting volumes is chosen depends on which are Available
/// when the controller looks, on a real cluster too: the unit tests hold the smallest-first
/// choice.)
const FITS: &str = "apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  hostPath: {path: /data/pv1}
";

const LOCAL: &str = "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-node-2}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-2]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cache}
spec:
  storageClassName: local
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
";

const CACHE_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers: [{name: app, image: redis}]
  volumes: [{name: c, persistentVolumeClaim: {claimName: cache}}]
";

/// A claim with no class gets the default, `standard`, whose provisioner makes its volume on
/// the node of its first pod.
const DYNAMIC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: logs}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 3Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: writer}
spec:
  containers: [{name: w, image: busybox}]
  volumes: [{name: l, persistentVolumeClaim: {claimName: logs}}]
";

const STATEFUL: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx, volumeMounts: [{name: www, mountPath: /html}]}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
";

/// Two pods placed in the same pass, one local volume: one pod gets it, the other waits.
const PAIR: &str = "apiVersion: v1
kind: PersistentVolume
metadata: {name: local-node-3}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-3]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: pair}
spec:
  serviceName: pair
  replicas: 2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: pair}}
  template:
    metadata: {labels: {app: pair}}
    spec:
      containers: [{name: c, image: redis}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: local
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
";

const ORPHAN: &str = "apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec:
  containers: [{name: o, image: nginx}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: nope}}]
";

fn storage(label: &str) {
    with_kubectl(label, |label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        // A claim nothing satisfies: the claim waits, and so does its pod.
        apply(&k, &srv, "claim.yaml", CLAIM_AND_POD);
        wait_event(
            &k,
            "PersistentVolumeClaim",
            "data",
            "FailedBinding no persistent volumes available for this claim and no storage class is set",
        );
        wait_event(
            &k,
            "Pod",
            "db",
            "nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: ",
        );
        assert_eq!(
            field(&k, &["get", "pod", "db"], ".status.phase"),
            "Pending",
            "{label}"
        );
        // An administrator's volumes: one too small, which stays Available, then one that
        // fits, which is bound, and the pod runs.
        apply(&k, &srv, "small.yaml", SMALL);
        wait_field(&k, &["get", "pv", "pv-small"], ".status.phase", "Available");
        assert_eq!(
            field(&k, &["get", "pvc", "data"], ".status.phase"),
            "Pending",
            "{label}"
        );
        apply(&k, &srv, "fits.yaml", FITS);
        wait_field(&k, &["get", "pvc", "data"], ".status.phase", "Bound");
        assert_eq!(
            field(&k, &["get", "pvc", "data"], ".spec.volumeName"),
            "pv1",
            "{label}"
        );
        let table = k.ok(&["get", "pvc", "data"]);
        assert!(
            table.contains("Bound")
                && table.contains("pv1")
                && table.contains("2Gi")
                && table.contains("RWO,ROX"),
            "{label}: {table}"
        );
        let pvs = k.ok(&["get", "pv"]);
        let row = |name: &str| {
            pvs.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert!(
            pvs.starts_with("NAME") && pvs.contains("RECLAIM POLICY"),
            "{label}: {pvs}"
        );
        assert!(
            row("pv1 ").starts_with("pv1 2Gi RWO,ROX Retain Bound default/data"),
            "{label}: {pvs}"
        );
        assert!(
            row("pv-small").starts_with("pv-small 512Mi RWO Retain Available"),
            "{label}: {pvs}"
        );
        wait_field(&k, &["get", "pod", "db"], ".status.phase", "Running");
        // A claim that does not exist stops the pod before any node is looked at.
        apply(&k, &srv, "orphan.yaml", ORPHAN);
        wait_event(
            &k,
            "Pod",
            "orphan",
            "nodes are available: persistentvolumeclaim \"nope\" not found.",
        );
        // WaitForFirstConsumer: the claim waits for a pod, which goes where the volume is.
        apply(&k, &srv, "local.yaml", LOCAL);
        wait_event(
            &k,
            "PersistentVolumeClaim",
            "cache",
            "WaitForFirstConsumer waiting for first consumer to be created before binding",
        );
        assert_eq!(
            field(&k, &["get", "pvc", "cache"], ".status.phase"),
            "Pending",
            "{label}"
        );
        let classes = k.ok(&["get", "sc"]);
        let sc = |n: usize| {
            classes
                .lines()
                .nth(n)
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            sc(2)[..6],
            [
                "standard",
                "(default)",
                "kexplore.dev/hostpath",
                "Delete",
                "WaitForFirstConsumer",
                "false"
            ],
            "{label}: {classes}"
        );
        assert_eq!(
            sc(1)[..5],
            [
                "local",
                "kubernetes.io/no-provisioner",
                "Delete",
                "WaitForFirstConsumer",
                "false"
            ],
            "{label}: {classes}"
        );
        apply(&k, &srv, "app.yaml", CACHE_POD);
        wait_field(&k, &["get", "pod", "app"], ".status.phase", "Running");
        assert_eq!(
            field(&k, &["get", "pod", "app"], ".spec.nodeName"),
            "node-2",
            "{label}"
        );
        assert_eq!(
            field(&k, &["get", "pvc", "cache"], ".spec.volumeName"),
            "local-node-2",
            "{label}"
        );
        // No class: the default's provisioner makes the volume where the pod goes.
        apply(&k, &srv, "dynamic.yaml", DYNAMIC);
        assert_eq!(
            field(&k, &["get", "pvc", "logs"], ".spec.storageClassName"),
            "standard",
            "{label}"
        );
        wait_field(&k, &["get", "pod", "writer"], ".status.phase", "Running");
        let uid = field(&k, &["get", "pvc", "logs"], ".metadata.uid");
        let pv = format!("pvc-{uid}");
        assert_eq!(
            field(&k, &["get", "pvc", "logs"], ".spec.volumeName"),
            pv,
            "{label}"
        );
        let node = field(&k, &["get", "pod", "writer"], ".spec.nodeName");
        let affinity =
            ".spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]";
        assert_eq!(field(&k, &["get", "pv", &pv], affinity), node, "{label}");
        let selected = r".metadata.annotations.volume\.kubernetes\.io/selected-node";
        assert_eq!(
            field(&k, &["get", "pvc", "logs"], selected),
            node,
            "{label}"
        );
        wait_event(
            &k,
            "PersistentVolumeClaim",
            "logs",
            &format!("ProvisioningSucceeded Successfully provisioned volume {pv}"),
        );
        assert_eq!(
            field(&k, &["get", "pv", &pv], ".status.phase"),
            "Bound",
            "{label}"
        );
        // Its claim deleted, a volume of reclaim policy Delete is deleted by its provisioner.
        k.ok(&["delete", "pod", "writer", "--wait=false"]);
        k.ok(&["delete", "pvc", "logs", "--wait=false"]);
        let gone = wait_for(Duration::from_secs(30), || {
            k.run(&["get", "pv", &pv])
                .stderr
                .contains("NotFound")
                .then_some(())
        });
        assert!(
            gone.is_some(),
            "{label}: {pv} still there: {}",
            k.ok(&["get", "pv"])
        );
        // A StatefulSet's pods each get their claims, and a pod recreated goes back to its
        // volume's node: with that node cordoned it waits, in kube-scheduler's words.
        apply(&k, &srv, "sts.yaml", STATEFUL);
        wait_field(&k, &["get", "sts", "web"], ".status.readyReplicas", "2");
        for claim in ["www-web-0", "www-web-1"] {
            assert_eq!(
                field(&k, &["get", "pvc", claim], ".status.phase"),
                "Bound",
                "{label}"
            );
        }
        let volumes = field(
            &k,
            &["get", "pod", "web-0"],
            ".spec.volumes[0].persistentVolumeClaim.claimName",
        );
        assert_eq!(volumes, "www-web-0", "{label}");
        // The default class does not allow expansion (nor does kind's): growing is refused.
        let grow = k.run(&[
            "patch",
            "pvc",
            "www-web-1",
            "-p",
            r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#,
        ]);
        assert!(
            grow.stderr.contains(r#"Error from server (Forbidden): persistentvolumeclaims "www-web-1" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"#),
            "{label}: {}",
            grow.stderr
        );
        let home = field(&k, &["get", "pod", "web-0"], ".spec.nodeName");
        k.ok(&["cordon", &home]);
        k.ok(&["delete", "pod", "web-0", "--wait=false"]);
        wait_event(
            &k,
            "Pod",
            "web-0",
            "node(s) had volume node affinity conflict",
        );
        k.ok(&["uncordon", &home]);
        wait_field(&k, &["get", "pod", "web-0"], ".status.phase", "Running");
        assert_eq!(
            field(&k, &["get", "pod", "web-0"], ".spec.nodeName"),
            home,
            "{label}"
        );
        // One local volume left for two pods placed together: never both on it.
        apply(&k, &srv, "pair.yaml", PAIR);
        wait_field(&k, &["get", "pv", "local-node-3"], ".status.phase", "Bound");
        let winner = field(&k, &["get", "pv", "local-node-3"], ".spec.claimRef.name");
        let loser = if winner == "data-pair-0" {
            "pair-1"
        } else {
            "pair-0"
        };
        wait_event(
            &k,
            "Pod",
            loser,
            "didn't find available persistent volumes to bind",
        );
        assert_eq!(
            field(&k, &["get", "pod", loser], ".status.phase"),
            "Pending",
            "{label}"
        );
        // A claim a running pod mounts is only marked deleted (pvc-protection): Terminating,
        // still Bound, until the pod is gone.
        k.ok(&["delete", "pvc", "data", "--wait=false"]);
        assert_eq!(
            field(&k, &["get", "pvc", "data"], ".metadata.finalizers[*]"),
            "kubernetes.io/pvc-protection",
            "{label}"
        );
        let row = k.ok(&["get", "pvc", "data", "--no-headers"]);
        assert!(
            row.split_whitespace().nth(1) == Some("Terminating"),
            "{label}: {row}"
        );
        assert_eq!(field(&k, &["get", "pv", "pv1"], ".status.phase"), "Bound");
        // The pod gone, the claim goes, and its volume is Released and keeps its data (Retain).
        k.ok(&["delete", "pod", "db", "--wait=false"]);
        wait_field(&k, &["get", "pv", "pv1"], ".status.phase", "Released");
        assert!(
            k.run(&["get", "pvc", "data"]).stderr.contains("NotFound"),
            "{label}: the claim outlived its pod"
        );
        // Delete on static volumes: only hostPath under /tmp/ has a deleter; the rest go
        // Failed with kube-controller-manager's reason.
        apply(&k, &srv, "reclaim.yaml", RECLAIM);
        wait_field(&k, &["get", "pvc", "scratch"], ".status.phase", "Bound");
        // A bound volume is only marked deleted (pv-protection) until its claim lets it go.
        k.ok(&["delete", "pv", "scratch", "--wait=false"]);
        let row = k.ok(&["get", "pv", "scratch", "--no-headers"]);
        assert!(
            row.split_whitespace().nth(4) == Some("Terminating"),
            "{label}: {row}"
        );
        assert_eq!(
            field(&k, &["get", "pv", "scratch"], ".status.phase"),
            "Bound"
        );
        for pvc in ["keep", "scratch"] {
            wait_field(&k, &["get", "pvc", pvc], ".status.phase", "Bound");
            k.ok(&["delete", "pvc", pvc, "--wait=false"]);
        }
        wait_field(&k, &["get", "pv", "keep"], ".status.phase", "Failed");
        assert_eq!(
            field(&k, &["get", "pv", "keep"], ".status.message"),
            "host_path deleter only supports /tmp/.+ but received provided /mnt/keep",
            "{label}"
        );
        wait_event(
            &k,
            "PersistentVolume",
            "keep",
            "VolumeFailedDelete host_path deleter only supports",
        );
        let gone = wait_for(Duration::from_secs(30), || {
            k.run(&["get", "pv", "scratch"])
                .stderr
                .contains("NotFound")
                .then_some(())
        });
        assert!(gone.is_some(), "{label}: pv scratch was not deleted");
        // A local-volume class has no provisioner: an Immediate claim says so.
        wait_event(
            &k,
            "PersistentVolumeClaim",
            "no-volume",
            "ProvisioningFailed no volume plugin matched name: kubernetes.io/no-provisioner",
        );
        // The in-tree hostPath provisioner is off unless the manager was told otherwise.
        wait_event(
            &k,
            "PersistentVolumeClaim",
            "old-style",
            r#"ProvisioningFailed Failed to create provisioner: provisioning in volume plugin "kubernetes.io/host-path" is disabled"#,
        );
        // What users get wrong, refused in upstream's words.
        let bad = srv.dir.path().join("bad.yaml");
        std::fs::write(&bad, "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: bad}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n").expect("write");
        let o = k.run(&["apply", "-f", &bad.to_string_lossy()]);
        assert!(
            o.stderr
                .contains("spec: Required value: must specify a volume type"),
            "{label}: {}",
            o.stderr
        );
    });
}

const RECLAIM: &str = r#"
apiVersion: v1
kind: PersistentVolume
metadata: {name: keep}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: /mnt/keep}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: scratch}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: /tmp/scratch}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: keep}
spec:
  storageClassName: ""
  volumeName: keep
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch}
spec:
  storageClassName: ""
  volumeName: scratch
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: no-volume}
spec:
  storageClassName: local-storage
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: host-path}
provisioner: kubernetes.io/host-path
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: old-style}
spec:
  storageClassName: host-path
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"#;

#[test]
fn kubectl_1_27() {
    storage("1.27")
}

#[test]
fn kubectl_1_33() {
    storage("1.33")
}

//! A Node without status on the embedded server (issue 12 B8), created with real kubectl as a
//! node that has not posted status yet: the server stores it, its scheduler loop keeps placing
//! pods on the other nodes (one incomplete Node used to stop every placement), and `kexplore
//! schedule` on the live cluster says the node reported no allocatable.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

mod apiserver_support;
mod remote_support;
use apiserver_support::kubectl::Kubectl;
use apiserver_support::{ServeProcess, wait_for};
use remote_support::{kexplore, stderr, stdout};

const OBJECTS: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: bare, labels: {kubernetes.io/hostname: bare}}
---
apiVersion: v1
kind: Node
metadata: {name: worker, labels: {kubernetes.io/hostname: worker}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
"#;

fn kubectl(kc: &str, args: &[&str], stdin: Option<&str>) -> String {
    let bin = apiserver_support::which("kubectl").expect("kubectl");
    let kubectl = Kubectl::new("kubectl", &bin, kc.into());
    let mut child = kubectl
        .cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    if let Some(text) = stdin
        && let Some(mut i) = child.stdin.take()
    {
        i.write_all(text.as_bytes()).expect("stdin");
    }
    let out = child.wait_with_output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_node_without_status_is_stored_scheduled_around_and_explained() {
    let srv = ServeProcess::start(&["--no-demo"]);
    let kc = srv.kubeconfig();
    let kc = kc.to_str().unwrap_or_default();
    kubectl(kc, &["create", "-f", "-"], Some(OBJECTS));
    let node = kubectl(kc, &["get", "node", "bare", "-o", "json"], None);
    let node: serde_json::Value = serde_json::from_str(&node).expect("JSON");
    assert!(node.pointer("/status/allocatable").is_none(), "{node}");
    let bound = wait_for(Duration::from_secs(20), || {
        let n = kubectl(
            kc,
            &["get", "pod", "app", "-o", "jsonpath={.spec.nodeName}"],
            None,
        );
        (!n.is_empty()).then_some(n)
    });
    assert_eq!(bound.as_deref(), Some("worker"));

    let out = kexplore(&["schedule", "--kubeconfig", kc, "--pod", "default/app"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("note: bare: no allocatable reported: treated as 0"),
        "{text}"
    );
    assert!(text.contains("Too many pods"), "{text}");
}

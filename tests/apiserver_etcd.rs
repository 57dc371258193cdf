//! `kexplore serve` on a real etcd (issue 16): every test starts `etcd` from PATH with its own
//! data directory, PKI and loopback ports, and drives the server with kubectl, curl and etcdctl
//! as a user would. Skipped with a note when etcd (or the tool a test needs) is absent.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::kubectl::Kubectl;
use apiserver_support::{
    LocalEtcd, ServeProcess, etcd_flags, etcdctl, etcdctl_at, start_etcd, wait_for, which,
};

const LONG: Duration = Duration::from_secs(60);

fn have(tools: &[&str]) -> bool {
    for t in tools {
        if which(t).is_none() {
            eprintln!("note: {t} is not on PATH; skipping this etcd test");
            return false;
        }
    }
    true
}

fn serve_on(etcd: &LocalEtcd, extra: &[&str]) -> ServeProcess {
    let mut args: Vec<String> = etcd_flags(etcd);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ServeProcess::start(&args)
}

/// curl as kexplore-admin: (HTTP code, body as JSON or as text).
fn curl(srv: &ServeProcess, args: &[&str], path: &str) -> (u16, Value) {
    let (code, body) = srv.curl_admin(args, path);
    (
        code,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn kubectl(srv: &ServeProcess, args: &[&str]) -> (i32, String, String) {
    let bin = which("kubectl").expect("kubectl");
    let o = Kubectl::new("kubectl", &bin, srv.kubeconfig()).run(args);
    (o.code, o.stdout, o.stderr)
}

/// etcdctl with the test etcd's certificates: `-w json get KEY` as JSON.
fn etcdctl_get(etcd: &LocalEtcd, key: &str) -> Value {
    let out = etcdctl(etcd)
        .args(["-w", "json", "get", key])
        .output()
        .expect("run etcdctl");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn app_json() -> String {
    format!("{}/scenarios/app.json", env!("CARGO_MANIFEST_DIR"))
}

fn phase(srv: &ServeProcess, name: &str) -> String {
    let (_, out, _) = kubectl(srv, &["get", "pod", name, "-o", "jsonpath={.status.phase}"]);
    out
}

fn rv(v: &Value) -> u64 {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn configmap(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}})
        .to_string()
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i.pointer("/metadata/name").and_then(Value::as_str))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn objects_live_in_etcd_as_kube_apiserver_keeps_them() {
    if !have(&["etcd", "etcdctl", "kubectl", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let srv = serve_on(&etcd, &[]);
    let (code, _, err) = kubectl(&srv, &["create", "-f", &app_json()]);
    assert_eq!(code, 0, "{err}");
    wait_for(LONG, || (phase(&srv, "app") == "Running").then_some(())).expect("the pod runs");
    // The stored value: readable JSON without resourceVersion, at mod_revision = resourceVersion.
    let same = wait_for(LONG, || {
        let got = etcdctl_get(&etcd, "/registry/pods/default/app");
        let kv = got.pointer("/kvs/0")?.clone();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(kv["value"].as_str()?)
            .ok()?;
        let stored: Value = serde_json::from_slice(&bytes).ok()?;
        let (_, pod) = curl(&srv, &[], "/api/v1/namespaces/default/pods/app");
        (kv["mod_revision"].as_u64() == Some(rv(&pod))).then_some((stored, pod))
    });
    let (stored, pod) = same.expect("etcd's mod_revision is the pod's resourceVersion");
    assert_eq!(stored["metadata"]["name"], "app");
    assert!(
        stored.pointer("/metadata/resourceVersion").is_none(),
        "{stored}"
    );
    assert_eq!(stored["spec"]["nodeName"], pod["spec"]["nodeName"]);
    // A second create: the txn's mod_revision == 0 compare fails.
    let (code, _, err) = kubectl(&srv, &["create", "-f", &app_json()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("Error from server (AlreadyExists)")
            && err.contains("pods \"app\" already exists"),
        "{err}"
    );
    // The journey of that refused create names the etcd key and how to read what it holds.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .arg("journey")
        .arg("--kubeconfig")
        .arg(srv.kubeconfig())
        .args(["-f", &app_json(), "-o", "json"])
        .output()
        .expect("kexplore journey");
    let journey: Value = serde_json::from_slice(&out.stdout).expect("journey JSON");
    let storage = journey["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["stage"] == "storage"))
        .expect("a storage stage")
        .clone();
    assert_eq!(storage["status"], "failed", "{storage}");
    assert_eq!(storage["detail"]["etcdKey"], "/registry/pods/default/app");
    let etcdctl_line = storage["detail"]["etcdctl"].as_str().unwrap_or_default();
    assert!(
        etcdctl_line.contains("get /registry/pods/default/app"),
        "{storage}"
    );
    // An update from a stale resourceVersion: 409 Conflict in upstream's words.
    let mut stale = pod.clone();
    stale["metadata"]["resourceVersion"] = json!("2");
    stale["metadata"]["labels"] = json!({"stale": "yes"});
    let (code, status) = curl(
        &srv,
        &[
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/json",
            "-d",
            &stale.to_string(),
        ],
        "/api/v1/namespaces/default/pods/app",
    );
    assert_eq!(code, 409, "{status}");
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Operation cannot be fulfilled on pods \"app\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn lists_at_a_revision_continue_and_watch_from_etcd() {
    if !have(&["etcd", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let srv = serve_on(&etcd, &[]);
    let post = ["-X", "POST", "-H", "Content-Type: application/json", "-d"];
    for n in ["cm-a", "cm-b", "cm-c"] {
        let body = configmap(n);
        let mut args = post.to_vec();
        args.push(&body);
        assert_eq!(curl(&srv, &args, CM).0, 201);
    }
    let (code, first) = curl(&srv, &[], &format!("{CM}?limit=2"));
    assert_eq!(code, 200, "{first}");
    // The namespace's own kube-root-ca.crt (the root CA publisher's) sorts last.
    assert_eq!(names(&first), ["cm-a", "cm-b"]);
    assert_eq!(first["metadata"]["remainingItemCount"], 2);
    let at = rv(&first);
    let token = first["metadata"]["continue"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // Changes after the first page: the rest of the list is still read at its revision.
    assert_eq!(curl(&srv, &["-X", "DELETE"], &format!("{CM}/cm-c")).0, 200);
    let body = configmap("cm-d");
    let mut args = post.to_vec();
    args.push(&body);
    assert_eq!(curl(&srv, &args, CM).0, 201);
    let (code, rest) = curl(&srv, &[], &format!("{CM}?limit=2&continue={token}"));
    assert_eq!(code, 200, "{rest}");
    assert_eq!(names(&rest), ["cm-c", "kube-root-ca.crt"]);
    assert_eq!(rv(&rest), at);
    let (_, exact) = curl(
        &srv,
        &[],
        &format!("{CM}?resourceVersion={at}&resourceVersionMatch=Exact"),
    );
    assert_eq!(names(&exact), ["cm-a", "cm-b", "cm-c", "kube-root-ca.crt"]);
    let (_, now) = curl(&srv, &[], CM);
    assert_eq!(names(&now), ["cm-a", "cm-b", "cm-d", "kube-root-ca.crt"]);
    // A watch from that revision replays etcd's changes after it, in order.
    let (_, stream) = curl(
        &srv,
        &["--max-time", "3"],
        &format!("{CM}?watch=1&resourceVersion={at}"),
    );
    let text = stream.as_str().unwrap_or_default().to_string();
    let events: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e.pointer("/object/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("DELETED".to_string(), "cm-c".to_string()),
            ("ADDED".into(), "cm-d".into())
        ],
        "{text}"
    );
}

#[test]
fn compacted_revisions_are_410_expired() {
    if !have(&["etcd", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let srv = serve_on(&etcd, &["--etcd-compaction-interval=1s"]);
    let post = ["-X", "POST", "-H", "Content-Type: application/json", "-d"];
    let body = configmap("old");
    let mut args = post.to_vec();
    args.push(&body);
    let (_, old) = curl(&srv, &args, CM);
    let at = rv(&old);
    // Later writes move the revision on; the compactor then compacts past `at`.
    let mut n = 0;
    let expired = wait_for(LONG, || {
        n += 1;
        let body = configmap(&format!("new-{n}"));
        let mut args = post.to_vec();
        args.push(&body);
        let _ = curl(&srv, &args, CM);
        std::thread::sleep(Duration::from_millis(300));
        let (code, status) = curl(
            &srv,
            &[],
            &format!("{CM}?resourceVersion={at}&resourceVersionMatch=Exact"),
        );
        (code == 410).then_some(status)
    })
    .expect("a list at a compacted revision gets 410");
    assert_eq!(expired["reason"], "Expired");
    assert_eq!(
        expired["message"],
        "The resourceVersion for the provided list is too old."
    );
    let (_, stream) = curl(
        &srv,
        &["--max-time", "3"],
        &format!("{CM}?watch=1&resourceVersion={at}"),
    );
    let text = stream.to_string();
    assert!(text.contains("too old resource version"), "{text}");
    assert!(text.contains("410") || text.contains("Expired"), "{text}");
}

#[test]
fn a_restarted_server_on_the_same_etcd_still_has_the_pod_running() {
    if !have(&["etcd", "kubectl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let mut first = serve_on(&etcd, &[]);
    let (code, _, err) = kubectl(&first, &["create", "-f", &app_json()]);
    assert_eq!(code, 0, "{err}");
    wait_for(LONG, || (phase(&first, "app") == "Running").then_some(())).expect("the pod runs");
    assert_eq!(first.terminate(), Some(0));
    let second = serve_on(&etcd, &[]);
    assert_eq!(phase(&second, "app"), "Running");
    let (_, out, _) = kubectl(&second, &["get", "pods", "-o", "name"]);
    assert!(out.lines().any(|l| l == "pod/app"), "{out}");
}

fn pod(srv: &ServeProcess, name: &str) -> Value {
    curl(srv, &[], &format!("/api/v1/namespaces/default/pods/{name}")).1
}

fn status_of(pod: &Value, list: &str, container: &str) -> Value {
    pod["status"][list]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["name"] == container))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A pod waiting on a ConfigMap, and a run-to-completion pod with a sidecar, both mid-start
/// when their server crashed: the next server's kubelets go on from what the status says,
/// without starting again what already ran.
#[test]
fn pods_whose_start_a_crash_interrupted_are_carried_on_by_the_next_server() {
    if !have(&["etcd", "kubectl", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let mut first = serve_on(&etcd, &[]);
    let post = ["-X", "POST", "-H", "Content-Type: application/json", "-d"];
    let waits = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waits"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}],
                 "volumes": [{"name": "cfg", "configMap": {"name": "later"}}]}});
    let batch = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "batch", "annotations": {"kexplore.dev/simulated-run-seconds": "6"}},
        "spec": {"restartPolicy": "Never",
                 "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
                 "containers": [{"name": "work", "image": "busybox"}]}});
    for body in [waits.to_string(), batch.to_string()] {
        let mut args = post.to_vec();
        args.push(&body);
        assert_eq!(
            curl(&first, &args, "/api/v1/namespaces/default/pods").0,
            201
        );
    }
    let running = |srv: &ServeProcess| {
        let p = pod(srv, "batch");
        (p["status"]["phase"] == "Running").then_some(p)
    };
    let before = wait_for(LONG, || running(&first)).expect("the batch pod runs");
    let held = wait_for(LONG, || {
        let p = pod(&first, "waits");
        p["status"]["containerStatuses"].is_array().then_some(p)
    })
    .expect("the kubelet began the pod that waits");
    first.kill();

    let second = serve_on(&etcd, &[]);
    let mut args = post.to_vec();
    let cm = configmap("later");
    args.push(&cm);
    assert_eq!(curl(&second, &args, CM).0, 201);
    wait_for(LONG, || {
        (phase(&second, "waits") == "Running").then_some(())
    })
    .expect("the pod whose ConfigMap came runs");
    let after = wait_for(LONG, || {
        let p = pod(&second, "batch");
        (p["status"]["phase"] == "Succeeded").then_some(p)
    })
    .expect("the batch pod completes");
    let now = pod(&second, "waits");
    assert_eq!(now["status"]["startTime"], held["status"]["startTime"]);
    // The batch pod ran on: same start, same address, its container not started again.
    assert_eq!(after["status"]["startTime"], before["status"]["startTime"]);
    assert_eq!(after["status"]["podIP"], before["status"]["podIP"]);
    let work = status_of(&after, "containerStatuses", "work");
    assert_eq!(
        work["state"]["terminated"]["startedAt"],
        status_of(&before, "containerStatuses", "work")["state"]["running"]["startedAt"],
        "{after}"
    );
    assert_eq!(work["state"]["terminated"]["exitCode"], 0, "{after}");
    // Its sidecar is stopped once the main container is done, as the kubelet stops it.
    let proxy = status_of(&after, "initContainerStatuses", "proxy");
    assert_eq!(
        proxy["state"]["terminated"]["reason"], "Completed",
        "{after}"
    );
    let (_, events, _) = kubectl(
        &second,
        &[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=batch",
            "-o",
            "jsonpath={range .items[*]}{.reason}/{.message}{\"\\n\"}{end}",
        ],
    );
    assert_eq!(
        events.matches("Started container work").count(),
        1,
        "{events}"
    );
    assert!(
        events.contains("Killing/Stopping container proxy"),
        "{events}"
    );
}

#[test]
fn etcd_down_is_a_5xx_status_and_readyz_fails_until_it_returns() {
    if !have(&["etcd", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut etcd = start_etcd(dir.path());
    let srv = serve_on(&etcd, &[]);
    let (code, body) = curl(&srv, &[], "/readyz?verbose");
    assert_eq!(code, 200, "{body}");
    let body = body.to_string();
    assert!(
        body.contains("[+]etcd ok") && body.contains("[+]etcd-readiness ok"),
        "{body}"
    );
    etcd.stop();
    let body = configmap("while-down");
    let (code, status) = curl(
        &srv,
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-d",
            &body,
        ],
        CM,
    );
    assert!(code == 500 || code == 504, "{code} {status}");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["code"], code);
    // Reads that must be current (no resourceVersion) need etcd as writes do: kube-apiserver
    // reads etcd for a get, and asks it for its revision before a list from its cache.
    for path in [CM.to_string(), format!("{CM}/kube-root-ca.crt")] {
        let (code, status) = curl(&srv, &[], &path);
        assert!(code == 500 || code == 504, "{path}: {code} {status}");
        assert_eq!(status["kind"], "Status", "{status}");
    }
    // A probe runs at most once a second (upstream's half-timeout); the next one fails.
    let readyz = wait_for(LONG, || {
        let (code, readyz) = curl(&srv, &[], "/readyz?verbose");
        (code == 500).then_some(readyz)
    })
    .expect("/readyz fails while etcd is down");
    let text = readyz.as_str().unwrap_or_default();
    assert!(text.contains("[-]etcd failed: reason withheld"), "{text}");
    assert!(
        text.contains("[-]etcd-readiness failed: reason withheld"),
        "{text}"
    );
    assert!(text.ends_with("readyz check failed\n"), "{text}");
    // `kubectl get cs` says the same, with etcd's error in upstream's words.
    let (code, cs) = curl(&srv, &[], "/api/v1/componentstatuses/etcd-0");
    assert_eq!(code, 200, "{cs}");
    let condition = &cs["conditions"][0];
    assert_eq!(condition["status"], "False", "{cs}");
    assert!(
        condition["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("error getting data from etcd: ")),
        "{cs}"
    );
    etcd.restart().expect("etcd starts again");
    wait_for(LONG, || (curl(&srv, &[], "/readyz").0 == 200).then_some(()))
        .expect("ready again once etcd is back");
    let created = wait_for(LONG, || {
        let (code, _) = curl(
            &srv,
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
            ],
            CM,
        );
        (code == 201).then_some(())
    });
    assert!(created.is_some(), "writes work again");
    let (_, cm) = curl(&srv, &[], &format!("{CM}/while-down"));
    assert_eq!(cm["data"]["k"], "while-down");
    let (_, cs) = curl(&srv, &[], "/api/v1/componentstatuses/etcd-0");
    assert_eq!(cs["conditions"][0]["message"], "ok", "{cs}");
}

fn serve_exit(args: &[String], path: Option<&str>) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = Command::new(env!("CARGO_BIN_EXE_kexplore"));
    c.args(["serve", "--listen", "127.0.0.1:0", "--pki-dir"])
        .arg(dir.path().join("pki"))
        .args(args)
        .stdin(Stdio::null());
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let out = c.output().expect("run kexplore serve");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn bad_etcd_certificates_or_urls_stop_serve_with_exit_2() {
    if !have(&["etcd"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let url = etcd.options.servers.join(",");
    // Not the CA that signed etcd's certificate.
    let mut flags = etcd_flags(&etcd);
    flags[1] = format!(
        "--etcd-cafile={}",
        dir.path()
            .join("etcd-pki/apiserver-etcd-client.crt")
            .display()
    );
    let (code, err) = serve_exit(&flags, None);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&url) && err.contains("not signed by a CA in --etcd-cafile"),
        "{err}"
    );
    // No client certificate: etcd (--client-cert-auth) refuses the connection.
    let flags: Vec<String> = etcd_flags(&etcd).into_iter().take(2).collect();
    let (code, err) = serve_exit(&flags, None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("etcd refused our client certificate"), "{err}");
    // Nothing listening there. Not a port just freed: the tests beside this one start etcd
    // members and servers on ports picked the same way, and one took it (a TLS server with
    // another CA answered, in CI). Port 1 (tcpmux) is closed on loopback.
    let nowhere = "https://127.0.0.1:1".to_string();
    let mut flags = etcd_flags(&etcd);
    flags[0] = format!("--etcd-servers={nowhere}");
    let (code, err) = serve_exit(&flags, None);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&nowhere) && err.to_lowercase().contains("refused"),
        "{err}"
    );
}

#[test]
fn serve_etcd_without_etcd_on_path_says_what_to_install() {
    let empty = tempfile::tempdir().expect("tempdir");
    let (code, err) = serve_exit(
        &["--etcd".to_string()],
        Some(&empty.path().display().to_string()),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("etcd is not on PATH") && err.contains("apt-get install etcd-server"),
        "{err}"
    );
}

/// `kexplore serve --etcd` as a process, with the lines it prints after `listening on`.
fn serve_etcd(dir: &Path) -> (std::process::Child, String, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["serve", "--listen", "127.0.0.1:0", "--etcd", "--pki-dir"])
        .arg(dir.join("pki"))
        .arg("--etcd-data-dir")
        .arg(dir.join("etcd-data"))
        .arg("--kubeconfig-out")
        .arg(dir.join("kubeconfig"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kexplore serve --etcd");
    let mut r = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            break;
        }
        lines.push(l.trim_end().to_string());
    }
    std::thread::spawn(move || {
        let mut rest = String::new();
        while r.read_line(&mut rest).map(|n| n > 0).unwrap_or(false) {}
    });
    let url = lines
        .first()
        .and_then(|l| l.strip_prefix("listening on "))
        .unwrap_or_default()
        .to_string();
    (child, url, lines)
}

fn sigterm(child: &mut std::process::Child) -> Option<i32> {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    wait_for(Duration::from_secs(30), || {
        child.try_wait().ok().flatten().map(|s| s.code())
    })
    .flatten()
}

#[test]
fn serve_etcd_starts_its_own_etcd_prints_etcdctl_and_keeps_the_pod_across_restarts() {
    if !have(&["etcd", "etcdctl", "kubectl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, url, lines) = serve_etcd(dir.path());
    assert!(url.starts_with("https://127.0.0.1:"), "{lines:?}");
    for f in [
        "etcd/ca.crt",
        "etcd/server.crt",
        "etcd/peer.crt",
        "apiserver-etcd-client.crt",
    ] {
        assert!(dir.path().join("pki").join(f).is_file(), "{f}");
    }
    let command = lines
        .iter()
        .find_map(|l| l.strip_prefix("read a pod back: "))
        .unwrap_or_else(|| panic!("no etcdctl line in {lines:?}"))
        .to_string();
    assert!(
        command.ends_with(" get /registry/pods/default/app"),
        "{command}"
    );
    let kc = dir.path().join("kubeconfig");
    let k = |args: &[&str]| {
        let o = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(args)
            .output()
            .expect("kubectl");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, _, err) = k(&["create", "-f", &app_json()]);
    assert_eq!(code, Some(0), "{err}");
    // The printed command, word for word (the paths here have no spaces).
    let words: Vec<&str> = command.split(' ').collect();
    let out = Command::new(words[0])
        .args(&words[1..])
        .env("ETCDCTL_API", "3")
        .output()
        .expect("etcdctl");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("/registry/pods/default/app\n"), "{text}");
    assert!(text.contains("\"name\":\"app\""), "{text}");
    wait_for(LONG, || {
        let (_, phase, _) = k(&["get", "pod", "app", "-o", "jsonpath={.status.phase}"]);
        (phase == "Running").then_some(())
    })
    .expect("the pod runs");
    let etcd_url = words[2].to_string();
    assert_eq!(sigterm(&mut child), Some(0));
    // Its etcd went with it.
    let addr = etcd_url.trim_start_matches("https://").to_string();
    assert!(
        wait_for(Duration::from_secs(15), || std::net::TcpStream::connect(
            &addr
        )
        .is_err()
        .then_some(()))
        .is_some(),
        "etcd still listens on {addr}"
    );
    // Again on the same data: the pod is still there, Running.
    let (mut child, _, lines) = serve_etcd(dir.path());
    assert!(lines.len() == 3, "{lines:?}");
    let (_, phase, err) = k(&["get", "pod", "app", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(phase, "Running", "{err}");
    assert_eq!(sigterm(&mut child), Some(0));
}

/// The holder of Lease `name` in kube-system, as kubectl shows it through `srv`.
fn lease_holder(srv: &ServeProcess, name: &str) -> Option<String> {
    let (code, out, _) = kubectl(
        srv,
        &[
            "get",
            "lease",
            "-n",
            "kube-system",
            name,
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
    );
    (code == 0 && !out.is_empty()).then_some(out)
}

/// The Leases kube-scheduler, kube-controller-manager and the simulated kubelets hold.
const LEASES: [&str; 3] = [
    "kube-scheduler",
    "kube-controller-manager",
    "kexplore-simulated-kubelets",
];

/// Issue 16 §3: two replicas on one etcd serve one cluster — a write through one is read and
/// watched through the other — while the scheduler, the controllers and the kubelets run on
/// the one that holds their Leases. Killed (no goodbye, its Leases just stop being renewed),
/// the other takes over within the lease duration, and a pending pod is scheduled, once.
#[test]
fn replicas_share_the_cluster_and_a_new_leader_takes_over_when_one_dies() {
    if !have(&["etcd", "kubectl", "curl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etcd = start_etcd(dir.path());
    let pki = dir.path().join("pki");
    let args: Vec<String> = etcd_flags(&etcd);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut first = ServeProcess::start_with_pki(&args, Some(&pki));
    // The first replica up wins every election; the second finds them held.
    let holders: Vec<String> = LEASES
        .iter()
        .map(|l| wait_for(LONG, || lease_holder(&first, l)).expect("a holder"))
        .collect();
    let second = ServeProcess::start_with_pki(&args, Some(&pki));
    for (l, h) in LEASES.iter().zip(&holders) {
        assert_eq!(
            lease_holder(&second, l).as_ref(),
            Some(h),
            "{l}: one holder, seen by both"
        );
    }
    // A write through one replica is read and watched through the other.
    let watch = {
        let url = format!(
            "{}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=8",
            first.url
        );
        let (ca, cert, key) = (
            first.pki("ca.crt"),
            first.pki("admin.crt"),
            first.pki("admin.key"),
        );
        std::thread::spawn(move || {
            let o = Command::new("curl")
                .args(["-sS", "-N", "--max-time", "12", "--cacert"])
                .arg(ca)
                .arg("--cert")
                .arg(cert)
                .arg("--key")
                .arg(key)
                .arg(url)
                .output()
                .expect("curl");
            String::from_utf8_lossy(&o.stdout).into_owned()
        })
    };
    std::thread::sleep(Duration::from_millis(700));
    let (code, _, err) = kubectl(
        &second,
        &["create", "configmap", "from-second", "--from-literal=a=1"],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = kubectl(
        &first,
        &[
            "get",
            "configmap",
            "from-second",
            "-o",
            "jsonpath={.data.a}",
        ],
    );
    assert_eq!(out, "1", "read through the other replica");
    let seen = watch.join().expect("watch");
    assert!(
        seen.contains("\"type\":\"ADDED\"") && seen.contains("from-second"),
        "watched through the other replica: {seen}"
    );
    let (code, _, err) = kubectl(&second, &["create", "-f", &app_json()]);
    assert_eq!(code, 0, "{err}");
    wait_for(LONG, || (phase(&second, "app") == "Running").then_some(()))
        .expect("the leader's scheduler and kubelet run the pod created through the other");

    // The leader dies; within the lease duration (15 s) plus a retry the other takes over.
    let first_printed = first.printed();
    assert!(
        !second.printed().contains("successfully acquired lease"),
        "{}",
        second.printed()
    );
    first.kill();
    let killed_at = std::time::Instant::now();
    let (code, _, err) = kubectl(&second, &["run", "after", "--image=nginx"]);
    assert_eq!(code, 0, "{err}");
    for (l, old) in LEASES.iter().zip(&holders) {
        let new = wait_for(Duration::from_secs(40), || {
            lease_holder(&second, l).filter(|h| h != old)
        })
        .unwrap_or_else(|| panic!("{l}: no new holder"));
        assert_ne!(&new, old);
    }
    assert!(
        killed_at.elapsed() < Duration::from_secs(30),
        "took over in {:?}",
        killed_at.elapsed()
    );
    // The replica that took over says so on its terminal, once per Lease; the first said it
    // when it started.
    for (l, runs) in LEASES.iter().zip([
        "the scheduler loop",
        "the controllers",
        "the simulated kubelets",
    ]) {
        let said =
            format!("successfully acquired lease kube-system/{l}; this replica now runs {runs}\n");
        let printed = wait_for(Duration::from_secs(5), || {
            Some(second.printed()).filter(|p| p.contains(&said))
        })
        .unwrap_or_else(|| second.printed());
        assert_eq!(printed.matches(&said).count(), 1, "{printed}");
        assert!(first_printed.contains(&said), "{first_printed}");
    }
    wait_for(LONG, || {
        (phase(&second, "after") == "Running").then_some(())
    })
    .expect("the pending pod is scheduled and run by the new leader");
    let (_, events, _) = kubectl(
        &second,
        &[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=after,reason=Scheduled",
            "-o",
            "name",
        ],
    );
    assert_eq!(events.lines().count(), 1, "bound once: {events}");
    // The new leader's kubelets learnt which addresses running pods hold.
    let (_, ips, _) = kubectl(
        &second,
        &[
            "get",
            "pods",
            "-o",
            "jsonpath={range .items[*]}{.status.podIP}{\"\\n\"}{end}",
        ],
    );
    let ips: Vec<&str> = ips.lines().filter(|l| !l.is_empty()).collect();
    let distinct: std::collections::BTreeSet<&&str> = ips.iter().collect();
    assert_eq!(
        distinct.len(),
        ips.len(),
        "every pod its own address: {ips:?}"
    );
}

/// The member etcd calls its leader now, by `etcdctl endpoint status` (its index in `urls`).
fn etcd_leader(etcd: &LocalEtcd, urls: &[String]) -> Option<usize> {
    let out = etcdctl_at(etcd, &urls.join(","))
        .args(["endpoint", "status", "-w", "json"])
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v.as_array()?.iter().find_map(|s| {
        let leader = s.pointer("/Status/leader")?.as_u64()?;
        let me = s.pointer("/Status/header/member_id")?.as_u64()?;
        let url = s["Endpoint"].as_str()?;
        (leader == me).then(|| urls.iter().position(|u| u == url))?
    })
}

/// Issue 16, reliability: 200 writers create ConfigMaps through the server on a three-member
/// etcd while its leader is killed. Every write the server acknowledged (201) is there
/// afterwards, and a watch opened before the writes sees every one of them, in revision order.
#[test]
fn three_members_lose_their_leader_under_200_writers_and_keep_every_acknowledged_write() {
    if !have(&["etcd", "etcdctl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut etcd = LocalEtcd::start_members(
        Some(&dir.path().join("etcd-pki")),
        Some(&dir.path().join("etcd")),
        3,
        Duration::from_secs(300),
    )
    .expect("three etcd members");
    let urls = etcd.member_urls();
    assert_eq!(urls.len(), 3);
    let srv = serve_on(&etcd, &["--no-demo"]);
    let identity = format!(
        "{}{}",
        std::fs::read_to_string(srv.pki("admin.crt")).expect("cert"),
        std::fs::read_to_string(srv.pki("admin.key")).expect("key")
    );
    let ca = std::fs::read(srv.pki("ca.crt")).expect("ca");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(&ca).expect("ca"))
        .identity(reqwest::Identity::from_pem(identity.as_bytes()).expect("identity"))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let base = format!("{}/api/v1/namespaces/default/configmaps", srv.url);
    let leader = wait_for(LONG, || etcd_leader(&etcd, &urls)).expect("an etcd leader");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (acked, events) = rt.block_on(async {
        let list: Value = client
            .get(&base)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let from = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or("0")
            .to_string();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(u64, String)>::new()));
        let watch = {
            let (client, url) = (
                client.clone(),
                format!("{base}?watch=1&resourceVersion={from}&timeoutSeconds=120"),
            );
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut r = client
                    .get(url)
                    .timeout(Duration::from_secs(150))
                    .send()
                    .await
                    .expect("watch");
                let mut buf = Vec::new();
                while let Ok(Some(chunk)) = r.chunk().await {
                    buf.extend_from_slice(&chunk);
                    while let Some(n) = buf.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=n).collect();
                        let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
                            continue;
                        };
                        if ev["type"] == "ADDED" {
                            let o = &ev["object"];
                            let name = o["metadata"]["name"].as_str().unwrap_or("").to_string();
                            seen.lock().expect("seen").push((rv(o), name));
                        }
                    }
                }
            })
        };
        let writers: Vec<_> = (0..200)
            .map(|w| {
                let (client, base) = (client.clone(), base.clone());
                tokio::spawn(async move {
                    let mut ok = Vec::new();
                    for i in 0..5 {
                        let name = format!("w{w}-{i}");
                        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name}, "data": {"w": w.to_string()}});
                        // Anything but a 201 (504 for a write in flight when the leader
                        // died, 500 for one whose connection broke) is not acknowledged.
                        // Read whole: a response dropped unread cancels its stream.
                        if let Ok(r) = client.post(&base).json(&body).send().await
                            && r.status().as_u16() == 201
                            && r.bytes().await.is_ok()
                        {
                            ok.push(name);
                        }
                    }
                    ok
                })
            })
            .collect();
        // The leader dies while the writes are under way.
        tokio::time::sleep(Duration::from_millis(300)).await;
        etcd.kill_member(leader);
        let mut acked = Vec::new();
        for w in writers {
            acked.extend(w.await.expect("writer"));
        }
        // The watch gets a minute to deliver what it has not yet.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let all = {
                let got = seen.lock().expect("seen");
                let names: std::collections::BTreeSet<&str> =
                    got.iter().map(|(_, n)| n.as_str()).collect();
                acked.iter().all(|n| names.contains(n.as_str()))
            };
            if all || tokio::time::Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        watch.abort();
        let events = seen.lock().expect("seen").clone();
        (acked, events)
    });
    eprintln!(
        "{} of 1000 writes acknowledged with the etcd leader killed",
        acked.len()
    );
    assert!(
        acked.len() > 500,
        "most writes went through a two-member quorum: {}",
        acked.len()
    );
    let (code, list) = curl(&srv, &[], "/api/v1/namespaces/default/configmaps");
    assert_eq!(code, 200);
    let stored: std::collections::BTreeSet<String> = names(&list).into_iter().collect();
    let lost: Vec<&String> = acked.iter().filter(|n| !stored.contains(*n)).collect();
    assert!(lost.is_empty(), "acknowledged but gone: {lost:?}");
    let watched: std::collections::BTreeSet<&str> =
        events.iter().map(|(_, n)| n.as_str()).collect();
    let missed: Vec<&String> = acked
        .iter()
        .filter(|n| !watched.contains(n.as_str()))
        .collect();
    assert!(
        missed.is_empty(),
        "acknowledged but never watched: {missed:?}"
    );
    assert!(
        events.windows(2).all(|p| p[0].0 < p[1].0),
        "the watch delivers in revision order"
    );
    etcd.restart_member(leader).expect("the member rejoins");
}

/// Issue 16 §3, the workshop's way in: `kexplore etcd --members 3` runs the etcd cluster on
/// its own (so killing a replica never takes etcd with it) and prints the flags a replica
/// needs; a replica started with them serves the cluster, and etcdctl sees three members.
#[test]
fn kexplore_etcd_runs_a_three_member_cluster_for_replicas() {
    if !have(&["etcd", "etcdctl", "kubectl"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = dir.path().join("pki");
    let mut etcd = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["etcd", "--members", "3", "--pki-dir"])
        .arg(&pki)
        .arg("--data-dir")
        .arg(dir.path().join("etcd"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kexplore etcd");
    let mut lines = BufReader::new(etcd.stdout.take().expect("stdout")).lines();
    let mut said = Vec::new();
    while said.len() < 3 {
        match lines.next() {
            Some(Ok(l)) => said.push(l),
            _ => break,
        }
    }
    let flags = said
        .iter()
        .find_map(|l| l.strip_prefix("replicas: kexplore serve "))
        .and_then(|f| f.split(" --pki-dir ").next())
        .unwrap_or_else(|| panic!("no replicas line: {said:?}"))
        .to_string();
    let status = said
        .iter()
        .find_map(|l| l.strip_prefix("members and leader: "))
        .expect("the etcdctl line")
        .to_string();
    let args: Vec<&str> = flags.split(' ').collect();
    let srv = ServeProcess::start_with_pki(&args, Some(&pki));
    let (code, _, err) = kubectl(&srv, &["create", "configmap", "ha", "--from-literal=k=v"]);
    assert_eq!(code, 0, "{err}");
    let words: Vec<&str> = status.split(' ').skip(1).collect();
    let out = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(words.iter().map(|w| if *w == "table" { "json" } else { w }))
        .output()
        .expect("etcdctl");
    let members: Value = serde_json::from_slice(&out.stdout).expect("endpoint status as JSON");
    assert_eq!(members.as_array().map(Vec::len), Some(3), "{members}");
    let _ = Command::new("kill")
        .args(["-TERM", &etcd.id().to_string()])
        .status();
    let st = etcd.wait().expect("kexplore etcd ends");
    assert_eq!(st.code(), Some(0), "a clean stop on SIGTERM");
    assert_eq!(
        std::process::Command::new("pgrep")
            .args(["-f", &dir.path().join("etcd").display().to_string()])
            .output()
            .map(|o| o.stdout.is_empty())
            .ok(),
        Some(true),
        "its members stop with it"
    );
}

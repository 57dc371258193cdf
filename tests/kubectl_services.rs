//! Every kubectl on the machine against `kexplore serve`: a Deployment exposed as a Service gets
//! a ClusterIP from the service range and an EndpointSlice (and Endpoints) of its pods' IPs;
//! NodePorts come from 30000-32767 and are freed on delete; taken or out-of-range addresses and
//! ports get upstream's 422; ConfigMaps and Secrets of every `create secret` flavour, whose
//! values never reach the request traces or the audit log; LimitRange, ResourceQuota and
//! PodSecurity 403s, and PodSecurity's warnings; a multi-document manifest applied client-side
//! and server-side.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for};

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

/// Run, expect a failure, and return what kubectl said on stderr.
fn refused(k: &Kubectl, args: &[&str]) -> String {
    let o = k.run(args);
    assert_ne!(o.code, 0, "{}: {args:?} succeeded: {}", k.label, o.stdout);
    o.stderr
}

fn ip_in_service_range(ip: &str) -> bool {
    let Ok(addr) = ip.parse::<std::net::Ipv4Addr>() else {
        return false;
    };
    // 10.96.0.0/12: 10.96.0.0 - 10.111.255.255.
    let o = addr.octets();
    o[0] == 10 && (96..=111).contains(&o[1])
}

fn ready_pod_ips(k: &Kubectl, selector: &str) -> BTreeSet<String> {
    json(k, &["get", "pods", "-l", selector, "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .filter(|p| p["status"]["phase"] == "Running")
        .filter_map(|p| p["status"]["podIP"].as_str().map(String::from))
        .collect()
}

/// The ready addresses of the Service's EndpointSlices.
fn slice_ips(k: &Kubectl, service: &str) -> BTreeSet<String> {
    let selector = format!("kubernetes.io/service-name={service}");
    json(k, &["get", "endpointslices", "-l", &selector, "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["conditions"]["ready"] == true)
        .filter_map(|e| e["addresses"][0].as_str().map(String::from))
        .collect()
}

fn expose(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    // The `kubernetes` Service, at the first address of the range, as on every cluster.
    let kubernetes = json(&k, &["get", "service", "kubernetes", "-o", "json"]);
    assert_eq!(kubernetes["spec"]["clusterIP"], "10.96.0.1", "{label}");
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=3",
    ]);
    k.ok(&["rollout", "status", "deployment/web", "--timeout=90s"]);
    k.ok(&["expose", "deployment", "web", "--port=80"]);
    let svc = json(&k, &["get", "service", "web", "-o", "json"]);
    let ip = svc["spec"]["clusterIP"].as_str().unwrap_or_default();
    assert!(
        ip_in_service_range(ip) && ip != "10.96.0.1",
        "{label}: {svc}"
    );
    assert_eq!(svc["spec"]["clusterIPs"][0], ip, "{label}");
    assert_eq!(svc["spec"]["selector"]["app"], "web", "{label}");
    let table = k.ok(&["get", "service", "web"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE"
        ],
        "{label}"
    );
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..5],
        ["web", "ClusterIP", ip, "<none>", "80/TCP"],
        "{label}: {table}"
    );
    let wide = k.ok(&["get", "service", "web", "-o", "wide"]);
    assert!(
        wide.contains("SELECTOR") && wide.contains("app=web"),
        "{label}: {wide}"
    );
    // The EndpointSlice lists the three pods' IPs, ready, and says whose it is.
    let pods = ready_pod_ips(&k, "app=web");
    assert_eq!(pods.len(), 3, "{label}: {pods:?}");
    let got = wait_for(Duration::from_secs(30), || {
        let ips = slice_ips(&k, "web");
        (ips == pods).then_some(ips)
    });
    assert!(
        got.is_some(),
        "{label}: slice {:?} != pods {pods:?}",
        slice_ips(&k, "web")
    );
    let slices = json(
        &k,
        &[
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "json",
        ],
    );
    let slice = &slices["items"][0];
    assert_eq!(
        slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io",
        "{label}"
    );
    assert_eq!(
        slice["metadata"]["ownerReferences"][0]["kind"], "Service",
        "{label}"
    );
    assert_eq!(slice["addressType"], "IPv4", "{label}");
    assert_eq!(slice["ports"][0]["port"], 80, "{label}");
    let out = k.ok_out(&["get", "endpoints", "web", "-o", "json"]);
    // Deprecated in 1.33, the version this server reports: every answer says so.
    assert!(
        out.stderr.contains(
            "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        ),
        "{label}: {}",
        out.stderr
    );
    let ep: Value = serde_json::from_str(&out.stdout).expect("endpoints JSON");
    let listed: Vec<String> = ep["subsets"][0]["addresses"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|a| a["ip"].as_str().map(String::from))
        .collect();
    // Upstream's RepackSubsets sorts each subset's addresses by IP.
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "{label}: {ep}");
    let ep_ips: BTreeSet<String> = listed.into_iter().collect();
    assert_eq!(ep_ips, pods, "{label}: {ep}");
    // `get all` lists Services.
    let all = k.ok(&["get", "all"]);
    assert!(
        all.contains("service/web") && all.contains("service/kubernetes"),
        "{label}: {all}"
    );
    // Pods come and go: the slice follows.
    k.ok(&["scale", "deployment", "web", "--replicas=1"]);
    let one = wait_for(Duration::from_secs(60), || {
        let ips = slice_ips(&k, "web");
        (ips.len() == 1 && ips == ready_pod_ips(&k, "app=web")).then_some(ips)
    });
    assert!(
        one.is_some(),
        "{label}: slice {:?} after scale to 1",
        slice_ips(&k, "web")
    );
    // Deleting the Service frees its address and removes its slices.
    k.ok(&["delete", "service", "web"]);
    let gone = wait_for(Duration::from_secs(30), || {
        slice_ips(&k, "web").is_empty().then_some(())
    });
    assert!(gone.is_some(), "{label}: slices outlived their Service");
    k.ok(&[
        "create",
        "service",
        "clusterip",
        "again",
        "--tcp=80",
        &format!("--clusterip={ip}"),
    ]);
}

fn allocation(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&["--no-demo"]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    k.ok(&["create", "service", "nodeport", "np", "--tcp=80:8080"]);
    let np = json(&k, &["get", "service", "np", "-o", "json"]);
    let port = np["spec"]["ports"][0]["nodePort"].as_i64().unwrap_or(0);
    assert!((30000..=32767).contains(&port), "{label}: {np}");
    let table = k.ok(&["get", "service", "np"]);
    assert!(
        table.contains(&format!("80:{port}/TCP")) && table.contains("NodePort"),
        "{label}: {table}"
    );
    k.ok(&[
        "create",
        "service",
        "nodeport",
        "fixed",
        "--tcp=80:8080",
        "--node-port=30080",
    ]);
    let err = refused(
        &k,
        &[
            "create",
            "service",
            "nodeport",
            "twin",
            "--tcp=80:8080",
            "--node-port=30080",
        ],
    );
    assert!(
        err.contains("Service \"twin\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"),
        "{label}: {err}"
    );
    let err = refused(
        &k,
        &[
            "create",
            "service",
            "nodeport",
            "low",
            "--tcp=80:8080",
            "--node-port=29999",
        ],
    );
    assert!(
        err.contains("spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767"),
        "{label}: {err}"
    );
    // Freed on delete: the same explicit port is anyone's again.
    k.ok(&["delete", "service", "fixed"]);
    k.ok(&[
        "create",
        "service",
        "nodeport",
        "twin",
        "--tcp=80:8080",
        "--node-port=30080",
    ]);
    k.ok(&[
        "create",
        "service",
        "clusterip",
        "a",
        "--tcp=80",
        "--clusterip=10.96.100.100",
    ]);
    let err = refused(
        &k,
        &[
            "create",
            "service",
            "clusterip",
            "b",
            "--tcp=80",
            "--clusterip=10.96.100.100",
        ],
    );
    assert!(
        err.contains("spec.clusterIPs: Invalid value: []string{\"10.96.100.100\"}: failed to allocate IP 10.96.100.100: provided IP is already allocated"),
        "{label}: {err}"
    );
    let err = refused(
        &k,
        &[
            "create",
            "service",
            "clusterip",
            "c",
            "--tcp=80",
            "--clusterip=10.0.0.5",
        ],
    );
    assert!(
        err.contains("failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12"),
        "{label}: {err}"
    );
    // An update keeps the allocated address when the client leaves it out.
    let patch_a = |patch: &str| k.ok(&["patch", "service", "a", "-p", patch]);
    let get_a = || json(&k, &["get", "service", "a", "-o", "json"]);
    patch_a(r#"{"spec":{"sessionAffinity":"ClientIP"}}"#);
    let a = get_a();
    assert_eq!(a["spec"]["clusterIP"], "10.96.100.100", "{label}: {a}");
    // The workshop's `kubectl patch svc -p '{"spec":{"type":"NodePort"}}'`: the update takes a
    // free node port (here the Service had none); asking for a taken one is refused; back to
    // ClusterIP the port goes.
    patch_a(r#"{"spec":{"type":"NodePort"}}"#);
    let a = get_a();
    let port = a["spec"]["ports"][0]["nodePort"].as_i64().unwrap_or(0);
    assert!(
        (30000..=32767).contains(&port) && port != 30080,
        "{label}: {a}"
    );
    let taken = r#"{"spec":{"ports":[{"port":80,"nodePort":30080}]}}"#;
    let err = refused(&k, &["patch", "service", "a", "-p", taken]);
    assert!(
        err.contains("Service \"a\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"),
        "{label}: {err}"
    );
    patch_a(r#"{"spec":{"type":"ClusterIP"}}"#);
    let a = get_a();
    assert!(
        a["spec"]["ports"][0].get("nodePort").is_none(),
        "{label}: {a}"
    );
    // An ExternalName Service has no address: made ClusterIP it takes one, made ExternalName
    // again it gives it back; one may not be asked for with ExternalName.
    k.ok(&[
        "create",
        "service",
        "externalname",
        "ext",
        "--external-name=example.com",
    ]);
    let ext = |patch: &str| {
        k.ok(&["patch", "service", "ext", "-p", patch]);
        json(&k, &["get", "service", "ext", "-o", "json"])["spec"].clone()
    };
    let spec = ext(r#"{"spec":{"type":"ClusterIP","externalName":null,"ports":[{"port":80}]}}"#);
    assert!(
        spec["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.")),
        "{label}: {spec}"
    );
    let spec = ext(r#"{"spec":{"type":"ExternalName","externalName":"example.org"}}"#);
    assert!(spec.get("clusterIP").is_none(), "{label}: {spec}");
    let err = refused(
        &k,
        &[
            "patch",
            "service",
            "ext",
            "-p",
            r#"{"spec":{"clusterIP":"10.96.5.5"}}"#,
        ],
    );
    assert!(
        err.contains("spec.clusterIPs: Forbidden: may not be set for ExternalName services"),
        "{label}: {err}"
    );
    // A headless Service takes no address.
    k.ok(&[
        "create",
        "service",
        "clusterip",
        "headless",
        "--clusterip=None",
    ]);
    let h = json(&k, &["get", "service", "headless", "-o", "json"]);
    assert_eq!(h["spec"]["clusterIP"], "None", "{label}");
}

/// Creates racing for a small range: each address and port handed out once, the range's end
/// reported as upstream reports it, and a deleted Service's port free again.
fn concurrent_creates(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&[
        "--no-demo",
        "--service-cluster-ip-range=10.0.0.0/28",
        "--service-node-port-range=30000-30009",
    ]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let outs: Vec<apiserver_support::kubectl::Out> = std::thread::scope(|sc| {
        let runs: Vec<_> = (0..12)
            .map(|i| {
                let k = &k;
                sc.spawn(move || {
                    let name = format!("np{i}");
                    k.run(&["create", "service", "nodeport", &name, "--tcp=80"])
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("kubectl thread"))
            .collect()
    });
    let failed: Vec<&String> = outs
        .iter()
        .filter(|o| o.code != 0)
        .map(|o| &o.stderr)
        .collect();
    assert_eq!(failed.len(), 2, "{label}: {failed:?}");
    for e in &failed {
        assert!(
            e.contains("Internal error occurred: failed to allocate a nodePort: range is full"),
            "{label}: {e}"
        );
    }
    let items = json(&k, &["get", "services", "-o", "json"])["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ours: Vec<&Value> = items
        .iter()
        .filter(|s| s["spec"]["type"] == "NodePort")
        .collect();
    let ports: BTreeSet<i64> = ours
        .iter()
        .filter_map(|s| s["spec"]["ports"][0]["nodePort"].as_i64())
        .collect();
    let ips: BTreeSet<&str> = items
        .iter()
        .filter_map(|s| s["spec"]["clusterIP"].as_str())
        .collect();
    assert_eq!(ours.len(), 10, "{label}");
    assert_eq!(ports, (30000..=30009).collect(), "{label}");
    assert_eq!(
        ips.len(),
        11,
        "{label}: every Service its own address: {ips:?}"
    );
    let victim = ours[0]["metadata"]["name"].as_str().unwrap_or_default();
    k.ok(&["delete", "service", victim]);
    k.ok(&["create", "service", "nodeport", "late", "--tcp=80"]);
}

const SECRET_VALUE: &str = "s3cr3t-Zq8vWx";

fn secrets(label: &str, bin: &Path) {
    let audit_dir = tempfile::tempdir().expect("tempdir");
    let audit_path = audit_dir.path().join("audit.log");
    let srv = ServeProcess::start(&[
        "--no-demo",
        "--audit-log-path",
        &audit_path.to_string_lossy(),
    ]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    k.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
    ]);
    let cm = json(&k, &["get", "configmap", "settings", "-o", "json"]);
    assert_eq!(cm["data"]["mode"], "fast", "{label}");
    k.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        &format!("--from-literal=password={SECRET_VALUE}"),
    ]);
    let yaml = k.ok(&["get", "secret", "db", "-o", "yaml"]);
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(SECRET_VALUE);
    assert!(
        yaml.contains(&format!("password: {encoded}")),
        "{label}: {yaml}"
    );
    assert!(yaml.contains("type: Opaque"), "{label}: {yaml}");
    let table = k.ok(&["get", "secrets"]);
    assert!(
        table
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            == ["NAME", "TYPE", "DATA", "AGE"],
        "{label}: {table}"
    );
    k.ok(&[
        "create",
        "secret",
        "tls",
        "serving",
        &format!("--cert={}", srv.pki("ca.crt").display()),
        &format!("--key={}", srv.pki("ca.key").display()),
    ]);
    let tls = json(&k, &["get", "secret", "serving", "-o", "json"]);
    assert_eq!(tls["type"], "kubernetes.io/tls", "{label}");
    k.ok(&[
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server=registry.example",
        "--docker-username=me",
        &format!("--docker-password={SECRET_VALUE}"),
    ]);
    let pull = json(&k, &["get", "secret", "pull", "-o", "json"]);
    assert_eq!(pull["type"], "kubernetes.io/dockerconfigjson", "{label}");
    // Refused secrets: causes name keys, never values.
    let file = srv.dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        format!("apiVersion: v1\nkind: Secret\nmetadata: {{name: bad}}\ntype: kubernetes.io/dockerconfigjson\nstringData: {{.dockerconfigjson: \"{SECRET_VALUE}\"}}\n"),
    )
    .expect("write manifest");
    let err = refused(&k, &["create", "-f", &file.to_string_lossy()]);
    assert!(
        err.contains("data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\""),
        "{label}: {err}"
    );
    assert!(!err.contains(SECRET_VALUE), "{label}: {err}");
    // Bad base64 is reported as Go's decoder reports it: where, not what.
    let file = srv.dir.path().join("b64.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Secret\nmetadata: {name: b64}\ndata: {x: \"hunter2-not-b64!\"}\n",
    )
    .expect("write manifest");
    let err = refused(&k, &["create", "-f", &file.to_string_lossy()]);
    assert!(
        err.contains("Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 7"),
        "{label}: {err}"
    );
    // Not in the audit log, nor in the trace of any request about secrets.
    let audit = std::fs::read_to_string(&audit_path).unwrap_or_default();
    let ids: Vec<String> = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["objectRef"]["resource"] == "secrets")
        .filter_map(|e| e["auditID"].as_str().map(String::from))
        .collect();
    assert!(
        ids.len() >= 4,
        "{label}: {} secret requests audited",
        ids.len()
    );
    let leaks = [SECRET_VALUE.to_string(), encoded.clone()];
    for leak in &leaks {
        assert!(!audit.contains(leak), "{label}: the audit log holds {leak}");
    }
    for id in &ids {
        let trace = k.ok(&["get", "--raw", &format!("/debug/kexplore/requests/{id}")]);
        assert!(trace.contains(id.as_str()), "{label}: {trace}");
        for leak in &leaks {
            assert!(
                !trace.contains(leak),
                "{label}: trace {id} holds {leak}: {trace}"
            );
        }
    }
}

fn write(srv: &ServeProcess, name: &str, text: &str) -> String {
    let file = srv.dir.path().join(name);
    std::fs::write(&file, text).expect("write manifest");
    file.to_string_lossy().into_owned()
}

fn limits_and_quotas(label: &str, bin: &Path) {
    let srv = ServeProcess::start(&["--no-demo"]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    k.ok(&["create", "namespace", "limited"]);
    let lr = write(
        &srv,
        "lr.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu, namespace: limited}\nspec:\n  limits:\n  - type: Container\n    max: {cpu: \"1\"}\n    defaultRequest: {cpu: 500m}\n",
    );
    k.ok(&["apply", "-f", &lr]);
    let big = write(
        &srv,
        "big.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: limited}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {limits: {cpu: \"2\"}}\n",
    );
    let err = refused(&k, &["apply", "-f", &big]);
    assert!(
        err.contains(
            "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
        ),
        "{label}: {err}"
    );
    // Defaults for what a pod leaves out: the max as its limit, the default request.
    k.ok(&["run", "small", "-n", "limited", "--image=nginx"]);
    let small = json(&k, &["get", "pod", "small", "-n", "limited", "-o", "json"]);
    let res = &small["spec"]["containers"][0]["resources"];
    assert_eq!(res["limits"]["cpu"], "1", "{label}: {res}");
    assert_eq!(res["requests"]["cpu"], "500m", "{label}: {res}");
    assert_eq!(
        small["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container small; cpu limit for container small",
        "{label}"
    );
    k.ok(&["create", "namespace", "quoted"]);
    k.ok(&[
        "create",
        "quota",
        "two",
        "-n",
        "quoted",
        "--hard=pods=2,services=1",
    ]);
    k.ok(&["run", "a", "-n", "quoted", "--image=nginx"]);
    k.ok(&["run", "b", "-n", "quoted", "--image=nginx"]);
    let err = refused(&k, &["run", "c", "-n", "quoted", "--image=nginx"]);
    assert!(
        err.contains("pods \"c\" is forbidden: exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2"),
        "{label}: {err}"
    );
    k.ok(&[
        "create",
        "service",
        "clusterip",
        "one",
        "-n",
        "quoted",
        "--tcp=80",
    ]);
    let err = refused(
        &k,
        &[
            "create",
            "service",
            "clusterip",
            "two",
            "-n",
            "quoted",
            "--tcp=80",
        ],
    );
    assert!(
        err.contains("services \"two\" is forbidden: exceeded quota: two, requested: services=1, used: services=1, limited: services=1"),
        "{label}: {err}"
    );
    let used = wait_for(Duration::from_secs(20), || {
        let q = k.ok(&["get", "quota", "two", "-n", "quoted"]);
        q.contains("pods: 2/2, services: 1/1").then_some(q)
    });
    assert!(
        used.is_some(),
        "{label}: {}",
        k.ok(&["get", "quota", "-n", "quoted"])
    );
    replica_failure(label, &k);
    let pvc = write(
        &srv,
        "pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
    );
    k.ok(&["apply", "-f", &pvc]);
    let table = k.ok(&["get", "pvc", "data"]);
    assert!(
        table.starts_with("NAME") && table.contains("STATUS") && table.contains("Pending"),
        "{label}: {table}"
    );
    pod_security(label, &k, &srv);
}

/// A Deployment over a full quota: its ReplicaSet's failed create is the `ReplicaFailure`
/// condition on the set and on the Deployment, with the quota's refusal as its message, as
/// upstream's controllers report it; gone from both once a pod can be created again.
fn replica_failure(label: &str, k: &Kubectl) {
    k.ok(&[
        "create",
        "deployment",
        "over",
        "-n",
        "quoted",
        "--image=nginx",
    ]);
    let failure = |kind: &str| {
        let list = json(k, &["get", kind, "-n", "quoted", "-o", "json"]);
        list["items"][0]["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "ReplicaFailure").cloned())
    };
    let rs = wait_for(Duration::from_secs(20), || failure("rs"));
    let rs = rs.unwrap_or_else(|| {
        panic!(
            "{label}: {}",
            k.ok(&["get", "rs", "-n", "quoted", "-o", "yaml"])
        )
    });
    assert_eq!(
        (&rs["status"], &rs["reason"]),
        (&json!("True"), &json!("FailedCreate")),
        "{label}: {rs}"
    );
    let message = rs["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("pods \"over-")
            && message.ends_with("is forbidden: exceeded quota: two, requested: pods=1, used: pods=2, limited: pods=2"),
        "{label}: {rs}"
    );
    let d = wait_for(Duration::from_secs(20), || failure("deploy"));
    let d = d.unwrap_or_else(|| {
        panic!(
            "{label}: {}",
            k.ok(&["get", "deploy", "over", "-n", "quoted", "-o", "yaml"])
        )
    });
    assert_eq!(
        (&d["reason"], &d["message"], &d["lastUpdateTime"]),
        (&rs["reason"], &rs["message"], &rs["lastTransitionTime"]),
        "{label}: {d}"
    );
    k.ok(&["delete", "pod", "a", "-n", "quoted", "--wait=false"]);
    let cleared = wait_for(Duration::from_secs(30), || {
        (failure("rs").is_none() && failure("deploy").is_none()).then_some(())
    });
    assert!(
        cleared.is_some(),
        "{label}: {}",
        k.ok(&["get", "rs,deploy", "-n", "quoted", "-o", "yaml"])
    );
    k.ok(&["delete", "deployment", "over", "-n", "quoted"]);
}

/// PodSecurity, as a workshop drives it: a namespace labelled restricted refuses a bare pod
/// with upstream's words, lets a compliant one in, warns of a Deployment whose pods it will
/// refuse (and its controller's FailedCreate says why), warns of the pods already there when
/// the label tightens, and refuses a label it cannot read.
fn pod_security(label: &str, k: &Kubectl, srv: &ServeProcess) {
    const ENFORCE: &str = "pod-security.kubernetes.io/enforce";
    const BARE: &str = "allowPrivilegeEscalation != false (container \"bad\" must set securityContext.allowPrivilegeEscalation=false), \
        unrestricted capabilities (container \"bad\" must set securityContext.capabilities.drop=[\"ALL\"]), \
        runAsNonRoot != true (pod or container \"bad\" must set securityContext.runAsNonRoot=true), \
        seccompProfile (pod or container \"bad\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";
    k.ok(&["create", "namespace", "secure"]);
    let err = refused(k, &["label", "ns", "secure", &format!("{ENFORCE}=bogus")]);
    assert!(
        err.contains("Namespace \"secure\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"bogus\": must be one of privileged, baseline, restricted"),
        "{label}: {err}"
    );
    k.ok(&["run", "before", "-n", "secure", "--image=nginx"]);
    let out = k.ok_out(&["label", "ns", "secure", &format!("{ENFORCE}=restricted")]);
    assert!(
        out.stderr.contains("Warning: existing pods in namespace \"secure\" violate the new PodSecurity enforce level \"restricted:latest\"")
            && out.stderr.contains("Warning: before: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"),
        "{label}: {}",
        out.stderr
    );
    let err = refused(k, &["run", "bad", "-n", "secure", "--image=nginx"]);
    assert!(
        err.contains(&format!(
            "pods \"bad\" is forbidden: violates PodSecurity \"restricted:latest\": {BARE}"
        )),
        "{label}: {err}"
    );
    let good = write(
        srv,
        "good.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: good, namespace: secure}\nspec:\n  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}\n  containers:\n  - name: c\n    image: nginx\n    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n",
    );
    let out = k.ok_out(&["apply", "-f", &good]);
    assert!(!out.stderr.contains("Warning"), "{label}: {}", out.stderr);
    // A Deployment is never refused: warned at create, its pods refused to its controller.
    let out = k.ok_out(&[
        "create",
        "deployment",
        "web",
        "-n",
        "secure",
        "--image=nginx",
    ]);
    assert!(
        out.stderr.contains("Warning: would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"nginx\""),
        "{label}: {}",
        out.stderr
    );
    let event = wait_for(Duration::from_secs(20), || {
        let out = k.ok(&[
            "get",
            "events",
            "-n",
            "secure",
            "--field-selector",
            "reason=FailedCreate",
        ]);
        out.contains("is forbidden: violates PodSecurity \"restricted:latest\"")
            .then_some(out)
    });
    assert!(event.is_some(), "{label}: no FailedCreate event");
    // Enforce baseline, warn restricted: the bare pod runs, with restricted's warning.
    k.ok(&[
        "label",
        "ns",
        "secure",
        "--overwrite",
        &format!("{ENFORCE}=baseline"),
        "pod-security.kubernetes.io/warn=restricted",
    ]);
    let out = k.ok_out(&["run", "bad", "-n", "secure", "--image=nginx"]);
    assert!(
        out.stderr.contains(&format!(
            "Warning: would violate PodSecurity \"restricted:latest\": {BARE}"
        )),
        "{label}: {}",
        out.stderr
    );
    let err = refused(
        k,
        &[
            "run",
            "host",
            "-n",
            "secure",
            "--image=nginx",
            "--overrides",
            r#"{"spec": {"hostNetwork": true}}"#,
        ],
    );
    assert!(
        err.contains("pods \"host\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"),
        "{label}: {err}"
    );
}

const MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, labels: {app: shop}}
spec:
  replicas: 2
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - {name: web, image: nginx, ports: [{containerPort: 8080, name: http}]}
---
apiVersion: v1
kind: Service
metadata: {name: shop}
spec:
  selector: {app: shop}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shop}
data: {color: blue}
";

fn apply_manifest(label: &str, bin: &Path) {
    for server_side in [false, true] {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let file = write(&srv, "shop.yaml", MANIFEST);
        let mut args = vec!["apply", "-f", file.as_str()];
        if server_side {
            args.push("--server-side");
        }
        let out = k.ok(&args);
        for what in ["deployment.apps/shop", "service/shop", "configmap/shop"] {
            assert!(
                out.contains(what),
                "{label} (server-side {server_side}): {out}"
            );
        }
        let ip = json(&k, &["get", "service", "shop", "-o", "json"])["spec"]["clusterIP"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(ip_in_service_range(&ip), "{label}: {ip}");
        // Applied again, nothing changes: the allocated address stays.
        let again = k.ok(&args);
        assert!(again.contains("service/shop"), "{label}: {again}");
        let after = json(&k, &["get", "service", "shop", "-o", "json"]);
        assert_eq!(after["spec"]["clusterIP"], ip.as_str(), "{label}");
        k.ok(&["rollout", "status", "deployment/shop", "--timeout=90s"]);
        // The named target port resolves to the container's 8080.
        let slice = wait_for(Duration::from_secs(30), || {
            let s = json(
                &k,
                &[
                    "get",
                    "endpointslices",
                    "-l",
                    "kubernetes.io/service-name=shop",
                    "-o",
                    "json",
                ],
            );
            (s["items"][0]["ports"][0]["port"] == 8080 && slice_ips(&k, "shop").len() == 2)
                .then_some(s)
        });
        assert!(
            slice.is_some(),
            "{label}: {}",
            k.ok(&["get", "endpointslices", "-o", "yaml"])
        );
    }
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        expose(label, bin);
        allocation(label, bin);
        concurrent_creates(label, bin);
        secrets(label, bin);
        limits_and_quotas(label, bin);
        apply_manifest(label, bin);
    });
}

per_kubectl!(run_version);

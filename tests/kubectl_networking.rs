//! networking.k8s.io/v1 through real kubectl, as the workshop met it: `kubectl create ingress`
//! (a protobuf body), `get ing` with upstream's columns, `describe`, an invalid Ingress refused
//! with kube-apiserver's message, an IngressClass and a NetworkPolicy from a manifest (the
//! policy defaulted), and a namespace's deletion taking its Ingresses and NetworkPolicies with
//! it. With `KEXPLORE_TEST_STORE=etcd` the objects are also read back from etcd at
//! kube-apiserver's keys (`/registry/ingress/...`, singular).

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{LocalEtcd, ServeProcess, etcdctl, which};

const BAD_INGRESS: &str = "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad}
spec:
  rules:
  - host: foo.com
    http:
      paths:
      - path: api
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
";

const CLASS_AND_POLICY: &str = "apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: web}}}]
    ports: [{port: 5432}]
  egress:
  - to: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]
";

/// `kubectl get` output as (column, cell) pairs per row, cut at the header's offsets (an
/// empty ADDRESS keeps its place).
fn table(out: &str) -> Vec<Vec<(String, String)>> {
    let mut lines = out.lines();
    let header = lines.next().unwrap_or_default();
    let mut starts: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for word in header.split_whitespace() {
        let i = at + header[at..].find(word).unwrap_or(0);
        starts.push((i, word));
        at = i + word.len();
    }
    lines
        .map(|row| {
            starts
                .iter()
                .enumerate()
                .map(|(n, (i, word))| {
                    let end = starts.get(n + 1).map_or(row.len(), |s| s.0.min(row.len()));
                    let cell = row.get((*i).min(row.len())..end).unwrap_or_default();
                    (word.to_string(), cell.trim().to_string())
                })
                .collect()
        })
        .collect()
}

fn cell<'a>(row: &'a [(String, String)], column: &str) -> &'a str {
    row.iter()
        .find(|(c, _)| c == column)
        .map_or("", |(_, v)| v.as_str())
}

/// The keys etcd holds under `prefix` (the test etcd's own certificates).
fn etcd_keys(etcd: &LocalEtcd, prefix: &str) -> Vec<String> {
    let out = etcdctl(etcd)
        .args(["get", "--prefix", "--keys-only", prefix])
        .output()
        .expect("run etcdctl");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

fn write(srv: &ServeProcess, name: &str, text: &str) -> String {
    let path = srv.dir.path().join(name);
    std::fs::write(&path, text).expect("write manifest");
    path.to_string_lossy().into_owned()
}

fn ingress_as_the_workshop_made_it(k: &Kubectl) {
    let label = &k.label;
    let out = k.ok(&[
        "create",
        "ingress",
        "web",
        "--class=nginx",
        "--rule=foo.com/=web:80",
        "--rule=bar.com/*=api:8080,tls=bar-cert",
    ]);
    assert_eq!(
        out.trim(),
        "ingress.networking.k8s.io/web created",
        "{label}"
    );

    let out = k.ok(&["get", "ing"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
        "{label}: {out}"
    );
    let rows = table(&out);
    assert_eq!(rows.len(), 1, "{label}: {out}");
    let row = &rows[0];
    assert_eq!(cell(row, "NAME"), "web", "{label}: {out}");
    assert_eq!(cell(row, "CLASS"), "nginx", "{label}: {out}");
    assert_eq!(cell(row, "HOSTS"), "foo.com,bar.com", "{label}: {out}");
    // No ingress controller runs: no address, as on a cluster without one.
    assert_eq!(cell(row, "ADDRESS"), "", "{label}: {out}");
    assert_eq!(cell(row, "PORTS"), "80, 443", "{label}: {out}");

    let ing: Value = serde_json::from_str(&k.ok(&["get", "ingress", "web", "-o", "json"]))
        .expect("ingress as JSON");
    let paths = |i: usize| &ing["spec"]["rules"][i]["http"]["paths"][0];
    assert_eq!(paths(0)["pathType"], "Exact", "{label}: {ing}");
    assert_eq!(paths(1)["pathType"], "Prefix", "{label}: {ing}");
    assert_eq!(
        paths(1)["backend"]["service"]["port"]["number"],
        8080,
        "{label}: {ing}"
    );
    assert_eq!(
        ing["spec"]["tls"][0]["secretName"], "bar-cert",
        "{label}: {ing}"
    );
    assert_eq!(ing["metadata"]["generation"], 1, "{label}: {ing}");
    assert_eq!(
        ing["status"],
        serde_json::json!({"loadBalancer": {}}),
        "{label}: {ing}"
    );

    let described = k.ok(&["describe", "ingress", "web"]);
    for want in [
        "Name:             web",
        "Ingress Class:    nginx",
        "bar-cert terminates bar.com",
        "foo.com",
        // No Service behind it (kubectl before 1.28 looks up Endpoints, later ones Services).
        "web:80 (<error: ",
        "api:8080",
    ] {
        assert!(
            described.contains(want),
            "{label}: no {want:?} in\n{described}"
        );
    }
}

fn an_invalid_ingress_is_refused(k: &Kubectl, srv: &ServeProcess) {
    let file = write(srv, "bad-ingress.yaml", BAD_INGRESS);
    let out = k.run(&["apply", "-f", &file]);
    assert_eq!(out.code, 1, "{}: {}{}", k.label, out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            r#"The Ingress "bad" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path"#
        ),
        "{}: {}",
        k.label,
        out.stderr
    );
    let out = k.run(&["get", "ingress", "bad"]);
    assert_eq!(out.code, 1, "{}: the refused Ingress was stored", k.label);
}

fn class_and_policy_from_a_manifest(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    let file = write(srv, "class-and-policy.yaml", CLASS_AND_POLICY);
    let out = k.ok(&["create", "-f", &file]);
    assert!(
        out.contains("ingressclass.networking.k8s.io/nginx created")
            && out.contains("networkpolicy.networking.k8s.io/db created"),
        "{label}: {out}"
    );
    let out = k.ok(&["get", "ingressclass"]);
    let rows = table(&out);
    assert_eq!(
        cell(&rows[0], "CONTROLLER"),
        "k8s.io/ingress-nginx",
        "{label}: {out}"
    );
    assert_eq!(cell(&rows[0], "PARAMETERS"), "<none>", "{label}: {out}");

    let out = k.ok(&["get", "netpol"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "POD-SELECTOR", "AGE"], "{label}: {out}");
    assert_eq!(
        cell(&table(&out)[0], "POD-SELECTOR"),
        "app=db",
        "{label}: {out}"
    );

    // SetDefaults_NetworkPolicy: both types (it has egress rules), each port TCP.
    let np: Value = serde_json::from_str(&k.ok(&["get", "networkpolicy", "db", "-o", "json"]))
        .expect("policy as JSON");
    assert_eq!(
        np["spec"]["policyTypes"],
        serde_json::json!(["Ingress", "Egress"]),
        "{label}: {np}"
    );
    assert_eq!(
        np["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP",
        "{label}: {np}"
    );

    // The controller of a class never changes.
    let out = k.run(&[
        "patch",
        "ingressclass",
        "nginx",
        "--type=merge",
        "-p",
        r#"{"spec":{"controller":"example.com/other"}}"#,
    ]);
    assert!(
        out.stderr
            .contains(r#"spec.controller: Invalid value: "example.com/other": field is immutable"#),
        "{label}: {}",
        out.stderr
    );
}

fn a_namespace_takes_its_objects(k: &Kubectl, srv: &ServeProcess) {
    let label = &k.label;
    k.ok(&["create", "namespace", "team"]);
    k.ok(&[
        "-n",
        "team",
        "create",
        "ingress",
        "web",
        "--rule=foo.com/*=web:80",
    ]);
    let file = write(
        srv,
        "policy.yaml",
        CLASS_AND_POLICY.split("---\n").nth(1).unwrap_or_default(),
    );
    k.ok(&["-n", "team", "create", "-f", &file]);
    let etcd = srv.etcd.as_ref().filter(|_| which("etcdctl").is_some());
    if let Some(etcd) = etcd {
        assert_eq!(
            etcd_keys(etcd, "/registry/ingress/team/"),
            ["/registry/ingress/team/web"],
            "{label}"
        );
        assert_eq!(
            etcd_keys(etcd, "/registry/networkpolicies/team/"),
            ["/registry/networkpolicies/team/db"],
            "{label}"
        );
        assert_eq!(
            etcd_keys(etcd, "/registry/ingressclasses/"),
            ["/registry/ingressclasses/nginx"],
            "{label}"
        );
    }
    // kubectl delete waits until the namespace is gone, its contents first.
    k.ok(&["delete", "namespace", "team", "--timeout=60s"]);
    let out = k.run(&["get", "ingress,networkpolicy", "-n", "team"]);
    assert_eq!(out.stdout.trim(), "", "{label}: {}", out.stdout);
    assert!(
        out.stderr.contains("No resources found in team namespace."),
        "{label}: {}",
        out.stderr
    );
    if let Some(etcd) = etcd {
        assert!(
            etcd_keys(etcd, "/registry/ingress/team/").is_empty(),
            "{label}"
        );
        assert!(
            etcd_keys(etcd, "/registry/networkpolicies/team/").is_empty(),
            "{label}"
        );
    }
    // The other namespace's Ingress is untouched.
    k.ok(&["get", "ingress", "web", "-n", "default"]);
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        let srv = ServeProcess::start(&[]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let resources = k.ok(&[
            "api-resources",
            "--api-group=networking.k8s.io",
            "--no-headers",
        ]);
        for want in [
            "ingressclasses",
            "ingresses",
            "ing",
            "networkpolicies",
            "netpol",
        ] {
            assert!(
                resources.split_whitespace().any(|w| w == want),
                "{label}: no {want} in\n{resources}"
            );
        }
        let explained = k.ok(&["explain", "ingress.spec.rules"]);
        assert!(explained.contains("IngressRule"), "{label}: {explained}");
        ingress_as_the_workshop_made_it(&k);
        an_invalid_ingress_is_refused(&k, &srv);
        class_and_policy_from_a_manifest(&k, &srv);
        a_namespace_takes_its_objects(&k, &srv);
    });
}

per_kubectl!(run_version);

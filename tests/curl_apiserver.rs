//! Real curl against `kexplore serve` (a separate process on port 0), exactly as the seed's
//! experiment: `curl --cert client.crt --key client.key --cacert ca.crt https://127.0.0.1:PORT/api`,
//! then the error cases of issue 4. Skipped with a note when curl (or openssl) is absent.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::{SEED_POD, ServeProcess, which};

struct Curl<'a> {
    srv: &'a ServeProcess,
}

impl Curl<'_> {
    /// Run curl with `args`, return (HTTP code, parsed body).
    fn run(&self, cert: Option<(&Path, &Path)>, args: &[&str], path: &str) -> (u16, Value) {
        let mut c = Command::new("curl");
        c.args([
            "-sS",
            "--max-time",
            "20",
            "-w",
            "\n%{http_code}",
            "--cacert",
        ])
        .arg(self.srv.pki("ca.crt"));
        if let Some((crt, key)) = cert {
            c.arg("--cert").arg(crt).arg("--key").arg(key);
        }
        c.args(args).arg(format!("{}{path}", self.srv.url));
        let out = c.output().expect("run curl");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
        (
            code.trim().parse().unwrap_or(0),
            serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
        )
    }

    fn admin(&self, args: &[&str], path: &str) -> (u16, Value) {
        let (c, k) = (self.srv.pki("admin.crt"), self.srv.pki("admin.key"));
        self.run(Some((&c, &k)), args, path)
    }
}

fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A self-signed client certificate claiming system:masters, from a CA the server does not
/// trust: (certificate, key), or `None` without openssl.
fn foreign_cert(srv: &ServeProcess) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    which("openssl")?;
    let dir = srv.dir.path();
    let (fk, fc) = (dir.join("foreign.key"), dir.join("foreign.crt"));
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/O=system:masters/CN=mallory",
            "-keyout",
        ])
        .arg(&fk)
        .arg("-out")
        .arg(&fc)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "openssl made a foreign certificate");
    Some((fc, fk))
}

#[test]
fn curl_as_in_the_seed_and_every_error_status() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping the curl tests");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let curl = Curl { srv: &srv };
    let (code, body) = curl.admin(&[], "/api");
    assert_eq!(
        (code, body["kind"].as_str(), body["versions"].clone()),
        (200, Some("APIVersions"), json!(["v1"]))
    );

    let unauthorized = json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401});
    assert_eq!(curl.run(None, &[], "/api"), (401, unauthorized.clone()));

    if let Some((fc, fk)) = foreign_cert(&srv) {
        assert_eq!(curl.run(Some((&fc, &fk)), &[], "/api"), (401, unauthorized));
    } else {
        eprintln!("note: openssl is not installed; skipping the foreign-CA case");
    }

    let pods = "/api/v1/namespaces/default/pods";
    let post = [
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json;charset=utf-8",
        "-d",
    ];
    let with = |body: &str| -> Vec<String> {
        post.iter()
            .map(|s| s.to_string())
            .chain([body.to_string()])
            .collect()
    };

    let (jc, jk) = (srv.pki("jane.crt"), srv.pki("jane.key"));
    let a = with(SEED_POD);
    let (code, body) = curl.run(
        Some((&jc, &jk)),
        &argv(&a),
        "/api/v1/namespaces/kube-system/pods",
    );
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        json!(
            "pods is forbidden: User \"jane\" cannot create resource \"pods\" in API group \"\" in the namespace \"kube-system\""
        )
    );

    let a = with("{\"apiVersion\": \"v1\", \"kind\": ");
    let (code, body) = curl.admin(&argv(&a), pods);
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));

    let a = with(
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{"containers":[{"name":"app","image":"","ports":[{"containerPort":70000}]}]}}"#,
    );
    let (code, body) = curl.admin(&argv(&a), pods);
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        body["details"]["causes"],
        json!([
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"},
            {"reason": "FieldValueInvalid", "message": "Invalid value: 70000: must be between 1 and 65535, inclusive", "field": "spec.containers[0].ports[0].containerPort"}
        ])
    );

    let a = with(SEED_POD);
    let (code, created) = curl.admin(&argv(&a), pods);
    assert_eq!(code, 201);
    let (code, body) = curl.admin(&argv(&a), pods);
    assert_eq!(
        (code, body["reason"].as_str(), body["message"].as_str()),
        (
            409,
            Some("AlreadyExists"),
            Some("pods \"app\" already exists")
        )
    );

    // Change the pod, then PUT with the resourceVersion we read before: 409 Conflict.
    let (code, _) = curl.admin(
        &[
            "-X",
            "PATCH",
            "-H",
            "Content-Type: application/merge-patch+json",
            "-d",
            r#"{"metadata":{"labels":{"x":"1"}}}"#,
        ],
        &format!("{pods}/app"),
    );
    assert_eq!(code, 200);
    let stale = created.to_string();
    let (code, body) = curl.admin(
        &[
            "-X",
            "PUT",
            "-H",
            "Content-Type: application/json",
            "-d",
            &stale,
        ],
        &format!("{pods}/app"),
    );
    assert_eq!((code, body["reason"].as_str()), (409, Some("Conflict")));
    assert_eq!(
        body["message"],
        json!(
            "Operation cannot be fulfilled on pods \"app\": the object has been modified; please apply your changes to the latest version and try again"
        )
    );

    let big = srv.dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 4 * 1024 * 1024]).expect("write 4 MiB");
    let at = format!("@{}", big.display());
    let (code, body) = curl.admin(
        &[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &at,
        ],
        pods,
    );
    assert_eq!(
        (code, body["message"].as_str()),
        (413, Some("Request entity too large: limit is 3145728"))
    );

    let (code, body) = curl.admin(&["--http1.1"], "/version");
    assert_eq!((code, body["minor"].as_str()), (200, Some("33")));
}

/// kube-apiserver's system:public-info-viewer: `curl --cacert ca.crt` with no client
/// certificate gets the health endpoints and /version; an untrusted certificate or a bad token
/// is 401 even there; every other path stays 401 without credentials.
#[test]
fn curl_without_credentials_gets_health_and_version_only() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping the curl tests");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let curl = Curl { srv: &srv };
    for endpoint in ["healthz", "livez", "readyz"] {
        let path = format!("/{endpoint}");
        assert_eq!(curl.run(None, &[], &path), (200, json!("ok")), "{path}");
        // On etcd, kube-apiserver's etcd checks are listed too (readiness in /readyz only).
        let etcd = match (apiserver_support::on_etcd(), endpoint) {
            (false, _) => "",
            (true, "readyz") => "[+]etcd ok\n[+]etcd-readiness ok\n",
            (true, _) => "[+]etcd ok\n",
        };
        assert_eq!(
            curl.run(None, &[], &format!("{path}?verbose")),
            (
                200,
                json!(format!("[+]ping ok\n{etcd}{endpoint} check passed\n"))
            ),
            "{path}?verbose"
        );
        let (code, _) = curl.run(None, &["-H", "Authorization: Bearer nope"], &path);
        assert_eq!(code, 401, "{path} with a bad token");
        if let Some((fc, fk)) = foreign_cert(&srv) {
            let (code, _) = curl.run(Some((&fc, &fk)), &[], &path);
            assert_eq!(code, 401, "{path} with an untrusted certificate");
        }
    }
    let (code, body) = curl.run(None, &[], "/version");
    assert_eq!((code, body["major"].as_str()), (200, Some("1")));
    for path in ["/api", "/api/v1/namespaces/default/pods", "/readyz/ping"] {
        let (code, body) = curl.run(None, &[], path);
        assert_eq!(
            (code, body["reason"].as_str()),
            (401, Some("Unauthorized")),
            "{path}"
        );
    }
}

/// A manifest whose values do not fit their fields is a 400 naming the field as
/// kube-apiserver's decoder does; a malformed quantity also says which and where.
#[test]
fn curl_bad_manifests_name_the_field() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping the curl tests");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let curl = Curl { srv: &srv };
    let pod = |container: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"bad"}},"spec":{{"containers":[{{"name":"app","image":"x",{container}}}]}}}}"#
        )
    };
    let cases = [
        (
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{"containers":"app"}}"#.to_string(),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
        ),
        (
            pod(r#""resources":{"requests":["cpu=1"]}"#),
            "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList",
        ),
        (
            pod(r#""resources":{"limits":{"memory":"lots"}}"#),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got \"lots\" at spec.containers[0].resources.limits.memory)",
        ),
    ];
    for (body, want) in cases {
        let (code, status) = curl.admin(
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                &body,
            ],
            "/api/v1/namespaces/default/pods",
        );
        assert_eq!(
            (code, status["reason"].as_str(), status["message"].as_str()),
            (
                400,
                Some("BadRequest"),
                Some(format!("Pod in version \"v1\" cannot be handled as a Pod: {want}").as_str())
            ),
            "{body}"
        );
    }
}

#[test]
fn openssl_sees_the_client_certificate_request() {
    if which("openssl").is_none() {
        eprintln!("note: openssl is not installed; skipping");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo | openssl s_client -connect 127.0.0.1:{} 2>/dev/null",
            srv.port
        ))
        .output()
        .expect("openssl");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Acceptable client certificate CA names\nCN = kexplore-ca"),
        "{text}"
    );
}

#[test]
fn sigterm_ends_serve_cleanly_and_kubeconfig_is_private() {
    let mut srv = ServeProcess::start(&["--no-demo"]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(srv.kubeconfig())
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0);
    assert_eq!(mode, 0o600);
    let kc = std::fs::read_to_string(srv.kubeconfig()).unwrap_or_default();
    assert!(
        kc.contains(&format!("server: {}", srv.url))
            && kc.contains("name: jane")
            && kc.contains("name: kexplore-admin")
    );
    assert_eq!(srv.terminate(), Some(0));
}

//! Service-account identity against `kexplore serve`: every kubectl's `create token` (with
//! `--duration` and `--audience`) returns a JWT with kube-apiserver's claims, signed by the PKI
//! directory's `sa.key`; the token used by kubectl and curl authenticates as the service
//! account, RBAC then decides; a token for another audience, for a deleted or recreated
//! service account, tampered with, `alg: none`, expired or not yet valid is a 401; TokenReview
//! answers as upstream; a new namespace gets its `default` ServiceAccount from the controller;
//! `kubectl create -f` of a SubjectAccessReview or a TokenReview answers.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl};
use apiserver_support::{ServeProcess, wait_for, which};

const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap_or_default();
    let bytes = URL_SAFE_NO_PAD.decode(payload).unwrap_or_default();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// A kubeconfig whose only credential is `token` (no client certificate to fall back on).
fn token_kubeconfig(srv: &ServeProcess, name: &str, token: &str) -> PathBuf {
    let path = srv.dir.path().join(format!("kubeconfig-{name}"));
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: sa\n  user:\n    token: {token}\ncontexts:\n- name: sa\n  context:\n    cluster: k\n    user: sa\n    namespace: default\ncurrent-context: sa\n",
        srv.url,
        srv.pki("ca.crt").display()
    );
    std::fs::write(&path, text).expect("write kubeconfig");
    path
}

/// kubectl's words for a 401 (the discovery client's, or the request's own).
fn refused(o: &apiserver_support::kubectl::Out) -> bool {
    o.code != 0
        && (o.stderr.contains("Unauthorized")
            || o.stderr
                .contains("the server has asked for the client to provide credentials"))
}

fn sa_uid(k: &Kubectl, ns: &str, name: &str) -> String {
    k.ok(&[
        "get",
        "sa",
        name,
        "-n",
        ns,
        "-o",
        "jsonpath={.metadata.uid}",
    ])
}

fn identity(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());

    // The ServiceAccount controller gives a new namespace its `default`.
    k.ok(&["create", "namespace", "team"]);
    let found = wait_for(Duration::from_secs(30), || {
        let o = k.run(&["get", "sa", "default", "-n", "team", "-o", "name"]);
        (o.code == 0).then_some(o.stdout)
    });
    assert_eq!(
        found.as_deref(),
        Some("serviceaccount/default\n"),
        "{label}"
    );

    // The claims kube-apiserver puts in a TokenRequest's token.
    let token = k.ok(&["create", "token", "default"]).trim().to_string();
    let c = claims(&token);
    assert_eq!(c["iss"], ISSUER, "{label}: {c}");
    assert_eq!(c["sub"], "system:serviceaccount:default:default", "{label}");
    assert_eq!(c["aud"], json!([ISSUER]), "{label}");
    let (iat, exp) = (
        c["iat"].as_i64().unwrap_or(0),
        c["exp"].as_i64().unwrap_or(0),
    );
    assert_eq!(exp - iat, 3600, "{label}: {c}");
    assert_eq!(c["nbf"], c["iat"], "{label}");
    assert_eq!(c["kubernetes.io"]["namespace"], "default", "{label}");
    assert_eq!(c["kubernetes.io"]["serviceaccount"]["name"], "default");
    assert_eq!(
        c["kubernetes.io"]["serviceaccount"]["uid"],
        sa_uid(&k, "default", "default"),
        "{label}"
    );
    let d = k.ok(&[
        "create",
        "token",
        "default",
        "--duration=20m",
        "--audience=vault",
        "--audience=api",
    ]);
    let c2 = claims(d.trim());
    assert_eq!(c2["aud"], json!(["vault", "api"]), "{label}");
    assert_eq!(
        c2["exp"].as_i64().unwrap_or(0) - c2["iat"].as_i64().unwrap_or(0),
        1200,
        "{label}"
    );

    // Used by kubectl: whoami shows the service account, RBAC decides the rest.
    let sa = Kubectl::new(label, bin, token_kubeconfig(&srv, "default", &token));
    let who: Value =
        serde_json::from_str(&sa.ok(&["auth", "whoami", "-o", "json"])).unwrap_or(Value::Null);
    assert_eq!(
        who["status"]["userInfo"]["username"], "system:serviceaccount:default:default",
        "{label}: {who}"
    );
    assert_eq!(
        who["status"]["userInfo"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]),
        "{label}"
    );
    let denied = sa.run(&["get", "pods"]);
    assert_ne!(denied.code, 0, "{label}");
    assert!(
        denied.stderr.contains(r#"pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default""#),
        "{label}: {}",
        denied.stderr
    );
    k.ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "sa-reads-pods",
        "--role=pod-reader",
        "--serviceaccount=default:default",
    ]);
    sa.ok(&["get", "pods"]);

    // A token for another audience is not for this API server.
    let other = Kubectl::new(label, bin, token_kubeconfig(&srv, "vault", d.trim()));
    let o = other.run(&["get", "pods"]);
    assert!(refused(&o), "{label}: {}", o.stderr);

    // A deleted service account's token stops working, and stays refused when an account of
    // the same name comes back with a new uid.
    k.ok(&["create", "serviceaccount", "builder"]);
    let b = k.ok(&["create", "token", "builder"]).trim().to_string();
    let builder = Kubectl::new(label, bin, token_kubeconfig(&srv, "builder", &b));
    let me = builder.ok(&[
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(me, "system:serviceaccount:default:builder", "{label}");
    k.ok(&["delete", "serviceaccount", "builder"]);
    let o = builder.run(&["auth", "whoami"]);
    assert!(refused(&o), "{label}: {}", o.stderr);
    k.ok(&["create", "serviceaccount", "builder"]);
    let o = builder.run(&["auth", "whoami"]);
    assert!(refused(&o), "{label}: {}", o.stderr);

    // A token for an account that does not exist is refused as upstream refuses it.
    let o = k.run(&["create", "token", "nobody"]);
    assert!(
        o.stderr.contains(r#"serviceaccounts "nobody" not found"#),
        "{label}: {}",
        o.stderr
    );
}

/// `kubectl create -f` of the review kinds, which kubectl validates on the client (they have no
/// PATCH to carry `fieldValidation`): after asking whether the kind is a CRD, so the empty,
/// read-only CustomResourceDefinition list must answer, and against the OpenAPI document, where
/// only core/v1 Event requires metadata.
fn access_reviews(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&[]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());
    let manifest = |name: &str, v: Value| {
        let path = srv.dir.path().join(name);
        std::fs::write(&path, v.to_string()).expect("write manifest");
        path.display().to_string()
    };
    let sar = manifest(
        "sar.json",
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "jane", "resourceAttributes": {"verb": "get", "resource": "pods",
            "namespace": "default"}}}),
    );
    let status = |k: &Kubectl| {
        let out = k.ok(&["create", "-f", &sar, "-o", "json"]);
        serde_json::from_str::<Value>(&out).unwrap_or(Value::Null)["status"].clone()
    };
    assert_eq!(status(&k), json!({"allowed": false}), "{label}");
    k.ok(&[
        "create",
        "rolebinding",
        "jane-view",
        "--clusterrole=view",
        "--user=jane",
    ]);
    assert_eq!(
        status(&k),
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"jane-view/default\" of ClusterRole \"view\" to User \"jane\""}),
        "{label}"
    );
    let tr = manifest(
        "tr.json",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": "not-a-token"}}),
    );
    let out = k.ok(&[
        "create",
        "-f",
        &tr,
        "-o",
        "jsonpath={.status.authenticated}",
    ]);
    assert_eq!(out, "false", "{label}");
    // No custom resources here: the list is empty and nothing can be defined.
    let o = k.run(&["get", "crd"]);
    assert!(
        o.stderr.contains("No resources found"),
        "{label}: {} {}",
        o.stdout,
        o.stderr
    );
    let crd = manifest(
        "crd.json",
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    let o = k.run(&["create", "-f", &crd]);
    assert!(
        o.code != 0 && o.stderr.contains("MethodNotAllowed"),
        "{label}: {} {}",
        o.stdout,
        o.stderr
    );
}

fn run_version(label: &str) {
    with_kubectl(label, |label, bin| {
        identity(label, bin);
        access_reviews(label, bin);
    });
}

per_kubectl!(run_version);

// ---- curl: bearer tokens, forged tokens, TokenReview ----

fn curl(
    srv: &ServeProcess,
    auth: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut c = Command::new("curl");
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
    .arg(srv.pki("ca.crt"));
    match auth {
        Some(token) => {
            c.arg("-H").arg(format!("Authorization: Bearer {token}"));
        }
        None => {
            c.arg("--cert")
                .arg(srv.pki("admin.crt"))
                .arg("--key")
                .arg(srv.pki("admin.key"));
        }
    }
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

/// Sign `claims` with the server's own `sa.key`, as only the server should.
fn forge(srv: &ServeProcess, header: &Value, claims: &Value) -> String {
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    let pem = std::fs::read_to_string(srv.pki("sa.key")).expect("sa.key");
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = STANDARD.decode(b64).expect("sa.key base64");
    let rng = ring::rand::SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
        .expect("sa.key is an ECDSA P-256 PKCS#8 key");
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let sig = key.sign(&rng, input.as_bytes()).expect("sign");
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
}

#[test]
fn bearer_tokens_forgeries_and_token_review_over_curl() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let srv = ServeProcess::start(&[]);
    let sa_path = "/api/v1/namespaces/default/serviceaccounts/default";
    let (code, sa) = curl(&srv, None, "GET", sa_path, None);
    assert_eq!(code, 200, "{sa}");
    let uid = sa["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // TokenRequest over curl, as kubectl sends it.
    let (code, tr) = curl(
        &srv,
        None,
        "POST",
        &format!("{sa_path}/token"),
        Some(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}}),
        ),
    );
    assert_eq!(code, 201, "{tr}");
    assert_eq!(tr["kind"], "TokenRequest");
    assert_eq!(tr["spec"]["audiences"], json!([ISSUER]));
    let token = tr["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        tr["status"]["expirationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let (code, r) = curl(
        &srv,
        None,
        "POST",
        &format!("{sa_path}/token"),
        Some(&json!({"spec": {"expirationSeconds": 60}})),
    );
    assert_eq!(code, 422, "{r}");
    assert_eq!(
        r["message"],
        r#"TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"#
    );

    // The token as a bearer token: SelfSubjectReview shows the service account.
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let ssr = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let (code, who) = curl(&srv, Some(&token), "POST", ssr, Some(&review));
    assert_eq!(code, 201, "{who}");
    let user = &who["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:default");
    assert_eq!(user["uid"], uid.as_str());
    assert!(
        user["extra"]["authentication.kubernetes.io/credential-id"][0]
            .as_str()
            .is_some_and(|c| c.starts_with("JTI=")),
        "{who}"
    );

    // Forgeries and stale tokens are 401s.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let header = json!({"alg": "ES256"});
    let good = |iat: i64, exp: i64| {
        json!({"iss": ISSUER, "sub": "system:serviceaccount:default:default", "aud": [ISSUER],
               "iat": iat, "nbf": iat, "exp": exp,
               "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "default", "uid": uid}}})
    };
    // Signed by the server's key: accepted (the forge itself is sound)...
    let fresh = forge(&srv, &header, &good(now, now + 600));
    assert_eq!(curl(&srv, Some(&fresh), "POST", ssr, Some(&review)).0, 201);
    let parts: Vec<&str> = fresh.split('.').collect();
    let mut admin_claims = good(now, now + 600);
    admin_claims["sub"] = json!("system:serviceaccount:kube-system:default");
    admin_claims["kubernetes.io"]["namespace"] = json!("kube-system");
    let tampered = format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(admin_claims.to_string()),
        parts[2]
    );
    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
        parts[1]
    );
    let expired = forge(&srv, &header, &good(now - 7200, now - 3600));
    let not_yet = forge(&srv, &header, &good(now + 3600, now + 7200));
    let mut wrong_uid = good(now, now + 600);
    wrong_uid["kubernetes.io"]["serviceaccount"]["uid"] =
        json!("00000000-0000-0000-0000-000000000000");
    let wrong_uid = forge(&srv, &header, &wrong_uid);
    for (what, t) in [
        ("tampered", tampered.as_str()),
        ("alg none", alg_none.as_str()),
        ("expired", expired.as_str()),
        ("not yet valid", not_yet.as_str()),
        ("another uid", wrong_uid.as_str()),
        ("garbage", "a.b.c"),
    ] {
        let (code, r) = curl(&srv, Some(t), "POST", ssr, Some(&review));
        assert_eq!(
            (code, r["reason"].clone()),
            (401, json!("Unauthorized")),
            "{what}: {r}"
        );
    }

    // TokenReview: the verdict and the reason, as upstream words it.
    let tr_path = "/apis/authentication.k8s.io/v1/tokenreviews";
    let ask = |t: &str, auds: Option<Value>| {
        let mut spec = json!({"token": t});
        if let Some(a) = auds {
            spec["audiences"] = a;
        }
        curl(
            &srv,
            None,
            "POST",
            tr_path,
            Some(
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}),
            ),
        )
    };
    let (code, r) = ask(&token, None);
    assert_eq!(code, 201, "{r}");
    assert_eq!(r["status"]["authenticated"], true, "{r}");
    assert_eq!(
        r["status"]["user"]["username"],
        "system:serviceaccount:default:default"
    );
    assert_eq!(r["status"]["audiences"], json!([ISSUER]));
    let (_, r) = ask(&expired, None);
    assert_eq!(r["status"]["authenticated"], false, "{r}");
    assert_eq!(r["status"]["error"], "service account token has expired");
    let (_, r) = ask(&not_yet, None);
    assert_eq!(
        r["status"]["error"],
        "service account token is not valid yet"
    );
    let (_, r) = ask(&token, Some(json!(["vault"])));
    assert_eq!(r["status"]["authenticated"], false, "{r}");
    assert_eq!(
        r["status"]["error"],
        format!(r#"token audiences ["{ISSUER}"] is invalid for the target audiences ["vault"]"#)
    );
    let (_, vault) = curl(
        &srv,
        None,
        "POST",
        &format!("{sa_path}/token"),
        Some(&json!({"spec": {"audiences": ["vault"]}})),
    );
    let vault = vault["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let (_, r) = ask(&vault, Some(json!(["vault"])));
    assert_eq!(r["status"]["authenticated"], true, "{r}");
    assert_eq!(r["status"]["audiences"], json!(["vault"]));
    assert_eq!(curl(&srv, Some(&vault), "POST", ssr, Some(&review)).0, 401);
    // A token bound to a pod names it (and its node) and dies with it.
    let (code, pod) = curl(
        &srv,
        None,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "runner"},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
        ),
    );
    assert_eq!(code, 201, "{pod}");
    let pod_uid = pod["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let bound_to = |uid: &str| json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "runner", "uid": uid}}});
    let (code, r) = curl(
        &srv,
        None,
        "POST",
        &format!("{sa_path}/token"),
        Some(&bound_to("nope")),
    );
    assert_eq!(code, 409, "{r}");
    assert_eq!(
        r["message"],
        format!(
            "Operation cannot be fulfilled on Pod \"runner\": the UID in the bound object reference (nope) does not match the UID in record ({pod_uid}). The object might have been deleted and then recreated"
        )
    );
    let (code, r) = curl(
        &srv,
        None,
        "POST",
        &format!("{sa_path}/token"),
        Some(&bound_to(&pod_uid)),
    );
    assert_eq!(code, 201, "{r}");
    let bound = r["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        claims(&bound)["kubernetes.io"]["pod"],
        json!({"name": "runner", "uid": pod_uid})
    );
    let (code, who) = curl(&srv, Some(&bound), "POST", ssr, Some(&review));
    assert_eq!(code, 201, "{who}");
    assert_eq!(
        who["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["runner"])
    );
    let (code, _) = curl(
        &srv,
        None,
        "DELETE",
        "/api/v1/namespaces/default/pods/runner?gracePeriodSeconds=0",
        None,
    );
    assert_eq!(code, 200);
    assert_eq!(curl(&srv, Some(&bound), "POST", ssr, Some(&review)).0, 401);
    let (_, r) = ask(&bound, None);
    assert_eq!(r["status"]["error"], r#"pods "runner" not found"#, "{r}");

    let (code, r) = ask("", None);
    assert_eq!(
        (code, r["message"].clone()),
        (
            400,
            json!("token is required for TokenReview in authentication")
        )
    );
}

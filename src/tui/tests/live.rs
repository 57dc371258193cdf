//! View 3 against a real embedded API server on a loopback port: the ladder of a good
//! connection ends with the SelfSubjectReview identity; `sample-kubeconfigs/wrong-ca.yaml` and
//! `expired-client.yaml` stop at the server certificate (their CA is not the server's) with the
//! right explanation; a client certificate from the server's own CA that expired stops at the
//! first request with 401 and says it expired.

use std::path::{Path, PathBuf};

use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::transport::pki::{self, ClusterPki};
use crate::apiserver::transport::server::{self, Running, ServeOptions};
use crate::kubeconfig::{Kubeconfig, ResolvedContext};
use crate::pki::CredentialReport;
use crate::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};
use crate::tui::connection::ladder::{self, Rung};
use crate::tui::connection::probe;

pub struct Live {
    pub rt: tokio::runtime::Runtime,
    pub running: Option<Running>,
    pub url: String,
    pub pki: ClusterPki,
    pub dir: tempfile::TempDir,
}

impl Live {
    pub fn start() -> Live {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let pki = pki::mint().expect("pki");
        let running = rt
            .block_on(server::start(ServeOptions {
                listen: "127.0.0.1:0".parse().expect("addr"),
                pki: pki.clone(),
                tokens: TokenFile::default(),
                audit_log: None,
                demo: true,
                scenarios: vec![],
                control_loops: true,
                service_account_issuer: None,
                simulated_run: crate::apiserver::request::context::DEFAULT_SIMULATED_RUN,
                scheduler_profiles: None,
            }))
            .expect("server starts");
        let url = format!("https://{}", running.addr);
        Live {
            rt,
            running: Some(running),
            url,
            pki,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Writes `yaml` as a kubeconfig file and resolves its current context.
    pub fn context(&self, name: &str, yaml: &str) -> ResolvedContext {
        let path = self.dir.path().join(name);
        std::fs::write(&path, yaml).expect("write kubeconfig");
        Kubeconfig::load_file(&path)
            .expect("load")
            .resolve(None)
            .expect("resolve")
    }

    pub fn own_kubeconfig(&self) -> String {
        pki::kubeconfig_yaml(&self.pki, &self.url)
    }

    /// A sample kubeconfig pointed at this server instead of 127.0.0.1:6443.
    pub fn sample(&self, name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("sample-kubeconfigs")
            .join(name);
        std::fs::read_to_string(path)
            .expect("sample")
            .replace("https://127.0.0.1:6443", &self.url)
    }

    pub fn ladder(&self, ctx: &ResolvedContext) -> (Vec<Rung>, CredentialReport) {
        let report = self.rt.block_on(probe::probe(ctx, probe::Peer::ApiServer));
        let creds = crate::pki::inspect(ctx).expect("inspect");
        (ladder::build(&report, Some(&creds)), creds)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            self.rt.block_on(r.shutdown());
        }
    }
}

fn last(rungs: &[Rung]) -> &Rung {
    rungs.last().expect("at least one rung")
}

#[test]
fn a_good_connection_ends_with_the_identity_from_selfsubjectreview() {
    let live = Live::start();
    let ctx = live.context("own", &live.own_kubeconfig());
    let (rungs, _) = live.ladder(&ctx);
    let titles: Vec<&str> = rungs.iter().map(|r| r.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "TCP connect",
            "ClientHello",
            "ServerHello",
            "Certificate (server)",
            "CertificateRequest",
            "Certificate",
            "Finished",
            "GET /version",
            "GET /api",
            "POST …/selfsubjectreviews"
        ]
    );
    assert!(rungs.iter().all(|r| r.failure.is_none()), "{rungs:#?}");
    let end = last(&rungs);
    assert!(end.summary.contains("kexplore-admin"), "{}", end.summary);
    assert!(end.summary.contains("system:masters"), "{}", end.summary);
    let api = &rungs[8];
    assert!(
        api.details
            .iter()
            .any(|(_, v)| v.contains("\"kind\":\"APIVersions\"")),
        "{api:?}"
    );
    let cert = &rungs[3];
    assert!(
        cert.details
            .iter()
            .any(|(l, v)| l == "name" && v.contains("matches IP:127.0.0.1")),
        "{cert:?}"
    );
}

#[test]
fn wrong_ca_stops_at_the_server_certificate_as_an_unknown_authority() {
    let live = Live::start();
    let ctx = live.context("wrong-ca", &live.sample("wrong-ca.yaml"));
    let (rungs, _) = live.ladder(&ctx);
    let end = last(&rungs);
    assert_eq!(end.title, "Certificate (server)");
    let f = end.failure.as_ref().expect("a failure");
    assert!(f.why.contains("issued by CN=kexplore-ca"), "{}", f.why);
    assert!(f.why.contains("trusts only: CN=kubernetes"), "{}", f.why);
    assert!(f.fix.contains("certificate-authority-data"), "{}", f.fix);
    // What kubectl prints for the same kubeconfig (tests/kubectl_words.rs compares with it).
    assert_eq!(
        f.kubectl_says,
        [
            "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ]
    );
}

#[test]
fn expired_client_sample_stops_at_the_server_certificate_and_names_the_expiry() {
    let live = Live::start();
    let ctx = live.context("expired", &live.sample("expired-client.yaml"));
    let (rungs, _) = live.ladder(&ctx);
    let end = last(&rungs);
    assert_eq!(end.title, "Certificate (server)");
    let f = end.failure.as_ref().expect("a failure");
    assert!(f.why.contains("trusts only"), "{}", f.why);
    assert!(
        f.why.contains("client certificate") && f.why.contains("expired"),
        "the next problem is said too: {}",
        f.why
    );
}

#[test]
fn an_expired_certificate_from_the_servers_ca_gets_401_and_says_why() {
    let live = Live::start();
    let ca = Authority::from_pem(&live.pki.ca.cert_pem, &live.pki.ca.key_pem).expect("ca");
    let key = generate_key(KeyKind::EcdsaP256).expect("key");
    let day = 86_400;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let cert = ca
        .issue(
            &CertSpec::client(
                vec![
                    (Attr::O, "system:masters".into()),
                    (Attr::CN, "old-admin".into()),
                ],
                now - 400 * day,
                now - day,
            ),
            &key,
        )
        .expect("issue");
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
    let yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: old\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: old\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: old\n  context: {{cluster: c, user: old}}\n",
        live.url,
        b64(&live.pki.ca.cert_pem),
        b64(&cert.cert_pem),
        b64(&key.serialize_pem()),
    );
    let ctx = live.context("old", &yaml);
    let (rungs, _) = live.ladder(&ctx);
    let end = last(&rungs);
    assert_eq!(end.title, "GET /version", "{rungs:#?}");
    let f = end.failure.as_ref().expect("a failure");
    assert!(f.why.starts_with("401 Unauthorized"), "{}", f.why);
    assert!(f.why.contains("expired"), "{}", f.why);
    assert_eq!(
        f.kubectl_says,
        [
            "error: You must be logged in to the server (the server has asked for the client to provide credentials)",
            "error: You must be logged in to the server (Unauthorized)"
        ]
    );
    let client = rungs
        .iter()
        .find(|r| r.title == "Certificate")
        .expect("client rung");
    assert!(
        client
            .details
            .iter()
            .any(|(l, v)| l == "!" && v.contains("expired")),
        "{client:?}"
    );
}

/// Where the view-4 fixture lives.
pub fn journey_fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/tests/data/journey.json")
}

/// Regenerates `data/journey.json`: the seed's app.json sent through a real embedded server,
/// everything the run collected. Run with
/// `cargo test --lib tui::tests::live::regenerate_journey_fixture -- --ignored`.
#[test]
#[ignore]
fn regenerate_journey_fixture() {
    let live = Live::start();
    let ctx = live.context("own", &live.own_kubeconfig());
    let pod: serde_json::Value =
        serde_json::from_str(include_str!("../../../scenarios/app.json")).expect("app.json");
    let opts = crate::journey::run::RunOptions {
        write: crate::journey::run::WriteMode::ForReal,
        cleanup: false,
        replace_existing: false,
        timeout: std::time::Duration::from_secs(30),
    };
    let c = live
        .rt
        .block_on(crate::journey::run::run(&ctx, &pod, &opts, |_, _| {}));
    let text = serde_json::to_string_pretty(&super::journey_data::to_json(&c)).expect("json");
    std::fs::write(journey_fixture_path(), text + "\n").expect("write fixture");
}

/// View 5's listing as a restricted user of a real server: `jane` (group developers, pods in
/// `default` only) is told she may not list nodes; once a ClusterRole lets her, the cluster
/// loads with her namespace's pods and a note of the pods RBAC hid.
#[test]
fn view5_lists_what_rbac_allows_and_names_what_it_hid() {
    use crate::client::http::ApiClient;
    use crate::tui::sched::fetch;
    let live = Live::start();
    let own = live.own_kubeconfig();
    let admin = live.context("own", &own);
    let jane = live.context(
        "jane",
        &own.replace("current-context: kexplore-admin", "current-context: jane"),
    );
    let pod = super::stepped_fixtures::app_pod();
    let denied = live
        .rt
        .block_on(fetch::fetch(&jane, None, pod.clone()))
        .expect_err("jane may not list nodes");
    assert!(
        denied.contains("RBAC: this user may not list nodes"),
        "{denied}"
    );
    // The server's own words first, then what it means here.
    assert!(
        denied.starts_with("nodes is forbidden: User \"jane\" cannot list resource \"nodes\""),
        "{denied}"
    );
    live.rt.block_on(async {
        let client = ApiClient::connect(&admin).await.expect("admin connects");
        for (path, body) in [
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": "node-reader"},
                    "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["nodes"]}]}),
            ),
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": "developers-node-reader"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-reader"},
                    "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "developers"}]}),
            ),
        ] {
            let r = client
                .send(
                    reqwest::Method::POST,
                    path,
                    Some((serde_json::to_vec(&body).expect("json"), "application/json")),
                )
                .await
                .expect("POST");
            assert_eq!(r.status, 201, "{path}");
        }
    });
    let (live_cluster, seed) = live
        .rt
        .block_on(fetch::fetch(&jane, None, pod))
        .expect("nodes may be listed now");
    let (model, listing) = live_cluster
        .take_built()
        .expect("built where it was fetched");
    assert_eq!(model.map(|m| m.snapshot.num_nodes()).ok(), Some(4));
    // The watch continues her namespace's pods, the only pods she could list.
    assert_eq!(
        seed.watch_from.pods.as_ref().map(|(p, _)| p.as_str()),
        Some("/api/v1/namespaces/default/pods")
    );
    let l = &listing;
    assert!(
        l.hidden.iter().any(
            |h| h.starts_with("pods in all namespaces: pods is forbidden")
                && h.contains("only namespace \"default\" is listed")
        ),
        "{:?}",
        l.hidden
    );
    assert!(
        l.pods.iter().all(|p| p.key.starts_with("default/")),
        "only her namespace's pods: {:?}",
        l.pods
    );
}

/// View 5 kept current: after the list, pods created and deleted through the API reach the
/// view as coalesced updates (a new model and pods list), and dropping the feed stops the watch.
#[test]
fn view5_follows_the_cluster_by_watch() {
    use crate::client::http::ApiClient;
    use crate::tui::sched::{fetch, watch};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let live = Live::start();
    let admin = live.context("own", &live.own_kubeconfig());
    let pod = super::stepped_fixtures::app_pod();
    let (listed, seed) = live
        .rt
        .block_on(fetch::fetch(&admin, None, pod))
        .expect("the admin lists the cluster");
    let before = listed.take_built().map_or(0, |(_, l)| l.pods.len());
    let (feed, alive) = watch::Feed::new();
    let (tx, rx) = mpsc::channel();
    let id = feed.id;
    let task = live.rt.spawn(watch::follow(seed, id, alive, move |u| {
        let _ = tx.send(u);
    }));
    let client = live
        .rt
        .block_on(ApiClient::connect(&admin))
        .expect("client");
    let send = |method: reqwest::Method, path: &str, body: Option<serde_json::Value>| {
        live.rt
            .block_on(client.send(
                method,
                path,
                body.map(|b| (serde_json::to_vec(&b).expect("json"), "application/json")),
            ))
            .expect("request")
            .status
    };
    for i in 0..5 {
        let p = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("w{i}"), "namespace": "default"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "i"}]}});
        assert_eq!(
            send(
                reqwest::Method::POST,
                "/api/v1/namespaces/default/pods",
                Some(p)
            ),
            201
        );
    }
    assert_eq!(
        send(
            reqwest::Method::DELETE,
            "/api/v1/namespaces/default/pods/w0",
            None
        ),
        200
    );
    // Updates come until the view holds the four pods still there; each is taken, as the UI
    // does, or the publisher would send nothing more.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = None;
    while Instant::now() < deadline {
        let Ok(u) = rx.recv_timeout(Duration::from_millis(500)) else {
            continue;
        };
        assert_eq!(u.feed, id);
        if let Some((model, listing)) = u.take() {
            assert!(model.is_ok());
            let keys: Vec<&str> = listing.pods.iter().map(|p| p.key.as_str()).collect();
            if keys.iter().filter(|k| k.starts_with("default/w")).count() == 4
                && !keys.contains(&"default/w0")
            {
                seen = Some((listing.pods.len(), u.status.clone()));
                break;
            }
        }
    }
    let (now, status) = seen.expect("the watch delivered the new pods");
    assert_eq!(now, before + 4);
    assert_eq!(status.phase, watch::Phase::Watching);
    assert!(status.events >= 6, "{status:?}");
    assert!(status.resimulations >= 1);
    drop(feed);
    live.rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(5), task).await })
        .expect("the watch stops once the feed is dropped")
        .expect("task");
}

/// Choosing another pod in view 5's pods list: the watch places it on the cluster it keeps
/// (a Pending pod is held whole, a bound one fetched by one GET), and says why it cannot when
/// the pod is gone.
#[test]
fn view5_places_another_pod_on_the_watched_cluster() {
    use crate::tui::sched::{fetch, watch};
    use std::time::{Duration, Instant};
    let live = Live::start();
    let admin = live.context("own", &live.own_kubeconfig());
    let (listed, seed) = live
        .rt
        .block_on(fetch::fetch(
            &admin,
            None,
            super::stepped_fixtures::app_pod(),
        ))
        .expect("the admin lists the cluster");
    let (_, listing) = listed.take_built().expect("built");
    let bound = listing
        .pods
        .iter()
        .find(|p| p.node.is_some())
        .map(|p| (p.key.clone(), p.node.clone()))
        .expect("a bound pod in the demo cluster");
    let (feed, alive) = watch::Feed::new();
    let (tx, rx) = std::sync::mpsc::channel();
    live.rt.spawn(watch::follow(seed, feed.id, alive, move |u| {
        let _ = tx.send(u);
    }));
    // The model of the first update built for `key`, every update taken as the UI does.
    let placed = |key: &str| {
        feed.refocus(key);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let Ok(u) = rx.recv_timeout(Duration::from_millis(500)) else {
                continue;
            };
            if let Some((model, _)) = u.take()
                && u.focus.as_deref() == Some(key)
            {
                return model;
            }
        }
        panic!("no update for {key}");
    };
    let m = placed(&bound.0).expect("the bound pod placed");
    let (ns, name) = bound.0.split_once('/').expect("ns/name");
    assert_eq!(m.data.pod.metadata.namespace.as_deref(), Some(ns));
    assert_eq!(m.data.pod.metadata.name.as_deref(), Some(name));
    assert_eq!(
        m.data.pod.spec.as_ref().and_then(|s| s.node_name.clone()),
        None,
        "placed as the scheduler saw it, before its binding to {:?}",
        bound.1
    );
    let gone = placed("default/no-such-pod").expect_err("a pod that is not there");
    assert!(
        gone.contains("getting pod default/no-such-pod: HTTP 404") && gone.contains("not found"),
        "{gone}"
    );
}

/// A user who may list nodes but not watch them keeps the listed nodes, with a note saying
/// they are not kept current, while her pods are still watched.
#[test]
fn view5_names_a_watch_rbac_forbids_and_keeps_the_list() {
    use crate::client::http::ApiClient;
    use crate::tui::sched::{fetch, watch};
    use std::time::{Duration, Instant};
    let live = Live::start();
    let own = live.own_kubeconfig();
    let admin = live.context("own", &own);
    let jane = live.context(
        "jane",
        &own.replace("current-context: kexplore-admin", "current-context: jane"),
    );
    live.rt.block_on(async {
        let client = ApiClient::connect(&admin).await.expect("admin connects");
        for (path, body) in [
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": "node-lister"},
                    "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["nodes"]}]}),
            ),
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": "developers-node-lister"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-lister"},
                    "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "developers"}]}),
            ),
        ] {
            let r = client
                .send(
                    reqwest::Method::POST,
                    path,
                    Some((serde_json::to_vec(&body).expect("json"), "application/json")),
                )
                .await
                .expect("POST");
            assert_eq!(r.status, 201, "{path}");
        }
    });
    let (_, seed) = live
        .rt
        .block_on(fetch::fetch(
            &jane,
            None,
            super::stepped_fixtures::app_pod(),
        ))
        .expect("she may list nodes");
    let (feed, alive) = watch::Feed::new();
    let (tx, rx) = std::sync::mpsc::channel();
    live.rt.spawn(watch::follow(seed, feed.id, alive, move |u| {
        let _ = tx.send(u);
    }));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut noted = None;
    while Instant::now() < deadline && noted.is_none() {
        let Ok(u) = rx.recv_timeout(Duration::from_millis(500)) else {
            continue;
        };
        if let Some((model, listing)) = u.take()
            && let Some(n) = listing
                .hidden
                .iter()
                .find(|h| h.starts_with("watch nodes:"))
        {
            assert_eq!(
                model.expect("a model").snapshot.nodes.len(),
                4,
                "the list stays"
            );
            noted = Some((n.clone(), u.status.clone()));
        }
    }
    let (note, status) = noted.expect("a note of the forbidden watch");
    assert!(
        note.contains("forbidden") && note.contains("not kept current"),
        "{note}"
    );
    assert!(
        matches!(&status.phase, watch::Phase::Forbidden(m) if m.contains("cannot watch resource \"nodes\"")),
        "{status:?}"
    );
    drop(feed);
}

/// View 5 judges VolumeBinding on what it watches: a pod whose claim nothing has bound is
/// placed nowhere, in kube-scheduler's words, and once an administrator's volume is bound to
/// the claim the next update places it.
#[test]
fn view5_judges_a_pods_claim_and_follows_its_binding() {
    use crate::client::http::ApiClient;
    use crate::tui::sched::{fetch, watch};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let live = Live::start();
    let admin = live.context("own", &live.own_kubeconfig());
    let client = live
        .rt
        .block_on(ApiClient::connect(&admin))
        .expect("client");
    let post = |path: &str, body: serde_json::Value| {
        let r = live
            .rt
            .block_on(client.send(
                reqwest::Method::POST,
                path,
                Some((serde_json::to_vec(&body).expect("json"), "application/json")),
            ))
            .expect("request");
        assert_eq!(
            r.status,
            201,
            "{path}: {}",
            String::from_utf8_lossy(&r.body)
        );
    };
    post(
        "/api/v1/namespaces/default/persistentvolumeclaims",
        serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
            "spec": {"storageClassName": "", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    );
    post(
        "/api/v1/namespaces/default/pods",
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db"},
            "spec": {"containers": [{"name": "c", "image": "postgres"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}),
    );
    let pod = super::stepped_fixtures::app_pod();
    let (listed, seed) = live
        .rt
        .block_on(fetch::fetch(&admin, Some("default/db".into()), pod))
        .expect("the admin lists the cluster");
    let (model, _) = listed.take_built().expect("built");
    let model = model.expect("model");
    assert_eq!(model.trace.selected, None);
    let msg = model.trace.message.clone().unwrap_or_default();
    assert!(
        msg.contains("pod has unbound immediate PersistentVolumeClaims"),
        "{msg}"
    );
    let (feed, alive) = watch::Feed::new();
    let (tx, rx) = mpsc::channel();
    let task = live.rt.spawn(watch::follow(seed, feed.id, alive, move |u| {
        let _ = tx.send(u);
    }));
    post(
        "/api/v1/persistentvolumes",
        serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"}}}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut placed = None;
    while Instant::now() < deadline && placed.is_none() {
        let Ok(u) = rx.recv_timeout(Duration::from_millis(500)) else {
            continue;
        };
        if let Some((Ok(m), _)) = u.take() {
            placed = m.trace.selected.clone();
        }
    }
    assert!(placed.is_some(), "the bound claim never reached view 5");
    drop(feed);
    let _ = live
        .rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(5), task).await });
}

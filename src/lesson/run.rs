//! A lesson's session on a cluster: does each step's action through the server's API (as
//! kubectl would) and computes each reveal from what the server, the handshake and the
//! certificates actually say. Nothing here knows about the terminal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use std::collections::BTreeMap;

use super::{Action, Create, Credential, NamespaceLabels, Question, Reveal};
use crate::client::http::ApiClient;
use crate::journey::build::{Collected, build};
use crate::journey::run::{RunOptions, WriteMode};
use crate::journey::{Journey, Stage};
use crate::kubeconfig::{Kubeconfig, ResolvedContext};
use crate::pki::CredentialReport;
use crate::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key};

/// The seed's pod, for `create: {manifest: app.json}` from any directory.
const APP_JSON: &str = include_str!("../../scenarios/app.json");

/// The CA that signs the cluster's client certificates, so lessons can mint broken ones.
pub struct Signer {
    pub ca_cert_pem: String,
    pub ca_key_pem: crate::kubeconfig::secret::Secret<String>,
}

/// Everything a lesson has done and seen so far.
pub struct Session {
    /// The lesson file's directory: manifests are relative to it.
    base: PathBuf,
    /// A private directory for the kubeconfigs the lesson mints.
    scratch: PathBuf,
    server: String,
    signer: Signer,
    /// The cluster's own kubeconfig (the admin's context): actions go through it.
    admin: ResolvedContext,
    /// The credential questions are about (the admin's, or a broken one a step swapped in).
    pub user: ResolvedContext,
    /// The last pod a step created, followed to its node.
    pub journey: Option<Journey>,
    /// The workloads steps created, by name, in order: where their pods run.
    pub workloads: Vec<Workload>,
}

/// A workload a step created, and where its pods run once the run settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub kind: String,
    pub name: String,
    /// The profile its pods asked for (`spec.template.spec.schedulerName`).
    pub scheduler: String,
    /// Pods per node; unbound pods under `None`.
    pub per_node: BTreeMap<Option<String>, usize>,
}

impl Workload {
    /// `node-1 ×2, node-2 ×4` (and `Pending ×1`).
    pub fn placement(&self) -> String {
        self.per_node
            .iter()
            .map(|(n, c)| format!("{} ×{c}", n.as_deref().unwrap_or("Pending")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn nodes_used(&self) -> usize {
        self.per_node.keys().filter(|n| n.is_some()).count()
    }
}

/// A computed answer: the words to compare with a choice, and the lines that explain it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Comparable values (one, or a set for `feasible`).
    pub values: Vec<String>,
    pub lines: Vec<String>,
}

impl Answer {
    /// Whether a choice's text names this answer (a comma-separated set for a set).
    pub fn matches(&self, choice: &str) -> bool {
        let mut c: Vec<String> = choice
            .split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty() && s != "none")
            .collect();
        let mut v: Vec<String> = self.values.iter().map(|s| s.to_lowercase()).collect();
        c.sort();
        v.sort();
        c == v
    }
}

fn resolve(path: &Path) -> Result<ResolvedContext, String> {
    Kubeconfig::load_file(path)
        .and_then(|k| k.resolve(None))
        .map_err(|e| e.to_string())
}

impl Session {
    pub fn new(
        base: &Path,
        kubeconfig: &Path,
        signer: Signer,
        scratch: PathBuf,
    ) -> Result<Session, String> {
        let admin = resolve(kubeconfig)?;
        Ok(Session {
            base: base.to_path_buf(),
            scratch,
            server: admin.cluster.server.clone(),
            signer,
            user: admin.clone(),
            admin,
            journey: None,
            workloads: Vec::new(),
        })
    }

    /// The cluster's node names, as the server lists them.
    pub async fn nodes(&self) -> Vec<String> {
        let Ok(api) = ApiClient::connect(&self.admin).await else {
            return Vec::new();
        };
        let Ok(r) = api.get("/api/v1/nodes").await else {
            return Vec::new();
        };
        let mut names: Vec<String> = r
            .json()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|n| {
                n.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .collect();
        names.sort();
        names
    }

    /// Does a step's action; returns the line that says what was done.
    pub async fn act(&mut self, action: &Action) -> Result<String, String> {
        match action {
            Action::Create(c) => self.create(c).await,
            Action::Delete(p) => {
                let (ns, name) = p.split_once('/').unwrap_or(("default", p));
                self.send(
                    Method::DELETE,
                    &format!("/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0"),
                    None,
                )
                .await?;
                Ok(format!("deleted pod {ns}/{name}"))
            }
            Action::Cordon(n) | Action::Uncordon(n) => {
                let on = matches!(action, Action::Cordon(_));
                self.patch_node(
                    n,
                    json!({"spec": {"unschedulable": if on { json!(true) } else { Value::Null }}}),
                )
                .await?;
                Ok(format!(
                    "{} node {n}",
                    if on { "cordoned" } else { "uncordoned" }
                ))
            }
            Action::Taint(t) => {
                let mut taints = self.taints(&t.node).await?;
                taints.retain(|x| x["key"] != json!(t.key));
                let mut taint = json!({"key": t.key, "effect": t.effect.as_str()});
                if let Some(v) = &t.value {
                    taint["value"] = json!(v);
                }
                taints.push(taint);
                self.patch_node(&t.node, json!({"spec": {"taints": taints}}))
                    .await?;
                let v = t
                    .value
                    .as_deref()
                    .map(|v| format!("={v}"))
                    .unwrap_or_default();
                Ok(format!(
                    "tainted node {} with {}{v}:{}",
                    t.node,
                    t.key,
                    t.effect.as_str()
                ))
            }
            Action::Untaint(k) => {
                let mut taints = self.taints(&k.node).await?;
                taints.retain(|x| x["key"] != json!(k.key));
                self.patch_node(&k.node, json!({"spec": {"taints": taints}}))
                    .await?;
                Ok(format!("removed the taint {} from node {}", k.key, k.node))
            }
            Action::Label(l) => {
                self.patch_node(&l.node, json!({"metadata": {"labels": {&l.key: &l.value}}}))
                    .await?;
                Ok(format!("labelled node {} {}={}", l.node, l.key, l.value))
            }
            Action::Unlabel(k) => {
                self.patch_node(&k.node, json!({"metadata": {"labels": {&k.key: null}}}))
                    .await?;
                Ok(format!("removed the label {} from node {}", k.key, k.node))
            }
            Action::Namespace(n) => self.namespace(n).await,
            Action::Kubeconfig(c) => self.credential(*c),
        }
    }

    /// Creates the namespace with its labels, or sets them when it exists.
    async fn namespace(&self, n: &NamespaceLabels) -> Result<String, String> {
        let path = format!("/api/v1/namespaces/{}", n.name);
        let exists = self.send(Method::GET, &path, None).await.is_ok();
        let (method, path, body, ctype) = if exists {
            (
                Method::PATCH,
                path,
                json!({"metadata": {"labels": n.labels}}),
                "application/merge-patch+json",
            )
        } else {
            (
                Method::POST,
                "/api/v1/namespaces".to_string(),
                json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": n.name, "labels": n.labels}}),
                "application/json",
            )
        };
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        self.send(method, &path, Some((body, ctype))).await?;
        let labels: Vec<String> = n.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Ok(format!(
            "{} namespace {} {}",
            if exists { "labelled" } else { "created" },
            n.name,
            labels.join(" ")
        ))
    }

    async fn send(
        &self,
        m: Method,
        path: &str,
        body: Option<(Vec<u8>, &str)>,
    ) -> Result<Value, String> {
        let api = ApiClient::connect(&self.admin)
            .await
            .map_err(|e| e.to_string())?;
        let r = api.send(m, path, body).await.map_err(|e| e.to_string())?;
        let v = r.json().unwrap_or(Value::Null);
        if r.status >= 400 {
            return Err(format!(
                "{} {path}: {}",
                r.status,
                v["message"].as_str().unwrap_or("failed")
            ));
        }
        Ok(v)
    }

    async fn taints(&self, node: &str) -> Result<Vec<Value>, String> {
        let n = self
            .send(Method::GET, &format!("/api/v1/nodes/{node}"), None)
            .await?;
        Ok(n.pointer("/spec/taints")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    async fn patch_node(&self, node: &str, patch: Value) -> Result<(), String> {
        let body = serde_json::to_vec(&patch).map_err(|e| e.to_string())?;
        self.send(
            Method::PATCH,
            &format!("/api/v1/nodes/{node}"),
            Some((body, "application/merge-patch+json")),
        )
        .await
        .map(|_| ())
    }

    fn manifest(&self, c: &Create) -> Result<Value, String> {
        let path = self.base.join(&c.manifest);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(_) if c.manifest == "app.json" => APP_JSON.to_string(),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut pod: Value =
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(n) = &c.name {
            pod["metadata"]["name"] = json!(n);
        }
        for (res, q) in [("cpu", &c.cpu), ("memory", &c.memory)] {
            if let Some(q) = q {
                let Some(container) = pod.pointer_mut("/spec/containers/0") else {
                    return Err(format!("{}: the pod has no container", path.display()));
                };
                container["resources"]["requests"][res] = json!(q);
            }
        }
        Ok(pod)
    }

    fn nodes_used(&self, name: &str) -> Answer {
        let Some(w) = self.workloads.iter().rev().find(|w| w.name == name) else {
            return none(&format!("no step created a workload named {name}"));
        };
        let n = w.nodes_used();
        Answer {
            values: vec![n.to_string()],
            lines: vec![
                format!(
                    "{} {} ({}): its pods run on {n} node(s)",
                    w.kind, w.name, w.scheduler
                ),
                w.placement(),
            ],
        }
    }

    /// Creates a workload and follows it until its pods run (or the time is up), then reads
    /// where its pods were bound.
    async fn create_workload(&mut self, manifest: Value, file: &str) -> Result<String, String> {
        let opts = RunOptions {
            write: WriteMode::ForReal,
            cleanup: false,
            replace_existing: true,
            timeout: Duration::from_secs(30),
        };
        let w = crate::journey::workload::run(&self.admin, &manifest, &opts, |_, _| {}).await;
        if let Some(e) = w.request.handshake.as_ref().and_then(|h| h.as_ref().err()) {
            return Err(e.clone());
        }
        let (ns, name) = w.name.split_once('/').unwrap_or(("default", &w.name));
        let labels = manifest
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        let pods = self
            .send(
                Method::GET,
                &format!(
                    "/api/v1/namespaces/{ns}/pods?labelSelector={}",
                    crate::client::cluster::percent_encode(&labels)
                ),
                None,
            )
            .await?;
        let mut per_node: BTreeMap<Option<String>, usize> = BTreeMap::new();
        for p in pods["items"].as_array().into_iter().flatten() {
            if p.pointer("/metadata/deletionTimestamp").is_some() {
                continue;
            }
            let node = p
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(String::from);
            *per_node.entry(node).or_default() += 1;
        }
        let workload = Workload {
            kind: w.kind.clone(),
            name: name.to_string(),
            scheduler: manifest
                .pointer("/spec/template/spec/schedulerName")
                .and_then(Value::as_str)
                .unwrap_or(crate::scheduler::DEFAULT_SCHEDULER)
                .to_string(),
            per_node,
        };
        let line = format!(
            "created {} {} from {file}: {} pod(s){}",
            workload.kind,
            workload.name,
            workload.per_node.values().sum::<usize>(),
            if w.timed_out {
                " (not all running after 30 s)"
            } else {
                ""
            }
        );
        self.workloads.retain(|x| x.name != workload.name);
        self.workloads.push(workload);
        Ok(line)
    }

    async fn create(&mut self, c: &Create) -> Result<String, String> {
        let pod = self.manifest(c)?;
        if crate::journey::workload::kind_of(&pod).is_some() {
            return self.create_workload(pod, &c.manifest).await;
        }
        let opts = RunOptions {
            write: WriteMode::ForReal,
            cleanup: false,
            replace_existing: true,
            timeout: Duration::from_secs(8),
        };
        let collected: Collected =
            crate::journey::run::run(&self.admin, &pod, &opts, |_, _| {}).await;
        let j = build(&collected);
        // Neutral: whether the server created it may be the step's question.
        let line = format!("sent pod {} ({}) to the API server", j.pod, c.source());
        self.journey = Some(j);
        Ok(line)
    }

    /// Swaps in a kubeconfig whose client certificate has exactly one flaw.
    fn credential(&mut self, c: Credential) -> Result<String, String> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let ours = Authority::from_pem(&self.signer.ca_cert_pem, &self.signer.ca_key_pem)
            .map_err(|e| e.to_string())?;
        let subject = vec![(Attr::O, "developers".into()), (Attr::CN, "jane".into())];
        let mut spec = CertSpec::client(subject, now - 3600, now + 86400);
        let key = generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?;
        let (minted, what) = match c {
            Credential::ExpiredClient => {
                spec.not_before = now - 3 * 86400;
                spec.not_after = now - 86400;
                (
                    ours.issue(&spec, &key),
                    "jane's certificate expired yesterday",
                )
            }
            Credential::ForeignCa => {
                let ca_spec = CertSpec::ca(
                    vec![(Attr::CN, "some-other-cluster-ca".into())],
                    now - 3600,
                    now + 86400,
                );
                let ca_key = generate_key(KeyKind::EcdsaP256).map_err(|e| e.to_string())?;
                let foreign =
                    Authority::self_signed(&ca_spec, ca_key).map_err(|e| e.to_string())?;
                (
                    foreign.issue(&spec, &key),
                    "jane's certificate is signed by another cluster's CA",
                )
            }
            Credential::NoClientAuth => {
                spec.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
                (
                    ours.issue(&spec, &key),
                    "jane's certificate is for servers only (no clientAuth)",
                )
            }
            Credential::Valid => {
                self.user = self.admin.clone();
                return Ok("back to the cluster's own kubeconfig".into());
            }
        };
        let m = minted.map_err(|e| e.to_string())?;
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
        let yaml = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kexplore\n  cluster:\n    server: {}\n    certificate-authority-data: {}\ncontexts:\n- name: jane\n  context:\n    cluster: kexplore\n    user: jane\ncurrent-context: jane\nusers:\n- name: jane\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
            self.server,
            b64(&self.signer.ca_cert_pem),
            b64(&m.cert_pem),
            b64(m.key_pem.expose()),
        );
        let path = self
            .scratch
            .join(format!("{c:?}.kubeconfig").to_lowercase());
        crate::apiserver::transport::pki::write_atomic_private(&path, &yaml)?;
        self.user = resolve(&path)?;
        Ok(format!("swapped in a kubeconfig: {what}"))
    }

    /// The certificate report of the credential in use.
    pub fn report(&self) -> Option<CredentialReport> {
        crate::pki::inspect(&self.user).ok()
    }

    /// Computes a question's answer from the cluster, the handshake or the certificates.
    pub async fn answer(&self, q: &Question) -> Answer {
        match q.reveal {
            Reveal::NodesUsed => self.nodes_used(q.of.as_deref().unwrap_or_default()),
            Reveal::Identity => {
                let id = self.report().and_then(|r| r.user.identity);
                match id {
                    Some(i) => Answer {
                        values: vec![i.user.clone()],
                        lines: vec![format!("user {} · groups {}", i.user, i.groups.join(", "))],
                    },
                    None => none("the credential carries no certificate identity"),
                }
            }
            Reveal::Signer => signer(self.report()),
            Reveal::Handshake => self.handshake().await,
            Reveal::Feasible => self.feasible(),
            Reveal::Winner => self.winner(),
            Reveal::Phase => self.phase(),
            Reveal::Admission => self.admission(),
        }
    }

    /// Whether the last pod got in: the plugin or the validation that refused it, or what
    /// the validating plugins said (a warning among them).
    fn admission(&self) -> Answer {
        let Some(a) = self.stage(Stage::Admission) else {
            return none("no pod was created");
        };
        let plugins = a["plugins"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(p) = plugins.iter().find(|p| p["result"] == "rejected") {
            return Answer {
                values: vec!["refused".into()],
                lines: vec![
                    format!("refused by the {} admission plugin:", s(&p["plugin"])),
                    s(&p["message"]),
                ],
            };
        }
        let causes = self
            .stage(Stage::Validation)
            .and_then(|v| v["causes"].as_array())
            .filter(|c| !c.is_empty());
        if let Some(causes) = causes {
            let mut lines = vec!["refused by validation (422 Invalid):".to_string()];
            lines.extend(
                causes
                    .iter()
                    .map(|c| format!("{}: {}", s(&c["field"]), s(&c["message"]))),
            );
            return Answer {
                values: vec!["refused".into()],
                lines,
            };
        }
        let mut lines = vec!["admitted: every admission plugin let it in".to_string()];
        lines.extend(
            plugins
                .iter()
                .filter(|p| p["phase"] == "validating" && p["message"].is_string())
                .map(|p| format!("{}: {}", s(&p["plugin"]), s(&p["message"]))),
        );
        Answer {
            values: vec!["admitted".into()],
            lines,
        }
    }

    async fn handshake(&self) -> Answer {
        let hs = crate::client::handshake(&self.user).await;
        let mut lines = Vec::new();
        let tls_ok = match &hs {
            Ok(r) if r.succeeded() => {
                lines.push(format!(
                    "✓ TLS handshake completed: {} {}",
                    r.tls_version.as_deref().unwrap_or("?"),
                    r.cipher_suite.as_deref().unwrap_or("")
                ));
                true
            }
            Ok(r) => {
                if let Some(f) = &r.failure {
                    lines.push(format!(
                        "✗ handshake failed at {}: {}",
                        f.step.label(),
                        f.message
                    ));
                    lines.push(format!("fix: {}", f.fix));
                }
                false
            }
            Err(e) => {
                lines.push(format!("✗ {e}"));
                false
            }
        };
        let mut accepted = tls_ok;
        if tls_ok {
            // The TLS layer lets an unverified client certificate through; the authenticator
            // then refuses it, as kube-apiserver does (401).
            match ApiClient::connect(&self.user).await {
                Ok(api) => match api.get("/api").await {
                    Ok(r) if r.status < 400 => lines.push(format!(
                        "✓ GET /api: {} — the server knows who you are",
                        r.status
                    )),
                    Ok(r) => {
                        accepted = false;
                        let msg = r
                            .json()
                            .and_then(|v| v["message"].as_str().map(String::from))
                            .unwrap_or_default();
                        lines.push(format!("✗ GET /api: {} {msg}", r.status));
                    }
                    Err(e) => {
                        accepted = false;
                        lines.push(format!("✗ GET /api: {e}"));
                    }
                },
                Err(e) => {
                    accepted = false;
                    lines.push(format!("✗ {e}"));
                }
            }
        }
        Answer {
            values: vec![if accepted { "passes" } else { "fails" }.into()],
            lines,
        }
    }

    fn stage(&self, s: Stage) -> Option<&Value> {
        self.journey
            .as_ref()?
            .stages
            .iter()
            .find(|x| x.stage == s)
            .map(|x| &x.detail)
    }

    fn feasible(&self) -> Answer {
        let Some(d) = self.stage(Stage::Filter) else {
            return none("no pod was scheduled");
        };
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for f in d["filter"].as_array().into_iter().flatten() {
            let node = f["node"].as_str().unwrap_or("?");
            if f["passed"] == json!(true) {
                values.push(node.to_string());
                lines.push(format!("✓ {node} passes"));
            } else {
                lines.push(format!(
                    "✗ {node}: {} {}",
                    s(&f["plugin"]),
                    reasons(&f["reasons"])
                ));
            }
        }
        if values.is_empty() {
            lines.push("no node passes: the pod stays Pending".into());
        }
        Answer { values, lines }
    }

    fn winner(&self) -> Answer {
        let Some(d) = self.stage(Stage::Score) else {
            return none("no pod was scheduled");
        };
        let selected = d["selected"].as_str().unwrap_or_default().to_string();
        let mut lines: Vec<String> = Vec::new();
        for n in d["score"].as_array().into_iter().flatten() {
            let node = n["node"].as_str().unwrap_or("?");
            let mark = if node == selected { "★ winner" } else { "" };
            lines.push(format!("{node:<14} {:>5} {mark}", s(&n["total"])));
        }
        // One feasible node is chosen without scoring: it is still the winner, and named.
        if !selected.is_empty() && !lines.iter().any(|l| l.contains("★ winner")) {
            lines.push(format!(
                "{selected:<14}     - ★ winner: {}",
                d["tie_break"].as_str().unwrap_or("chosen without scoring")
            ));
        }
        // Every node is named: those that did not pass the filter scored nothing.
        if let Some(f) = self.stage(Stage::Filter) {
            for x in f["filter"].as_array().into_iter().flatten() {
                if x["passed"] != json!(true) {
                    lines.push(format!(
                        "{:<14}     - filtered out ({})",
                        s(&x["node"]),
                        s(&x["plugin"])
                    ));
                }
            }
        }
        if selected.is_empty() {
            return Answer {
                values: Vec::new(),
                lines,
            };
        }
        Answer {
            values: vec![selected],
            lines,
        }
    }

    fn phase(&self) -> Answer {
        let Some(k) = self.stage(Stage::Kubelet) else {
            return none("no pod was created");
        };
        let phase = k["phase"].as_str().unwrap_or("Pending").to_string();
        let mut lines = vec![format!("phase {phase}")];
        if let Some(b) = self.stage(Stage::Binding).and_then(|b| b["node"].as_str()) {
            lines.push(format!("bound to {b}"));
        }
        if let Some(m) = self
            .stage(Stage::Filter)
            .and_then(|f| f["message"].as_str())
        {
            lines.push(m.to_string());
        }
        Answer {
            values: vec![phase],
            lines,
        }
    }
}

fn none(why: &str) -> Answer {
    Answer {
        values: Vec::new(),
        lines: vec![why.to_string()],
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn reasons(v: &Value) -> String {
    match v.as_array() {
        Some(a) => a.iter().map(s).collect::<Vec<_>>().join("; "),
        None => s(v),
    }
}

/// Which CA signed the client certificate: the issuance edge whose signature verified.
fn signer(report: Option<CredentialReport>) -> Answer {
    let Some(r) = report else {
        return none("the credential could not be read");
    };
    let Some(leaf) = r.user.client_certificate.first() else {
        return none("the credential has no client certificate");
    };
    match r.client_signer() {
        Some(ca) => {
            let cn = ca.name().to_string();
            Answer {
                values: vec![cn.clone()],
                lines: vec![
                    format!("✓ signed by {cn}: its signature verifies with that CA's public key"),
                    format!("issuer field: {}", leaf.issuer),
                ],
            }
        }
        None => Answer {
            values: vec!["none of these".into()],
            lines: vec![
                "✗ no CA in this kubeconfig verifies the signature".into(),
                format!("issuer field says: {} (a name, not a proof)", leaf.issuer),
            ],
        },
    }
}

//! Sends one pod through an API server and follows it, handing every new fact to a progress
//! callback as it arrives; `kexplore journey` and view 4 both run this. A dry run (`dryRun=All`)
//! still passes authentication, authorization, admission and validation on the real server and
//! returns the object it would store; nothing is written, so the scheduler's part is simulated
//! on the live nodes and pods instead of watched.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use reqwest::Method;
use serde_json::{Value, json};

use super::build::{Collected, unschedulable_condition};
use crate::apiserver::admission::changes::field_changes;
use crate::client::HandshakeReport;
use crate::client::cluster::status_message;
use crate::client::http::ApiClient;
use crate::client::kubectl_words;
use crate::client::snapshot::{LiveCluster, fetch_live};
use crate::kubeconfig::ResolvedContext;
use crate::scheduler::trace::PodTrace;
use crate::scheduler::{Scheduler, why, world};

/// Whether the create is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// `?dryRun=All`: every check, no write. The default against any server but a sandbox.
    DryRun,
    /// A real create, followed through the scheduler and the kubelet.
    ForReal,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub write: WriteMode,
    /// Delete the pod at the end (a real create only).
    pub cleanup: bool,
    /// Delete a pod of the same name first (the embedded sandbox, where a workshop re-runs).
    pub replace_existing: bool,
    /// How long to follow the pod before giving up on it running.
    pub timeout: Duration,
}

const POLL: Duration = Duration::from_millis(150);

/// The namespace the pod goes to: its own, else the context's, else default.
pub fn namespace_of(pod: &Value, ctx_namespace: &str) -> String {
    pod.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or(if ctx_namespace.is_empty() {
            "default"
        } else {
            ctx_namespace
        })
        .to_string()
}

fn handshake_detail(r: &HandshakeReport) -> Result<Value, String> {
    if let Some(f) = &r.failure {
        return Err(format!(
            "{} at {}: {} (fix: {})",
            f.cause,
            f.step.label(),
            f.message,
            f.fix
        ));
    }
    Ok(json!({
        "peer": r.peer_address,
        "tls_version": r.tls_version,
        "cipher_suite": r.cipher_suite,
        "key_exchange_group": r.key_exchange_group,
        "alpn": r.alpn,
        "server_chain_length": r.record.server_chain.len(),
        "server_verified": r.record.server_verified.as_ref().map(|v| v.is_ok()),
        "client_certificate_requested": r.record.client_certificate_requested,
        "client_certificate_sent": r.record.client_certificate_sent,
        "handshake_ms": r.handshake_time.map(|d| d.as_secs_f64() * 1000.0),
    }))
}

/// Runs the journey; `report(collected, done)` is called after every change and once at the
/// end with `done` true. Returns what was collected.
pub async fn run(
    ctx: &ResolvedContext,
    pod: &Value,
    opts: &RunOptions,
    report: impl Fn(&Collected, bool),
) -> Collected {
    let mut c = Collected {
        pod: String::new(),
        server: ctx.cluster.server.clone(),
        dry_run: opts.write == WriteMode::DryRun,
        ..Default::default()
    };
    steps(ctx, pod, opts, &mut c, &report).await;
    c.finished = true;
    report(&c, true);
    c
}

async fn steps(
    ctx: &ResolvedContext,
    pod: &Value,
    opts: &RunOptions,
    c: &mut Collected,
    report: &impl Fn(&Collected, bool),
) {
    let ns = namespace_of(pod, &ctx.namespace);
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    c.pod = format!("{ns}/{name}");
    let Some(client) = connect(ctx, c, report).await else {
        return;
    };
    let path = format!("/api/v1/namespaces/{ns}/pods");
    if opts.replace_existing && opts.write == WriteMode::ForReal {
        let _ = client
            .send(
                Method::DELETE,
                &format!("{path}/{name}?gracePeriodSeconds=0"),
                None,
            )
            .await;
    }
    // A server that does not report its scheduler leaves only the simulation to show filter
    // and score; it must see the cluster as the real scheduler did, so list it before the pod
    // exists (and before the scheduler places it).
    let before = if opts.write == WriteMode::ForReal {
        Some(
            fetch_live(&client, &ns)
                .await
                .map_err(|e| format!("cannot list the cluster: {e}")),
        )
    } else {
        None
    };
    let created = post(&client, pod, &path, c).await;
    report(c, false);
    let Some(created) = created else { return };
    if c.dry_run {
        let live = fetch_live(&client, &ns)
            .await
            .map_err(|e| format!("cannot list the cluster: {e}"));
        c.simulation = Some(simulate(&live, &created).0);
        return;
    }
    follow(
        &client,
        &path,
        &ns,
        &name,
        &created,
        opts.timeout,
        c,
        report,
    )
    .await;
    if let Some(live) = before.filter(|_| !scheduling_reported(c)) {
        let (sim, trace) = simulate(&live, &created);
        c.simulation = Some(sim);
        c.comparison = trace
            .zip(bound_pod(c.final_pod.as_ref()))
            .map(|(t, b)| json!(why::compare(&t, &b, SEED)));
        report(c, false);
    }
    if opts.cleanup {
        let r = client
            .send(Method::DELETE, &format!("{path}/{name}"), None)
            .await;
        c.cleanup = Some(match r {
            Ok(r) => json!({"code": r.status, "deleted": (200..300).contains(&r.status)}),
            Err(e) => json!({"error": e.to_string()}),
        });
    }
}

/// The handshake (its facts into `c`), then a client for the requests; None when either fails.
pub(super) async fn connect(
    ctx: &ResolvedContext,
    c: &mut Collected,
    report: &impl Fn(&Collected, bool),
) -> Option<ApiClient> {
    let hs = crate::client::handshake(ctx).await;
    c.handshake = Some(match &hs {
        Ok(r) => handshake_detail(r),
        Err(e) => Err(e.to_string()),
    });
    if let Some(f) = hs.as_ref().ok().and_then(|r| r.failure.as_ref()) {
        c.kubectl_says = f.kubectl_says.clone();
    }
    report(c, false);
    if !hs.as_ref().is_ok_and(|r| r.succeeded()) {
        return None;
    }
    match ApiClient::connect(ctx).await {
        Ok(client) => Some(client),
        Err(e) => {
            c.create = Some((0, json!({"message": e.to_string()})));
            None
        }
    }
}

/// POSTs `manifest` to the collection at `path` (a dry run when `c.dry_run`), with our own
/// Audit-ID so an embedded server hands back that request's trace, failed or not. Returns the
/// object the server answered with when it accepted it.
pub(super) async fn post(
    client: &ApiClient,
    manifest: &Value,
    path: &str,
    c: &mut Collected,
) -> Option<Value> {
    let body = serde_json::to_vec(manifest).unwrap_or_default();
    let dry = if c.dry_run { "&dryRun=All" } else { "" };
    let audit_id = crate::apiserver::util::uuid();
    let created = match client
        .send_with_headers(
            Method::POST,
            &format!("{path}?fieldManager=kexplore-journey{dry}"),
            Some((body, "application/json")),
            &[("Audit-ID", &audit_id)],
        )
        .await
    {
        Ok(r) => {
            let v = r.json().unwrap_or(Value::Null);
            if r.status == 401 {
                c.kubectl_says = kubectl_words::unauthorized(&status_message(&r.body));
            }
            c.create = Some((r.status, v.clone()));
            (200..300).contains(&r.status).then_some(v)
        }
        Err(e) => {
            c.create = Some((0, json!({"message": e.to_string()})));
            None
        }
    };
    // Only kexplore's embedded server answers these; anywhere else the internals stay inferred.
    if let Ok(r) = client
        .get(&format!("/debug/kexplore/requests/{audit_id}"))
        .await
        && r.status == 200
    {
        c.server_trace = Some(json!({"create": r.json().unwrap_or(Value::Null)}));
    }
    let created = created?;
    c.admission_changes = changed_fields(manifest, &created);
    c.admission_diff = field_changes(manifest, &created, &c.admission_changes)
        .into_iter()
        .map(|f| json!({"path": f.path, "old": f.old, "new": f.new}))
        .collect();
    Some(created)
}

/// Polls the pod (and an embedded server's trace) until it runs or the time is up, then reads
/// the watch a controller had open since the create and the pod's events.
#[allow(clippy::too_many_arguments)]
pub(super) async fn follow(
    client: &ApiClient,
    path: &str,
    ns: &str,
    name: &str,
    created: &Value,
    timeout: Duration,
    c: &mut Collected,
    report: &impl Fn(&Collected, bool),
) {
    let deadline = Instant::now() + timeout;
    let mut last = String::new();
    loop {
        if let Ok(r) = client.get(&format!("{path}/{name}")).await {
            c.final_pod = r.json();
        }
        if let Ok(r) = client
            .get(&format!("/debug/kexplore/pods/{ns}/{name}"))
            .await
            && r.status == 200
            && let Some(t) = r.json()
        {
            let trace = c.server_trace.get_or_insert_with(|| json!({}));
            trace["controlLoops"] = t["controlLoops"].clone();
            if trace.get("create").is_none_or(Value::is_null) {
                trace["create"] = t["create"].clone();
            }
        }
        let phase = c
            .final_pod
            .as_ref()
            .and_then(|p| p.pointer("/status/phase"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let fingerprint = format!("{phase}{:?}", c.server_trace);
        if fingerprint != last {
            last = fingerprint;
            report(c, false);
        }
        if matches!(phase.as_str(), "Running" | "Failed" | "Succeeded")
            || verdict_unschedulable(c)
            || Instant::now() > deadline
        {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let rv = created
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let watch = format!(
        "{path}?watch=true&fieldSelector=metadata.name%3D{name}&resourceVersion={rv}&timeoutSeconds=1"
    );
    if let Ok(r) = client.get(&watch).await {
        c.watch_events = String::from_utf8_lossy(&r.body)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
    }
    let uid = created
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Ok(r) = client
        .get(&format!(
            "/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name},involvedObject.uid%3D{uid}"
        ))
        .await
    {
        c.events = r
            .json()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default();
    }
}

/// Whether the scheduler has said the pod fits no node and is waiting for nothing: PodScheduled
/// False with reason Unschedulable (written after its FailedScheduling event), no node
/// nominated by preemption (whose victims' exit would let it in), and, from a server that
/// traces, its record of the cycle. Nothing then changes until the cluster does.
fn verdict_unschedulable(c: &Collected) -> bool {
    let Some(pod) = c.final_pod.as_ref() else {
        return false;
    };
    let unschedulable = unschedulable_condition(pod).is_some();
    let nominated = pod
        .pointer("/status/nominatedNodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    unschedulable && !nominated && (c.server_trace.is_none() || scheduling_reported(c))
}

/// The seed of the simulation's tie-break (kube-scheduler draws at random among tied nodes).
const SEED: u64 = 0;

/// Whether the server's own trace told where and why the scheduler placed the pod.
fn scheduling_reported(c: &Collected) -> bool {
    c.server_trace
        .as_ref()
        .is_some_and(|t| t["controlLoops"]["scheduling"].is_object())
}

/// The pod as bound, for comparing with the simulation; None while it has no node.
fn bound_pod(pod: Option<&Value>) -> Option<why::BoundPod> {
    why::BoundPod::of(&serde_json::from_value(pod?.clone()).ok()?)
}

/// The default profile's cycle for the pod as the server returned it, on a listed cluster: what
/// kube-scheduler most likely does, for servers that do not say (and dry runs, which never
/// reach it). The JSON for the journey, and the trace itself when the cycle ran.
fn simulate(live: &Result<LiveCluster, String>, created: &Value) -> (Value, Option<PodTrace>) {
    let fail = |e: String| (json!({"error": e}), None);
    let live = match live {
        Ok(l) => l,
        Err(e) => return fail(e.clone()),
    };
    let mut pod: Pod = match serde_json::from_value(created.clone()) {
        Ok(p) => p,
        Err(e) => return fail(format!("the returned pod: {e}")),
    };
    // A pod of the same name already listed is this pod: it must not weigh on its own node.
    let mut manifests = live.manifests.clone();
    let key = format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or_default()
    );
    let _ = why::split_out(&mut manifests, &key);
    let w = match world::build(&manifests, live.modelling.version) {
        Ok(w) => w,
        Err(e) => return fail(format!("the listed cluster: {e}")),
    };
    if let Some(s) = pod.spec.as_mut() {
        s.node_name = None;
    }
    let mut snap = w.snapshot;
    let info = match snap.pod_info(&pod) {
        Ok(i) => i,
        Err(e) => return fail(format!("the returned pod: {e}")),
    };
    let mut scheduler = Scheduler::new(live.modelling.version, None, SEED);
    let trace = scheduler.schedule_one(&snap, &info);
    let sim = json!({
        "server_version": live.modelling.server,
        "kube_version": live.modelling.version.to_string(),
        "release": live.modelling.summary,
        "not_visible": live.not_visible,
        "trace": trace,
    });
    (sim, Some(trace))
}

/// The JSON pointers where the server's object differs from what was sent (added or changed
/// leaves): defaults and mutating admission at work.
fn changed_fields(sent: &Value, got: &Value) -> Vec<String> {
    // Fields every stored object gains, which say nothing about admission.
    const BOOKKEEPING: [&str; 5] = [
        "/metadata/uid",
        "/metadata/creationTimestamp",
        "/metadata/resourceVersion",
        "/metadata/managedFields",
        "/status",
    ];
    let mut out = Vec::new();
    diff(sent, got, String::new(), &mut out);
    out.retain(|p| !BOOKKEEPING.iter().any(|b| p.starts_with(b)));
    out.truncate(64);
    out
}

fn diff(sent: &Value, got: &Value, at: String, out: &mut Vec<String>) {
    match (sent, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match a.get(k) {
                    Some(old) => diff(old, v, p, out),
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, format!("{at}/{i}"), out);
            }
        }
        _ if sent != got => out.push(at),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes and, when `bound`, the pod itself already on node-a (the list came after the
    /// create): the simulation must score it as the scheduler saw the cluster, without itself.
    fn listed(bound: bool) -> Result<LiveCluster, String> {
        let mut text = String::from(
            r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: node-b}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"#,
        );
        if bound {
            text.push_str("- {apiVersion: v1, kind: Pod, metadata: {name: app, namespace: default}, spec: {nodeName: node-a, containers: [{name: c, image: i, resources: {requests: {cpu: \"2\", memory: 4Gi}}}]}}\n");
        }
        let mut manifests = crate::scheduler::manifests::Manifests::default();
        manifests
            .add_text("list", &text)
            .map_err(|e| e.to_string())?;
        Ok(LiveCluster {
            manifests,
            modelling: crate::scheduler::release::Modelling::asked(
                crate::scheduler::KubeVersion::parse("1.33").map_err(|e| e.to_string())?,
                None,
            ),
            not_visible: Vec::new(),
            pages: 1,
            watch_from: Default::default(),
            encoded_pods: None,
        })
    }

    #[test]
    fn a_listed_pod_of_the_same_name_does_not_weigh_on_its_own_node() {
        let created = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i",
                "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}});
        let total = |bound| {
            let (_, trace) = simulate(&listed(bound), &created);
            trace
                .and_then(|t| {
                    t.score
                        .iter()
                        .find(|s| &*s.node == "node-a")
                        .map(|s| s.total)
                })
                .expect("node-a scored")
        };
        assert_eq!(total(true), total(false));
    }

    #[test]
    fn changed_fields_are_what_the_server_added_or_changed() {
        let sent = json!({"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let got = json!({"metadata": {"name": "a", "uid": "u", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolicy": "Always"}],
                                  "priority": 0},
                         "status": {"phase": "Pending"}});
        assert_eq!(
            changed_fields(&sent, &got),
            vec![
                "/metadata/namespace",
                "/spec/containers/0/imagePullPolicy",
                "/spec/priority"
            ]
        );
    }

    #[test]
    fn namespace_falls_back_to_the_context_then_default() {
        let pod = json!({"metadata": {"name": "a"}});
        assert_eq!(namespace_of(&pod, "team"), "team");
        assert_eq!(namespace_of(&pod, ""), "default");
        let pod = json!({"metadata": {"name": "a", "namespace": "x"}});
        assert_eq!(namespace_of(&pod, "team"), "x");
    }
}

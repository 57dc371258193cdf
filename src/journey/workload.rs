//! A workload's journey (Deployment, ReplicaSet, DaemonSet, StatefulSet): the workload's own
//! request goes through the server as a pod's does, then its controllers take over. What they
//! did is read back, never assumed: the objects they created (found by their ownerReferences),
//! the Events they recorded (`ScalingReplicaSet`, `SuccessfulCreate`), and each pod's own
//! journey from the server (`/debug/kexplore/pods/<ns>/<name>`), which holds the controller's
//! in-process create, the scheduler's per-node verdicts and the kubelet's steps.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::Stage;
use super::build::Collected;
use super::run::{RunOptions, WriteMode, connect, follow, namespace_of, post};
use crate::client::http::ApiClient;
use crate::kubeconfig::ResolvedContext;

/// The workload kinds a journey accepts: (kind, resource, the controller creating its pods).
pub const KINDS: [(&str, &str, Stage); 4] = [
    ("Deployment", "deployments", Stage::ReplicasetController),
    ("ReplicaSet", "replicasets", Stage::ReplicasetController),
    ("DaemonSet", "daemonsets", Stage::DaemonsetController),
    ("StatefulSet", "statefulsets", Stage::StatefulsetController),
];

/// More pods than this are counted, not each followed: every followed pod costs requests.
pub const MAX_FOLLOWED: usize = 20;

/// `(resource, pod controller)` of a workload kind, None for any other kind.
pub fn kind_of(manifest: &Value) -> Option<(&'static str, Stage)> {
    let kind = manifest.get("kind").and_then(Value::as_str)?;
    KINDS
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, r, c)| (*r, *c))
}

/// Everything a workload run gathered.
#[derive(Debug, Default, Clone)]
pub struct WorkloadCollected {
    pub kind: String,
    /// `namespace/name`.
    pub name: String,
    /// The workload's own request: handshake, create response, the server's request trace.
    pub request: Collected,
    /// The workload as last read (its status: replicas, revision).
    pub workload: Option<Value>,
    /// A Deployment's ReplicaSets (those whose controller reference is the Deployment).
    pub replicasets: Vec<Value>,
    /// Events about the workload and its ReplicaSets, oldest first.
    pub events: Vec<Value>,
    /// The pods the controllers created, by name; each with its own journey's facts.
    pub pods: Vec<Collected>,
    /// How many pods its controllers made in all (more than `pods` beyond `MAX_FOLLOWED`).
    pub pods_total: usize,
    /// The run gave up waiting before every pod ran.
    pub timed_out: bool,
}

/// Runs a workload's journey; `report(collected, done)` after every change, as `run::run`.
pub async fn run(
    ctx: &ResolvedContext,
    manifest: &Value,
    opts: &RunOptions,
    report: impl Fn(&WorkloadCollected, bool),
) -> WorkloadCollected {
    let ns = namespace_of(manifest, &ctx.namespace);
    let name = manifest
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut w = WorkloadCollected {
        kind: manifest["kind"].as_str().unwrap_or_default().to_string(),
        name: format!("{ns}/{name}"),
        request: Collected {
            pod: format!("{ns}/{name}"),
            server: ctx.cluster.server.clone(),
            dry_run: opts.write == WriteMode::DryRun,
            ..Default::default()
        },
        ..Default::default()
    };
    let Some((resource, _)) = kind_of(manifest) else {
        report(&w, true);
        return w;
    };
    let path = format!("/apis/apps/v1/namespaces/{ns}/{resource}");
    let progress = |c: &Collected, _| {
        let mut shown = w.clone();
        shown.request = c.clone();
        report(&shown, false);
    };
    let mut request = w.request.clone();
    let client = connect(ctx, &mut request, &progress).await;
    if let Some(client) = &client
        && opts.replace_existing
        && opts.write == WriteMode::ForReal
    {
        remove_previous(client, &ns, &path, name).await;
    }
    let created = match &client {
        Some(client) => post(client, manifest, &path, &mut request).await,
        None => None,
    };
    w.request = request;
    report(&w, false);
    if let (Some(client), Some(created)) = (client, created)
        && !w.request.dry_run
    {
        follow_workload(&client, &ns, &path, &created, opts.timeout, &mut w, &report).await;
    }
    report(&w, true);
    w
}

fn uid(v: &Value) -> &str {
    v.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The uid of `v`'s controller (the ownerReference with `controller: true`).
fn controller_uid(v: &Value) -> Option<&str> {
    v.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|o| o["controller"] == json!(true))?
        .get("uid")?
        .as_str()
}

async fn items(client: &ApiClient, path: &str) -> Vec<Value> {
    match client.get(path).await {
        Ok(r) if r.status == 200 => r
            .json()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// How many pods the workload wants, once its object says (a DaemonSet's count comes from
/// its controller's status).
fn desired(kind: &str, w: &Value) -> Option<usize> {
    let n = if kind == "DaemonSet" {
        // As `kubectl rollout status` reads it: the count means something only once the
        // controller has seen this generation (a status written before says 0).
        let seen = w
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        let generation = w.pointer("/metadata/generation").and_then(Value::as_i64);
        if seen.is_none() || seen < generation {
            return None;
        }
        w.pointer("/status/desiredNumberScheduled")?.as_u64()?
    } else {
        w.pointer("/spec/replicas")
            .and_then(Value::as_u64)
            .unwrap_or(1)
    };
    usize::try_from(n).ok()
}

fn phase(p: &Value) -> &str {
    p.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Polls the workload, its ReplicaSets and their pods until every pod it wants runs (or the
/// time is up), then follows each pod's own journey and reads the controllers' Events.
#[allow(clippy::too_many_arguments)]
async fn follow_workload(
    client: &ApiClient,
    ns: &str,
    path: &str,
    created: &Value,
    timeout: Duration,
    w: &mut WorkloadCollected,
    report: &impl Fn(&WorkloadCollected, bool),
) {
    let name = created
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let deadline = Instant::now() + timeout;
    let mut pods: Vec<Value>;
    let mut last = String::new();
    loop {
        if let Ok(r) = client.get(&format!("{path}/{name}")).await {
            w.workload = r.json();
        }
        let mut owners = vec![uid(created).to_string()];
        if w.kind == "Deployment" {
            w.replicasets = items(
                client,
                &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            )
            .await
            .into_iter()
            .filter(|rs| controller_uid(rs) == Some(uid(created)))
            .collect();
            owners = w.replicasets.iter().map(|rs| uid(rs).to_string()).collect();
        }
        pods = items(client, &format!("/api/v1/namespaces/{ns}/pods"))
            .await
            .into_iter()
            .filter(|p| controller_uid(p).is_some_and(|u| owners.iter().any(|o| o == u)))
            .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
            .collect();
        pods.sort_by(|a, b| {
            a["metadata"]["name"]
                .as_str()
                .cmp(&b["metadata"]["name"].as_str())
        });
        w.pods_total = pods.len();
        w.pods = pods
            .iter()
            .take(MAX_FOLLOWED)
            .map(|p| pod_collected(w, p))
            .collect();
        let want = w.workload.as_ref().and_then(|o| desired(&w.kind, o));
        let all_run = want.is_some_and(|n| pods.len() >= n)
            && pods
                .iter()
                .all(|p| matches!(phase(p), "Running" | "Succeeded"));
        let fingerprint: String = pods
            .iter()
            .map(|p| format!("{}{}", p["metadata"]["name"], phase(p)))
            .collect();
        if fingerprint != last {
            last = fingerprint;
            report(w, false);
        }
        if all_run {
            break;
        }
        if Instant::now() > deadline {
            w.timed_out = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The controllers' Events: about the workload, and about each of a Deployment's ReplicaSets.
    let mut about = vec![uid(created).to_string()];
    about.extend(w.replicasets.iter().map(|rs| uid(rs).to_string()));
    w.events.clear();
    for u in about {
        w.events.extend(
            items(
                client,
                &format!("/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.uid%3D{u}"),
            )
            .await,
        );
    }
    report(w, false);
    // Each pod's own journey, as the server reports it.
    let pod_path = format!("/api/v1/namespaces/{ns}");
    for i in 0..w.pods.len() {
        let mut c = w.pods[i].clone();
        let pod_name = c.pod.rsplit('/').next().unwrap_or_default().to_string();
        let from = pods.get(i).cloned().unwrap_or(Value::Null);
        let rv = created_at(&client_trace(client, ns, &pod_name).await)
            .or_else(|| from.pointer("/metadata/resourceVersion").cloned())
            .unwrap_or(Value::Null);
        let start = json!({"metadata": {"resourceVersion": rv, "uid": uid(&from)}});
        follow(
            client,
            &format!("{pod_path}/pods"),
            ns,
            &pod_name,
            &start,
            timeout.min(Duration::from_secs(2)),
            &mut c,
            &|_, _| {},
        )
        .await;
        w.pods[i] = c;
        report(w, false);
    }
    // In the order the controller created them, so each pod's spread counts the ones before.
    w.pods.sort_by_key(|c| {
        let rv = c.server_trace.as_ref().and_then(created_at);
        rv.and_then(|v| v.as_str().and_then(|s| s.parse::<u64>().ok()))
            .unwrap_or(u64::MAX)
    });
    report(w, false);
}

/// A pod's journey record on an embedded server (Null elsewhere).
async fn client_trace(client: &ApiClient, ns: &str, name: &str) -> Value {
    match client
        .get(&format!("/debug/kexplore/pods/{ns}/{name}"))
        .await
    {
        Ok(r) if r.status == 200 => r.json().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// The resourceVersion the pod's create stored it at, from its create trace.
fn created_at(trace: &Value) -> Option<Value> {
    trace["create"]["stages"]
        .as_array()?
        .iter()
        .find(|s| s["stage"] == json!("storage"))?
        .pointer("/detail/resourceVersion")
        .cloned()
}

/// A pod's collected facts before its own journey is followed: who made it, as it is now.
fn pod_collected(w: &WorkloadCollected, pod: &Value) -> Collected {
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let owner = pod
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|o| o.iter().find(|o| o["controller"] == json!(true)));
    let owner_kind = owner.and_then(|o| o["kind"].as_str()).unwrap_or_default();
    let controller = KINDS
        .iter()
        .find(|(k, _, _)| *k == owner_kind)
        .map_or("controller", |(_, _, c)| c.as_str());
    let mut c = w
        .pods
        .iter()
        .find(|p| p.pod == format!("{ns}/{name}"))
        .cloned()
        .unwrap_or_default();
    c.pod = format!("{ns}/{name}");
    c.server = w.request.server.clone();
    c.final_pod = Some(pod.clone());
    c.created_by = Some(json!({
        "controller": controller,
        "owner": format!("{owner_kind} {ns}/{}", owner.and_then(|o| o["name"].as_str()).unwrap_or_default()),
        "ownerReferences": pod.pointer("/metadata/ownerReferences"),
    }));
    c
}

/// Deletes a workload of the same name first with what its controllers made (the embedded
/// sandbox, where a workshop re-runs): this server has no garbage collector to cascade.
pub async fn remove_previous(client: &ApiClient, ns: &str, path: &str, name: &str) {
    let Ok(r) = client.get(&format!("{path}/{name}")).await else {
        return;
    };
    let Some(old) = r.json().filter(|_| r.status == 200) else {
        return;
    };
    let _ = client
        .send(Method::DELETE, &format!("{path}/{name}"), None)
        .await;
    let mut owners = vec![uid(&old).to_string()];
    for rs in items(
        client,
        &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
    )
    .await
    {
        if controller_uid(&rs) == Some(uid(&old)) {
            owners.push(uid(&rs).to_string());
            let rs_name = rs["metadata"]["name"].as_str().unwrap_or_default();
            let _ = client
                .send(
                    Method::DELETE,
                    &format!("/apis/apps/v1/namespaces/{ns}/replicasets/{rs_name}"),
                    None,
                )
                .await;
        }
    }
    for p in items(client, &format!("/api/v1/namespaces/{ns}/pods")).await {
        if controller_uid(&p).is_some_and(|u| owners.iter().any(|o| o == u)) {
            let n = p["metadata"]["name"].as_str().unwrap_or_default();
            let _ = client
                .send(
                    Method::DELETE,
                    &format!("/api/v1/namespaces/{ns}/pods/{n}?gracePeriodSeconds=0"),
                    None,
                )
                .await;
        }
    }
}

//! `kexplore journey -f POD`: create the pod through an API server and print every stage it
//! passes, marking each as observed (by this client), reported (by the embedded server's own
//! trace) or inferred (explained, because a remote server keeps its internals to itself).
//!
//! Which server: with `--kubeconfig` or `--context` given explicitly, that context's server;
//! otherwise (or with `--embedded`) an embedded server started in-process on a free loopback
//! port, so a journey never creates pods in a real cluster by accident.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::{CommandError, CommandResult};
use crate::apiserver::authn::TokenFile;
use crate::apiserver::pki;
use crate::apiserver::server::{self, ServeOptions};
use crate::cli::{GlobalArgs, JourneyArgs, OutputFormat};
use crate::client::http::ApiClient;
use crate::journey::build::{Collected, build};
use crate::journey::text;
use crate::kubeconfig::{Kubeconfig, ResolvedContext, Selection};

/// Read the pod manifest (YAML or JSON, one Pod).
fn read_pod(path: &Path) -> Result<Value, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::Input(format!("{}: {e}", path.display())))?;
    let v: Value = serde_yaml::from_str(&text).map_err(|e| {
        CommandError::Input(format!(
            "{}: not a YAML or JSON manifest: {e}",
            path.display()
        ))
    })?;
    if v.get("kind").and_then(Value::as_str) != Some("Pod") {
        return Err(CommandError::Input(format!(
            "{}: expected a single object of kind Pod",
            path.display()
        )));
    }
    if v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(CommandError::Input(format!(
            "{}: the pod needs metadata.name",
            path.display()
        )));
    }
    Ok(v)
}

fn handshake_detail(r: &crate::client::HandshakeReport) -> Result<Value, String> {
    if let Some(f) = &r.failure {
        return Err(format!("{f:?}"));
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

async fn run_journey(
    ctx: &ResolvedContext,
    pod: &Value,
    timeout: Duration,
) -> Result<Collected, CommandError> {
    let ns = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or(&ctx.namespace)
        .to_string();
    let ns = if ns.is_empty() {
        "default".to_string()
    } else {
        ns
    };
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut c = Collected {
        pod: format!("{ns}/{name}"),
        server: ctx.cluster.server.clone(),
        ..Default::default()
    };
    let report = crate::client::handshake(ctx)
        .await
        .map_err(|e| CommandError::Input(e.to_string()))?;
    c.handshake = Some(handshake_detail(&report));
    if !report.succeeded() {
        return Ok(c);
    }
    let client = ApiClient::connect(ctx)
        .await
        .map_err(|e| CommandError::Input(e.to_string()))?;
    let body = serde_json::to_vec(pod).map_err(|e| CommandError::Failed(e.to_string()))?;
    let path = format!("/api/v1/namespaces/{ns}/pods");
    let create_path = format!("{path}?fieldManager=kexplore-journey");
    // Our own Audit-ID on the create lets us ask an embedded server for that request's trace,
    // failed or not. Exec-plugin credentials go through ApiClient (no Audit-ID then).
    let audit_id = crate::apiserver::util::uuid();
    let (status, created) =
        match create_with_audit_id(ctx, &client.url(&create_path), body.clone(), &audit_id).await {
            Some(r) => r,
            None => {
                let resp = client
                    .send(Method::POST, &create_path, Some((body, "application/json")))
                    .await
                    .map_err(|e| CommandError::Failed(e.to_string()))?;
                (resp.status, resp.json().unwrap_or(Value::Null))
            }
        };
    c.create = Some((status, created.clone()));
    // Only kexplore's embedded server answers these; anywhere else the internals stay inferred.
    let mut server_trace = json!({});
    if let Ok(r) = client
        .get(&format!("/debug/kexplore/requests/{audit_id}"))
        .await
        && r.status == 200
    {
        server_trace["create"] = r.json().unwrap_or(Value::Null);
        c.server_trace = Some(server_trace.clone());
    }
    if !(200..300).contains(&status) {
        return Ok(c);
    }
    let create_rv = created
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    // Follow the pod until it runs (or the time is up).
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(r) = client.get(&format!("{path}/{name}")).await {
            let p = r.json().unwrap_or(Value::Null);
            let phase = p
                .pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            c.final_pod = Some(p);
            if phase == "Running" || phase == "Failed" || phase == "Succeeded" {
                break;
            }
        }
        if Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    // The watch a controller would have had open since the create, replayed from its revision.
    let watch = format!(
        "{path}?watch=true&fieldSelector=metadata.name%3D{name}&resourceVersion={create_rv}&timeoutSeconds=1"
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
    let events = format!(
        "/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name},involvedObject.uid%3D{uid}"
    );
    if let Ok(r) = client.get(&events).await {
        c.events = r
            .json()
            .and_then(|v| v["items"].as_array().cloned())
            .unwrap_or_default();
    }
    if let Ok(r) = client
        .get(&format!("/debug/kexplore/pods/{ns}/{name}"))
        .await
        && r.status == 200
        && let Some(t) = r.json()
    {
        server_trace["controlLoops"] = t["controlLoops"].clone();
        if server_trace.get("create").is_none_or(Value::is_null) {
            server_trace["create"] = t["create"].clone();
        }
        c.server_trace = Some(server_trace);
    }
    Ok(c)
}

/// POST the pod with an `Audit-ID` header; None when this context needs ApiClient's exec path.
async fn create_with_audit_id(
    ctx: &ResolvedContext,
    url: &str,
    body: Vec<u8>,
    audit_id: &str,
) -> Option<(u16, Value)> {
    use crate::kubeconfig::Token;
    if ctx.user.exec.is_some() {
        return None;
    }
    let (config, _) = crate::client::build_client_config(ctx).ok()?;
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(config)
        .timeout(Duration::from_secs(30))
        .build()
        .ok()?;
    let mut req = http
        .post(url)
        .header("Accept", "application/json")
        .header("Content-Type", "application/json")
        .header("Audit-ID", audit_id)
        .body(body);
    match &ctx.user.token {
        Some(Token::Inline(t)) => req = req.bearer_auth(t.expose()),
        Some(Token::File { value, .. }) => req = req.bearer_auth(value.expose().trim()),
        None => {}
    }
    let resp = req.send().await.ok()?;
    let status = resp.status().as_u16();
    let body = resp.bytes().await.ok()?;
    Some((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

pub fn run(global: &GlobalArgs, args: &JourneyArgs) -> CommandResult {
    let pod = read_pod(&args.file)?;
    for s in &args.scenario {
        if !s.is_file() {
            return Err(CommandError::Input(format!(
                "{}: no such scenario file",
                s.display()
            )));
        }
    }
    let remote = !args.embedded && (global.kubeconfig.is_some() || global.context.is_some());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    let timeout = Duration::from_secs(args.timeout);
    let collected = rt.block_on(async {
        if remote {
            let selection = Selection::from_environment(global.kubeconfig.as_deref())
                .ok_or_else(|| CommandError::Input("no kubeconfig found".into()))?;
            let ctx = Kubeconfig::load(&selection)?.resolve(global.context.as_deref())?;
            return run_journey(&ctx, &pod, timeout).await;
        }
        let pki = pki::mint().map_err(CommandError::Failed)?;
        let opts = ServeOptions {
            listen: "127.0.0.1:0"
                .parse()
                .map_err(|_| CommandError::Failed("bad listen address".into()))?,
            pki: pki.clone(),
            tokens: TokenFile::default(),
            audit_log: None,
            demo: true,
            scenarios: args.scenario.clone(),
            control_loops: true,
        };
        let running = server::start(opts).await.map_err(CommandError::Input)?;
        let url = super::serve::server_url(running.addr);
        let dir = tempfile_dir()?;
        let kc = dir.join("kubeconfig");
        pki::write_atomic_private(&kc, &pki::kubeconfig_yaml(&pki, &url))
            .map_err(CommandError::Failed)?;
        let result = async {
            let ctx = Kubeconfig::load_file(&kc)?.resolve(None)?;
            run_journey(&ctx, &pod, timeout).await
        }
        .await;
        let _ = std::fs::remove_dir_all(&dir);
        running.shutdown().await;
        result
    })?;
    let journey = build(&collected);
    let out = match global.output {
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&journey)
                .map_err(|e| CommandError::Failed(e.to_string()))?;
            s.push('\n');
            s
        }
        OutputFormat::Text => text::render(&journey),
    };
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(if journey.succeeded() { 0 } else { 1 })
}

/// A private scratch directory for the in-process server's kubeconfig.
fn tempfile_dir() -> Result<std::path::PathBuf, CommandError> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = std::env::temp_dir().join(format!(
        "kexplore-journey-{}-{}",
        std::process::id(),
        crate::apiserver::util::uuid()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| CommandError::Failed(format!("{}: {e}", dir.display())))?;
    Ok(dir)
}

//! `kexplore journey -f POD`: create the pod through an API server and print every stage it
//! passes, marking each as observed (by this client), reported (by the embedded server's own
//! trace) or inferred (explained, because a remote server keeps its internals to itself).
//!
//! Which server: the selected kubeconfig's (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`),
//! where the create is a dry run (`dryRun=All`) unless `--for-real` is given; with none found,
//! or with `--embedded`, an embedded server started in-process on a free loopback port, a
//! sandbox where the pod is created for real.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{CommandError, CommandResult};
use crate::apiserver::filters::authn::TokenFile;
use crate::apiserver::transport::pki;
use crate::apiserver::transport::server::{self, ServeOptions};
use crate::cli::{GlobalArgs, JourneyArgs, OutputFormat};
use crate::journey::build::build;
use crate::journey::run::{RunOptions, WriteMode, run as run_journey};
use crate::journey::text;
use crate::journey::workload::{self, WorkloadCollected};
use crate::journey::workload_build::build_workload;
use crate::journey::workload_text::render_workload;

/// What a run collected: a pod's journey or a workload's.
enum Ran {
    Pod(Box<crate::journey::build::Collected>),
    Workload(Box<WorkloadCollected>),
}

async fn run_any(
    ctx: &crate::kubeconfig::ResolvedContext,
    manifest: &Value,
    opts: &RunOptions,
) -> Ran {
    if workload::kind_of(manifest).is_some() {
        Ran::Workload(Box::new(
            workload::run(ctx, manifest, opts, |_, _| {}).await,
        ))
    } else {
        Ran::Pod(Box::new(run_journey(ctx, manifest, opts, |_, _| {}).await))
    }
}
use crate::kubeconfig::{Kubeconfig, Selection};

/// Read the manifest (YAML or JSON, one Pod or one workload).
fn read_pod(path: &Path) -> Result<Value, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::Input(format!("{}: {e}", path.display())))?;
    crate::journey::manifest::parse(&text, path).map_err(CommandError::Input)
}

pub fn run(global: &GlobalArgs, args: &JourneyArgs) -> CommandResult {
    let mut pod = read_pod(&args.file)?;
    if let Some(ns) = &args.namespace {
        crate::journey::manifest::in_namespace(&mut pod, ns)
            .map_err(|e| CommandError::Input(format!("{}: {e}", args.file.display())))?;
    }
    for s in &args.scenario {
        if !s.is_file() {
            return Err(CommandError::Input(format!(
                "{}: no such scenario file",
                s.display()
            )));
        }
    }
    let selection = Selection::from_environment(global.kubeconfig.as_deref())
        .filter(|s| global.context.is_some() || found(s));
    let remote = if args.embedded { None } else { selection };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    let mut opts = RunOptions {
        write: if args.for_real {
            WriteMode::ForReal
        } else {
            WriteMode::DryRun
        },
        cleanup: args.cleanup,
        replace_existing: false,
        timeout: Duration::from_secs(args.timeout),
    };
    let collected = rt.block_on(async {
        if let Some(selection) = remote {
            let ctx = Kubeconfig::load(&selection)?.resolve(global.context.as_deref())?;
            return Ok(run_any(&ctx, &pod, &opts).await);
        }
        // The in-process server is a sandbox nobody else uses: the pod is created for real.
        opts.write = WriteMode::ForReal;
        let pki = pki::mint().map_err(CommandError::Failed)?;
        let serve = ServeOptions {
            listen: "127.0.0.1:0"
                .parse()
                .map_err(|_| CommandError::Failed("bad listen address".into()))?,
            pki: pki.clone(),
            tokens: TokenFile::default(),
            audit_log: None,
            demo: true,
            scenarios: args.scenario.clone(),
            control_loops: true,
            service_account_issuer: None,
            simulated_run: crate::apiserver::request::context::DEFAULT_SIMULATED_RUN,
            scheduler_profiles: None,
        };
        let running = server::start(serve).await.map_err(CommandError::Input)?;
        let url = super::serve::server_url(running.addr);
        let dir = crate::scratch::private_dir("journey").map_err(CommandError::Failed)?;
        let kc = dir.join("kubeconfig");
        pki::write_atomic_private(&kc, &pki::kubeconfig_yaml(&pki, &url))
            .map_err(CommandError::Failed)?;
        let result = async {
            let ctx = Kubeconfig::load_file(&kc)?.resolve(None)?;
            Ok::<_, CommandError>(run_any(&ctx, &pod, &opts).await)
        }
        .await;
        let _ = std::fs::remove_dir_all(&dir);
        running.shutdown().await;
        result
    })?;
    let json = |v: Result<String, serde_json::Error>| {
        v.map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| CommandError::Failed(e.to_string()))
    };
    let (out, ok) = match collected {
        Ran::Pod(c) => {
            let journey = build(&c);
            let out = match global.output {
                OutputFormat::Json => json(serde_json::to_string_pretty(&journey))?,
                OutputFormat::Text => text::render(&journey),
            };
            (out, journey.succeeded())
        }
        Ran::Workload(w) => {
            let journey = build_workload(&w);
            let out = match global.output {
                OutputFormat::Json => json(serde_json::to_string_pretty(&journey))?,
                OutputFormat::Text => render_workload(&journey),
            };
            (out, journey.succeeded())
        }
    };
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(if ok { 0 } else { 1 })
}

/// Whether the selection names a kubeconfig that exists (an explicit one always counts, so a
/// missing file is reported rather than silently replaced by the sandbox).
fn found(s: &Selection) -> bool {
    match s {
        Selection::Explicit(_) => true,
        Selection::EnvList(l) => l.iter().any(|p| p.is_file()),
        Selection::Home(p) => p.is_file(),
    }
}

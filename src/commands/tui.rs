//! `kexplore` with no subcommand: the terminal UI. Every input problem (theme, kubeconfig,
//! unknown context, pod manifest, no terminal) is reported here, before the terminal is
//! touched. With `--embedded`, or when no kubeconfig is found, an embedded API server is
//! started in-process first and the UI explores it.

use std::io::IsTerminal;

use super::{CommandError, CommandResult};
use crate::cli::{GlobalArgs, TuiArgs};
use crate::tui::app::{self, now_unix};
use crate::tui::embedded::Embedded;
use crate::tui::journey::JourneyState;
use crate::tui::session::{self, Source};
use crate::tui::state::AppState;
use crate::tui::theme::Themes;

/// The seed's pod (scenarios/app.json), compiled in so view 4 works from any directory.
const DEFAULT_POD: &str = include_str!("../../scenarios/app.json");

pub fn run(global: &GlobalArgs, args: &TuiArgs) -> CommandResult {
    // Presenter mode, from --present or `P`, is drawn in the high-contrast theme (readable from
    // the back of the room; status is also a glyph, never colour alone); --theme still wins.
    let themes = Themes::for_terminal(global.theme.as_deref())
        .map_err(|e| CommandError::Input(e.to_string()))?;
    let mut source = session::open(global.kubeconfig.as_deref(), global.context.as_deref())
        .map_err(|e| CommandError::Input(e.to_string()))?;
    let (pod_path, pod_text, scratch) = match &args.pod {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| CommandError::Input(format!("--pod {}: {e}", p.display())))?;
            (p.clone(), text, None)
        }
        None => {
            // A private copy named as in the seed (`-d@app.json`), so `e` never edits the
            // repository's scenario file.
            let dir = scratch_dir()?;
            let path = dir.join("app.json");
            crate::apiserver::transport::pki::write_atomic_private(&path, DEFAULT_POD)
                .map_err(CommandError::Failed)?;
            (path, DEFAULT_POD.to_string(), Some(dir))
        }
    };
    if !std::io::stdout().is_terminal() {
        if let Some(s) = &scratch {
            let _ = std::fs::remove_dir_all(s);
        }
        return Err(CommandError::Input(
            "the terminal UI needs a terminal on stdout; for scripts use `kexplore certs`".into(),
        ));
    }
    // From here the TUI owns the terminal: exec plugins must not prompt on it.
    crate::client::exec::forbid_terminal();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    // No kubeconfig found: kexplore explores its own cluster, and says so here (the line stays
    // on the terminal after the UI) and in view 1.
    let instead_of = match &source {
        Source::NotFound { looked } if !args.embedded => {
            Some(crate::tui::embedded::fallback_note(looked))
        }
        _ => None,
    };
    let embedded = if args.embedded || instead_of.is_some() {
        if let Some(note) = &instead_of {
            eprintln!("kexplore: {note}");
        }
        let e =
            Embedded::start(&rt, &args.scenario, args.etcd, None).map_err(|e| match args.etcd {
                // No etcd on PATH, or one that would not start: the user's to fix.
                true => CommandError::Input(e),
                false => CommandError::Failed(e),
            })?;
        source = session::open(Some(e.kubeconfig_path()), None)
            .map_err(|e| CommandError::Failed(e.to_string()))?;
        Some(e)
    } else {
        None
    };
    let context = if embedded.is_some() {
        None
    } else {
        global.context.as_deref()
    };
    let active = match &source {
        Source::Loaded { kubeconfig, .. } => Some(session::load_context(kubeconfig, context)),
        Source::NotFound { .. } => None,
    };
    let mut state = AppState::new(source, active, now_unix());
    state.embedded = embedded.as_ref().map(|e| e.facts(instead_of));
    state.etcd = state
        .embedded
        .as_ref()
        .and_then(|f| f.etcd_kubeconfig.as_deref())
        .map(|p| crate::tui::etcd_chain::load(p, crate::tui::embedded::ETCD_CONTEXT));
    crate::tui::story::set_present(&mut state, args.present);
    // A step every tenth of a second at most: the beat's own pace.
    state.autoplay = args.autoplay.map(|s| s.max(0.1));
    state.journey = JourneyState::new(pod_path.clone(), Some(&pod_text), embedded.is_some());
    state.journey.for_real = args.for_real;
    // `l` in view 4 picks among this pod and the pods in scenarios/ (of the current directory).
    let mut choices = vec![(pod_path, pod_text)];
    choices.extend(
        crate::tui::journey::pod_files(std::path::Path::new("scenarios"))
            .into_iter()
            .filter(|(p, _)| !p.ends_with("app.json") || args.pod.is_some()),
    );
    state.journey.choices = choices;
    let result = app::run(state, &themes, rt.handle().clone());
    if let Some(e) = embedded {
        e.stop(&rt);
    }
    if let Some(s) = scratch {
        let _ = std::fs::remove_dir_all(s);
    }
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    result.map_err(|e| CommandError::Failed(format!("cannot use the terminal: {e}")))?;
    Ok(0)
}

/// A directory only this user can enter, for the editable copy of the pod manifest.
fn scratch_dir() -> Result<std::path::PathBuf, CommandError> {
    let dir = crate::scratch::private_dir("pod").map_err(CommandError::Failed)?;
    crate::tui::embedded::remember_private(&dir);
    Ok(dir)
}

//! `kexplore lesson FILE` (and `kexplore --lesson FILE`): load and validate the lesson (a
//! broken one exits 2 naming its line, before anything starts), start a fresh embedded cluster,
//! play the lesson on it, stop the cluster.

use super::{CommandError, CommandResult};
use crate::cli::{GlobalArgs, LessonArgs, TuiArgs};
use crate::lesson::run::{Session, Signer};
use crate::tui::embedded::Embedded;
use crate::tui::theme::Theme;

pub fn run(global: &GlobalArgs, args: &LessonArgs) -> CommandResult {
    play(global, &args.file, args.autoplay, &args.scenario)
}

/// `kexplore --lesson FILE [--autoplay SECS] [--scenario ...]`.
pub fn from_tui(global: &GlobalArgs, args: &TuiArgs) -> CommandResult {
    let Some(file) = &args.lesson else {
        return Err(CommandError::Input("--lesson needs a file".into()));
    };
    play(global, file, args.autoplay, &args.scenario)
}

fn play(
    global: &GlobalArgs,
    file: &std::path::Path,
    autoplay: Option<f64>,
    scenario: &[std::path::PathBuf],
) -> CommandResult {
    let lesson = crate::lesson::load(file).map_err(|e| CommandError::Input(e.to_string()))?;
    let theme = Theme::for_terminal(global.theme.as_deref().or(Some("high-contrast")))
        .or_else(|_| Theme::for_terminal(global.theme.as_deref()))
        .map_err(|e| CommandError::Input(e.to_string()))?;
    crate::client::exec::forbid_terminal();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    let base = file
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let profiles = match &lesson.scheduler_config {
        Some(c) => Some(
            super::serve::scheduler_profiles(&base.join(c)).map_err(|e| {
                CommandError::Input(format!("{}: scheduler_config: {e}", file.display()))
            })?,
        ),
        None => None,
    };
    let embedded = Embedded::start(&rt, scenario, false, profiles).map_err(CommandError::Failed)?;
    let result = (|| {
        let scratch = crate::scratch::private_dir("lesson").map_err(CommandError::Failed)?;
        crate::tui::embedded::remember_private(&scratch);
        let signer = Signer {
            ca_cert_pem: embedded.ca().cert_pem.clone(),
            ca_key_pem: embedded.ca().key_pem.clone(),
        };
        let mut session = Session::new(&base, embedded.kubeconfig_path(), signer, scratch.clone())
            .map_err(CommandError::Failed)?;
        let played = crate::tui::lesson::play(&lesson, &mut session, rt.handle(), &theme, autoplay);
        let _ = std::fs::remove_dir_all(&scratch);
        played.map_err(|e| CommandError::Failed(format!("cannot use the terminal: {e}")))
    })();
    embedded.stop(&rt);
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    result.map(|()| 0)
}

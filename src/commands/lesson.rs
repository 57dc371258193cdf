//! `kexplore lesson FILE` (and `kexplore --lesson FILE`): load and validate the lesson (a
//! broken one exits 2 naming its line, before anything starts), start a fresh embedded cluster,
//! play the lesson on it, stop the cluster.

use super::{CommandError, CommandResult};
use crate::cli::{GlobalArgs, LessonArgs, TuiArgs};
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
    crate::tui::lesson::on_embedded(&lesson, file, autoplay, scenario, &theme).map_err(
        |e| match e {
            crate::tui::lesson::RunError::Input(m) => CommandError::Input(m),
            crate::tui::lesson::RunError::Failed(m) => CommandError::Failed(m),
        },
    )?;
    Ok(0)
}

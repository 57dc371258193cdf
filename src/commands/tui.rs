//! `kexplore` with no subcommand: the terminal UI. Every input problem (theme, kubeconfig,
//! unknown context, no terminal) is reported here, before the terminal is touched.

use std::io::IsTerminal;

use super::{CommandError, CommandResult};
use crate::cli::GlobalArgs;
use crate::tui::app::{self, now_unix};
use crate::tui::session::{self, Source};
use crate::tui::state::AppState;
use crate::tui::theme::Theme;

pub fn run(global: &GlobalArgs) -> CommandResult {
    let theme = Theme::for_terminal(global.theme.as_deref())
        .map_err(|e| CommandError::Input(e.to_string()))?;
    let source = session::open(global.kubeconfig.as_deref(), global.context.as_deref())
        .map_err(|e| CommandError::Input(e.to_string()))?;
    if !std::io::stdout().is_terminal() {
        return Err(CommandError::Input(
            "the terminal UI needs a terminal on stdout; for scripts use `kexplore certs`".into(),
        ));
    }
    let active = match &source {
        Source::Loaded { kubeconfig, .. } => {
            Some(session::load_context(kubeconfig, global.context.as_deref()))
        }
        Source::NotFound { .. } => None,
    };
    let state = AppState::new(source, active, now_unix());
    app::run(state, &theme)
        .map_err(|e| CommandError::Failed(format!("cannot use the terminal: {e}")))?;
    Ok(0)
}

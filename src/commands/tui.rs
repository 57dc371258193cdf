//! `kexplore` with no subcommand: the terminal UI.

use super::{CommandError, CommandResult};
use crate::cli::GlobalArgs;

pub fn run(_global: &GlobalArgs) -> CommandResult {
    Err(CommandError::Failed("the TUI is not built yet".into()))
}

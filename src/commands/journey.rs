//! `kexplore journey -f POD`: create a pod and print every stage it passes.

use super::{CommandError, CommandResult};
use crate::cli::{GlobalArgs, JourneyArgs};

pub fn run(_global: &GlobalArgs, _args: &JourneyArgs) -> CommandResult {
    Err(CommandError::Failed("journey: not implemented yet".into()))
}

//! `kexplore certs`: decode and check the selected context's credentials.

use super::{CommandError, CommandResult};
use crate::cli::{CertsArgs, GlobalArgs};

pub fn run(_global: &GlobalArgs, _args: &CertsArgs) -> CommandResult {
    Err(CommandError::Failed("certs: not built yet".into()))
}

//! `kexplore scenario generate`: synthetic clusters for benchmarks and for trying `schedule` at
//! scale (`kexplore scenario generate --nodes 5000 --pods-per-node 30 > big.yaml`).

use std::io::Write as _;

use super::{CommandError, CommandResult};
use crate::cli::{GenerateArgs, PendingKindArg};
use crate::scheduler::generate::{PendingKind, cluster_yaml};

/// Beyond this the YAML runs into gigabytes; nobody means it.
const MAX_OBJECTS: usize = 2_000_000;

pub fn generate(args: &GenerateArgs) -> CommandResult {
    let objects = args
        .nodes
        .checked_mul(args.pods_per_node + 1)
        .and_then(|n| n.checked_add(args.pending));
    if objects.is_none_or(|n| n > MAX_OBJECTS) {
        return Err(CommandError::Input(format!(
            "--nodes {} × --pods-per-node {} is more than {MAX_OBJECTS} objects",
            args.nodes, args.pods_per_node
        )));
    }
    let kind = match args.kind {
        PendingKindArg::Plain => PendingKind::Plain,
        PendingKindArg::NodeAffinity => PendingKind::NodeAffinity,
        PendingKindArg::PodAntiAffinity => PendingKind::PodAntiAffinity,
        PendingKindArg::PodAffinity => PendingKind::PodAffinity,
    };
    let yaml = cluster_yaml(args.nodes, args.pods_per_node, args.pending, kind);
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(yaml.as_bytes());
    Ok(0)
}

//! `kexplore etcd`: a local etcd cluster for replicas of `kexplore serve` — the piece of an HA
//! control plane that outlives any one API server. It prints the flags each replica needs and
//! the etcdctl line that shows the members and their leader, then runs until Ctrl-C / SIGTERM.

use super::serve::Signals;
use super::{CommandError, CommandResult};
use crate::apiserver::storage::etcd_local::LocalEtcd;
use crate::cli::EtcdArgs;

pub fn run(args: &EtcdArgs) -> CommandResult {
    // Started on the main thread, which outlives it: the members die with kexplore.
    let mut local = LocalEtcd::start_members(
        Some(&args.pki_dir),
        Some(&args.data_dir),
        usize::from(args.members),
        std::time::Duration::from_secs(300),
    )
    .map_err(CommandError::Input)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Failed(format!("cannot start the runtime: {e}")))?;
    // Listening before anything is printed: a SIGTERM sent on the first line stops it cleanly.
    let signals = {
        let _in = rt.enter();
        Signals::register()
    };
    let o = &local.options;
    let path = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let flags = format!(
        "--etcd-servers {} --etcd-cafile {} --etcd-certfile {} --etcd-keyfile {}",
        o.servers.join(","),
        path(&o.cafile),
        path(&o.certfile),
        path(&o.keyfile)
    );
    println!(
        "etcd: {} member(s) serving at {} (logs: {} …)",
        args.members,
        o.servers.join(","),
        local.log.display()
    );
    println!(
        "replicas: kexplore serve {flags} --pki-dir {} --listen 127.0.0.1:PORT",
        args.pki_dir.display()
    );
    println!(
        "members and leader: {}",
        o.etcdctl(&["endpoint", "status", "-w", "table"])
    );
    rt.block_on(signals.wait());
    local.stop();
    Ok(0)
}

//! `kexplore serve --etcd`: a local etcd from PATH on loopback (free ports), secured with a PKI
//! of its own laid out as kubeadm lays it — `etcd/ca.crt`, `etcd/server.crt`, `etcd/peer.crt`
//! and `apiserver-etcd-client.crt` (with their keys) in the PKI directory — and stopped with
//! the server: on exit, on Ctrl-C, on an error, and (PR_SET_PDEATHSIG) when kexplore is killed.

use std::net::{IpAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::apiserver::storage::etcd_config::EtcdOptions;
use crate::apiserver::transport::pki::write_private;
use crate::kubeconfig::Secret;
use crate::pki::mint::{Attr, Authority, CertSpec, KeyKind, generate_key, key_from_pem};

/// What to say when there is no etcd to start.
pub const INSTALL_HINT: &str = "etcd is not on PATH: install it (Debian and Ubuntu: apt-get install etcd-server; elsewhere an etcd release's `etcd` binary on PATH), or point --etcd-servers at a running etcd";

/// How long a starting etcd has to say it serves.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// The kubeadm file names, relative to the PKI directory.
const CA: &str = "etcd/ca";
const SERVER: &str = "etcd/server";
const PEER: &str = "etcd/peer";
const CLIENT: &str = "apiserver-etcd-client";

/// How to start one member again the same way.
struct Run {
    /// `--name`, and this member's entry in `--initial-cluster`.
    name: String,
    /// Every member as `name=peer-url`, comma-separated.
    initial_cluster: String,
    etcd: PathBuf,
    pki: PathBuf,
    data: PathBuf,
    log: PathBuf,
    client_url: String,
    peer_url: String,
}

impl Run {
    fn spawn(&self) -> Result<Child, String> {
        let out =
            std::fs::File::create(&self.log).map_err(|e| format!("{}: {e}", self.log.display()))?;
        let err_out = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        let f =
            |name: &str, ext: &str| self.pki.join(format!("{name}.{ext}")).display().to_string();
        let (client, peer) = (&self.client_url, &self.peer_url);
        let mut cmd = Command::new(&self.etcd);
        cmd.args(["--name", &self.name, "--data-dir"])
            .arg(&self.data)
            .args(["--listen-client-urls", client])
            .args(["--advertise-client-urls", client])
            .args(["--listen-peer-urls", peer])
            .args(["--initial-advertise-peer-urls", peer])
            .args(["--initial-cluster", &self.initial_cluster])
            .args([
                "--cert-file",
                &f(SERVER, "crt"),
                "--key-file",
                &f(SERVER, "key"),
            ])
            .args(["--client-cert-auth", "--trusted-ca-file", &f(CA, "crt")])
            .args(["--peer-cert-file", &f(PEER, "crt")])
            .args(["--peer-key-file", &f(PEER, "key")])
            .args([
                "--peer-client-cert-auth",
                "--peer-trusted-ca-file",
                &f(CA, "crt"),
            ])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err_out);
        detach_and_die_with_parent(&mut cmd);
        cmd.spawn()
            .map_err(|e| format!("{}: cannot start: {e}", self.etcd.display()))
    }
}

/// One etcd process of the cluster.
struct Member {
    child: Option<Child>,
    run: Run,
}

pub struct LocalEtcd {
    /// One, or three (`--etcd-members 3`) sharing the PKI, each with its own data and ports.
    members: Vec<Member>,
    /// The flags that reach it, as `--etcd-servers` and friends would say them.
    pub options: EtcdOptions,
    /// The first member's own output, for when it fails (the others' beside it, `.m1`, `.m2`).
    pub log: PathBuf,
    /// Removed on drop: the directory kexplore chose when none was given.
    scratch: Option<PathBuf>,
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn on_path(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn pair_ok(dir: &Path, name: &str) -> bool {
    let key = std::fs::read_to_string(dir.join(format!("{name}.key")));
    dir.join(format!("{name}.crt")).is_file()
        && key.is_ok_and(|k| key_from_pem(&Secret::new(k)).is_ok())
}

/// Reuse the etcd PKI kept in `dir`, or mint all of it anew when any piece is missing.
fn etcd_pki(dir: &Path) -> Result<(), String> {
    if [CA, SERVER, PEER, CLIENT].iter().all(|n| pair_ok(dir, n)) {
        return Ok(());
    }
    std::fs::create_dir_all(dir.join("etcd")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (nb, year) = (now() - 3600, 365 * 24 * 3600);
    let err = |e: crate::pki::mint::MintError| e.to_string();
    let ca = Authority::self_signed(
        &CertSpec::ca(vec![(Attr::CN, "etcd-ca".into())], nb, now() + 10 * year),
        generate_key(KeyKind::EcdsaP256).map_err(err)?,
    )
    .map_err(err)?;
    let write = |name: &str, cert: &str, key: &Secret<String>| -> Result<(), String> {
        write_private(&dir.join(format!("{name}.crt")), cert, 0o644)?;
        write_private(&dir.join(format!("{name}.key")), key.expose(), 0o600)
    };
    write(CA, &ca.cert.cert_pem, &ca.cert.key_pem)?;
    let ips: Vec<IpAddr> = vec![[127, 0, 0, 1].into(), std::net::Ipv6Addr::LOCALHOST.into()];
    // kubeadm's etcd server and peer certificates serve and are clients (of their peers).
    let both = |cn: &str| {
        let mut spec = CertSpec::server(
            vec![(Attr::CN, cn.into())],
            vec!["localhost".into()],
            ips.clone(),
            nb,
            now() + year,
        );
        spec.extended_key_usages
            .push(rcgen::ExtendedKeyUsagePurpose::ClientAuth);
        spec
    };
    let client = CertSpec::client(
        vec![(Attr::CN, "kube-apiserver-etcd-client".into())],
        nb,
        now() + year,
    );
    for (name, spec) in [
        (SERVER, both("kexplore-etcd")),
        (PEER, both("kexplore-etcd")),
        (CLIENT, client),
    ] {
        let m = ca
            .issue(&spec, &generate_key(KeyKind::EcdsaP256).map_err(err)?)
            .map_err(err)?;
        write(name, &m.cert_pem, &m.key_pem)?;
    }
    Ok(())
}

fn free_port() -> Result<TcpListener, String> {
    TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))
}

fn port(l: &TcpListener) -> u16 {
    l.local_addr().map(|a| a.port()).unwrap_or(0)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Ask the child to stop: its own process group, so the terminal's Ctrl-C reaches kexplore
/// first and kexplore stops it after the server (whose last writes still go to etcd).
fn detach_and_die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

impl LocalEtcd {
    /// Start etcd with the PKI in `pki_dir` (minted when missing) and its data in `data_dir`
    /// (a scratch directory removed on exit when None). Returns once etcd serves clients.
    pub fn start(
        pki_dir: Option<&Path>,
        data_dir: Option<&Path>,
        compaction_interval: Duration,
    ) -> Result<LocalEtcd, String> {
        Self::start_members(pki_dir, data_dir, 1, compaction_interval)
    }

    /// As `start`, with `members` etcd processes forming one cluster (an odd number survives
    /// the loss of a minority): returns once every member serves clients.
    pub fn start_members(
        pki_dir: Option<&Path>,
        data_dir: Option<&Path>,
        members: usize,
        compaction_interval: Duration,
    ) -> Result<LocalEtcd, String> {
        let etcd = on_path("etcd").ok_or_else(|| INSTALL_HINT.to_string())?;
        let scratch = match (pki_dir, data_dir) {
            (Some(_), Some(_)) => None,
            _ => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos())
                    .unwrap_or(0);
                let d = std::env::temp_dir()
                    .join(format!("kexplore-etcd-{}-{nanos}", std::process::id()));
                std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                Some(d)
            }
        };
        let in_scratch = |sub: &str| scratch.as_deref().map(|s| s.join(sub));
        let pki = absolute(
            &pki_dir
                .map(Path::to_path_buf)
                .or_else(|| in_scratch("pki"))
                .unwrap_or_default(),
        );
        let data = absolute(
            &data_dir
                .map(Path::to_path_buf)
                .or_else(|| in_scratch("data"))
                .unwrap_or_default(),
        );
        let log = match &scratch {
            Some(s) => s.join("etcd.log"),
            None => data.with_extension("log"),
        };
        // The ports are found free, released, then bound by etcd: another process (tests side
        // by side, another serve) may take one in between. etcd then exits at once with
        // "address already in use" before writing any data; start again on other ports.
        let fresh = !data.exists();
        let mut started = Err(String::new());
        for _ in 0..3 {
            started = LocalEtcd::spawn(
                &etcd,
                &pki,
                &data,
                &log,
                members.max(1),
                compaction_interval,
            );
            match &started {
                Err(e) if e.contains("address already in use") && (fresh || members <= 1) => {
                    if fresh {
                        let _ = std::fs::remove_dir_all(&data);
                    }
                }
                _ => break,
            }
        }
        if let Err(e) = &started
            && let Some(s) = &scratch
        {
            let _ = std::fs::remove_dir_all(s);
            return Err(e.clone());
        }
        if let Ok(l) = started.as_mut() {
            l.scratch = scratch;
        }
        started
    }

    fn spawn(
        etcd: &Path,
        pki: &Path,
        data: &Path,
        log: &Path,
        members: usize,
        compaction_interval: Duration,
    ) -> Result<LocalEtcd, String> {
        etcd_pki(pki)?;
        let mut ports = Vec::new();
        for _ in 0..members {
            ports.push((free_port()?, free_port()?));
        }
        let url = |l: &TcpListener| format!("https://127.0.0.1:{}", port(l));
        // One member keeps the name and the layout a single etcd always had (its data in
        // `data`), so an --etcd-data-dir from before still opens; more are m0, m1, m2.
        let name = |i: usize| match members {
            1 => "kexplore".to_string(),
            _ => format!("m{i}"),
        };
        let initial_cluster = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("{}={}", name(i), url(peer)))
            .collect::<Vec<_>>()
            .join(",");
        let runs: Vec<Run> = ports
            .iter()
            .enumerate()
            .map(|(i, (client, peer))| Run {
                name: name(i),
                initial_cluster: initial_cluster.clone(),
                etcd: etcd.to_path_buf(),
                pki: pki.to_path_buf(),
                data: match members {
                    1 => data.to_path_buf(),
                    _ => data.join(name(i)),
                },
                log: match i {
                    0 => log.to_path_buf(),
                    _ => log.with_extension(format!("log.m{i}")),
                },
                client_url: url(client),
                peer_url: url(peer),
            })
            .collect();
        for r in &runs {
            std::fs::create_dir_all(&r.data).map_err(|e| format!("{}: {e}", r.data.display()))?;
        }
        let servers: Vec<String> = runs.iter().map(|r| r.client_url.clone()).collect();
        // The ports are free until etcd binds them: release them at the last moment.
        drop(ports);
        // All members start before any is waited for: each serves only once a quorum is up.
        let mut spawned = Vec::new();
        for run in runs {
            match run.spawn() {
                Ok(c) => spawned.push(Member {
                    child: Some(c),
                    run,
                }),
                Err(e) => {
                    LocalEtcd::stop_all(&mut spawned);
                    return Err(e);
                }
            }
        }
        let mut local = LocalEtcd {
            members: spawned,
            options: EtcdOptions {
                servers,
                cafile: Some(pki.join(format!("{CA}.crt"))),
                certfile: Some(pki.join(format!("{CLIENT}.crt"))),
                keyfile: Some(pki.join(format!("{CLIENT}.key"))),
                prefix: "/registry".into(),
                compaction_interval,
            },
            log: log.to_path_buf(),
            scratch: None,
        };
        local.wait_ready()?;
        Ok(local)
    }

    /// Stop etcd, every member (SIGTERM, then SIGKILL after 10 s), keeping its data.
    pub fn stop(&mut self) {
        LocalEtcd::stop_all(&mut self.members);
    }

    fn stop_all(members: &mut [Member]) {
        for m in members {
            stop_child(m.child.take());
        }
    }

    /// The client URL of each member, in order.
    pub fn member_urls(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| m.run.client_url.clone())
            .collect()
    }

    /// Kill member `i` outright (SIGKILL: a crashed machine), keeping its data.
    pub fn kill_member(&mut self, i: usize) {
        if let Some(mut c) = self.members.get_mut(i).and_then(|m| m.child.take()) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start member `i` again on its data, URLs and certificates; returns once it serves.
    pub fn restart_member(&mut self, i: usize) -> Result<(), String> {
        let Some(m) = self.members.get_mut(i) else {
            return Err(format!("no etcd member {i}"));
        };
        stop_child(m.child.take());
        m.child = Some(m.run.spawn()?);
        m.wait_ready()
    }
}

/// SIGTERM, then SIGKILL after 10 s.
fn stop_child(child: Option<Child>) {
    let Some(mut child) = child else {
        return;
    };
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: a signal to our own child, which we have not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl LocalEtcd {
    /// Start it again (every member) on the same data, URLs and certificates.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        for m in &mut self.members {
            m.child = Some(m.run.spawn()?);
        }
        self.wait_ready()
    }

    /// Every member serves clients (a member does once the cluster has a leader).
    fn wait_ready(&mut self) -> Result<(), String> {
        self.members.iter_mut().try_for_each(Member::wait_ready)
    }
}

impl Member {
    /// etcd logs that it serves clients once it has a leader.
    fn wait_ready(&mut self) -> Result<(), String> {
        let log = &self.run.log;
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.contains("ready to serve client requests") {
                return Ok(());
            }
            let exited = self.child.as_mut().map(|c| c.try_wait());
            if let Some(Ok(Some(status))) = exited {
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return Err(format!(
                    "etcd exited ({status}) before serving; its last words ({}):\n{}",
                    log.display(),
                    tail.join("\n")
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "etcd did not serve clients within {READY_WITHIN:?} (see {})",
                    log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for LocalEtcd {
    fn drop(&mut self) {
        self.stop();
        if let Some(s) = &self.scratch {
            let _ = std::fs::remove_dir_all(s);
        }
    }
}

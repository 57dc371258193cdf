//! Shared by the apiserver, curl and kubectl tests: start `kexplore serve` as a real process
//! on port 0 and kill it when the test ends (also on panic), plus tool discovery.
#![allow(dead_code)]

pub mod kubectl;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

pub use kexplore::apiserver::storage::etcd_local::LocalEtcd;

pub struct ServeProcess {
    child: Child,
    /// What it printed after its `listening on` line.
    printed: Printed,
    pub dir: tempfile::TempDir,
    pub url: String,
    pub port: u16,
    pub pki_dir: PathBuf,
    /// The etcd behind it when `KEXPLORE_TEST_STORE=etcd` (stopped after the server).
    pub etcd: Option<LocalEtcd>,
}

/// `etcdctl` (API v3) with the test etcd's client certificates, at `endpoints`; its
/// subcommand still to add.
pub fn etcdctl_at(etcd: &LocalEtcd, endpoints: &str) -> Command {
    let o = &etcd.options;
    let mut c = Command::new("etcdctl");
    c.env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoints])
        .arg("--cacert")
        .arg(o.cafile.as_deref().unwrap_or(Path::new("")))
        .arg("--cert")
        .arg(o.certfile.as_deref().unwrap_or(Path::new("")))
        .arg("--key")
        .arg(o.keyfile.as_deref().unwrap_or(Path::new("")));
    c
}

/// `etcdctl_at` the test etcd's own members.
pub fn etcdctl(etcd: &LocalEtcd) -> Command {
    etcdctl_at(etcd, &etcd.options.servers.join(","))
}

/// `KEXPLORE_TEST_STORE=etcd`: every server these tests start keeps its cluster in an etcd of
/// its own (a real `etcd` from PATH, own data directory and loopback ports), so a suite runs
/// once per store. Anything else: the in-memory store.
pub fn on_etcd() -> bool {
    std::env::var("KEXPLORE_TEST_STORE").is_ok_and(|v| v == "etcd")
}

/// A fresh etcd for one test, with the kubeadm-style PKI under `dir`: its data in `dir/etcd`,
/// its certificates in `dir/etcd-pki`.
pub fn start_etcd(dir: &Path) -> LocalEtcd {
    LocalEtcd::start(
        Some(&dir.join("etcd-pki")),
        Some(&dir.join("etcd")),
        std::time::Duration::from_secs(300),
    )
    .unwrap_or_else(|e| panic!("cannot start etcd for the test: {e}"))
}

/// `kexplore serve`'s flags that reach `etcd`.
pub fn etcd_flags(etcd: &LocalEtcd) -> Vec<String> {
    let o = &etcd.options;
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    vec![
        format!("--etcd-servers={}", o.servers.join(",")),
        format!("--etcd-cafile={}", path(&o.cafile)),
        format!("--etcd-certfile={}", path(&o.certfile)),
        format!("--etcd-keyfile={}", path(&o.keyfile)),
    ]
}

impl ServeProcess {
    /// curl as kexplore-admin with `args` on `path`: the HTTP code and the body as text.
    pub fn curl_admin(&self, args: &[&str], path: &str) -> (u16, String) {
        let out = Command::new("curl")
            .args([
                "-sS",
                "--max-time",
                "20",
                "-w",
                "\n%{http_code}",
                "--cacert",
            ])
            .arg(self.pki("ca.crt"))
            .arg("--cert")
            .arg(self.pki("admin.crt"))
            .arg("--key")
            .arg(self.pki("admin.key"))
            .args(args)
            .arg(format!("{}{path}", self.url))
            .output()
            .expect("run curl");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
        (code.trim().parse().unwrap_or(0), body.to_string())
    }

    pub fn start(extra: &[&str]) -> ServeProcess {
        Self::start_with_pki(extra, None)
    }

    /// Start with `--pki-dir` at `pki` (to test reuse), else a fresh one in the temp dir.
    pub fn start_with_pki(extra: &[&str], pki: Option<&Path>) -> ServeProcess {
        let dir = tempfile::tempdir().expect("tempdir");
        let kc = dir.path().join("kubeconfig");
        let pki = pki
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.path().join("pki"));
        // A test that names its own etcd (or `--etcd`) keeps it.
        let own = extra.iter().any(|a| a.starts_with("--etcd"));
        let etcd = (on_etcd() && !own).then(|| start_etcd(dir.path()));
        let mut command = Command::new(env!("CARGO_BIN_EXE_kexplore"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--kubeconfig-out"])
            .arg(&kc)
            .arg("--pki-dir")
            .arg(&pki)
            .args(extra)
            .args(etcd.as_ref().map(etcd_flags).unwrap_or_default())
            .stderr(Stdio::null());
        let (child, url, port, printed) =
            spawn_listening_with_output(&mut command, Duration::from_secs(20))
                .unwrap_or_else(|e| panic!("{e}"));
        ServeProcess {
            child,
            printed,
            dir,
            url,
            port,
            pki_dir: pki,
            etcd,
        }
    }

    /// What it has printed so far after its `listening on` line.
    pub fn printed(&self) -> String {
        self.printed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    pub fn pki(&self, file: &str) -> PathBuf {
        self.pki_dir.join(file)
    }

    /// SIGKILL: the process ends without any goodbye (a crashed replica; its Leases simply
    /// stop being renewed).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Send SIGTERM and wait (bounded) for a clean exit; returns the exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

/// Spawns a prepared `kexplore serve` command (its stderr already chosen), waits up to `within`
/// for its `listening on https://HOST:PORT` line and keeps draining stdout afterwards. Returns
/// the child, the URL and the port; on failure the child is killed and the line named.
pub fn spawn_listening(
    command: &mut Command,
    within: Duration,
) -> Result<(Child, String, u16), String> {
    spawn_listening_with_output(command, within).map(|(child, url, port, _)| (child, url, port))
}

/// What a serve process printed after its first line, filled as it prints.
pub type Printed = Arc<Mutex<String>>;

/// [`spawn_listening`], and what serve prints after its first line, as it prints it.
pub fn spawn_listening_with_output(
    command: &mut Command,
    within: Duration,
) -> Result<(Child, String, u16, Printed), String> {
    let printed = Arc::new(Mutex::new(String::new()));
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn kexplore serve: {e}"))?;
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let rest = printed.clone();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        let _ = r.read_line(&mut line);
        let _ = tx.send(line);
        let mut next = String::new();
        while r.read_line(&mut next).map(|n| n > 0).unwrap_or(false) {
            rest.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_str(&next);
            next.clear();
        }
    });
    let line = rx.recv_timeout(within).unwrap_or_default();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_default()
        .to_string();
    let port = url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    if port == 0 {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!(
            "kexplore serve did not print its listening line within {within:?} (first line: {line:?})"
        ));
    }
    Ok((child, url, port, printed))
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tool on PATH, or None (the test prints a note and skips).
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Every kubectl on the machine: `kubectl` plus the `kubectl.1.NN` beside the real one; only
/// those `KEXPLORE_TEST_KUBECTLS` names (`1.27,1.32,1.33`) when it is set. `kubectl` is left
/// out when it is the Cloud SDK's dispatcher (see [`dispatches_to_versions`]).
pub fn kubectls() -> Vec<(String, PathBuf)> {
    let mut all = installed_kubectls();
    if let Some(chosen) = chosen_kubectls() {
        all.retain(|(label, _)| chosen.contains(label));
    }
    all
}

/// The labels `KEXPLORE_TEST_KUBECTLS` names, when it is set.
pub fn chosen_kubectls() -> Option<Vec<String>> {
    let v = std::env::var("KEXPLORE_TEST_KUBECTLS").ok()?;
    Some(v.split(',').map(|s| s.trim().to_string()).collect())
}

fn installed_kubectls() -> Vec<(String, PathBuf)> {
    let Some(k) = which("kubectl") else {
        return vec![];
    };
    let real = std::fs::canonicalize(&k).unwrap_or(k.clone());
    let dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut out = vec![("kubectl".to_string(), k.clone())];
    for minor in 27..=40 {
        let p = dir.join(format!("kubectl.1.{minor}"));
        if p.is_file() {
            out.push((format!("1.{minor}"), p));
        }
    }
    if out.len() > 1 && dispatches_to_versions(&k) {
        out.remove(0);
    }
    out
}

/// The Cloud SDK's `kubectl` (`Client Version: v1.32.4-dispatcher`) is no kubectl of its own:
/// it asks the server its version and runs the `kubectl.1.NN` beside it that matches, which
/// the suites already run directly. Against this server (1.33) it ran 1.33 a second time at
/// twice the CPU, on a CI that is CPU-bound; the tests that run `kubectl` from PATH by name
/// still go through it.
fn dispatches_to_versions(kubectl: &Path) -> bool {
    static DISPATCHER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DISPATCHER.get_or_init(|| {
        Command::new(kubectl)
            .args(["version", "--client"])
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("-dispatcher"))
    })
}

/// Poll `f` until it returns Some or the time is up: every 100 ms at first, then half as
/// often again each time up to once a second. Most polls start a kubectl (~80 ms of CPU); at a
/// steady 10 a second, eight suites waiting on minute-long timers took the CPU the others
/// needed on a 2-core machine.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(100);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        let now = Instant::now();
        if now > deadline {
            return None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 3 / 2).min(Duration::from_secs(1));
    }
}

pub const SEED_POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app"},"spec":{"containers":[{"name":"app","image":"registry.cn-hangzhou.aliyuncs.com/kube-easy/app:latest","command":["app"],"ports":[{"containerPort":2580}]}]}}"#;

/// Run `openssl ARGS` in `dir`; a failure stops the test with openssl's own message.
pub fn openssl_in(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Write an executable script at `path`, by a shell of its own, never through a file this
/// process holds open: a test on another thread that forks while the file is open for writing
/// here would hold it too until it execs, and running the script then fails with ETXTBSY
/// ("Text file busy"), as `client_exec`'s credential-cache test did now and then.
pub fn write_executable(path: &Path, text: &str) {
    let ok = Command::new("sh")
        .args(["-c", r#"printf '%s' "$1" > "$0" && chmod 755 "$0""#])
        .arg(path)
        .arg(text)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "could not write {}", path.display());
}

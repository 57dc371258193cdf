//! Secrets (issue 7): a full session — `serve` with --kubeconfig-out, --audit-log-path and a
//! token file; `certs` in text and JSON on every context of every sample kubeconfig and of the
//! written one; `journey` (text and JSON, and once with a wrong token); `schedule` on every
//! scenario; requests with a bearer token — then every output, log, audit line and error
//! message is searched for the private keys (each PEM body line, the base64 of the DER, the
//! kubeconfig's client-key-data) and the tokens of every kubeconfig and token file used. None
//! may appear. Files kexplore writes are 0600; `--pki-dir` with a world-readable key is refused.

mod apiserver_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

const BIN: &str = env!("CARGO_BIN_EXE_kexplore");
const TOKEN: &str = "kexplore-test-token-7f3a9c1e5b2d4f60a8c7e9b1d3f5a7c9";
const WRONG_TOKEN: &str = "kexplore-wrong-token-0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run a kexplore command with a bound; returns stdout + stderr (whatever its exit status).
fn run(args: &[&str], bound: Duration) -> String {
    let mut child = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kexplore");
    let deadline = Instant::now() + bound;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    format!(
        "$ kexplore {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What must never be printed: for a PEM private key, every body line of 16+ characters and
/// the whole DER in base64 on one line; the PEM's base64 as a kubeconfig embeds it.
fn key_needles(pem: &str, out: &mut Vec<String>) {
    let body: Vec<&str> = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty() && !l.contains(':'))
        .collect();
    for l in &body {
        if l.len() >= 16 {
            out.push((*l).to_string());
        }
    }
    let joined = body.concat();
    if joined.len() >= 16 {
        out.push(joined);
    }
    let embedded = base64::engine::general_purpose::STANDARD.encode(pem.as_bytes());
    out.push(embedded.chars().take(64).collect());
}

/// Keys and tokens of one kubeconfig (embedded data, files relative to it, tokens).
fn kubeconfig_needles(path: &Path, out: &mut Vec<String>) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(v) = serde_yaml::from_str::<serde_yaml::Value>(&text) else {
        return;
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    for u in v["users"].as_sequence().into_iter().flatten() {
        let user = &u["user"];
        if let Some(d) = user["client-key-data"].as_str() {
            out.push(d.chars().take(64).collect());
            if let Ok(pem) = base64::engine::general_purpose::STANDARD.decode(d.trim()) {
                key_needles(&String::from_utf8_lossy(&pem), out);
            }
        }
        if let Some(f) = user["client-key"].as_str()
            && let Ok(pem) = std::fs::read_to_string(dir.join(f))
        {
            key_needles(&pem, out);
        }
        for field in ["token", "password"] {
            if let Some(t) = user[field].as_str() {
                out.push(t.to_string());
            }
        }
    }
}

fn context_names(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let v: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or_default();
    v["contexts"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

fn samples() -> Vec<PathBuf> {
    let dir = repo().join("sample-kubeconfigs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.push(dir.join("file-references").join("config"));
    v.sort();
    v
}

struct Serve {
    child: Child,
    port: u16,
}

impl Serve {
    fn start(args: &[&std::ffi::OsStr], log: &Path) -> Result<Serve, String> {
        let stderr = std::fs::File::create(log).expect("log");
        let mut command = Command::new(BIN);
        command.args(args).stderr(stderr);
        let (child, _, port) =
            apiserver_support::spawn_listening(&mut command, Duration::from_secs(20))?;
        Ok(Serve { child, port })
    }

    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0)
}

fn curl(port: u16, pki: &Path, token: &str, path: &str, body: Option<&str>) -> String {
    let mut c = Command::new("curl");
    c.args(["-s", "-m", "10", "--cacert"])
        .arg(pki.join("ca.crt"))
        .args(["-H", &format!("Authorization: Bearer {token}")]);
    if let Some(b) = body {
        c.args(["-H", "Content-Type: application/json", "-d", b]);
    }
    c.arg(format!("https://127.0.0.1:{port}{path}"));
    match c.output() {
        Ok(o) => format!(
            "$ curl {path}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("curl: {e}\n"),
    }
}

#[test]
fn no_key_or_token_in_any_output_of_a_full_session() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let (kc, pki, audit, log) = (
        d.join("kubeconfig"),
        d.join("pki"),
        d.join("audit.log"),
        d.join("serve.stderr"),
    );
    let tokens = d.join("tokens.csv");
    std::fs::write(&tokens, format!("{TOKEN},token-admin,9,system:masters\n")).expect("tokens");
    let mut server = Serve::start(
        &[
            "serve".as_ref(),
            "--listen".as_ref(),
            "127.0.0.1:0".as_ref(),
            "--kubeconfig-out".as_ref(),
            kc.as_os_str(),
            "--pki-dir".as_ref(),
            pki.as_os_str(),
            "--audit-log-path".as_ref(),
            audit.as_os_str(),
            "--token-auth-file".as_ref(),
            tokens.as_os_str(),
        ],
        &log,
    )
    .expect("serve starts");
    let mut outputs = Vec::new();
    let short = Duration::from_secs(30);

    // certs on every context of every sample and of the written kubeconfig, text and JSON.
    let mut configs = samples();
    configs.push(kc.clone());
    for cfg in &configs {
        let cfg_s = cfg.display().to_string();
        let mut ctxs: Vec<Option<String>> = vec![None];
        ctxs.extend(context_names(cfg).into_iter().map(Some));
        for ctx in &ctxs {
            for o in ["text", "json"] {
                let mut args = vec!["--kubeconfig", &cfg_s, "-o", o];
                if let Some(c) = ctx {
                    args.extend(["--context", c]);
                }
                args.push("certs");
                outputs.push(run(&args, short));
            }
        }
    }

    // A kubeconfig whose key is broken: the error must not quote it.
    let broken_pem = "-----BEGIN EC PRIVATE KEY-----\nTUlJQkJ1c3RlZEtleUJvZHlMaW5lT25lLXNlY3JldC1ieXRlcy0xMjM0NTY3\nODkwYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=\n-----END EC PRIVATE KEY-----\n";
    let kc_text = std::fs::read_to_string(&kc).expect("kubeconfig written");
    let broken = d.join("broken-key.yaml");
    let mut broken_text = String::new();
    let mut replaced = false;
    for line in kc_text.lines() {
        if !replaced && line.trim_start().starts_with("client-key-data:") {
            broken_text.push_str(&format!(
                "    client-key-data: {}\n",
                base64::engine::general_purpose::STANDARD.encode(broken_pem)
            ));
            replaced = true;
        } else {
            broken_text.push_str(line);
            broken_text.push('\n');
        }
    }
    std::fs::write(&broken, &broken_text).expect("write");
    let broken_s = broken.display().to_string();
    for o in ["text", "json"] {
        outputs.push(run(&["--kubeconfig", &broken_s, "-o", o, "certs"], short));
    }

    // A token kubeconfig for the served cluster, and one with a wrong token.
    let server_url = format!("https://127.0.0.1:{}", server.port);
    let ca_b64 = base64::engine::general_purpose::STANDARD
        .encode(std::fs::read(pki.join("ca.crt")).expect("ca"));
    let token_kc = |name: &str, token: &str| {
        let p = d.join(name);
        std::fs::write(
            &p,
            format!("apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {server_url}\n    certificate-authority-data: {ca_b64}\ncontexts:\n- name: t\n  context:\n    cluster: k\n    user: t\ncurrent-context: t\nusers:\n- name: t\n  user:\n    token: {token}\n"),
        )
        .expect("write");
        p
    };
    let good_tok = token_kc("token.yaml", TOKEN);
    let wrong_tok = token_kc("wrong-token.yaml", WRONG_TOKEN);

    // journey: admin certificate (text, JSON), token, wrong token.
    let pod = d.join("pod.json");
    let kc_s = kc.display().to_string();
    for (i, (cfg, o)) in [
        (kc_s.clone(), "text"),
        (kc_s.clone(), "json"),
        (good_tok.display().to_string(), "text"),
        (wrong_tok.display().to_string(), "text"),
    ]
    .iter()
    .enumerate()
    {
        std::fs::write(
            &pod,
            format!(r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"secret-run-{i}"}},"spec":{{"containers":[{{"name":"app","image":"nginx:1.27"}}]}}}}"#),
        )
        .expect("pod");
        outputs.push(run(
            &[
                "--kubeconfig",
                cfg,
                "-o",
                o,
                "journey",
                "-f",
                &pod.display().to_string(),
                "--timeout",
                "20",
            ],
            Duration::from_secs(40),
        ));
    }
    let journeys = &outputs[outputs.len() - 4..];
    assert!(
        journeys[0].contains("binding") && journeys[2].contains("binding"),
        "the journeys (certificate, token) did not run: {journeys:?}"
    );
    for cfg in [&good_tok, &wrong_tok] {
        outputs.push(run(
            &["--kubeconfig", &cfg.display().to_string(), "certs"],
            short,
        ));
    }

    // Raw requests with the token and with a wrong one (audit, error Status).
    if which("curl") {
        for t in [TOKEN, WRONG_TOKEN] {
            outputs.push(curl(server.port, &pki, t, "/api/v1/pods", None));
            outputs.push(curl(
                server.port,
                &pki,
                t,
                "/api/v1/namespaces/default/pods",
                Some("{not json"),
            ));
        }
    }

    // schedule on every scenario, text and JSON.
    for e in std::fs::read_dir(repo().join("scenarios")).expect("scenarios") {
        let p = e.expect("entry").path().display().to_string();
        for o in ["text", "json"] {
            outputs.push(run(&["-o", o, "schedule", "-f", &p], short));
        }
    }

    server.stop();
    std::thread::sleep(Duration::from_millis(200));

    // Everything the session produced, except the credentials themselves.
    let mut haystack = outputs.join("\n");
    for f in [&audit, &log] {
        haystack.push_str(&String::from_utf8_lossy(
            &std::fs::read(f).unwrap_or_default(),
        ));
    }
    let audit_lines = std::fs::read_to_string(&audit)
        .map(|s| s.lines().count())
        .unwrap_or(0);
    assert!(
        audit_lines > 10,
        "the audit log has only {audit_lines} lines"
    );

    let mut needles = Vec::new();
    for cfg in &configs {
        kubeconfig_needles(cfg, &mut needles);
    }
    for e in std::fs::read_dir(&pki).expect("pki") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|e| e == "key") {
            key_needles(&std::fs::read_to_string(&p).expect("key"), &mut needles);
        }
    }
    for dir in [
        "sample-kubeconfigs/pki",
        "sample-kubeconfigs/file-references/pki",
    ] {
        for f in walk(&repo().join(dir)) {
            if f.extension().is_some_and(|e| e == "key") {
                key_needles(
                    &std::fs::read_to_string(&f).unwrap_or_default(),
                    &mut needles,
                );
            }
        }
    }
    key_needles(broken_pem, &mut needles);
    needles.extend([TOKEN.to_string(), WRONG_TOKEN.to_string()]);
    needles.sort();
    needles.dedup();
    assert!(needles.len() > 50, "too few needles: {}", needles.len());

    let leaks: Vec<&String> = needles
        .iter()
        .filter(|n| haystack.contains(n.as_str()))
        .collect();
    println!(
        "SECRETS | {} commands, {} bytes of output + audit ({audit_lines} lines) + server log searched for {} needles: {} found",
        outputs.len(),
        haystack.len(),
        needles.len(),
        leaks.len()
    );
    if !leaks.is_empty() {
        let at = leaks
            .iter()
            .map(|n| {
                let i = haystack.find(n.as_str()).unwrap_or(0);
                let start = haystack[..i].rfind("$ kexplore").unwrap_or(0);
                let cmd = haystack[start..].lines().next().unwrap_or("");
                format!("{}… in output of {cmd}", &n[..n.len().min(24)])
            })
            .collect::<Vec<_>>();
        panic!("secrets found in outputs: {at:#?}");
    }

    // Modes of what kexplore wrote that holds secrets.
    assert_eq!(mode(&kc), 0o600, "--kubeconfig-out mode");
    for name in ["ca.key", "apiserver.key", "admin.key", "jane.key"] {
        assert_eq!(mode(&pki.join(name)), 0o600, "{name} mode");
    }
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The audit log records request and response metadata of every request: it is as private as
/// the kubeconfig and must be 0600 (kube-apiserver's log rotation creates it 0600).
#[test]
fn audit_log_is_0600() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let audit = d.join("audit.log");
    let mut s = Serve::start(
        &[
            "serve".as_ref(),
            "--listen".as_ref(),
            "127.0.0.1:0".as_ref(),
            "--pki-dir".as_ref(),
            d.join("pki").as_os_str(),
            "--audit-log-path".as_ref(),
            audit.as_os_str(),
        ],
        &d.join("log"),
    )
    .expect("serve");
    s.stop();
    assert_eq!(mode(&audit), 0o600, "audit log mode");
}

/// `--pki-dir` whose private key is readable by others must be refused (as ssh refuses such a
/// key), not served with.
#[test]
fn pki_dir_with_world_readable_key_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pki = tmp.path().join("pki");
    let args = |pki: &Path| -> Vec<std::ffi::OsString> {
        vec![
            "serve".into(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--pki-dir".into(),
            pki.as_os_str().to_owned(),
        ]
    };
    // First run creates the PKI.
    let a = args(&pki);
    let a: Vec<&std::ffi::OsStr> = a.iter().map(|s| s.as_os_str()).collect();
    let mut s = Serve::start(&a, &tmp.path().join("log1")).expect("first serve");
    s.stop();
    drop(s);
    std::fs::set_permissions(pki.join("ca.key"), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    let started = Serve::start(&a, &tmp.path().join("log2"));
    let log = std::fs::read_to_string(tmp.path().join("log2")).unwrap_or_default();
    assert!(
        started.is_err(),
        "serve started with a world-readable ca.key; stderr: {log}"
    );
    assert!(log.contains("ca.key"), "the refusal names the file: {log}");
}

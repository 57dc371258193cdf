//! Exec credential plugins as real processes: a script that answers, one that is missing,
//! one that fails, one that hangs.

use std::path::Path;
use std::time::Duration;

use kexplore::client::exec::{ExecError, run};
use kexplore::kubeconfig::{Kubeconfig, ResolvedContext};

mod apiserver_support;

fn script(dir: &Path, name: &str, body: &str) {
    apiserver_support::write_executable(&dir.join(name), &format!("#!/bin/sh\n{body}\n"));
}

fn context(dir: &Path, command: &str, extra: &str) -> ResolvedContext {
    let text = format!(
        "current-context: t\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n    certificate-authority-data: Q0E=\n\
         \x20   extensions:\n    - name: client.authentication.k8s.io/exec\n      extension: {{audience: kexplore}}\n\
         users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n      command: {command}\n\
         \x20     args: [--flag]\n      env: [{{name: PLUGIN_ENV, value: from-kubeconfig}}]\n{extra}\
         contexts:\n- name: t\n  context: {{cluster: c, user: u}}\n"
    );
    let path = dir.join("config");
    std::fs::write(&path, text).unwrap();
    Kubeconfig::load_file(&path).unwrap().resolve(None).unwrap()
}

#[test]
fn a_plugin_gets_args_env_and_cluster_info_and_its_token_is_used() {
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "cred",
        r#"printf '%s' "$KUBERNETES_EXEC_INFO" > "$(dirname "$0")/info.json"
echo "$1 $PLUGIN_ENV" > "$(dirname "$0")/args.txt"
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin","expirationTimestamp":"2099-01-01T00:00:00Z"}}'"#,
    );
    let ctx = context(dir.path(), "./cred", "      provideClusterInfo: true\n");
    let exec = ctx.user.exec.as_ref().unwrap();
    let cred = run(exec, &ctx.cluster, Duration::from_secs(10)).unwrap();
    assert_eq!(cred.token.unwrap().expose(), "from-plugin");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("info.json")).unwrap())
            .unwrap();
    assert_eq!(info["apiVersion"], "client.authentication.k8s.io/v1");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(info["spec"]["cluster"]["server"], "https://127.0.0.1:6443");
    assert_eq!(
        info["spec"]["cluster"]["certificate-authority-data"],
        "Q0E="
    );
    assert_eq!(info["spec"]["cluster"]["config"]["audience"], "kexplore");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("args.txt"))
            .unwrap()
            .trim(),
        "--flag from-kubeconfig"
    );
}

#[test]
fn a_missing_plugin_shows_its_install_hint() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(
        dir.path(),
        "kexplore-no-such-plugin",
        "      installHint: 'install it with: apt-get install the-plugin'\n",
    );
    let e = run(
        ctx.user.exec.as_ref().unwrap(),
        &ctx.cluster,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::NotFound { .. }));
    assert!(
        e.to_string()
            .contains("install it with: apt-get install the-plugin"),
        "{e}"
    );
}

#[test]
fn a_failing_plugin_shows_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "cred",
        "echo 'token expired, run: login' >&2\nexit 3",
    );
    let ctx = context(dir.path(), "./cred", "");
    let e = run(
        ctx.user.exec.as_ref().unwrap(),
        &ctx.cluster,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(e.to_string().contains("token expired, run: login"), "{e}");
    assert!(e.to_string().contains("exit status: 3"), "{e}");
}

#[test]
fn a_hanging_plugin_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "cred", "exec sleep 30");
    let ctx = context(dir.path(), "./cred", "");
    let e = run(
        ctx.user.exec.as_ref().unwrap(),
        &ctx.cluster,
        Duration::from_millis(300),
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::TimedOut { .. }), "{e}");
}

/// A plugin that counts its runs in `runs` and answers `token` with `expiry` (RFC 3339 or none).
fn counting(dir: &Path, token_expr: &str, expiry: Option<&str>) {
    let exp = expiry
        .map(|e| format!(r#","expirationTimestamp":"{e}""#))
        .unwrap_or_default();
    script(
        dir,
        "cred",
        &format!(
            r#"d="$(dirname "$0")"
echo run >> "$d/runs"
n=$(wc -l < "$d/runs" | tr -d ' ')
echo '{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"'{token_expr}'"{exp}}}}}'"#
        ),
    );
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn credentials_are_cached_until_they_expire() {
    use kexplore::client::exec_cache::credential;
    // No expiry: valid until the server rejects it.
    let dir = tempfile::tempdir().unwrap();
    counting(dir.path(), "t$n", None);
    let ctx = context(dir.path(), &format!("{}/cred", dir.path().display()), "");
    let exec = ctx.user.exec.as_ref().unwrap();
    let t = Duration::from_secs(10);
    assert_eq!(
        credential(exec, &ctx.cluster, t)
            .unwrap()
            .token
            .unwrap()
            .expose(),
        "t1"
    );
    assert_eq!(
        credential(exec, &ctx.cluster, t)
            .unwrap()
            .token
            .unwrap()
            .expose(),
        "t1"
    );
    assert_eq!(runs(dir.path()), 1);
    // Expiring in the future: reused.
    let dir = tempfile::tempdir().unwrap();
    counting(dir.path(), "t$n", Some("2099-01-01T00:00:00Z"));
    let ctx = context(dir.path(), &format!("{}/cred", dir.path().display()), "");
    let exec = ctx.user.exec.as_ref().unwrap();
    credential(exec, &ctx.cluster, t).unwrap();
    credential(exec, &ctx.cluster, t).unwrap();
    assert_eq!(runs(dir.path()), 1);
    // Already expired: every use runs the plugin again.
    let dir = tempfile::tempdir().unwrap();
    counting(dir.path(), "t$n", Some("2020-01-01T00:00:00Z"));
    let ctx = context(dir.path(), &format!("{}/cred", dir.path().display()), "");
    let exec = ctx.user.exec.as_ref().unwrap();
    assert_eq!(
        credential(exec, &ctx.cluster, t)
            .unwrap()
            .token
            .unwrap()
            .expose(),
        "t1"
    );
    assert_eq!(
        credential(exec, &ctx.cluster, t)
            .unwrap()
            .token
            .unwrap()
            .expose(),
        "t2"
    );
    assert_eq!(runs(dir.path()), 2);
}

#[test]
fn a_401_runs_the_plugin_again_and_retries_once() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "good-exec-token,exec-user,7,system:masters\n").unwrap();
    let srv =
        apiserver_support::ServeProcess::start(&["--token-auth-file", tokens.to_str().unwrap()]);
    // First run: a token the server does not know; later runs: the good one.
    counting(
        dir.path(),
        r#"$(if [ "$n" = 1 ]; then echo stale-exec-token; else echo good-exec-token; fi)"#,
        Some("2099-01-01T00:00:00Z"),
    );
    let ca = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        std::fs::read(srv.pki("ca.crt")).unwrap(),
    );
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "current-context: t\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\n\
             users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n      command: {}/cred\n\
             contexts:\n- name: t\n  context: {{cluster: c, user: u}}\n",
            srv.url,
            dir.path().display()
        ),
    )
    .unwrap();
    let ctx = Kubeconfig::load_file(&kc).unwrap().resolve(None).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let api = kexplore::client::http::ApiClient::connect(&ctx)
            .await
            .unwrap();
        let r = api.get("/api/v1/namespaces/default/pods").await.unwrap();
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(runs(dir.path()), 2, "one run, a 401, one more run");
        let r = api.get("/api/v1/nodes").await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(runs(dir.path()), 2, "the good token is reused");
    });
}

#[test]
fn interactive_mode_is_honoured_without_a_terminal() {
    // As under the TUI (and in CI): there is no terminal to hand over.
    kexplore::client::exec::forbid_terminal();
    let dir = tempfile::tempdir().unwrap();
    script(
        dir.path(),
        "cred",
        r#"printf '%s' "$KUBERNETES_EXEC_INFO" > "$(dirname "$0")/info.json"
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'"#,
    );
    let with_mode = |mode: &str| {
        let ctx = context(dir.path(), "./cred", "");
        let mut exec = ctx.user.exec.clone().unwrap();
        exec.interactive_mode = Some(mode.into());
        run(&exec, &ctx.cluster, Duration::from_secs(10))
    };
    let e = with_mode("Always").unwrap_err();
    assert!(matches!(e, ExecError::NeedsTerminal { .. }), "{e}");
    assert!(
        e.to_string().contains("standard input is not a terminal"),
        "{e}"
    );
    with_mode("IfAvailable").unwrap();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("info.json")).unwrap())
            .unwrap();
    assert_eq!(info["spec"]["interactive"], false);
    // Never, and the plugin wanted to prompt: the message says why it could not.
    script(
        dir.path(),
        "cred",
        "echo 'cannot prompt for the password: no tty' >&2\nexit 1",
    );
    let e = with_mode("Never").unwrap_err();
    assert!(matches!(e, ExecError::FailedWithoutTerminal { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("no tty") && text.contains("interactiveMode is Never"),
        "{text}"
    );
}

//! Exec credential plugins as real processes: a script that answers, one that is missing,
//! one that fails, one that hangs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use kexplore::client::exec::{ExecError, run};
use kexplore::kubeconfig::{Kubeconfig, ResolvedContext};

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
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

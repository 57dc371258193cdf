//! kexplore's kubeconfig merge and resolution, compared with the real kubectl on the machine.
//! Skipped (with a note) where kubectl is not installed.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use kexplore::kubeconfig::{Kubeconfig, Selection, Token};
use serde_json::Value;

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn kubectl_json(kubeconfig_env: &str, args: &[&str]) -> Value {
    let out = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig_env)
        .env("HOME", "/nonexistent")
        .args(args)
        .args(["-o", "json"])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("kubectl prints JSON")
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Two files that overlap on purpose: same cluster and user names with different contents,
/// relative paths in a subdirectory, a current-context only in the second file.
fn fixture(dir: &Path) -> String {
    write(
        dir,
        "ca.crt",
        "-----BEGIN CERTIFICATE-----\nQUFB\n-----END CERTIFICATE-----\n",
    );
    write(dir, "ca2.crt", "second CA bytes\n");
    write(dir, "sub/c.crt", "client cert bytes\n");
    write(dir, "sub/c.key", "client key bytes\n");
    write(dir, "sub/token", "file-token\n");
    write(
        dir,
        "a.yaml",
        "apiVersion: v1\nkind: Config\ncurrent-context: ''\n\
         clusters:\n- name: c1\n  cluster: {server: 'https://a:6443', certificate-authority: ca.crt}\n\
         users:\n- name: u1\n  user: {token: aaa}\n\
         contexts:\n- name: x\n  context: {cluster: c1, user: u1, namespace: ns-a}\n",
    );
    write(
        dir,
        "sub/b.yaml",
        "apiVersion: v1\nkind: Config\ncurrent-context: ctx-b\n\
         clusters:\n- name: c1\n  cluster: {server: 'https://b:6443', insecure-skip-tls-verify: true}\n\
         - name: c2\n  cluster: {server: 'https://c2:6443', certificate-authority: ../ca2.crt, tls-server-name: api.example}\n\
         users:\n- name: u1\n  user: {token: bbb, username: zed}\n\
         - name: u2\n  user: {client-certificate: c.crt, client-key: c.key}\n\
         - name: u3\n  user: {tokenFile: token}\n\
         contexts:\n- name: ctx-b\n  context: {cluster: c2, user: u2}\n- name: x\n  context: {cluster: c2, user: u3}\n\
         - name: z\n  context: {cluster: c1, user: u3, namespace: zz}\n",
    );
    format!(
        "{}:{}",
        dir.join("a.yaml").display(),
        dir.join("sub/b.yaml").display()
    )
}

#[test]
fn merged_view_equals_kubectl_config_view_merge() {
    if !kubectl_available() {
        eprintln!("note: kubectl not installed; skipping the comparison with kubectl");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let env = fixture(dir.path());
    let ours = Kubeconfig::load(&Selection::choose(None, Some(env.clone().into()), None).unwrap())
        .unwrap();
    let ours = serde_json::to_value(ours.to_config()).unwrap();
    let theirs = kubectl_json(&env, &["config", "view", "--merge", "--raw"]);
    assert_eq!(ours, theirs);
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn every_context_resolves_like_kubectl_minify_flatten() {
    if !kubectl_available() {
        eprintln!("note: kubectl not installed; skipping the comparison with kubectl");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let env = fixture(dir.path());
    let k = Kubeconfig::load(&Selection::choose(None, Some(env.clone().into()), None).unwrap())
        .unwrap();
    let current = Command::new("kubectl")
        .env("KUBECONFIG", &env)
        .args(["config", "current-context"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&current.stdout).trim(),
        k.current_context.as_ref().unwrap().value
    );
    for name in k.context_names() {
        let r = k.resolve(Some(&name)).unwrap();
        let v = kubectl_json(
            &env,
            &[
                "config",
                "view",
                "--minify",
                "--flatten",
                "--raw",
                "--context",
                &name,
            ],
        );
        let cluster = &v["clusters"][0]["cluster"];
        let user = &v["users"][0]["user"];
        let context = &v["contexts"][0]["context"];
        assert_eq!(cluster["server"], r.cluster.server.as_str(), "{name}");
        assert_eq!(
            cluster["certificate-authority-data"].as_str(),
            r.cluster
                .certificate_authority
                .as_ref()
                .map(|m| b64(&m.bytes))
                .as_deref(),
            "{name}"
        );
        assert_eq!(
            cluster["tls-server-name"].as_str(),
            r.cluster.tls_server_name.as_deref(),
            "{name}"
        );
        assert_eq!(
            cluster["insecure-skip-tls-verify"]
                .as_bool()
                .unwrap_or(false),
            r.cluster.insecure_skip_tls_verify,
            "{name}"
        );
        assert_eq!(
            user["client-certificate-data"].as_str(),
            r.user
                .client_certificate
                .as_ref()
                .map(|m| b64(&m.bytes))
                .as_deref(),
            "{name}"
        );
        assert_eq!(
            user["client-key-data"].as_str(),
            r.user
                .client_key
                .as_ref()
                .map(|m| b64(&m.expose().bytes))
                .as_deref(),
            "{name}"
        );
        match &r.user.token {
            Some(Token::Inline(t)) => assert_eq!(user["token"], t.expose().as_str(), "{name}"),
            // kubectl keeps tokenFile as a path (relative to the file) even when flattening.
            Some(Token::File { path, .. }) => {
                assert!(
                    path.ends_with(user["tokenFile"].as_str().unwrap()),
                    "{name}"
                );
                assert!(path.exists());
            }
            None => assert!(user.get("token").is_none(), "{name}"),
        }
        assert_eq!(
            context["namespace"].as_str().unwrap_or("default"),
            r.namespace,
            "{name}"
        );
    }
}

/// The binary, not just the library: `KUBECONFIG=a:b kexplore certs -o json` picks the same
/// context, cluster, server and user as kubectl does for every context of the merge.
#[test]
fn certs_with_a_kubeconfig_list_agrees_with_kubectl() {
    if !kubectl_available() {
        eprintln!("note: kubectl not installed; skipping the comparison with kubectl");
        return;
    }
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-kubeconfigs");
    let env = format!(
        "{}:{}:{}",
        samples.join("multi-context.yaml").display(),
        samples.join("kubeadm.yaml").display(),
        samples.join("ecdsa.yaml").display()
    );
    let k = Kubeconfig::load(&Selection::choose(None, Some(env.clone().into()), None).unwrap())
        .unwrap();
    let mut contexts = vec![None];
    contexts.extend(k.context_names().into_iter().map(Some));
    let mut checked = 0;
    for context in contexts {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kexplore"));
        cmd.env("KUBECONFIG", &env).args(["certs", "-o", "json"]);
        let mut kubectl_args = vec!["config", "view", "--minify", "--raw"];
        if let Some(c) = &context {
            cmd.args(["--context", c]);
            kubectl_args.extend(["--context", c.as_str()]);
        }
        let out = cmd.output().unwrap();
        if out.status.code() == Some(2) {
            // A context whose credentials kexplore refuses (e.g. an exec user needs no certs, but
            // a missing file does) must be one kubectl cannot flatten either; only count successes.
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(0),
            "{context:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
        let theirs = kubectl_json(&env, &kubectl_args);
        assert_eq!(ours["context"], theirs["current-context"], "{context:?}");
        assert_eq!(
            ours["cluster"]["name"], theirs["clusters"][0]["name"],
            "{context:?}"
        );
        assert_eq!(
            ours["cluster"]["server"], theirs["clusters"][0]["cluster"]["server"],
            "{context:?}"
        );
        assert_eq!(
            ours["user"]["name"], theirs["users"][0]["name"],
            "{context:?}"
        );
        assert_eq!(ours["kubeconfig"].as_array().unwrap().len(), 3);
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} contexts compared");
}

//! Loading and resolving, end to end over real files in a temporary directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

const CTX: &str = "apiVersion: v1\nkind: Config\ncurrent-context: main\n";

#[test]
fn selection_follows_kubectl_precedence() {
    let home = Some(PathBuf::from("/home/me"));
    let env = Some(OsString::from("/a:/b::/a"));
    assert_eq!(
        Selection::choose(Some(Path::new("/x")), env.clone(), home.clone()),
        Some(Selection::Explicit("/x".into()))
    );
    assert_eq!(
        Selection::choose(None, env, home.clone()),
        Some(Selection::EnvList(vec!["/a".into(), "/b".into()]))
    );
    assert_eq!(
        Selection::choose(None, Some(OsString::from("")), home),
        Some(Selection::Home("/home/me/.kube/config".into()))
    );
    assert_eq!(Selection::choose(None, None, None), None);
}

#[test]
fn relative_paths_resolve_against_the_defining_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sub/ca.crt", "CA");
    write(dir.path(), "sub/certs/c.crt", "CERT");
    write(dir.path(), "sub/certs/c.key", "KEY");
    write(dir.path(), "sub/token", "  tok\n");
    let kc = write(
        dir.path(),
        "sub/config",
        &format!(
            "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h:6443', certificate-authority: ca.crt}}\n\
             users:\n- name: u\n  user: {{client-certificate: certs/c.crt, client-key: certs/c.key}}\n- name: t\n  user: {{tokenFile: token}}\n\
             contexts:\n- name: main\n  context: {{cluster: c, user: u, namespace: team}}\n- name: tok\n  context: {{cluster: c, user: t}}\n"
        ),
    );
    let k = Kubeconfig::load_file(&kc).unwrap();
    let r = k.resolve(None).unwrap();
    assert_eq!(r.namespace, "team");
    assert_eq!(
        r.cluster.certificate_authority.as_ref().unwrap().bytes,
        b"CA"
    );
    assert_eq!(r.user.client_certificate.as_ref().unwrap().bytes, b"CERT");
    assert_eq!(r.user.client_key.as_ref().unwrap().expose().bytes, b"KEY");
    assert_eq!(r.user.auth_method(), AuthMethod::ClientCertificate);
    let t = k.resolve(Some("tok")).unwrap();
    assert_eq!(t.namespace, "default");
    match t.user.token {
        Some(Token::File { value, .. }) => assert_eq!(value.expose(), "tok"),
        other => panic!("expected a token file, got {other:?}"),
    }
}

#[test]
fn data_wins_over_file_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "config",
        &format!(
            "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h', certificate-authority: nothere.crt, certificate-authority-data: 'Q0E='}}\n\
             contexts:\n- name: main\n  context: {{cluster: c}}\n"
        ),
    );
    let r = Kubeconfig::load_file(&kc).unwrap().resolve(None).unwrap();
    assert_eq!(r.cluster.certificate_authority.unwrap().bytes, b"CA");
    assert_eq!(r.warnings[0].id, "data-and-file-both-set");
    assert_eq!(r.user.auth_method(), AuthMethod::None);
}

fn resolve_err(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(dir.path(), "config", text);
    match Kubeconfig::load_file(&kc).and_then(|k| k.resolve(None)) {
        Ok(_) => panic!("expected an error for {text}"),
        Err(e) => e
            .to_string()
            .replace(&dir.path().display().to_string(), "DIR"),
    }
}

#[test]
fn bad_input_is_named_with_file_and_field() {
    assert_eq!(resolve_err(""), "DIR/config: file is empty");
    assert!(resolve_err("clusters: [").starts_with("DIR/config: not valid YAML: "));
    assert_eq!(
        resolve_err("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"),
        "DIR/config: not a kubeconfig: kind is Pod, expected Config"
    );
    assert_eq!(
        resolve_err("- a\n- b\n"),
        "DIR/config: not a kubeconfig: the document is a list, not a mapping"
    );
    assert_eq!(
        resolve_err("foo: bar\n"),
        "DIR/config: not a kubeconfig: it has none of clusters, users, contexts or current-context"
    );
    let base = format!(
        "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h'}}\ncontexts:\n- name: main\n  context: {{cluster: c, user: u}}\n"
    );
    assert_eq!(
        resolve_err(&format!(
            "{base}users:\n- name: u\n  user: {{client-certificate-data: '!!notbase64', client-key-data: 'QQ=='}}\n"
        )),
        "user 'u' in DIR/config: client-certificate-data is not valid base64: Invalid symbol 33, offset 0."
    );
    assert_eq!(
        resolve_err(&format!(
            "{base}users:\n- name: u\n  user: {{client-certificate: gone.crt, client-key: gone.key}}\n"
        )),
        "user 'u' in DIR/config: client-certificate DIR/gone.crt: no such file"
    );
    assert_eq!(
        resolve_err(&format!(
            "{base}users:\n- name: u\n  user: {{client-certificate-data: 'QQ=='}}\n"
        )),
        "user 'u' in DIR/config: client-key-data is missing: client-key-data or client-key must be set to use the client certificate"
    );
    assert_eq!(
        resolve_err(&format!("{base}users: []\n")),
        "context \"main\" in DIR/config: names user 'u', which is not defined in any kubeconfig file"
    );
    assert_eq!(
        resolve_err(
            "current-context: nope\ncontexts:\n- name: a\n  context: {cluster: c}\n- name: b\n  context: {cluster: c}\n"
        ),
        "context \"nope\" does not exist (known contexts: a, b)"
    );
    assert_eq!(
        resolve_err("contexts:\n- name: a\n  context: {cluster: c}\n"),
        "no context selected: current-context is not set and --context was not given (known contexts: a)"
    );
    assert_eq!(
        resolve_err(
            "current-context: a\nclusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: a\n  context: {cluster: c}\n"
        ),
        "cluster 'c' in DIR/config: server is not set"
    );
}

#[test]
fn env_list_skips_missing_files_but_not_all_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a", "current-context: x\n");
    let sel = Selection::EnvList(vec![dir.path().join("nope"), a]);
    let k = Kubeconfig::load(&sel).unwrap();
    assert_eq!(k.files.len(), 2);
    assert_eq!(k.loaded_files().len(), 1);
    let none = Selection::EnvList(vec![dir.path().join("nope")]);
    assert!(matches!(
        Kubeconfig::load(&none),
        Err(KubeconfigError::NotFound(_))
    ));
    assert!(matches!(
        Kubeconfig::load(&Selection::Explicit(dir.path().join("nope"))),
        Err(KubeconfigError::Unreadable { .. })
    ));
}

#[test]
fn exec_command_with_a_separator_is_relative_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "config",
        &format!(
            "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h'}}\n\
             users:\n- name: u\n  user:\n    exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: ./bin/cred, args: [a]}}\n\
             - name: v\n  user:\n    exec: {{apiVersion: client.authentication.k8s.io/v1, command: gke-gcloud-auth-plugin}}\n\
             contexts:\n- name: main\n  context: {{cluster: c, user: u}}\n- name: v\n  context: {{cluster: c, user: v}}\n"
        ),
    );
    let k = Kubeconfig::load_file(&kc).unwrap();
    let r = k.resolve(None).unwrap();
    assert_eq!(
        r.user.exec.as_ref().unwrap().command,
        dir.path().join("./bin/cred").display().to_string()
    );
    assert_eq!(r.user.auth_method(), AuthMethod::Exec);
    let v = k.resolve(Some("v")).unwrap();
    assert_eq!(
        v.user.exec.as_ref().unwrap().command,
        "gke-gcloud-auth-plugin"
    );
    assert_eq!(v.warnings[0].id, "exec-interactive-mode-missing");
}

#[test]
fn secrets_do_not_show_in_debug() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "config",
        &format!(
            "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h'}}\n\
             users:\n- name: u\n  user: {{token: sup3rs3cret, username: me, password: hunter2}}\n\
             contexts:\n- name: main\n  context: {{cluster: c, user: u}}\n"
        ),
    );
    let k = Kubeconfig::load_file(&kc).unwrap();
    let r = k.resolve(None).unwrap();
    let shown = format!("{k:?} {r:?}");
    assert!(
        !shown.contains("sup3rs3cret") && !shown.contains("hunter2"),
        "{shown}"
    );
    assert_eq!(r.warnings[0].id, "more-than-one-auth-method");
}

#[test]
fn referenced_devices_and_directories_are_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let kc = write(
        dir.path(),
        "config",
        &format!(
            "{CTX}clusters:\n- name: c\n  cluster: {{server: 'https://h', certificate-authority: /dev/zero}}\n\
             - name: d\n  cluster: {{server: 'https://h', certificate-authority: .}}\n\
             contexts:\n- name: main\n  context: {{cluster: c}}\n- name: d\n  context: {{cluster: d}}\n"
        ),
    );
    let k = Kubeconfig::load_file(&kc).unwrap();
    let e = k.resolve(None).unwrap_err().to_string();
    assert!(
        e.ends_with("certificate-authority /dev/zero: is not a regular file"),
        "{e}"
    );
    let e = k.resolve(Some("d")).unwrap_err().to_string();
    assert!(e.ends_with(": is a directory"), "{e}");
}

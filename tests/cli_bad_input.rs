//! The built binary on broken inputs: exit code 2, one line on stderr naming the file and the
//! problem, nothing on stdout, and never a panic or a backtrace.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A kubeconfig whose cluster and user entries get the given extra lines.
fn kubeconfig(cluster_line: &str, user_lines: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n    {cluster_line}\n\
         contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\nusers:\n- name: u\n  user:\n    {user_lines}\n"
    )
}

fn sample_field(file: &str, field: &str) -> String {
    let text = std::fs::read_to_string(common::samples().join(file)).expect("sample");
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{field}: ")))
        .expect("field present")
        .to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// Asserts the contract for bad input, and that the message names `file` and contains `problem`.
fn assert_bad_input(args: &[&str], file: &str, problem: &str) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: exit code; stderr: {stderr}");
    assert!(
        stdout.is_empty(),
        "{args:?}: stdout should be empty: {stdout}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected: {stderr}");
    assert!(
        stderr.contains(file),
        "{args:?}: should name {file}: {stderr}"
    );
    assert!(
        stderr.contains(problem),
        "{args:?}: should say '{problem}': {stderr}"
    );
    for bad in ["panicked", "backtrace", "RUST_BACKTRACE"] {
        assert!(!stderr.contains(bad), "{args:?}: {stderr}");
    }
}

fn certs(path: &Path) -> Vec<String> {
    vec![
        "certs".into(),
        "--kubeconfig".into(),
        path.display().to_string(),
    ]
}

fn check_file(name: &str, text: &str, problem: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), name, text);
    let args = certs(&path);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_bad_input(&args, name, problem);
    // The JSON form fails the same way: errors never go to stdout.
    let mut json = args.clone();
    json.extend(["-o", "json"]);
    assert_bad_input(&json, name, problem);
}

#[test]
fn not_yaml() {
    check_file("notyaml.yaml", "{{{ not: [yaml", "not valid YAML");
}

#[test]
fn yaml_but_not_a_kubeconfig() {
    check_file("list.yaml", "- just\n- a list\n", "not a kubeconfig");
    check_file("foo.yaml", "foo: bar\n", "not a kubeconfig");
}

#[test]
fn empty_file() {
    check_file("empty.yaml", "", "empty");
}

#[test]
fn bad_base64() {
    check_file(
        "badb64.yaml",
        &kubeconfig("certificate-authority-data: '!!!notbase64'", "token: t"),
        "certificate-authority-data is not valid base64",
    );
}

#[test]
fn base64_of_garbage() {
    check_file(
        "garbage.yaml",
        &kubeconfig(
            &format!("certificate-authority-data: {}", b64("hello world garbage")),
            "token: t",
        ),
        "certificate-authority-data: is not PEM",
    );
}

#[test]
fn pem_that_is_not_a_certificate() {
    let junk = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n";
    check_file(
        "junkcert.yaml",
        &kubeconfig(
            &format!("certificate-authority-data: {}", b64(junk)),
            "token: t",
        ),
        "is not a valid X.509 certificate",
    );
}

#[test]
fn a_key_where_a_certificate_should_be() {
    let key = sample_field("ecdsa.yaml", "client-key-data");
    let cert = sample_field("ecdsa.yaml", "client-certificate-data");
    check_file(
        "keyasca.yaml",
        &kubeconfig(&format!("certificate-authority-data: {key}"), "token: t"),
        "certificate-authority-data: contains a private key",
    );
    check_file(
        "keyascert.yaml",
        &kubeconfig(
            "",
            &format!("client-certificate-data: {key}\n    client-key-data: {key}"),
        ),
        "client-certificate-data: contains a private key",
    );
    check_file(
        "certaskey.yaml",
        &kubeconfig(
            "",
            &format!("client-certificate-data: {cert}\n    client-key-data: {cert}"),
        ),
        "client-key-data: contains a CERTIFICATE where a private key was expected",
    );
}

#[test]
fn missing_referenced_file() {
    check_file(
        "missing.yaml",
        &kubeconfig("certificate-authority: nope/ca.crt", "token: t"),
        "nope/ca.crt",
    );
    check_file(
        "missingkey.yaml",
        &kubeconfig(
            "",
            "client-certificate: nope/admin.crt\n    client-key: nope/admin.key",
        ),
        "nope/admin.crt",
    );
}

#[test]
fn missing_kubeconfig() {
    assert_bad_input(
        &["certs", "--kubeconfig", "/nonexistent/kexplore-test.yaml"],
        "/nonexistent/kexplore-test.yaml",
        "cannot read",
    );
}

#[test]
fn unknown_context_lists_the_known_ones() {
    let path = common::samples().join("multi-context.yaml");
    let p = path.display().to_string();
    let (code, _, stderr) = run(&["certs", "--kubeconfig", &p, "--context", "nope"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("\"nope\" does not exist"), "{stderr}");
    assert!(stderr.contains("prod, staging, prod-readonly"), "{stderr}");
    assert!(stderr.contains("multi-context.yaml"), "{stderr}");
}

/// `journey -n` disagreeing with the manifest's own namespace: refused in kubectl's words
/// before anything is sent.
#[test]
fn journey_dash_n_against_the_manifests_namespace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = write(
        dir.path(),
        "pod.json",
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"shop"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#,
    );
    let pod = pod.to_str().unwrap_or_default();
    assert_bad_input(
        &["journey", "-f", pod, "-n", "default", "--embedded"],
        pod,
        "the namespace from the provided object \"shop\" does not match the namespace \"default\"",
    );
}

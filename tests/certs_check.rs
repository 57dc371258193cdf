//! `certs --check` exits 1 when any check is an error; without it, exit 0 even then.

mod common;

use std::process::Command;

fn code(file: &str, extra: &[&str]) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .arg("certs")
        .arg("--kubeconfig")
        .arg(common::samples().join(file))
        .args(extra)
        .output()
        .expect("binary runs");
    out.status.code().unwrap_or(-1)
}

#[test]
fn check_fails_only_on_errors() {
    assert_eq!(code("expired-client.yaml", &["--check"]), 1);
    assert_eq!(code("expired-client.yaml", &[]), 0);
    assert_eq!(code("wrong-ca.yaml", &["--check"]), 1);
    assert_eq!(code("wrong-ca.yaml", &["--check", "-o", "json"]), 1);
    // Warnings (system:masters) do not fail --check.
    assert_eq!(code("kubeadm.yaml", &["--check"]), 0);
    assert_eq!(code("alibaba-style.yaml", &["--check"]), 0);
    assert_eq!(
        code("token-and-exec.yaml", &["--check", "--context", "exec"]),
        0
    );
}

#[test]
fn text_output_draws_the_tree_and_identity() {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .arg("certs")
        .arg("--kubeconfig")
        .arg(common::samples().join("alibaba-style.yaml"))
        .env("NO_COLOR", "1")
        .output()
        .expect("binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "Kubernetes sees you as user \"252771643302762862\" in groups [system:users]"
        ),
        "{text}"
    );
    let tree: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Chain of issuance"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(tree.len(), 3, "{text}");
    assert!(
        tree[0]
            .trim_start()
            .starts_with("CN=root,OU=ACS,O=Alibaba,L=HangZhou,ST=ZheJiang,C=CN")
    );
    assert!(tree[1].contains("└── ✓ CN=c0256a3b8e4b948bb9c21e66b0e1d9a72,OU=default"));
    assert!(tree[2].contains("└── ✓ CN=252771643302762862,OU=,O=system:users"));
    assert!(!text.contains('\u{1b}'), "no escape codes when not a TTY");
    assert!(!text.contains("PRIVATE KEY"));
}

#[test]
fn wrong_ca_link_is_drawn_as_failed() {
    let out = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .arg("certs")
        .arg("--kubeconfig")
        .arg(common::samples().join("wrong-ca.yaml"))
        .output()
        .expect("binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("└── ✗ CN=kubernetes-admin,O=system:masters"),
        "{text}"
    );
    assert!(text.contains("✗ client-cert-signature-mismatch"), "{text}");
}

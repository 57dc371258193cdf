//! `kubectl --as` against `kexplore serve`: the admin (system:masters) may impersonate anyone
//! and is then answered as that identity; jane may not impersonate and gets kube-apiserver's
//! 403; the audit log names both the sender and the impersonated user.

use std::process::Command;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::{ServeProcess, kubectls, which};

fn kubectl(
    bin: &std::path::Path,
    srv: &ServeProcess,
    cache: &std::path::Path,
    args: &[&str],
) -> (bool, String, String) {
    let out = Command::new(bin)
        .arg("--kubeconfig")
        .arg(srv.kubeconfig())
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .expect("kubectl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

#[test]
fn kubectl_as_is_authorized_then_answered_as_the_impersonated_user() {
    let kubectls = kubectls();
    if kubectls.is_empty() || which("curl").is_none() {
        eprintln!("note: kubectl or curl is not installed; skipping");
        return;
    }
    let audit_dir = tempfile::tempdir().expect("tempdir");
    let audit = audit_dir.path().join("audit.log");
    let srv = ServeProcess::start(&["--audit-log-path", audit.to_str().unwrap_or_default()]);
    for (version, bin) in &kubectls {
        let cache = srv.dir.path().join(format!("cache-{version}"));
        // As the admin, "can jane create pods in kube-system?" is answered for jane.
        let (_, can, err) = kubectl(
            bin,
            &srv,
            &cache,
            &[
                "auth",
                "can-i",
                "create",
                "pods",
                "-n",
                "kube-system",
                "--as",
                "jane",
                "--as-group",
                "developers",
            ],
        );
        assert_eq!(can, "no", "kubectl {version}: {err}");
        let (_, can, err) = kubectl(
            bin,
            &srv,
            &cache,
            &[
                "auth",
                "can-i",
                "create",
                "pods",
                "-n",
                "default",
                "--as",
                "jane",
                "--as-group",
                "developers",
            ],
        );
        assert_eq!(can, "yes", "kubectl {version}: {err}");
        let (_, can, err) = kubectl(
            bin,
            &srv,
            &cache,
            &["auth", "can-i", "create", "pods", "-n", "kube-system"],
        );
        assert_eq!(can, "yes", "kubectl {version} as the admin itself: {err}");
        // whoami shows the impersonated identity, with system:authenticated added.
        let (ok, who, err) = kubectl(
            bin,
            &srv,
            &cache,
            &[
                "auth",
                "whoami",
                "--as",
                "jane",
                "-o",
                "jsonpath={.status.userInfo.username} {.status.userInfo.groups}",
            ],
        );
        assert!(ok, "kubectl {version}: {err}");
        assert_eq!(who, "jane [\"system:authenticated\"]", "kubectl {version}");
        // A forbidden request as jane is jane's 403.
        let (ok, _, err) = kubectl(
            bin,
            &srv,
            &cache,
            &["get", "pods", "-n", "kube-system", "--as", "jane"],
        );
        assert!(!ok);
        assert!(
            err.contains("User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"kube-system\""),
            "kubectl {version}: {err}"
        );
        // jane may not impersonate the admin.
        let (ok, _, err) = kubectl(
            bin,
            &srv,
            &cache,
            &["--context", "jane", "get", "pods", "--as", "kexplore-admin"],
        );
        assert!(!ok);
        assert!(
            err.contains("users \"kexplore-admin\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
            "kubectl {version}: {err}"
        );
    }
    // A group without a user is a 400, as upstream.
    let out = Command::new("curl")
        .args(["-sS", "-w", "\n%{http_code}", "--cacert"])
        .arg(srv.pki("ca.crt"))
        .arg("--cert")
        .arg(srv.pki("admin.crt"))
        .arg("--key")
        .arg(srv.pki("admin.key"))
        .args(["-H", "Impersonate-Group: developers"])
        .arg(format!("{}/api/v1/namespaces/default/pods", srv.url))
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout);
    let (body, code) = text.rsplit_once('\n').unwrap_or_default();
    assert_eq!(code.trim(), "400", "{body}");
    let status: Value = serde_json::from_str(body).unwrap_or_default();
    assert_eq!(
        status["message"],
        "requested [group \"developers\"] without impersonating a user"
    );
    // The audit log: the sender as `user`, the identity acted as in `impersonatedUser`.
    let log = std::fs::read_to_string(&audit).unwrap_or_default();
    let impersonated: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e.get("impersonatedUser").is_some())
        .collect();
    assert!(
        !impersonated.is_empty(),
        "no impersonated request in the audit log"
    );
    for e in &impersonated {
        assert_eq!(e["user"]["username"], "kexplore-admin", "{e}");
        assert_eq!(e["impersonatedUser"]["username"], "jane", "{e}");
    }
}

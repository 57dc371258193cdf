//! Server-side apply over plain HTTP with curl, as lightkube or the Python dynamic client send
//! it (issue 12 §A.3): the Status bodies of a create, a conflict with one cause per field, and
//! the PatchOptions kube-apiserver refuses.

use std::process::Command;

use serde_json::{Value, json};

mod apiserver_support;
use apiserver_support::{ServeProcess, which};

const APPLY: &str = "Content-Type: application/apply-patch+yaml";
const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(image: &str, app: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {{app: {app}}}\nspec:\n  containers:\n  - name: nginx\n    image: {image}\n"
    )
}

/// PATCH `body` to `path` as admin; returns (HTTP code, parsed body).
fn patch(srv: &ServeProcess, header: &str, path: &str, body: &str) -> (u16, Value) {
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            "-w",
            "\n%{http_code}",
            "-X",
            "PATCH",
        ])
        .arg("--cacert")
        .arg(srv.pki("ca.crt"))
        .arg("--cert")
        .arg(srv.pki("admin.crt"))
        .arg("--key")
        .arg(srv.pki("admin.key"))
        .args(["-H", header, "--data-binary", body])
        .arg(format!("{}{path}", srv.url))
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", text.as_str()));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    )
}

#[test]
fn apply_creates_conflicts_and_refuses_bad_options_as_kube_apiserver() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let web = format!("{PODS}/web");

    let (code, body) = patch(&srv, APPLY, &web, &pod("nginx:1.25", "web"));
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );

    let (code, body) = patch(
        &srv,
        APPLY,
        &format!("{web}?fieldManager=a"),
        &pod("nginx:1.25", "web"),
    );
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["metadata"]["managedFields"][0]["manager"], "a");
    assert_eq!(body["metadata"]["managedFields"][0]["operation"], "Apply");

    // Another manager changing two of a's fields: one cause each, a's paths sorted.
    let (code, body) = patch(
        &srv,
        APPLY,
        &format!("{web}?fieldManager=b"),
        &pod("nginx:1.26", "other"),
    );
    assert_eq!(code, 409, "{body}");
    assert_eq!(body["reason"], "Conflict");
    assert_eq!(
        body["message"],
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .metadata.labels.app\n- .spec.containers[name=\"nginx\"].image"
    );
    assert_eq!(
        body["details"]["causes"],
        json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".metadata.labels.app"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".spec.containers[name=\"nginx\"].image"},
        ])
    );

    let (code, body) = patch(
        &srv,
        APPLY,
        &format!("{web}?fieldManager=a"),
        &pod("nginx:1.25", "web").replace("apiVersion: v1", "apiVersion: v2"),
    );
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"
    );

    let (code, body) = patch(
        &srv,
        APPLY,
        &format!("{PODS}/other?fieldManager=a"),
        &pod("nginx:1.25", "web"),
    );
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "the name of the object (web) does not match the name on the URL (other)"
    );

    // A cluster-scoped object: the namespace in the path is the object, not its home.
    let (code, body) = patch(
        &srv,
        APPLY,
        "/api/v1/namespaces/team?fieldManager=a",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
    );
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"]["phase"], "Active");

    let (code, body) = patch(
        &srv,
        "Content-Type: application/strategic-merge-patch+json",
        &format!("{web}?force=true"),
        "{}",
    );
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
}

/// Patches that name no resourceVersion, racing each other on one pod: upstream re-applies each
/// to the newer object, so every one succeeds and none is lost (a 409 "the object has been
/// modified" here would be kexplore's own race, not Kubernetes').
#[test]
fn racing_patches_all_land() {
    if which("curl").is_none() {
        eprintln!("note: curl is not installed; skipping");
        return;
    }
    let srv = ServeProcess::start(&["--no-demo"]);
    let web = format!("{PODS}/web");
    let (code, body) = patch(
        &srv,
        APPLY,
        &format!("{web}?fieldManager=a"),
        &pod("nginx:1.25", "web"),
    );
    assert_eq!(code, 201, "{body}");
    let codes: Vec<(u16, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..24)
            .map(|i| {
                let (srv, web) = (&srv, &web);
                s.spawn(move || {
                    if i % 2 == 0 {
                        let body = format!("{{\"metadata\":{{\"labels\":{{\"k{i}\":\"v\"}}}}}}");
                        patch(srv, "Content-Type: application/merge-patch+json", web, &body)
                    } else {
                        let body = format!(
                            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: {{k{i}: v}}\n"
                        );
                        patch(srv, APPLY, &format!("{web}?fieldManager=m{i}"), &body)
                    }
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (code, body) in &codes {
        assert_eq!(*code, 200, "{body}");
    }
    let (_, last) = patch(
        &srv,
        "Content-Type: application/merge-patch+json",
        &web,
        "{}",
    );
    for i in 0..24 {
        assert_eq!(last["metadata"]["labels"][format!("k{i}")], "v", "{last}");
    }
}

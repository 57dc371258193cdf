//! The official Python `kubernetes` client against `kexplore serve` — a real client nobody here
//! wrote. `.ci/run` installs it in `.venv`; elsewhere set `KEXPLORE_PYTHON` to a python that has
//! it, or the test says why it skipped. The checks live in the scripts of `tests/python/`.

use std::path::PathBuf;
use std::process::Command;

mod apiserver_support;
use apiserver_support::ServeProcess;

fn python() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("KEXPLORE_PYTHON").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")),
    ];
    candidates.into_iter().flatten().find(|p| {
        Command::new(p)
            .args(["-c", "import kubernetes"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Runs `tests/python/<script>` against a fresh `serve` and checks it printed each of `want`.
fn run_script(script: &str, want: &[&str]) {
    let Some(py) = python() else {
        eprintln!("note: no python with the kubernetes client (.venv or KEXPLORE_PYTHON): skipped");
        return;
    };
    let serve = ServeProcess::start(&[]);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let out = Command::new(py)
        .arg(path)
        .arg(serve.kubeconfig())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python client:\n{stdout}\n{stderr}");
    for line in want {
        assert!(
            stdout.contains(line),
            "missing {line:?} in:\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn the_python_client_sees_dry_runs_stay_dry_apply_create_and_pods_run() {
    run_script(
        "client_truth.py",
        &[
            "dry runs: nothing changed",
            "dryRun=Bogus: 422 Unsupported value",
            "server-side apply created py-ssa, managed by python",
            "watch: py-ssa Running",
            "health and version: 200 without credentials",
            "storage: default class standard; py-claim bound to py-pv",
        ],
    );
}

#[test]
fn the_python_client_creates_a_deployment_and_watches_its_pods_run() {
    run_script(
        "deployment_runs.py",
        &[
            "created py-web with upstream's defaults",
            "watch: 3 pods Running",
            "status: 3 available",
        ],
    );
}

#[test]
fn the_python_client_asks_about_access_and_finalizers_hold() {
    run_script(
        "access_reviews.py",
        &[
            "subject access review: jane may list pods in default",
            "access reviews: malformed ones refused with 422",
            "finalizers: py-held marked deleted, gone with its last finalizer",
        ],
    );
}

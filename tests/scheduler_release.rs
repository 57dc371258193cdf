//! Which kube-scheduler release `kexplore schedule -f` models, said in the words view 5 and a
//! live run use (issue 12 B11): one default (`version::NEWEST`), or `--kube-version`.

use std::process::Command;

use serde_json::Value;

fn schedule(extra: &[&str]) -> (String, Value) {
    let run = |json: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kexplore"));
        c.current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["schedule", "-f", "scenarios/seed-three-nodes.yaml"])
            .args(extra);
        if json {
            c.args(["-o", "json"]);
        }
        let out = c.output().expect("kexplore");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    (
        String::from_utf8(run(false)).unwrap(),
        serde_json::from_slice(&run(true)).unwrap(),
    )
}

#[test]
fn manifests_model_the_default_release_and_say_it_is_the_default() {
    let (text, j) = schedule(&[]);
    let v = kexplore::scheduler::version::NEWEST.to_string();
    assert_eq!(j["kube_version"], v.as_str());
    assert_eq!(j["release"]["basis"], "default");
    assert!(j["release"]["server"].is_null());
    let line = format!("modelling kube-scheduler {v}, the default (the newest modelled release)");
    assert_eq!(j["release"]["summary"], line.as_str());
    assert!(text.contains(&line), "{text}");
}

#[test]
fn an_asked_release_is_named_as_asked() {
    let (text, j) = schedule(&["--kube-version", "1.31"]);
    assert_eq!(j["kube_version"], "v1.31");
    assert_eq!(j["release"]["basis"], "asked");
    assert_eq!(
        j["release"]["summary"],
        "modelling kube-scheduler v1.31 (--kube-version)"
    );
    assert!(
        text.starts_with("kube-scheduler v1.31 (simulated)"),
        "{text}"
    );
}

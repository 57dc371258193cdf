//! Runs every upstream plugin unit-test case transcribed under tests/fixtures/scheduler/
//! (format: see the fixture README on the `fixtures` branch / CONTRACT of issue 3): builds the
//! snapshot, runs the one plugin the case names — Filter with its PreFilter, or PreScore +
//! Score + NormalizeScore — and compares codes, reasons and final scores.
//!
//! A case the engine cannot express fails loudly, unless it says `unsupported: "<why>"`, in
//! which case it is reported as skipped.

use std::path::{Path, PathBuf};

use kexplore::scheduler::plugins::volumes::NOT_SIMULATED;
use kexplore::scheduler::profile::config::plugin_args_for;
use kexplore::scheduler::version::{KubeVersion, NEWEST};
use kexplore::scheduler::{Code, Scheduler, Snapshot, Status, run_filter_plugin, run_score_plugin};
use serde_json::Value;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
            out.push(p);
        }
    }
}

fn status_matches(want: &Value, got: &Status) -> Result<(), String> {
    let code = want
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("Success");
    let want_code = Code::parse(code).ok_or_else(|| format!("unknown code {code:?}"))?;
    // A nil status upstream is Success; Skip from a PreFilter is compared as given.
    if want_code != got.code {
        return Err(format!(
            "code: want {code}, got {} {:?}",
            got.code.as_str(),
            got.reasons
        ));
    }
    if let Some(reasons) = want.get("reasons").and_then(Value::as_array) {
        let want: Vec<&str> = reasons.iter().filter_map(Value::as_str).collect();
        let mut w = want.clone();
        let mut g: Vec<&str> = got.reasons.iter().map(String::as_str).collect();
        let exact = w == g;
        // Scalar-resource "Insufficient" reasons come out of a Go map in random order upstream.
        w.sort();
        g.sort();
        let reordered = w == g && want.iter().all(|r| r.starts_with("Insufficient "));
        if !exact && !reordered {
            return Err(format!("reasons: want {want:?}, got {:?}", got.reasons));
        }
    }
    Ok(())
}

fn objects<T: serde::de::DeserializeOwned>(
    v: Option<&Value>,
    what: &str,
) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (i, o) in v
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        // A node without allocatable is taken as it is: the engine reads it as 0, as upstream.
        out.push(serde_json::from_value(o.clone()).map_err(|e| format!("{what}[{i}]: {e}"))?);
    }
    Ok(out)
}

fn run_case(path: &Path) -> Result<Option<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Value = serde_yaml::from_str(&text).map_err(|e| format!("not YAML: {e}"))?;
    if let Some(why) = case.get("unsupported").and_then(Value::as_str) {
        return Ok(Some(why.to_string()));
    }
    let plugin = case
        .get("plugin")
        .and_then(Value::as_str)
        .ok_or("no plugin")?;
    let phase = case
        .get("phase")
        .and_then(Value::as_str)
        .ok_or("no phase")?;
    // These pass every node without judging anything: a case for them cannot be checked.
    if NOT_SIMULATED.contains(&plugin) {
        return Err(format!(
            "{plugin} is not simulated by the engine; mark the case `unsupported: \"...\"`"
        ));
    }
    let version = match case.get("kubeVersion") {
        Some(v) => {
            let s = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            KubeVersion::parse(&s).map_err(|e| e.to_string())?
        }
        None => NEWEST,
    };
    // "*" is a whole default-profile cycle: no single plugin's args.
    let args = if plugin == "*" {
        Default::default()
    } else {
        plugin_args_for(plugin, case.get("args").unwrap_or(&Value::Null)).map_err(|e| e.0)?
    };
    let nodes = objects(case.get("nodes"), "nodes")?;
    let existing: Vec<k8s_openapi::api::core::v1::Pod> =
        objects(case.get("existingPods"), "existingPods")?;
    let mut snap = Snapshot::build(&nodes, &existing, version.pod_level_resources())
        .map_err(|e| e.to_string())?;
    let pod: k8s_openapi::api::core::v1::Pod =
        serde_json::from_value(case.get("pod").cloned().ok_or("no pod")?)
            .map_err(|e| format!("pod: {e}"))?;
    let pod = snap.pod_info(&pod).map_err(|e| e.to_string())?;
    let expect = case.get("expect").ok_or("no expect")?;
    let mut errors = Vec::new();
    match phase {
        "filter" => {
            let run = run_filter_plugin(&snap, &pod, version, plugin, &args)
                .ok_or_else(|| format!("{plugin} has no Filter in the engine"))?;
            if let Some(want) = expect.get("preFilter")
                && let Err(e) = status_matches(want, &run.pre_filter)
            {
                errors.push(format!("preFilter: {e}"));
            }
            for (node, want) in expect
                .get("filter")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let Some((_, got)) = run.nodes.iter().find(|(n, _)| n == node) else {
                    errors.push(format!("node {node}: not in the case's nodes"));
                    continue;
                };
                if let Err(e) = status_matches(want, got) {
                    errors.push(format!("node {node}: {e}"));
                }
            }
        }
        "score" => {
            // The nodes scored are exactly the expected ones; others were filtered out before.
            let scores = expect
                .get("scores")
                .and_then(Value::as_object)
                .ok_or("no expect.scores")?;
            let feasible: Vec<usize> = (0..snap.nodes.len())
                .filter(|&i| scores.contains_key(&snap.nodes[i].name))
                .collect();
            let run = run_score_plugin(&snap, &pod, version, plugin, &args, Some(feasible))
                .ok_or_else(|| format!("{plugin} has no Score in the engine"))?;
            for (node, want) in expect
                .get("scores")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let got = run.scores.iter().find(|(n, _)| n == node).map(|(_, s)| *s);
                if got != want.as_i64() {
                    errors.push(format!("node {node}: score want {want}, got {got:?}"));
                }
            }
        }
        "cycle" => {
            let mut scheduler = Scheduler::new(version, None, 0);
            let trace = scheduler.schedule_one(&snap, &pod);
            if let Some(want) = expect.get("selected").and_then(Value::as_str)
                && trace.selected.as_deref() != Some(want)
            {
                errors.push(format!(
                    "selected: want {want}, got {:?} ({:?})",
                    trace.selected, trace.message
                ));
            }
            if let Some(want) = expect.get("message").and_then(Value::as_str)
                && trace.message.as_deref() != Some(want)
            {
                errors.push(format!("message: want {want:?}, got {:?}", trace.message));
            }
        }
        other => return Err(format!("unknown phase {other:?}")),
    }
    if errors.is_empty() {
        Ok(None)
    } else {
        Err(errors.join("; "))
    }
}

#[test]
fn upstream_plugin_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scheduler");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let (mut passed, mut skipped, mut failed) = (0, Vec::new(), Vec::new());
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        match run_case(f) {
            Ok(None) => passed += 1,
            Ok(Some(why)) => skipped.push(format!("{rel}: {why}")),
            Err(e) => failed.push(format!("{rel}: {e}")),
        }
    }
    eprintln!(
        "upstream fixtures: {passed} passed, {} skipped, {} failed",
        skipped.len(),
        failed.len()
    );
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    for f in &failed {
        eprintln!("  FAILED {f}");
    }
    assert!(
        failed.is_empty(),
        "{} fixture(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

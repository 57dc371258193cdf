//! Every kubectl on the machine against `kexplore serve` runs batch work: `create job` runs to
//! Complete (the simulated kubelet ends the container with exit code 0 after
//! `--simulated-run-seconds`), a Job of three completions two at a time, `logs` with what the
//! kubelet recorded, `exec` told that no process runs, `create cronjob` and `create job
//! --from=cronjob/…`, and a malformed schedule refused with robfig/cron's words. One test waits
//! for the CronJob controller's own Job at a minute boundary.

use std::time::Duration;

use serde_json::Value;

mod apiserver_support;
use apiserver_support::kubectl::{Kubectl, with_kubectl, with_one_kubectl};
use apiserver_support::{ServeProcess, wait_for};

fn json(k: &Kubectl, args: &[&str]) -> Value {
    let out = k.ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{}: {args:?}: {e}: {out}", k.label))
}

fn condition<'a>(o: &'a Value, ty: &str) -> Option<&'a Value> {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == ty)
}

/// Waits (generously) for the Job's Complete condition and returns the Job.
fn complete(k: &Kubectl, job: &str) -> Value {
    wait_for(Duration::from_secs(90), || {
        let j = json(k, &["get", "job", job, "-o", "json"]);
        condition(&j, "Complete")
            .is_some_and(|c| c["status"] == "True")
            .then_some(j)
    })
    .unwrap_or_else(|| {
        let j = k.ok(&["get", "job", job, "-o", "yaml"]);
        panic!("{}: job {job} never completed:\n{j}", k.label)
    })
}

fn batch_demo(label: &str, bin: &std::path::Path) {
    let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
    let k = Kubectl::new(label, bin, srv.kubeconfig());

    // create job → Complete, as the 1.33 job controller reports it.
    k.ok(&[
        "create",
        "job",
        "pi",
        "--image=perl",
        "--",
        "perl",
        "-e",
        "1",
    ]);
    let j = complete(&k, "pi");
    assert_eq!(j["status"]["succeeded"], 1, "{label}: {j}");
    assert!(j["status"]["completionTime"].is_string(), "{label}: {j}");
    for ty in ["SuccessCriteriaMet", "Complete"] {
        let c = condition(&j, ty).unwrap_or_else(|| panic!("{label}: no {ty}: {j}"));
        assert_eq!(c["reason"], "CompletionsReached", "{label}");
        assert_eq!(
            c["message"], "Reached expected number of succeeded pods",
            "{label}"
        );
    }
    let uid = j["metadata"]["uid"].as_str().unwrap_or_default();
    assert_eq!(
        j["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid,
        "{label}"
    );
    let pods = json(&k, &["get", "pods", "-l", "job-name=pi", "-o", "json"]);
    let pod = &pods["items"][0];
    assert_eq!(pod["status"]["phase"], "Succeeded", "{label}: {pod}");
    assert_eq!(
        pod["metadata"]["labels"]["batch.kubernetes.io/job-name"], "pi",
        "{label}"
    );
    assert_eq!(
        pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid,
        "{label}"
    );
    let term = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(term["exitCode"], 0, "{label}: {pod}");
    assert_eq!(term["reason"], "Completed", "{label}: {pod}");
    let table = k.ok(&["get", "jobs"]);
    assert!(
        table.starts_with("NAME   STATUS     COMPLETIONS   DURATION   AGE"),
        "{label}: {table}"
    );
    assert!(table.contains("pi     Complete   1/1"), "{label}: {table}");
    // A Job created without labels carries its template's, as upstream's defaulting gives it.
    assert_eq!(
        k.ok(&["get", "jobs", "-l", "job-name=pi", "-o", "name"]),
        "job.batch/pi\n",
        "{label}"
    );
    assert_eq!(
        j["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid,
        "{label}"
    );

    // Three completions, two at a time.
    let manifest = srv.dir.path().join("job.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: three\nspec:\n  completions: 3\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: OnFailure\n      containers:\n      - name: work\n        image: busybox\n",
    )
    .expect("write job.yaml");
    k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
    let three = complete(&k, "three");
    assert_eq!(three["status"]["succeeded"], 3, "{label}: {three}");
    let pods = json(&k, &["get", "pods", "-l", "job-name=three", "-o", "json"]);
    assert_eq!(pods["items"].as_array().map(Vec::len), Some(3), "{label}");

    // Invalid Jobs get upstream's 422 causes.
    let bad = srv.dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bad\nspec:\n  completions: -1\n  template:\n    spec:\n      restartPolicy: Always\n      containers:\n      - name: c\n        image: busybox\n",
    )
    .expect("write bad.yaml");
    let out = k.run(&["create", "-f", bad.to_str().unwrap_or_default()]);
    assert_ne!(out.code, 0, "{label}");
    assert!(
        out.stderr.contains(r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#)
            && out.stderr.contains("spec.completions: Invalid value: -1: must be greater than or equal to 0"),
        "{label}: {}",
        out.stderr
    );

    // logs: the kubelet's own lines, nothing invented about a process.
    let logs = k.ok(&["logs", "job/pi"]);
    assert!(
        logs.contains(r#"image "perl" recorded as pulled"#),
        "{label}: {logs}"
    );
    assert!(
        logs.contains("container exited with code 0"),
        "{label}: {logs}"
    );
    let tail = k.ok(&["logs", "job/pi", "--tail=1"]);
    assert_eq!(tail.lines().count(), 1, "{label}: {tail}");
    let prev = k.run(&["logs", "job/pi", "--previous"]);
    assert_ne!(prev.code, 0, "{label}");
    assert!(
        prev.stderr
            .contains("previous terminated container \"pi\" in pod"),
        "{label}: {}",
        prev.stderr
    );

    // exec: a Status that says why, never a bare 404.
    k.ok(&["run", "web", "--image=nginx"]);
    wait_for(Duration::from_secs(60), || {
        (json(&k, &["get", "pod", "web", "-o", "json"])["status"]["phase"] == "Running")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("{label}: pod web never ran"));
    let exec = k.run(&["exec", "web", "--", "ls"]);
    assert_ne!(exec.code, 0, "{label}");
    assert!(
        exec.stderr
            .contains("it runs no processes, so no command can be executed"),
        "{label}: {}",
        exec.stderr
    );

    // create cronjob, then a Job from it by hand.
    k.ok(&[
        "create",
        "cronjob",
        "hello",
        "--image=busybox",
        "--schedule=*/1 * * * *",
        "--",
        "date",
    ]);
    let cj = k.ok(&["get", "cronjob", "hello"]);
    assert!(
        cj.starts_with("NAME    SCHEDULE      TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE"),
        "{label}: {cj}"
    );
    assert!(
        cj.contains("hello   */1 * * * *   <none>     False"),
        "{label}: {cj}"
    );
    k.ok(&["create", "job", "manual", "--from=cronjob/hello"]);
    let manual = complete(&k, "manual");
    assert_eq!(
        manual["metadata"]["ownerReferences"][0]["kind"], "CronJob",
        "{label}"
    );
    assert_eq!(
        manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"], "manual",
        "{label}"
    );
    let bad = k.run(&[
        "create",
        "cronjob",
        "bad",
        "--image=busybox",
        "--schedule=every minute",
    ]);
    assert!(
        bad.stderr.contains(r#"spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]"#),
        "{label}: {}",
        bad.stderr
    );
}

fn run(label: &str) {
    with_kubectl(label, batch_demo);
}

per_kubectl!(run);

/// The CronJob controller creates `<cronjob>-<minutes since the epoch>` at the next minute, and
/// reads a schedule on its `timeZone`'s clock.
#[test]
fn a_cronjob_starts_its_job_at_the_scheduled_minute() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        k.ok(&[
            "create",
            "cronjob",
            "tick",
            "--image=busybox",
            "--schedule=* * * * *",
        ]);
        // The next two minutes as Kolkata's clock reads them (UTC+05:30): a CronJob in that
        // zone runs at them; the same schedule in UTC would run half an hour later.
        let utc_minute = time::OffsetDateTime::now_utc().unix_timestamp() / 60 + 1;
        let local = |m: i64| (m + 30) % 60;
        let minutes = format!("{},{}", local(utc_minute), local(utc_minute + 1));
        let zoned = srv.dir.path().join("zoned.yaml");
        std::fs::write(
            &zoned,
            ["kolkata", "plain"]
                .iter()
                .map(|name| {
                    let tz = if *name == "kolkata" { "  timeZone: Asia/Kolkata\n" } else { "" };
                    format!(
                        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {name}\nspec:\n  schedule: \"{minutes} * * * *\"\n{tz}  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers:\n          - name: c\n            image: busybox\n"
                    )
                })
                .collect::<Vec<_>>()
                .join("---\n"),
        )
        .expect("write zoned.yaml");
        k.ok(&["create", "-f", zoned.to_str().unwrap_or_default()]);
        let job = wait_for(Duration::from_secs(150), || {
            let jobs = json(&k, &["get", "jobs", "-o", "json"]);
            jobs["items"]
                .as_array()?
                .iter()
                .find(|j| {
                    j["metadata"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("tick-"))
                })
                .cloned()
        })
        .unwrap_or_else(|| panic!("no job from cronjob tick"));
        let name = job["metadata"]["name"].as_str().unwrap_or_default();
        let scheduled =
            job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        let minutes: i64 = name.trim_start_matches("tick-").parse().unwrap_or(-1);
        let at =
            time::OffsetDateTime::parse(&scheduled, &time::format_description::well_known::Rfc3339)
                .unwrap_or_else(|e| panic!("{scheduled}: {e}"));
        assert_eq!(minutes, at.unix_timestamp() / 60, "{name} {scheduled}");
        complete(&k, name);
        let cj = json(&k, &["get", "cronjob", "tick", "-o", "json"]);
        assert_eq!(cj["status"]["lastScheduleTime"], scheduled.as_str(), "{cj}");

        // Kolkata's CronJob ran at one of those UTC minutes (it was told it could not, before);
        // the one without a zone did not.
        let kolkata = wait_for(Duration::from_secs(150), || {
            let jobs = k.ok(&["get", "jobs", "-o", "name"]);
            jobs.lines()
                .find_map(|l| l.strip_prefix("job.batch/kolkata-"))
                .and_then(|m| m.parse::<i64>().ok())
        })
        .unwrap_or_else(|| panic!("{label}: no job from cronjob kolkata"));
        assert!(
            kolkata == utc_minute || kolkata == utc_minute + 1,
            "{label}: kolkata ran at minute {kolkata}, not {utc_minute} or the next"
        );
        let jobs = k.ok(&["get", "jobs", "-o", "name"]);
        assert!(!jobs.contains("job.batch/plain-"), "{label}: {jobs}");
    });
}

/// activeDeadlineSeconds fails a Job that runs too long; a suspended Job runs no pod until
/// it is resumed.
#[test]
fn deadline_and_suspend_as_upstream() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "60"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("jobs.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: slow\nspec:\n  activeDeadlineSeconds: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: later\nspec:\n  suspend: true\n  template:\n    metadata:\n      annotations:\n        kexplore.dev/simulated-run-seconds: \"1\"\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n",
        )
        .expect("write jobs.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let failed = wait_for(Duration::from_secs(90), || {
            let j = json(&k, &["get", "job", "slow", "-o", "json"]);
            condition(&j, "Failed").is_some().then_some(j)
        })
        .unwrap_or_else(|| panic!("job slow never failed"));
        let c = condition(&failed, "Failed").cloned().unwrap_or_default();
        assert_eq!(c["reason"], "DeadlineExceeded", "{failed}");
        assert_eq!(
            c["message"], "Job was active longer than specified deadline",
            "{failed}"
        );
        assert!(condition(&failed, "FailureTarget").is_some(), "{failed}");
        assert!(k.ok(&["get", "jobs"]).contains("slow    Failed"));

        let later = wait_for(Duration::from_secs(60), || {
            let j = json(&k, &["get", "job", "later", "-o", "json"]);
            condition(&j, "Suspended").is_some().then_some(j)
        })
        .unwrap_or_else(|| panic!("job later never suspended"));
        let c = condition(&later, "Suspended").cloned().unwrap_or_default();
        assert_eq!(
            (c["status"].clone(), c["reason"].clone()),
            ("True".into(), "JobSuspended".into()),
            "{later}"
        );
        let pods = json(&k, &["get", "pods", "-l", "job-name=later", "-o", "json"]);
        assert_eq!(pods["items"].as_array().map(Vec::len), Some(0), "{pods}");
        k.ok(&[
            "patch",
            "job",
            "later",
            "--type=merge",
            "-p",
            r#"{"spec":{"suspend":false}}"#,
        ]);
        let done = complete(&k, "later");
        let c = condition(&done, "Suspended").cloned().unwrap_or_default();
        assert_eq!(
            (c["status"].clone(), c["reason"].clone()),
            ("False".into(), "JobResumed".into()),
            "{done}"
        );

        // A Job's pods carry its tracking finalizer: once the Job is gone the controller lets
        // them go (upstream's syncOrphanPod), or a deleted one would be held forever.
        let running = |job: &str| {
            let sel = format!("job-name={job}");
            wait_for(Duration::from_secs(60), || {
                let pods = json(&k, &["get", "pods", "-l", &sel, "-o", "json"]);
                let items = pods["items"].as_array().cloned().unwrap_or_default();
                items
                    .first()
                    .filter(|p| p["status"]["phase"] == "Running")
                    .cloned()
            })
            .unwrap_or_else(|| panic!("{label}: job {job}'s pod never ran"))
        };
        for (job, cascade) in [("gone", "background"), ("kept", "orphan")] {
            k.ok(&["create", "job", job, "--image=busybox"]);
            let pod = running(job);
            assert_eq!(
                pod["metadata"]["finalizers"],
                serde_json::json!(["batch.kubernetes.io/job-tracking"]),
                "{label}"
            );
            k.ok(&["delete", "job", job, &format!("--cascade={cascade}")]);
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            let let_go = wait_for(Duration::from_secs(60), || {
                let o = k.run(&["get", "pod", name, "-o", "json"]);
                if o.code != 0 {
                    return (cascade == "background").then_some(());
                }
                let p: Value = serde_json::from_str(&o.stdout).unwrap_or_default();
                (cascade == "orphan"
                    && p["metadata"]["finalizers"].is_null()
                    && p["status"]["phase"] == "Running")
                    .then_some(())
            });
            assert!(
                let_go.is_some(),
                "{label}: {job}'s pod was held ({cascade})"
            );
        }
    });
}

/// An Indexed Job runs each index once, its pods knowing their index as upstream's do, and
/// reports `completedIndexes`; a finished Job with `ttlSecondsAfterFinished` is deleted, pods
/// and all, by the TTL-after-finished controller. Before, both fields were accepted and
/// ignored: an Indexed Job ran as NonIndexed, and a Job with a TTL stayed for ever.
#[test]
fn indexed_jobs_and_ttl_after_finished() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("jobs.yaml");
        std::fs::write(
            &manifest,
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: work\nspec:\n  completionMode: Indexed\n  completions: 3\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: brief\nspec:\n  ttlSecondsAfterFinished: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n",
        )
        .expect("write jobs.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);

        let work = complete(&k, "work");
        assert_eq!(work["status"]["completedIndexes"], "0-2", "{label}: {work}");
        assert_eq!(work["status"]["succeeded"], 3, "{label}: {work}");
        let pods = json(&k, &["get", "pods", "-l", "job-name=work", "-o", "json"]);
        let mut seen: Vec<String> = Vec::new();
        for p in pods["items"].as_array().cloned().unwrap_or_default() {
            let ix = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            assert_eq!(
                p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"], ix,
                "{label}: {p}"
            );
            assert_eq!(p["spec"]["hostname"], format!("work-{ix}"), "{label}: {p}");
            let name = p["metadata"]["name"].as_str().unwrap_or_default();
            assert!(name.starts_with(&format!("work-{ix}-")), "{label}: {name}");
            assert_eq!(
                p["spec"]["containers"][0]["env"][0],
                serde_json::json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}),
                "{label}: {p}"
            );
            seen.push(ix);
        }
        seen.sort();
        assert_eq!(seen, ["0", "1", "2"], "{label}: one pod per index");
        let one = k.ok(&[
            "get",
            "pods",
            "-l",
            "batch.kubernetes.io/job-completion-index=1",
            "-o",
            "name",
        ]);
        assert_eq!(one.lines().count(), 1, "{label}: {one}");

        // Validation, in upstream's words: completions are required, and an Indexed Job's
        // may change only with parallelism (elastic Indexed Jobs).
        let refused = k.run(&[
            "patch",
            "job",
            "work",
            "--type=merge",
            "-p",
            r#"{"spec":{"completions":4}}"#,
        ]);
        assert!(
            refused
                .stderr
                .contains("spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"),
            "{label}: {}",
            refused.stderr
        );
        k.ok(&[
            "patch",
            "job",
            "work",
            "--type=merge",
            "-p",
            r#"{"spec":{"completions":4,"parallelism":4}}"#,
        ]);
        let unbounded = srv.dir.path().join("unbounded.yaml");
        std::fs::write(
            &unbounded,
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: unbounded\nspec:\n  completionMode: Indexed\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n",
        )
        .expect("write unbounded.yaml");
        let refused = k.run(&["create", "-f", unbounded.to_str().unwrap_or_default()]);
        assert!(
            refused
                .stderr
                .contains("spec.completions: Required value: when completion mode is Indexed"),
            "{label}: {}",
            refused.stderr
        );

        // ttlSecondsAfterFinished: 2 — the Job and its pod go once it has been finished 2 s.
        let gone = wait_for(Duration::from_secs(60), || {
            (k.run(&["get", "job", "brief"]).code != 0).then_some(())
        });
        assert!(gone.is_some(), "{label}: job brief was never deleted");
        let left = wait_for(Duration::from_secs(60), || {
            let pods = json(&k, &["get", "pods", "-l", "job-name=brief", "-o", "json"]);
            pods["items"]
                .as_array()
                .is_some_and(Vec::is_empty)
                .then_some(())
        });
        assert!(left.is_some(), "{label}: job brief's pod was left");
        // A finished Job without a TTL stays.
        assert_eq!(k.run(&["get", "job", "work"]).code, 0, "{label}");
    });
}

/// podFailurePolicy as upstream's job controller applies it: a FailJob rule on an exit code
/// fails the Job at the first such pod, in upstream's words, whatever backoffLimit allows; an
/// Ignore rule keeps a failure off backoffLimit; a policy needs restartPolicy Never. Before,
/// the policy was stored and ignored: the first Job ran seven pods to BackoffLimitExceeded.
#[test]
fn pod_failure_policy_as_upstream() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let job = |name: &str, action: &str, code: u32, backoff: u32, restart: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  backoffLimit: {backoff}\n  podFailurePolicy:\n    rules:\n    - action: {action}\n      onExitCodes:\n        containerName: main\n        operator: In\n        values: [{code}]\n  template:\n    metadata:\n      annotations:\n        kexplore.dev/simulated-exit-code: \"{code}\"\n    spec:\n      restartPolicy: {restart}\n      containers:\n      - name: main\n        image: busybox\n"
            )
        };
        let manifest = srv.dir.path().join("policy.yaml");
        std::fs::write(
            &manifest,
            [
                job("fail-fast", "FailJob", 42, 6, "Never"),
                job("ignored", "Ignore", 3, 0, "Never"),
            ]
            .join("---\n"),
        )
        .expect("write policy.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);

        let failed = wait_for(Duration::from_secs(60), || {
            let j = json(&k, &["get", "job", "fail-fast", "-o", "json"]);
            condition(&j, "Failed").is_some().then_some(j)
        })
        .unwrap_or_else(|| panic!("{label}: job fail-fast never failed"));
        let c = condition(&failed, "Failed").cloned().unwrap_or_default();
        assert_eq!(c["reason"], "PodFailurePolicy", "{label}: {failed}");
        let pods = json(
            &k,
            &["get", "pods", "-l", "job-name=fail-fast", "-o", "json"],
        );
        let items = pods["items"].as_array().cloned().unwrap_or_default();
        assert_eq!(items.len(), 1, "{label}: one pod, not seven: {pods}");
        let pod = items[0]["metadata"]["name"].as_str().unwrap_or_default();
        assert_eq!(
            c["message"],
            format!(
                "Container main for pod default/{pod} failed with exit code 42 matching FailJob rule at index 0"
            ),
            "{label}: {failed}"
        );
        assert_eq!(
            condition(&failed, "FailureTarget").map(|c| c["reason"].clone()),
            Some("PodFailurePolicy".into()),
            "{label}: {failed}"
        );

        // backoffLimit 0 would fail it at the first failure; the Ignore rule keeps counting
        // none, and the controller replaces each failed pod.
        let replaced = wait_for(Duration::from_secs(60), || {
            let pods = json(&k, &["get", "pods", "-l", "job-name=ignored", "-o", "json"]);
            let failed_pods = pods["items"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter(|p| p["status"]["phase"] == "Failed")
                        .count()
                })
                .unwrap_or(0);
            (failed_pods >= 2).then_some(())
        });
        assert!(
            replaced.is_some(),
            "{label}: the ignored failures were not replaced"
        );
        let ignored = json(&k, &["get", "job", "ignored", "-o", "json"]);
        assert!(
            condition(&ignored, "Failed").is_none(),
            "{label}: {ignored}"
        );
        assert!(ignored["status"]["failed"].is_null(), "{label}: {ignored}");
        k.ok(&["delete", "job", "ignored"]);

        let bad = srv.dir.path().join("bad.yaml");
        std::fs::write(&bad, job("bad", "FailJob", 0, 6, "OnFailure")).expect("write bad.yaml");
        let refused = k.run(&["create", "-f", bad.to_str().unwrap_or_default()]);
        for want in [
            "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
            r#"spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#,
        ] {
            assert!(
                refused.stderr.contains(want),
                "{label}: {want}\n{}",
                refused.stderr
            );
        }
    });
}

/// An Indexed Job as upstream's 1.33 job controller runs `backoffLimitPerIndex`,
/// `maxFailedIndexes` and `successPolicy`, which were stored and ignored before (every failure
/// went to the Job-wide backoffLimit, and a Job ran every index whatever its policy said); a
/// Job's pod template fixed but for a suspended Job's scheduling; a Job another controller
/// manages left alone.
#[test]
fn per_index_backoff_and_success_policy_as_upstream() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "1"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let job = |name: &str, spec: &str, annotations: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  completionMode: Indexed\n{spec}  template:\n    metadata:\n      annotations: {{{annotations}}}\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n"
            )
        };
        let exit1 = "kexplore.dev/simulated-exit-code: \"1\"";
        let manifest = srv.dir.path().join("indexed.yaml");
        std::fs::write(
            &manifest,
            [
                job(
                    "flaky",
                    "  completions: 3\n  parallelism: 3\n  backoffLimitPerIndex: 1\n",
                    "kexplore.dev/simulated-run-seconds: \"6\"",
                ),
                job(
                    "doomed",
                    "  completions: 2\n  parallelism: 2\n  backoffLimitPerIndex: 1\n",
                    exit1,
                ),
                job(
                    "capped",
                    "  completions: 4\n  parallelism: 1\n  backoffLimitPerIndex: 0\n  maxFailedIndexes: 0\n",
                    exit1,
                ),
                job(
                    "early",
                    "  completions: 3\n  parallelism: 1\n  successPolicy:\n    rules:\n    - succeededCount: 1\n",
                    "",
                ),
            ]
            .join("---\n"),
        )
        .expect("write indexed.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);

        // Index 1 of flaky fails once (its running pod annotated to exit 1) and is retried with
        // its failure count; the Job completes with one failure and no failed index.
        let first = wait_for(Duration::from_secs(30), || {
            let out = k.ok(&[
                "get",
                "pods",
                "-l",
                "job-name=flaky,batch.kubernetes.io/job-completion-index=1",
                "-o",
                "name",
            ]);
            out.lines().next().map(str::to_string)
        })
        .unwrap_or_else(|| panic!("{label}: no pod for index 1 of flaky"));
        k.ok(&["annotate", &first, "kexplore.dev/simulated-exit-code=1"]);
        let flaky = complete(&k, "flaky");
        assert_eq!(flaky["status"]["failed"], 1, "{label}: {flaky}");
        assert_eq!(
            flaky["status"]["completedIndexes"], "0-2",
            "{label}: {flaky}"
        );
        assert_eq!(flaky["status"]["failedIndexes"], "", "{label}: {flaky}");
        assert_eq!(
            flaky["spec"]["backoffLimit"], 2147483647,
            "{label}: the Job-wide limit is unbounded under a per-index one"
        );
        let pods = json(
            &k,
            &[
                "get",
                "pods",
                "-l",
                "job-name=flaky,batch.kubernetes.io/job-completion-index=1",
                "-o",
                "json",
            ],
        );
        let mut counts: Vec<(String, String)> = pods["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|p| {
                (
                    p["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"]
                        .as_str()
                        .unwrap_or("none")
                        .to_string(),
                    p["status"]["phase"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();
        counts.sort();
        assert_eq!(
            counts,
            [
                ("0".into(), "Failed".into()),
                ("1".into(), "Succeeded".into())
            ],
            "{label}: {pods}"
        );

        // Every pod of doomed fails: each index twice, then the Job, for its failed indexes.
        let failed_job = |name: &str| {
            wait_for(Duration::from_secs(60), || {
                let j = json(&k, &["get", "job", name, "-o", "json"]);
                condition(&j, "Failed").is_some().then_some(j)
            })
            .unwrap_or_else(|| panic!("{label}: job {name} never failed"))
        };
        let doomed = failed_job("doomed");
        let c = condition(&doomed, "Failed").cloned().unwrap_or_default();
        assert_eq!(c["reason"], "FailedIndexes", "{label}: {doomed}");
        assert_eq!(c["message"], "Job has failed indexes", "{label}: {doomed}");
        assert_eq!(
            doomed["status"]["failedIndexes"], "0,1",
            "{label}: {doomed}"
        );
        assert_eq!(doomed["status"]["failed"], 4, "{label}: {doomed}");

        // maxFailedIndexes 0: the first failed index fails the Job; no other index starts.
        let capped = failed_job("capped");
        let c = condition(&capped, "Failed").cloned().unwrap_or_default();
        assert_eq!(c["reason"], "MaxFailedIndexesExceeded", "{label}: {capped}");
        assert_eq!(
            c["message"], "Job has exceeded the specified maximal number of failed indexes",
            "{label}: {capped}"
        );
        let capped_pods = k.ok(&["get", "pods", "-l", "job-name=capped", "-o", "name"]);
        assert_eq!(capped_pods.lines().count(), 1, "{label}: {capped_pods}");

        // successPolicy: one index is enough, named in both conditions.
        let early = complete(&k, "early");
        for ty in ["SuccessCriteriaMet", "Complete"] {
            let c = condition(&early, ty).cloned().unwrap_or_default();
            assert_eq!(c["reason"], "SuccessPolicy", "{label}: {early}");
            assert_eq!(c["message"], "Matched rules at index 0", "{label}: {early}");
        }
        assert_eq!(early["status"]["completedIndexes"], "0", "{label}: {early}");
        let early_pods = k.ok(&["get", "pods", "-l", "job-name=early", "-o", "name"]);
        assert_eq!(early_pods.lines().count(), 1, "{label}: {early_pods}");

        // The template is fixed once a Job runs; a suspended Job never started may move.
        let refused = k.run(&[
            "patch",
            "job",
            "early",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx"}]"#,
        ]);
        assert!(
            refused.stderr.contains("spec.template: Invalid value")
                && refused.stderr.contains("field is immutable"),
            "{label}: {}",
            refused.stderr
        );
        let held = srv.dir.path().join("held.yaml");
        std::fs::write(
            &held,
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: held\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: elsewhere\nspec:\n  managedBy: example.com/other-controller\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n",
        )
        .expect("write held.yaml");
        k.ok(&["create", "-f", held.to_str().unwrap_or_default()]);
        k.ok(&[
            "patch",
            "job",
            "held",
            "--type=merge",
            "-p",
            r#"{"spec":{"template":{"spec":{"nodeSelector":{"zone":"b"}}}}}"#,
        ]);

        // Refused in upstream's words.
        let bad = srv.dir.path().join("bad.yaml");
        std::fs::write(
            &bad,
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bad\nspec:\n  backoffLimitPerIndex: 1\n  successPolicy:\n    rules:\n    - succeededCount: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n",
        )
        .expect("write bad.yaml");
        let refused = k.run(&["create", "-f", bad.to_str().unwrap_or_default()]);
        for want in [
            "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
            "spec.successPolicy: Invalid value:",
        ] {
            assert!(
                refused.stderr.contains(want),
                "{label}: {want}\n{}",
                refused.stderr
            );
        }

        // The Job another controller manages gets no pod from this one.
        std::thread::sleep(Duration::from_secs(3));
        let elsewhere = k.ok(&["get", "pods", "-l", "job-name=elsewhere", "-o", "name"]);
        assert!(elsewhere.is_empty(), "{label}: {elsewhere}");
    });
}

/// What a deleted pod means to its Job, as upstream: a suspension's deletions are not
/// failures (they counted as failures before); under podReplacementPolicy Failed a deleted pod
/// is replaced only once the kubelet has stopped it, Failed with SIGTERM's exit code 143 — what
/// a kubelet reports for a deleted pod a finalizer holds (it said Succeeded, exit 0, before);
/// `kubectl logs -f` follows a container until it exits.
#[test]
fn deleted_pods_and_replacements_as_upstream() {
    with_one_kubectl(|label, bin| {
        let srv = ServeProcess::start(&["--simulated-run-seconds", "60"]);
        let k = Kubectl::new(label, bin, srv.kubeconfig());
        let manifest = srv.dir.path().join("jobs.yaml");
        let job = |name: &str, spec: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n{spec}  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n        image: busybox\n"
            )
        };
        std::fs::write(
            &manifest,
            [
                job("paused", "  parallelism: 2\n  completions: 4\n"),
                job("replaced", "  podReplacementPolicy: Failed\n"),
            ]
            .join("---\n"),
        )
        .expect("write jobs.yaml");
        k.ok(&["create", "-f", manifest.to_str().unwrap_or_default()]);
        let running = |job: &str, n: usize| {
            let sel = format!("job-name={job}");
            wait_for(Duration::from_secs(60), || {
                let pods = json(&k, &["get", "pods", "-l", &sel, "-o", "json"]);
                let items = pods["items"].as_array().cloned().unwrap_or_default();
                let up: Vec<Value> = items
                    .into_iter()
                    .filter(|p| p["status"]["phase"] == "Running")
                    .collect();
                (up.len() == n).then_some(up)
            })
            .unwrap_or_else(|| panic!("{label}: job {job} never ran {n} pods"))
        };

        running("paused", 2);
        k.ok(&[
            "patch",
            "job",
            "paused",
            "--type=merge",
            "-p",
            r#"{"spec":{"suspend":true}}"#,
        ]);
        let gone = wait_for(Duration::from_secs(60), || {
            let out = k.ok(&["get", "pods", "-l", "job-name=paused", "-o", "name"]);
            out.is_empty().then_some(())
        });
        assert!(gone.is_some(), "{label}: the suspended Job's pods stayed");
        let paused = json(&k, &["get", "job", "paused", "-o", "json"]);
        assert!(paused["status"]["failed"].is_null(), "{label}: {paused}");

        let first = running("replaced", 1).remove(0);
        let name = first["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        k.ok(&["delete", "pod", &name, "--wait=false"]);
        let replaced = wait_for(Duration::from_secs(60), || {
            let j = json(&k, &["get", "job", "replaced", "-o", "json"]);
            (j["status"]["failed"] == 1).then_some(())
        });
        assert!(
            replaced.is_some(),
            "{label}: the deleted pod was not counted"
        );
        let again = running("replaced", 1).remove(0);
        assert_ne!(
            again["metadata"]["name"], first["metadata"]["name"],
            "{label}"
        );

        // `kubectl logs -f` follows a running container until it exits (it returned at once
        // with the lines so far before).
        let short = srv.dir.path().join("short.yaml");
        std::fs::write(
            &short,
            job("short", "").replace(
                "  template:\n    spec:",
                "  template:\n    metadata:\n      annotations: {kexplore.dev/simulated-run-seconds: \"4\"}\n    spec:",
            ),
        )
        .expect("write short.yaml");
        k.ok(&["create", "-f", short.to_str().unwrap_or_default()]);
        running("short", 1);
        let started = std::time::Instant::now();
        let followed = k.ok(&["logs", "-f", "job/short"]);
        assert!(
            followed.contains("container exited with code 0"),
            "{label}: {followed}"
        );
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{label}: logs -f returned before the container exited: {followed}"
        );

        // A deleted pod a finalizer holds: stopped by SIGTERM, Failed.
        k.ok(&["run", "held", "--image=busybox"]);
        k.ok(&[
            "patch",
            "pod",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
        ]);
        wait_for(Duration::from_secs(60), || {
            let p = json(&k, &["get", "pod", "held", "-o", "json"]);
            (p["status"]["phase"] == "Running").then_some(())
        })
        .unwrap_or_else(|| panic!("{label}: pod held never ran"));
        k.ok(&["delete", "pod", "held", "--wait=false"]);
        let stopped = wait_for(Duration::from_secs(60), || {
            let p = json(&k, &["get", "pod", "held", "-o", "json"]);
            (p["status"]["phase"] == "Failed").then_some(p)
        })
        .unwrap_or_else(|| panic!("{label}: pod held never stopped"));
        let term = &stopped["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(term["exitCode"], 143, "{label}: {stopped}");
        assert_eq!(term["reason"], "Error", "{label}: {stopped}");
        k.ok(&[
            "patch",
            "pod",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ]);
    });
}

//! The Job controller (upstream `pkg/controller/job`): keeps `min(parallelism, completions -
//! succeeded)` pods active, counts each finished pod once by its `batch.kubernetes.io/
//! job-tracking` finalizer, fails the Job past backoffLimit or activeDeadlineSeconds (after
//! FailureTarget), suspends and resumes it, and finishes it as 1.31+ does —
//! SuccessCriteriaMet first, Complete (with completionTime) once no pod is left running or
//! terminating. Indexed Jobs' indexes are kept by `job_indexed`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::job_failure_policy::{self, Verdict};
use crate::apiserver::controllers::workload::{
    self, Controller, claim, pod_active, pod_from_template, pod_ready, s, terminating,
};
use crate::apiserver::controllers::{client, job_indexed};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::registry::batch::job::TRACKING_FINALIZER;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;
use crate::apiserver::util::At;

const COMPONENT: &str = "job-controller";
/// Upstream's burst of pod creations per sync.
const BURST: i64 = 500;

const COMPLETIONS_REACHED: &str = "CompletionsReached";
const COMPLETIONS_MESSAGE: &str = "Reached expected number of succeeded pods";
const BACKOFF_EXCEEDED: &str = "BackoffLimitExceeded";
const BACKOFF_MESSAGE: &str = "Job has reached the specified backoff limit";
const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
const DEADLINE_MESSAGE: &str = "Job was active longer than specified deadline";

pub(crate) struct Jobs;

impl Controller for Jobs {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/jobs/", "/registry/pods/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        workload::owner_dirty(ev, "/registry/jobs/", "Job", out);
        // A pod carrying the tracking finalizer that no Job controls any more (its Job was
        // deleted with `--cascade=orphan`): its namespace's orphans are looked at.
        if ev.key.starts_with("/registry/pods/")
            && TRACKED.find(&ev.object).is_some()
            && workload::controller_of(&ev.value()).is_none_or(|(kind, _)| kind != "Job")
            && let Some((ns, _)) = workload::ns_name(&ev.key)
        {
            out.insert((ns, ORPHANS.to_string()));
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, workload::def("batch", "jobs"), "")
            .iter()
            .map(|j| {
                (
                    s(j, "/metadata/namespace").to_string(),
                    s(j, "/metadata/name").to_string(),
                )
            })
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(api, ns, name)
    }
}

fn has_condition(job: &Value, ty: &str) -> bool {
    job.at("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| s(c, "/type") == ty && s(c, "/status") == "True")
        })
}

fn condition(ty: &str, reason: &str, message: &str) -> Value {
    let now = util::now();
    json!({"type": ty, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
           "reason": reason, "message": message})
}

fn has_finalizer(p: &Value) -> bool {
    p.at("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x == TRACKING_FINALIZER))
}

/// Not a Job's name: the key of a look at a namespace's orphaned pods.
const ORPHANS: &str = "";

static TRACKED: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(TRACKING_FINALIZER.as_bytes()));

/// Upstream's `syncOrphanPod`: a pod whose Job is gone (`job`), or that no Job controls any more
/// (`None`), loses the tracking finalizer — no Job will count it, and it would otherwise be
/// held forever once deleted.
fn release_orphans(api: &Api, ns: &str, job: Option<&str>) {
    let pod_def = workload::def("", "pods");
    for p in client::list(api, pod_def, ns) {
        let owner = workload::controller_of(&p).filter(|(kind, _)| *kind == "Job");
        let orphaned = match job {
            Some(name) => owner.is_some_and(|(_, n)| n == name),
            None => owner.is_none(),
        };
        if orphaned && has_finalizer(&p) {
            release(api, ns, &p);
        }
    }
}

/// Take the tracking finalizer off a pod; true when this call took it (so the pod is counted
/// exactly once).
fn release(api: &Api, ns: &str, pod: &Value) -> bool {
    let mut took = false;
    let res = client::update(
        api,
        workload::def("", "pods"),
        ns,
        s(pod, "/metadata/name"),
        |o| {
            took = false;
            if s(o, "/metadata/uid") != s(pod, "/metadata/uid") {
                return;
            }
            if let Some(f) = o
                .pointer_mut("/metadata/finalizers")
                .and_then(Value::as_array_mut)
            {
                let before = f.len();
                f.retain(|x| x != TRACKING_FINALIZER);
                took = f.len() != before;
            }
        },
    );
    res.is_ok() && took
}

/// With restartPolicy OnFailure the kubelet restarts a failed container in place, so its
/// restarts count against backoffLimit (upstream `pastBackoffLimitOnFailure`): those of every
/// container, init containers too, of the pods still Pending or Running.
fn past_backoff_limit_on_failure(job: &Value, active: &[Arc<Value>], limit: i64) -> bool {
    if s(job, "/spec/template/spec/restartPolicy") != "OnFailure" {
        return false;
    }
    let restarts: i64 = active
        .iter()
        .filter(|p| matches!(s(p, "/status/phase"), "Pending" | "Running"))
        .flat_map(|p| {
            ["/status/containerStatuses", "/status/initContainerStatuses"]
                .into_iter()
                .filter_map(|l| p.at(l).and_then(Value::as_array))
                .flatten()
                .map(|c| c.get("restartCount").and_then(Value::as_i64).unwrap_or(0))
                .collect::<Vec<_>>()
        })
        .sum();
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// False when a pod could not be created or deleted.
fn sync(api: &Api, ns: &str, name: &str) -> bool {
    let job_def = workload::def("batch", "jobs");
    let pod_def = workload::def("", "pods");
    if name == ORPHANS {
        release_orphans(api, ns, None);
        return true;
    }
    let Some(job) = api.store.get(&job_def.key_for(ns, name)) else {
        release_orphans(api, ns, Some(name));
        return true;
    };
    let pods = claim(api, &job, pod_def, client::list(api, pod_def, ns));
    let mut succeeded = int_at(&job, "/status/succeeded");
    let mut failed = int_at(&job, "/status/failed");
    let completions = job.at("/spec/completions").and_then(Value::as_i64);
    // An Indexed Job counts indexes, not pods: a second success of one index adds nothing.
    let mut done_indexes = (s(&job, "/spec/completionMode") == "Indexed").then(|| {
        job_indexed::parse(
            s(&job, "/status/completedIndexes"),
            completions.unwrap_or(0),
        )
    });
    // The control loops' views of pods leave out container states and most conditions, which
    // a podFailurePolicy reads of a failed pod: those few are read whole.
    let has_policy = job.at("/spec/podFailurePolicy/rules").is_some();
    let whole = |p: &Arc<Value>| -> Arc<Value> {
        api.store
            .get(&pod_def.key_for(ns, s(p, "/metadata/name")))
            .filter(|w| s(w, "/metadata/uid") == s(p, "/metadata/uid"))
            .unwrap_or_else(|| p.clone())
    };
    let failed_pods: Vec<Arc<Value>> = match has_policy {
        true => pods
            .iter()
            .filter(|p| s(p, "/status/phase") == "Failed")
            .map(whole)
            .collect(),
        false => Vec::new(),
    };
    // Finished (or deleted) pods still carrying the finalizer have not been counted yet.
    for p in pods.iter().filter(|p| has_finalizer(p)) {
        let phase = s(p, "/status/phase");
        let done = matches!(phase, "Succeeded" | "Failed") || terminating(p);
        if done && release(api, ns, p) {
            match (phase, done_indexes.as_mut()) {
                ("Succeeded", Some(set)) => {
                    if let Some(i) =
                        job_indexed::index_of(p).filter(|i| *i < completions.unwrap_or(0))
                    {
                        set.insert(i);
                    }
                }
                ("Succeeded", None) => succeeded += 1,
                ("Failed", _) if has_policy => {
                    let p = failed_pods
                        .iter()
                        .find(|w| s(w, "/metadata/uid") == s(p, "/metadata/uid"))
                        .unwrap_or(p);
                    if job_failure_policy::verdict(&job, p) != Verdict::Ignore {
                        failed += 1;
                    }
                }
                _ => failed += 1,
            }
        }
    }
    if let Some(set) = &done_indexes {
        succeeded = i64::try_from(set.len()).unwrap_or(i64::MAX);
    }
    let mut active: Vec<Arc<Value>> = pods.iter().filter(|p| pod_active(p)).cloned().collect();
    let finished = has_condition(&job, "Complete") || has_condition(&job, "Failed");
    let parallelism = job
        .at("/spec/parallelism")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let backoff = job
        .at("/spec/backoffLimit")
        .and_then(Value::as_i64)
        .unwrap_or(6);
    let suspended = job.at("/spec/suspend") == Some(&json!(true));
    let succeeded_enough = match completions {
        Some(c) => succeeded >= c,
        None => succeeded > 0 && active.is_empty(),
    };
    let past_deadline = job
        .at("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .zip(
            job.at("/status/startTime")
                .and_then(Value::as_str)
                .and_then(util::parse_time),
        )
        .is_some_and(|(d, start)| {
            start + time::Duration::seconds(d) <= time::OffsetDateTime::now_utc()
        });
    // Why the Job fails, if it does: a FailJob rule of its podFailurePolicy (first, as
    // upstream; once its FailureTarget is recorded, its message stands even if the pod has gone
    // since), too many failed pods, or active past its deadline.
    let policy_failure = job
        .at("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| s(c, "/type") == "FailureTarget" && s(c, "/reason") == job_failure_policy::REASON)
        .map(|c| s(c, "/message").to_string())
        .or_else(|| job_failure_policy::fail_job_message(&job, failed_pods.iter().map(|p| &**p)));
    let failure: Option<(&str, String)> = if let Some(message) = policy_failure {
        Some((job_failure_policy::REASON, message))
    } else if failed > backoff || past_backoff_limit_on_failure(&job, &active, backoff) {
        Some((BACKOFF_EXCEEDED, BACKOFF_MESSAGE.to_string()))
    } else if past_deadline && !suspended {
        Some((DEADLINE_EXCEEDED, DEADLINE_MESSAGE.to_string()))
    } else {
        None
    };
    let mut ok = true;
    let delete_all = |active: &mut Vec<Arc<Value>>, ok: &mut bool| {
        for p in active.drain(..) {
            let pod_name = s(&p, "/metadata/name");
            match client::delete(api, pod_def, ns, pod_name) {
                Ok(()) => workload::event(
                    api,
                    COMPONENT,
                    &job,
                    "Normal",
                    "SuccessfulDelete",
                    &format!("Deleted pod: {pod_name}"),
                ),
                Err(_) => *ok = false,
            }
        }
    };
    if !finished && !workload::terminating(&job) {
        if failure.is_some() || succeeded_enough || suspended {
            delete_all(&mut active, &mut ok);
        } else {
            if let (Some(set), Some(c)) = (&done_indexes, completions) {
                // A second pod of one index, one past completions, or one of an index
                // that already succeeded has nothing left to do.
                let (mut extra, keep) = job_indexed::surplus(std::mem::take(&mut active), c);
                let (done, keep): (Vec<_>, Vec<_>) = keep
                    .into_iter()
                    .partition(|p| job_indexed::index_of(p).is_some_and(|i| set.contains(&i)));
                extra.extend(done);
                active = keep;
                delete_all(&mut extra, &mut ok);
            }
            let want = match completions {
                Some(c) => parallelism.min(c - succeeded).max(0),
                None => parallelism,
            };
            let have = i64::try_from(active.len()).unwrap_or(i64::MAX);
            if have < want {
                let template = job.at("/spec/template").cloned().unwrap_or(json!({}));
                let n = usize::try_from((want - have).min(BURST)).unwrap_or(0);
                let indexes: Vec<Option<i64>> = match (&done_indexes, completions) {
                    (Some(set), Some(c)) => job_indexed::pending(c, set, &active, n)
                        .into_iter()
                        .map(Some)
                        .collect(),
                    _ => vec![None; n],
                };
                for index in indexes {
                    let mut pod = match index {
                        Some(i) => job_indexed::pod(&job, &template, i),
                        None => pod_from_template(&job, &template, None),
                    };
                    pod["metadata"]["finalizers"] = json!([TRACKING_FINALIZER]);
                    match client::create(api, pod_def, pod) {
                        Ok(p) => {
                            let msg = format!("Created pod: {}", s(&p, "/metadata/name"));
                            workload::event(
                                api,
                                COMPONENT,
                                &job,
                                "Normal",
                                "SuccessfulCreate",
                                &msg,
                            );
                            active.push(p);
                        }
                        Err(e) => {
                            let msg = format!("Error creating: {}", e.message);
                            workload::event(api, COMPONENT, &job, "Warning", "FailedCreate", &msg);
                            ok = false;
                            break;
                        }
                    }
                }
            } else if have > want {
                active.sort_by(|a, b| {
                    s(b, "/metadata/creationTimestamp").cmp(s(a, "/metadata/creationTimestamp"))
                });
                let mut surplus: Vec<_> = active
                    .drain(..usize::try_from(have - want).unwrap_or(0))
                    .collect();
                delete_all(&mut surplus, &mut ok);
            }
        }
    }
    // What is left on the nodes: pods still running or on their way out.
    let pods = client::list(api, pod_def, ns);
    let uid = s(&job, "/metadata/uid");
    let mine: Vec<_> = pods
        .iter()
        .filter(|p| workload::controller_uid(p) == Some(uid))
        .collect();
    let n_active = mine.iter().filter(|p| pod_active(p)).count();
    let n_ready = mine
        .iter()
        .filter(|p| pod_active(p) && pod_ready(p))
        .count();
    let n_terminating = mine
        .iter()
        .filter(|p| terminating(p) && !matches!(s(p, "/status/phase"), "Succeeded" | "Failed"))
        .count();
    let mut conditions: Vec<Value> = job
        .at("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has = |cs: &[Value], t: &str| cs.iter().any(|c| s(c, "/type") == t);
    let mut completion_time = job.at("/status/completionTime").cloned();
    let mut became = None;
    if !finished {
        if let Some((reason, message)) = &failure {
            let (reason, message) = (*reason, message.as_str());
            if !has(&conditions, "FailureTarget") {
                conditions.push(condition("FailureTarget", reason, message));
            }
            if n_active == 0 && n_terminating == 0 {
                conditions.push(condition("Failed", reason, message));
                became = Some(("Warning", reason, message));
            }
        } else if succeeded_enough {
            if !has(&conditions, "SuccessCriteriaMet") {
                conditions.push(condition(
                    "SuccessCriteriaMet",
                    COMPLETIONS_REACHED,
                    COMPLETIONS_MESSAGE,
                ));
            }
            if n_active == 0 && n_terminating == 0 {
                conditions.push(condition(
                    "Complete",
                    COMPLETIONS_REACHED,
                    COMPLETIONS_MESSAGE,
                ));
                completion_time = Some(json!(util::now()));
                became = Some(("Normal", "Completed", "Job completed"));
            }
        }
    }
    // Suspended: the Suspended condition, and no startTime (a resumed Job starts anew, so its
    // activeDeadlineSeconds counts from the resumption); resumed: the condition turns False.
    let suspended_now = conditions
        .iter()
        .any(|c| s(c, "/type") == "Suspended" && s(c, "/status") == "True");
    if !finished && suspended && !suspended_now {
        conditions.retain(|c| s(c, "/type") != "Suspended");
        conditions.push(condition("Suspended", "JobSuspended", "Job suspended"));
        became = Some(("Normal", "Suspended", "Job suspended"));
    } else if !suspended && suspended_now {
        for c in conditions
            .iter_mut()
            .filter(|c| s(c, "/type") == "Suspended")
        {
            *c = condition("Suspended", "JobResumed", "Job resumed");
            c["status"] = json!("False");
        }
        became = Some(("Normal", "Resumed", "Job resumed"));
    }
    let start_time = match suspended {
        true => None,
        false => job
            .at("/status/startTime")
            .cloned()
            .filter(|_| !suspended_now)
            .or_else(|| Some(json!(util::now()))),
    };
    let mut status = json!({
        "ready": n_ready,
        "terminating": n_terminating,
        "uncountedTerminatedPods": {},
    });
    for (k, v) in [
        ("active", n_active as i64),
        ("succeeded", succeeded),
        ("failed", failed),
    ] {
        if v != 0 {
            status[k] = json!(v);
        }
    }
    if let Some(t) = start_time {
        status["startTime"] = t;
    }
    if let Some(set) = done_indexes.as_ref().filter(|set| !set.is_empty()) {
        status["completedIndexes"] = json!(job_indexed::format(set));
    }
    if let Some(t) = completion_time {
        status["completionTime"] = t;
    }
    if !conditions.is_empty() {
        status["conditions"] = json!(conditions);
    }
    if job.get("status") != Some(&status) {
        let _ = client::update(api, job_def, ns, name, |o| {
            if s(o, "/metadata/uid") == uid {
                o["status"] = status.clone();
            }
        });
    }
    if let Some((ty, reason, msg)) = became {
        workload::event(api, COMPONENT, &job, ty, reason, msg);
    }
    ok
}

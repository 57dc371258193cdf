//! The Job controller (upstream `pkg/controller/job`): keeps `min(parallelism, completions -
//! succeeded)` pods active, counts each finished pod once by its `batch.kubernetes.io/
//! job-tracking` finalizer, fails the Job past backoffLimit or activeDeadlineSeconds (after
//! FailureTarget), suspends and resumes it, and finishes it as 1.31+ does —
//! SuccessCriteriaMet first, Complete (with completionTime) once no pod is left running or
//! terminating. Indexed Jobs' indexes are kept by `job_indexed`, their per-index backoff by
//! `job_per_index`, their successPolicy read by `job_success_policy`; a Job another controller
//! manages (`spec.managedBy`) is left alone.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::apiserver::controllers::job_failure_policy::{self, Verdict};
use crate::apiserver::controllers::workload::{
    self, Controller, claim, pod_active, pod_from_template, pod_ready, s, terminating,
};
use crate::apiserver::controllers::{
    client, job_backoff, job_indexed, job_per_index, job_success_policy,
};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::registry::batch::job::{JOB_CONTROLLER, TRACKING_FINALIZER};
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

/// The controller, with each Job's record of failures since its last success.
#[derive(Default)]
pub(crate) struct Jobs {
    backoff: HashMap<(String, String), job_backoff::Record>,
}

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
        sync(api, ns, name, &mut self.backoff)
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

/// The reason and message of the Job's condition `ty` while it is True.
fn condition_of(job: &Value, ty: &str) -> Option<(String, String)> {
    job.at("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| s(c, "/type") == ty && s(c, "/status") == "True")
        .map(|c| (s(c, "/reason").to_string(), s(c, "/message").to_string()))
}

/// False when a pod could not be created or deleted.
fn sync(
    api: &Api,
    ns: &str,
    name: &str,
    records: &mut HashMap<(String, String), job_backoff::Record>,
) -> bool {
    let key = (ns.to_string(), name.to_string());
    let job_def = workload::def("batch", "jobs");
    let pod_def = workload::def("", "pods");
    if name == ORPHANS {
        release_orphans(api, ns, None);
        return true;
    }
    let Some(job) = api.store.get(&job_def.key_for(ns, name)) else {
        records.remove(&key);
        release_orphans(api, ns, Some(name));
        return true;
    };
    // A Job another controller manages (Kueue's MultiKueue, say) is left to it.
    if job
        .at("/spec/managedBy")
        .and_then(Value::as_str)
        .is_some_and(|m| m != JOB_CONTROLLER)
    {
        return true;
    }
    let pods = claim(api, &job, pod_def, client::list(api, pod_def, ns));
    let mut succeeded = int_at(&job, "/status/succeeded");
    let mut failed = int_at(&job, "/status/failed");
    let completions = job.at("/spec/completions").and_then(Value::as_i64);
    let indexed = s(&job, "/spec/completionMode") == "Indexed";
    // An Indexed Job counts indexes, not pods: a second success of one index adds nothing.
    let mut done_indexes = indexed.then(|| {
        job_indexed::parse(
            s(&job, "/status/completedIndexes"),
            completions.unwrap_or(0),
        )
    });
    let per_index = job_per_index::limit(&job).filter(|_| indexed);
    let mut failed_indexes = per_index
        .map(|_| job_indexed::parse(s(&job, "/status/failedIndexes"), completions.unwrap_or(0)));
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
    let whole_of = |p: &Arc<Value>| -> Arc<Value> {
        failed_pods
            .iter()
            .find(|w| s(w, "/metadata/uid") == s(p, "/metadata/uid"))
            .cloned()
            .unwrap_or_else(|| p.clone())
    };
    let verdict_of = |p: &Arc<Value>| match has_policy {
        true => job_failure_policy::verdict(&job, &whole_of(p)),
        false => Verdict::Count,
    };
    let in_range = |i: i64| i < completions.unwrap_or(0);
    let finished = has_condition(&job, "Complete") || has_condition(&job, "Failed");
    let success_met = condition_of(&job, "SuccessCriteriaMet");
    let failure_target = condition_of(&job, "FailureTarget");
    // With a per-index limit: indexes failed by pods not counted yet, and the last failed pod of
    // each index still to run, kept (with its finalizer) until its replacement exists.
    let mut held: BTreeMap<i64, &Arc<Value>> = BTreeMap::new();
    if let (Some(limit), Some(failed_set), Some(done)) =
        (per_index, failed_indexes.as_mut(), done_indexes.as_ref())
    {
        let uncounted = pods.iter().filter(|p| has_finalizer(p));
        for p in uncounted.filter(|p| job_failure_policy::pod_failed(&job, p)) {
            if let Some(i) = job_indexed::index_of(p).filter(|i| in_range(*i))
                && job_per_index::index_failed(&whole_of(p), &verdict_of(p), limit)
            {
                failed_set.insert(i);
            }
        }
        let decided = finished
            || success_met.is_some()
            || failure_target.is_some()
            || workload::terminating(&job);
        if !decided {
            let mut not_pending: BTreeSet<i64> = done.union(failed_set).copied().collect();
            not_pending.extend(
                pods.iter()
                    .filter(|p| has_finalizer(p) && s(p, "/status/phase") == "Succeeded")
                    .filter_map(|p| job_indexed::index_of(p)),
            );
            let active: BTreeSet<i64> = pods
                .iter()
                .filter(|p| pod_active(p))
                .filter_map(|p| job_indexed::index_of(p))
                .collect();
            held = job_per_index::awaiting_replacement(&job, &pods, &not_pending, &active);
        }
    }
    let held_uids: BTreeSet<&str> = held.values().map(|p| s(p, "/metadata/uid")).collect();
    // When the pods counted now finished, for the wait before a failed one is replaced.
    let (mut ended_ok, mut ended_failed) = (Vec::new(), Vec::new());
    // Once the Job's end is decided, every pod is let go (`canRemoveFinalizer`): the ones it
    // stops count as failures if it failed, as nothing if it succeeded.
    let ending = success_met.is_some() || failure_target.is_some();
    // Finished (or deleted) pods still carrying the finalizer have not been counted yet.
    for p in pods
        .iter()
        .filter(|p| has_finalizer(p) && !held_uids.contains(s(p, "/metadata/uid")))
    {
        let phase = s(p, "/status/phase");
        let failed_pod = job_failure_policy::pod_failed(&job, p);
        let done = phase == "Succeeded" || failed_pod || ending;
        if done && release(api, ns, p) {
            match phase {
                "Succeeded" => ended_ok.push(job_backoff::finished_at(p)),
                _ => ended_failed.push(job_backoff::finished_at(p)),
            }
            match (phase, done_indexes.as_mut()) {
                ("Succeeded", Some(set)) => {
                    if let Some(i) = job_indexed::index_of(p).filter(|i| in_range(*i)) {
                        set.insert(i);
                    }
                }
                ("Succeeded", None) => succeeded += 1,
                // What a success stops is no failure, unless it had failed already.
                (phase, _) if phase != "Failed" && success_met.is_some() => {}
                _ if verdict_of(p) != Verdict::Ignore => failed += 1,
                _ => {}
            }
        }
    }
    if let Some(set) = &done_indexes {
        succeeded = i64::try_from(set.len()).unwrap_or(i64::MAX);
    }
    let now = time::OffsetDateTime::now_utc();
    let record = records
        .get(&key)
        .cloned()
        .unwrap_or_default()
        .after(&ended_ok, &ended_failed);
    // Each index waits for itself under a per-index limit; the Job as a whole otherwise.
    let waiting = |index: Option<i64>| match (per_index, index) {
        (Some(_), Some(i)) => held.get(&i).is_some_and(|p| {
            let failures = u32::try_from(job_per_index::failures_before(p) + 1).unwrap_or(1);
            !job_backoff::remaining(failures, job_backoff::finished_at(p), now).is_zero()
        }),
        _ => !record.remaining(now).is_zero(),
    };
    let mut active: Vec<Arc<Value>> = pods.iter().filter(|p| pod_active(p)).cloned().collect();
    let parallelism = job
        .at("/spec/parallelism")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let backoff = job
        .at("/spec/backoffLimit")
        .and_then(Value::as_i64)
        .unwrap_or(6);
    let suspended = job.at("/spec/suspend") == Some(&json!(true));
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
    // How the Job ends, in upstream's order: a success or failure already recorded stands; then
    // a FailJob rule of its podFailurePolicy, too many failed pods, its deadline, its failed
    // indexes; then its successPolicy, then its completions.
    let owned = |(r, m): (&str, &str)| (r.to_string(), m.to_string());
    let failure: Option<(String, String)> = if success_met.is_some() {
        None
    } else if let Some(target) = failure_target {
        Some(target)
    } else if let Some(message) =
        job_failure_policy::fail_job_message(&job, failed_pods.iter().map(|p| &**p))
    {
        Some((job_failure_policy::REASON.to_string(), message))
    } else if failed > backoff || past_backoff_limit_on_failure(&job, &active, backoff) {
        Some(owned((BACKOFF_EXCEEDED, BACKOFF_MESSAGE)))
    } else if past_deadline && !suspended {
        Some(owned((DEADLINE_EXCEEDED, DEADLINE_MESSAGE)))
    } else if let (Some(failed_set), Some(done), Some(c)) =
        (&failed_indexes, &done_indexes, completions)
    {
        job_per_index::failure(&job, failed_set, done, c).map(owned)
    } else {
        None
    };
    let success: Option<(String, String)> = success_met.or_else(|| {
        if failure.is_some() {
            return None;
        }
        let by_policy = done_indexes
            .as_ref()
            .zip(completions)
            .and_then(|(done, c)| job_success_policy::matched(&job, c, done));
        let reached = match completions {
            Some(c) => succeeded >= c,
            None => succeeded > 0 && active.is_empty(),
        };
        match by_policy {
            Some(message) => Some((job_success_policy::REASON.to_string(), message)),
            None => reached.then(|| owned((COMPLETIONS_REACHED, COMPLETIONS_MESSAGE))),
        }
    });
    let mut ok = true;
    // Pods deleted because the Job finished keep their finalizer: their end is counted (as a
    // failure, unless the Job succeeded). Those a suspension or a surplus removes are let go
    // first and never counted (upstream's deleteActivePods and deleteJobPods).
    let delete_all = |active: &mut Vec<Arc<Value>>, ok: &mut bool, counted: bool| {
        for p in active.drain(..) {
            let pod_name = s(&p, "/metadata/name");
            if !counted && has_finalizer(&p) && !release(api, ns, &p) {
                *ok = false;
                continue;
            }
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
        if failure.is_some() || success.is_some() {
            delete_all(&mut active, &mut ok, true);
        } else if suspended {
            delete_all(&mut active, &mut ok, false);
        } else {
            // Indexes neither to start nor to keep running: succeeded, or failed for good.
            let mut settled = done_indexes.clone().unwrap_or_default();
            settled.extend(failed_indexes.iter().flatten());
            if let Some(c) = completions.filter(|_| indexed) {
                // A second pod of one index, one past completions, or one of an index
                // that already succeeded or failed has nothing left to do.
                let (mut extra, keep) = job_indexed::surplus(std::mem::take(&mut active), c);
                let (done, keep): (Vec<_>, Vec<_>) = keep
                    .into_iter()
                    .partition(|p| job_indexed::index_of(p).is_some_and(|i| settled.contains(&i)));
                extra.extend(done);
                active = keep;
                delete_all(&mut extra, &mut ok, false);
            }
            let have = i64::try_from(active.len()).unwrap_or(i64::MAX);
            let want = match completions {
                Some(c) => parallelism.min(c - succeeded).max(0),
                // A work queue: once one pod succeeded, the rest finish what they run.
                None if succeeded > 0 => have,
                None => parallelism,
            };
            // podReplacementPolicy Failed: a pod being deleted holds its place (and its index)
            // until it has failed.
            let stopping: Vec<&Arc<Value>> = pods
                .iter()
                .filter(|p| job_failure_policy::only_replace_failed(&job) && terminating(p))
                .filter(|p| s(p, "/status/phase") != "Succeeded")
                .filter(|p| !job_failure_policy::pod_failed(&job, p))
                .collect();
            settled.extend(stopping.iter().filter_map(|p| job_indexed::index_of(p)));
            let occupied = have + i64::try_from(stopping.len()).unwrap_or(0);
            if occupied < want {
                let template = job.at("/spec/template").cloned().unwrap_or(json!({}));
                let n = usize::try_from((want - occupied).min(BURST)).unwrap_or(0);
                let indexes: Vec<Option<i64>> = match completions.filter(|_| indexed) {
                    Some(c) => job_indexed::pending(c, &settled, &active, n)
                        .into_iter()
                        .map(Some)
                        .collect(),
                    None => vec![None; n],
                };
                for index in indexes.into_iter().filter(|i| !waiting(*i)) {
                    let mut pod = match index {
                        Some(i) => job_indexed::pod(&job, &template, i),
                        None => pod_from_template(&job, &template, None),
                    };
                    if let Some(i) = index.filter(|_| per_index.is_some()) {
                        let before: Vec<(Arc<Value>, Verdict)> = pods
                            .iter()
                            .filter(|p| job_indexed::index_of(p) == Some(i))
                            .filter(|p| job_failure_policy::pod_failed(&job, p))
                            .map(|p| (whole_of(p), verdict_of(p)))
                            .collect();
                        job_per_index::annotate(&mut pod, job_per_index::next_counts(&before));
                    }
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
                delete_all(&mut surplus, &mut ok, false);
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
    let mut became: Option<(&str, String, String)> = None;
    // Failed or Complete once no pod is left running, terminating, or held uncounted.
    let all_stopped = n_active == 0 && n_terminating == 0 && held.is_empty();
    match finished {
        true => records.remove(&key),
        false => records.insert(key, record),
    };
    if !finished {
        if let Some((reason, message)) = &failure {
            if !has(&conditions, "FailureTarget") {
                conditions.push(condition("FailureTarget", reason, message));
            }
            if all_stopped {
                conditions.push(condition("Failed", reason, message));
                became = Some(("Warning", reason.clone(), message.clone()));
            }
        } else if let Some((reason, message)) = &success {
            if !has(&conditions, "SuccessCriteriaMet") {
                conditions.push(condition("SuccessCriteriaMet", reason, message));
            }
            if all_stopped {
                conditions.push(condition("Complete", reason, message));
                completion_time = Some(json!(util::now()));
                became = Some(("Normal", "Completed".into(), "Job completed".into()));
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
        became = Some(("Normal", "Suspended".into(), "Job suspended".into()));
    } else if !suspended && suspended_now {
        for c in conditions
            .iter_mut()
            .filter(|c| s(c, "/type") == "Suspended")
        {
            *c = condition("Suspended", "JobResumed", "Job resumed");
            c["status"] = json!("False");
        }
        became = Some(("Normal", "Resumed".into(), "Job resumed".into()));
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
    // A pointer upstream: "" once the Job has a per-index limit, absent otherwise.
    if let Some(set) = &failed_indexes {
        status["failedIndexes"] = json!(job_indexed::format(set));
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
        workload::event(api, COMPONENT, &job, ty, &reason, &msg);
    }
    ok
}

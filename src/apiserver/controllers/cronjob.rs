//! The CronJob controller (upstream `pkg/controller/cronjob`, cronjob_controllerv2.go): at each
//! schedule time it creates the Job `<cronjob>-<scheduled time in minutes since the epoch>`
//! from the job template, honours suspend, startingDeadlineSeconds and the concurrency policy
//! (Allow, Forbid, Replace), keeps `status.active`, `lastScheduleTime` and
//! `lastSuccessfulTime`, and deletes finished Jobs beyond the history limits. Schedules are
//! read on the wall clock of the CronJob's `timeZone` (UTC without one).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use jiff::tz::TimeZone;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::apiserver::controllers::client;
use crate::apiserver::controllers::workload::{
    self, Controller, controller_ref, controller_uid, s,
};
use crate::apiserver::registry::apps::workload::int_at;
use crate::apiserver::registry::batch::cron;
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util;

const COMPONENT: &str = "cronjob-controller";
/// Upstream's annotation with the time a Job was scheduled for.
const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

#[derive(Default)]
pub(crate) struct CronJobs {
    /// Jobs already reported as `UnexpectedJob` (upstream reports on each sync; this loop
    /// resyncs every 2 s, so once is enough to be seen).
    warned: HashSet<String>,
}

impl Controller for CronJobs {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/cronjobs/", "/registry/jobs/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        workload::owner_dirty(ev, "/registry/cronjobs/", "CronJob", out);
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, workload::def("batch", "cronjobs"), "")
            .iter()
            .map(|c| {
                (
                    s(c, "/metadata/namespace").to_string(),
                    s(c, "/metadata/name").to_string(),
                )
            })
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        sync(self, api, ns, name)
    }
}

/// The condition type a finished Job ended with (`jobutil.FinishedCondition`).
fn finished(job: &Value) -> Option<&str> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| matches!(s(c, "/type"), "Complete" | "Failed") && s(c, "/status") == "True")
        .map(|c| s(c, "/type"))
}

fn job_ref(job: &Value) -> Value {
    json!({"kind": "Job", "namespace": s(job, "/metadata/namespace"), "name": s(job, "/metadata/name"),
           "uid": s(job, "/metadata/uid"), "apiVersion": "batch/v1",
           "resourceVersion": s(job, "/metadata/resourceVersion")})
}

/// The latest schedule time in (`after`, `now`], if any (upstream `mostRecentScheduleTime`).
fn most_recent(
    (sched, tz): (&cron::Schedule, &TimeZone),
    after: OffsetDateTime,
    now: OffsetDateTime,
) -> Option<OffsetDateTime> {
    let mut t = sched.next(after, tz)?;
    if t > now {
        return None;
    }
    // Walk forward; a schedule missed many times is still just one Job now (as upstream).
    while let Some(n) = sched.next(t, tz) {
        if n > now {
            break;
        }
        t = n;
    }
    Some(t)
}

fn sync(c: &mut CronJobs, api: &Api, ns: &str, name: &str) -> bool {
    let cj_def = workload::def("batch", "cronjobs");
    let job_def = workload::def("batch", "jobs");
    let Some(cj) = api.store.get(&cj_def.key_for(ns, name)) else {
        return true;
    };
    if workload::terminating(&cj) {
        return true;
    }
    let uid = s(&cj, "/metadata/uid").to_string();
    let jobs: Vec<Arc<Value>> = client::list(api, job_def, ns)
        .into_iter()
        .filter(|j| controller_uid(j) == Some(uid.as_str()))
        .collect();
    let mut active: Vec<Value> = cj
        .pointer("/status/active")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut last_success = cj.pointer("/status/lastSuccessfulTime").cloned();
    let in_active =
        |a: &[Value], j: &Value| a.iter().any(|r| s(r, "/uid") == s(j, "/metadata/uid"));
    for j in &jobs {
        let found = in_active(&active, j);
        match finished(j) {
            None if !found && c.warned.insert(s(j, "/metadata/uid").to_string()) => {
                let msg = format!(
                    "Saw a job that the controller did not create or forgot: {}",
                    s(j, "/metadata/name")
                );
                workload::event(api, COMPONENT, &cj, "Warning", "UnexpectedJob", &msg);
            }
            Some(cond) if found => {
                active.retain(|r| s(r, "/uid") != s(j, "/metadata/uid"));
                let msg = format!(
                    "Saw completed job: {}, condition: {cond}",
                    s(j, "/metadata/name")
                );
                workload::event(api, COMPONENT, &cj, "Normal", "SawCompletedJob", &msg);
            }
            _ => {}
        }
        if finished(j) == Some("Complete")
            && let Some(t) = j.pointer("/status/completionTime").and_then(Value::as_str)
            && last_success
                .as_ref()
                .and_then(Value::as_str)
                .is_none_or(|l| l < t)
        {
            last_success = Some(json!(t));
        }
    }
    // Active entries whose Job is gone.
    active.retain(|r| jobs.iter().any(|j| s(j, "/metadata/uid") == s(r, "/uid")));
    let mut last_schedule = cj.pointer("/status/lastScheduleTime").cloned();
    let mut ok = true;
    if cj.pointer("/spec/suspend") != Some(&json!(true)) {
        match schedule_one(api, &cj, &jobs, &mut active) {
            Ok(Some(t)) => last_schedule = Some(json!(util::rfc3339(t))),
            Ok(None) => {}
            Err(()) => ok = false,
        }
    }
    clean_history(api, &cj, &jobs);
    let mut status = cj.get("status").cloned().unwrap_or(json!({}));
    if !status.is_object() {
        status = json!({});
    }
    match active.is_empty() {
        true => {
            if let Some(m) = status.as_object_mut() {
                m.remove("active");
            }
        }
        false => status["active"] = json!(active),
    }
    if let Some(t) = last_schedule {
        status["lastScheduleTime"] = t;
    }
    if let Some(t) = last_success {
        status["lastSuccessfulTime"] = t;
    }
    if cj.get("status") != Some(&status) {
        let _ = client::update(api, cj_def, ns, name, |o| {
            if s(o, "/metadata/uid") == uid {
                o["status"] = status.clone();
            }
        });
    }
    ok
}

/// Create the Job of the most recent unmet schedule time, if one is due. Returns that time.
fn schedule_one(
    api: &Api,
    cj: &Value,
    jobs: &[Arc<Value>],
    active: &mut Vec<Value>,
) -> Result<Option<OffsetDateTime>, ()> {
    let schedule = s(cj, "/spec/schedule");
    let sched = match cron::parse_standard(schedule) {
        Ok(x) => x,
        Err(e) => {
            let msg = format!("unparseable schedule: {schedule:?} : {e}");
            workload::event(api, COMPONENT, cj, "Warning", "UnparseableSchedule", &msg);
            return Ok(None);
        }
    };
    let named = cj.pointer("/spec/timeZone").and_then(Value::as_str);
    let tz = match cron::zone(named) {
        Ok(tz) => tz,
        Err(e) => {
            let msg = format!("invalid timeZone: {:?}: {e}", named.unwrap_or_default());
            workload::event(api, COMPONENT, cj, "Warning", "UnknownTimeZone", &msg);
            return Ok(None);
        }
    };
    let now = OffsetDateTime::now_utc();
    let created = util::parse_time(s(cj, "/metadata/creationTimestamp")).unwrap_or(now);
    let mut earliest = cj
        .pointer("/status/lastScheduleTime")
        .and_then(Value::as_str)
        .and_then(util::parse_time)
        .unwrap_or(created);
    let deadline = cj
        .pointer("/spec/startingDeadlineSeconds")
        .and_then(Value::as_i64);
    if let Some(d) = deadline {
        earliest = earliest.max(now - time::Duration::seconds(d));
    }
    let Some(t) = most_recent((&sched, &tz), earliest, now) else {
        return Ok(None);
    };
    if let Some(d) = deadline
        && t + time::Duration::seconds(d) < now
    {
        let msg = format!("Missed scheduled time to start a job: {}", util::rfc3339(t));
        workload::event(api, COMPONENT, cj, "Warning", "MissSchedule", &msg);
        return Ok(None);
    }
    let name = format!("{}-{}", s(cj, "/metadata/name"), t.unix_timestamp() / 60);
    if jobs.iter().any(|j| s(j, "/metadata/name") == name) {
        return Ok(Some(t));
    }
    let job_def = workload::def("batch", "jobs");
    let ns = s(cj, "/metadata/namespace");
    match s(cj, "/spec/concurrencyPolicy") {
        "Forbid" if !active.is_empty() => {
            workload::event(
                api,
                COMPONENT,
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            );
            return Ok(None);
        }
        "Replace" => {
            for r in active.drain(..) {
                let jname = s(&r, "/name");
                delete_job(api, ns, jname);
                workload::event(
                    api,
                    COMPONENT,
                    cj,
                    "Normal",
                    "SuccessfulDelete",
                    &format!("Deleted job {jname}"),
                );
            }
        }
        _ => {}
    }
    let template = cj
        .pointer("/spec/jobTemplate")
        .cloned()
        .unwrap_or(json!({}));
    let mut meta = json!({"name": name, "namespace": ns, "ownerReferences": [controller_ref(cj)]});
    if let Some(l) = template.pointer("/metadata/labels") {
        meta["labels"] = l.clone();
    }
    let mut ann = template
        .pointer("/metadata/annotations")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or(json!({}));
    ann[SCHEDULED_TIMESTAMP] = json!(util::rfc3339(t));
    meta["annotations"] = ann;
    let job = json!({"metadata": meta, "spec": template.get("spec").cloned().unwrap_or(json!({}))});
    match client::create(api, job_def, job) {
        Ok(j) => {
            workload::event(
                api,
                COMPONENT,
                cj,
                "Normal",
                "SuccessfulCreate",
                &format!("Created job {name}"),
            );
            active.push(job_ref(&j));
            Ok(Some(t))
        }
        Err(e) if e.code == 409 => Ok(Some(t)),
        Err(e) => {
            let msg = format!("Error creating job: {}", e.message);
            workload::event(api, COMPONENT, cj, "Warning", "FailedCreate", &msg);
            Err(())
        }
    }
}

/// A Job deleted with its pods, as a Background deletion leaves the pods to the garbage
/// collector upstream.
fn delete_job(api: &Api, ns: &str, name: &str) {
    let job_def = workload::def("batch", "jobs");
    let pod_def = workload::def("", "pods");
    if let Some(job) = api.store.get(&job_def.key_for(ns, name)) {
        let uid = s(&job, "/metadata/uid");
        for p in client::list(api, pod_def, ns) {
            if controller_uid(&p) == Some(uid) {
                let _ = client::delete(api, pod_def, ns, s(&p, "/metadata/name"));
            }
        }
    }
    let _ = client::delete(api, job_def, ns, name);
}

/// Finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit go, oldest first.
fn clean_history(api: &Api, cj: &Value, jobs: &[Arc<Value>]) {
    let ns = s(cj, "/metadata/namespace");
    for (cond, limit) in [
        (
            "Complete",
            cj.pointer("/spec/successfulJobsHistoryLimit")
                .map(|_| int_at(cj, "/spec/successfulJobsHistoryLimit")),
        ),
        (
            "Failed",
            cj.pointer("/spec/failedJobsHistoryLimit")
                .map(|_| int_at(cj, "/spec/failedJobsHistoryLimit")),
        ),
    ] {
        let Some(limit) = limit else { continue };
        let mut done: Vec<&Arc<Value>> =
            jobs.iter().filter(|j| finished(j) == Some(cond)).collect();
        done.sort_by(|a, b| {
            let t = |j: &Value| s(j, "/status/startTime").to_string();
            t(a).cmp(&t(b))
        });
        let excess = done
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(0));
        for j in done.into_iter().take(excess) {
            let jname = s(j, "/metadata/name");
            delete_job(api, ns, jname);
            workload::event(
                api,
                COMPONENT,
                cj,
                "Normal",
                "SuccessfulDelete",
                &format!("Deleted job {jname}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_recent_time_is_the_last_one_due() {
        let s = cron::parse_standard("*/5 * * * *").ok();
        let after = OffsetDateTime::from_unix_timestamp(1_700_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let now = after + time::Duration::minutes(12);
        let t = s.and_then(|s| most_recent((&s, &TimeZone::UTC), after, now));
        // 22:13:20 → 22:15, 22:20 are due by 22:25:20; 22:25 too.
        assert_eq!(t.map(|t| (t.hour(), t.minute())), Some((22, 25)));
    }
}

//! The TTL-after-finished controller (upstream `pkg/controller/ttlafterfinished`): a Job that
//! finished (its Complete or Failed condition True) and sets `spec.ttlSecondsAfterFinished` is
//! deleted that many seconds after the condition's `lastTransitionTime`, in the foreground with
//! its uid as precondition, so its pods go first and a Job recreated under the same name is
//! left alone. A Job that is already being deleted, or has no TTL, is not its business.
//!
//! Upstream queues each Job for the moment it expires; here a Job is looked at whenever it
//! changes and at each resync (every 2 s), so it goes at most that much after its time.

use std::collections::BTreeSet;

use serde_json::Value;
use time::OffsetDateTime;

use crate::apiserver::controllers::workload::{self, Controller, s, terminating};
use crate::apiserver::controllers::{client, garbage_collector};
use crate::apiserver::request::context::Api;
use crate::apiserver::storage::interface::StoreEvent;
use crate::apiserver::util::{self, At};

pub(crate) struct TtlAfterFinished;

/// When the Job finished: the `lastTransitionTime` of its True Complete or Failed condition
/// (upstream's `jobFinishTime`).
fn finished_at(job: &Value) -> Option<OffsetDateTime> {
    job.at("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| matches!(s(c, "/type"), "Complete" | "Failed") && s(c, "/status") == "True")
        .and_then(|c| c.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .and_then(util::parse_time)
}

/// When the Job may go: its finish time plus its TTL, for a finished Job with a TTL that is
/// not already being deleted (upstream's `needsCleanup` and `getFinishAndExpireTime`).
pub(crate) fn expires_at(job: &Value) -> Option<OffsetDateTime> {
    if terminating(job) {
        return None;
    }
    let ttl = job.at("/spec/ttlSecondsAfterFinished")?.as_i64()?;
    Some(finished_at(job)? + time::Duration::seconds(ttl))
}

impl Controller for TtlAfterFinished {
    fn prefixes(&self) -> &'static [&'static str] {
        &["/registry/jobs/"]
    }

    fn dirty(&mut self, _api: &Api, ev: &StoreEvent, out: &mut BTreeSet<(String, String)>) {
        if let Some(k) = workload::ns_name(&ev.key) {
            out.insert(k);
        }
    }

    fn all(&self, api: &Api) -> BTreeSet<(String, String)> {
        client::list(api, workload::def("batch", "jobs"), "")
            .iter()
            .filter(|j| expires_at(j).is_some())
            .map(|j| {
                (
                    s(j, "/metadata/namespace").to_string(),
                    s(j, "/metadata/name").to_string(),
                )
            })
            .collect()
    }

    fn sync(&mut self, api: &Api, ns: &str, name: &str) -> bool {
        let def = workload::def("batch", "jobs");
        // The Job as stored now, not as last listed: its TTL may have been changed since
        // (upstream reads it again from the API server before deleting).
        let Some(job) = api.store.get(&def.key_for(ns, name)) else {
            return true;
        };
        match expires_at(&job) {
            Some(at) if at <= OffsetDateTime::now_utc() => garbage_collector::delete_in_foreground(
                api,
                def,
                ns,
                name,
                s(&job, "/metadata/uid"),
            )
            .is_ok(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(ttl: Option<i64>, condition: Option<(&str, &str)>) -> Value {
        let mut j = json!({"metadata": {"name": "j", "namespace": "default", "uid": "u"},
                           "spec": {}, "status": {}});
        if let Some(t) = ttl {
            j["spec"]["ttlSecondsAfterFinished"] = json!(t);
        }
        if let Some((ty, status)) = condition {
            j["status"]["conditions"] = json!([
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": ty, "status": status, "lastTransitionTime": "2026-01-01T00:00:05Z"}
            ]);
        }
        j
    }

    #[test]
    fn a_finished_job_expires_its_ttl_after_the_finishing_condition() {
        let at = |j: &Value| expires_at(j).map(|t| t.unix_timestamp());
        let finished = util::parse_time("2026-01-01T00:00:05Z")
            .unwrap()
            .unix_timestamp();
        assert_eq!(
            at(&job(Some(30), Some(("Complete", "True")))),
            Some(finished + 30)
        );
        assert_eq!(at(&job(Some(0), Some(("Failed", "True")))), Some(finished));
        // Not finished, no TTL, or already being deleted: nothing to do.
        assert_eq!(at(&job(Some(30), None)), None);
        assert_eq!(at(&job(Some(30), Some(("Complete", "False")))), None);
        assert_eq!(at(&job(None, Some(("Complete", "True")))), None);
        let mut deleting = job(Some(30), Some(("Complete", "True")));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:06Z");
        assert_eq!(at(&deleting), None);
    }
}

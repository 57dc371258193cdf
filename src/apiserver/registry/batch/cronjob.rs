//! batch/v1 CronJob (upstream `pkg/registry/batch/cronjob`, `ValidateCronJobCreate`): the
//! schedule parsed as robfig/cron does (a malformed one is a 422 with its words), the time zone,
//! the concurrency policy, the job template checked as a Job's spec, and the printer
//! (NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE).

use k8s_openapi::api::batch::v1::CronJob as CronJobType;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::{
    containers_and_images, containers_column, default_field, default_template, format_selector,
    go_selector, images_column, nonnegative,
};
use crate::apiserver::registry::batch::cron;
use crate::apiserver::registry::batch::job::{GROUP, validate_job_spec};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

pub(crate) struct CronJob;

/// The Job name suffix (`-<minutes since epoch>`) takes 11 characters of the 63.
const MAX_NAME: usize = 52;

/// `SetDefaults_CronJob`, and the pod defaults on the job template's pod template.
fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    let spec = &mut o["spec"];
    default_field(spec, "concurrencyPolicy", json!("Allow"));
    default_field(spec, "suspend", json!(false));
    default_field(spec, "successfulJobsHistoryLimit", json!(3));
    default_field(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(js) = spec.pointer_mut("/jobTemplate/spec") {
        default_template(js);
    }
}

/// `validateScheduleFormat`: robfig's error, and no `TZ=` in a new schedule.
fn validate_schedule(schedule: &str, allow_tz: bool, has_zone: bool, out: &mut Vec<Cause>) {
    if let Err(e) = cron::parse_standard(schedule) {
        out.push(Cause::invalid("spec.schedule", &json!(schedule), &e));
    }
    if schedule.contains("TZ") {
        if !allow_tz {
            out.push(Cause::invalid(
                "spec.schedule",
                &json!(schedule),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        } else if has_zone {
            out.push(Cause::invalid(
                "spec.schedule",
                &json!(schedule),
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        }
    }
}

/// `validateTimeZone`.
fn validate_time_zone(tz: Option<&Value>, out: &mut Vec<Cause>) {
    let Some(v) = tz.filter(|v| !v.is_null()) else {
        return;
    };
    let tz = v.as_str().unwrap_or_default();
    let f = "spec.timeZone";
    if tz.is_empty() {
        out.push(Cause::invalid(
            f,
            v,
            "timeZone must be nil or non-empty string",
        ));
        return;
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
    };
    if !tz.split('/').all(part_ok) {
        out.push(Cause::invalid(f, v, &format!("unknown time zone {tz}")));
        return;
    }
    if tz.eq_ignore_ascii_case("Local") {
        out.push(Cause::invalid(
            f,
            v,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    // Go's LoadLocation knows "Local" (the line above refuses it); a differently cased one is
    // a file it does not find.
    if tz != "Local" && !cron::known_zone(tz) {
        out.push(Cause::invalid(f, v, &format!("unknown time zone {tz}")));
    }
}

/// `validateCronJobSpec` (`old`: the stored spec on update).
fn validate(o: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut out = Vec::new();
    let schedule = str_at(o, "/spec/schedule");
    if schedule.is_empty() {
        out.push(Cause::required("spec.schedule", ""));
    } else {
        let allow_tz = old.is_some_and(|old| str_at(old, "/spec/schedule").contains("TZ"));
        let has_zone = o.pointer("/spec/timeZone").is_some_and(|v| !v.is_null());
        validate_schedule(schedule, allow_tz, has_zone, &mut out);
    }
    nonnegative(
        o,
        "/spec/startingDeadlineSeconds",
        "spec.startingDeadlineSeconds",
        &mut out,
    );
    if old.is_none_or(|old| old.pointer("/spec/timeZone") != o.pointer("/spec/timeZone")) {
        validate_time_zone(o.pointer("/spec/timeZone"), &mut out);
    }
    let f = "spec.concurrencyPolicy";
    match str_at(o, "/spec/concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => out.push(Cause::required(f, "")),
        p => out.push(Cause::not_supported(
            f,
            &json!(p),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // `ValidateJobTemplateSpec`: the Job's spec, whose selector is always generated.
    let js = o
        .pointer("/spec/jobTemplate/spec")
        .cloned()
        .unwrap_or(json!({}));
    validate_job_spec(&js, "spec.jobTemplate.spec", &mut out);
    if let Some(sel) = js.get("selector").filter(|s| !s.is_null()) {
        out.push(Cause {
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {}: `selector` will be auto-generated",
                go_selector(sel)
            ),
            field: "spec.jobTemplate.spec.selector".into(),
        });
    }
    if js.get("manualSelector") == Some(&json!(true)) {
        out.push(Cause::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            &json!(true),
            &["nil", "false"],
        ));
    }
    for h in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        nonnegative(o, &format!("/spec/{h}"), &format!("spec.{h}"), &mut out);
    }
    out
}

impl Strategy for CronJob {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "CronJob"
    }
    kind_type!(CronJobType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column(
                "Schedule",
                "string",
                0,
                "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
            ),
            column(
                "Timezone",
                "string",
                0,
                "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
            ),
            column(
                "Suspend",
                "boolean",
                0,
                "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
            ),
            column(
                "Active",
                "integer",
                0,
                "A list of pointers to currently running jobs.",
            ),
            column(
                "Last Schedule",
                "string",
                0,
                "Information when was the last time the job was successfully scheduled.",
            ),
            column("Age", "string", 0, AGE_DESCRIPTION),
            containers_column(),
            images_column(),
            column(
                "Selector",
                "string",
                1,
                "A label query over pods that should match the pod count.",
            ),
        ]
    }
    fn cells(&self, o: &Value) -> Vec<Value> {
        let template =
            json!({"spec": o.pointer("/spec/jobTemplate/spec").cloned().unwrap_or(json!({}))});
        let (containers, images) = containers_and_images(&template);
        let last = match o
            .pointer("/status/lastScheduleTime")
            .and_then(Value::as_str)
        {
            Some(t) => util::age(Some(t)),
            None => "<none>".into(),
        };
        // `printBoolPtr`: <unset> for nil.
        let suspend = match o.pointer("/spec/suspend").and_then(Value::as_bool) {
            Some(true) => "True",
            Some(false) => "False",
            None => "<unset>",
        };
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(str_at(o, "/spec/schedule")),
            json!(
                o.pointer("/spec/timeZone")
                    .and_then(Value::as_str)
                    .unwrap_or("<none>")
            ),
            json!(suspend),
            json!(
                o.pointer("/status/active")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
            ),
            json!(last),
            json!(age_of(o)),
            json!(containers),
            json!(images),
            json!(format_selector(
                o.pointer("/spec/jobTemplate/spec/selector")
            )),
        ]
    }
    fn defaults(&self, obj: &mut Value) {
        default(obj);
    }
    fn prepare_create(
        &self,
        _api: &Api,
        obj: &mut Value,
        trace: &mut RequestTrace,
    ) -> Result<(), ApiError> {
        default(obj);
        obj["status"] = json!({});
        let mut causes = validate(obj, None);
        let name = str_at(obj, "/metadata/name");
        if name.len() > MAX_NAME {
            causes.push(Cause::invalid(
                "metadata.name",
                &json!(name),
                "must be no more than 52 characters",
            ));
        }
        validate_into_trace(GROUP, "CronJob", obj, trace, causes)
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        validate(next, Some(current))
    }
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::workload_on_create(
            obj,
            true,
            "/spec/jobTemplate/spec/template",
            "spec.jobTemplate.spec.template",
        )
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        pod_warnings::workload_on_update(
            next,
            current,
            "/spec/jobTemplate/spec/template",
            "spec.jobTemplate.spec.template",
        )
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_schedule_is_refused_with_robfigs_words() {
        let mut c = json!({"metadata": {"name": "hello"}, "spec": {"schedule": "every minute",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": [{"name": "c", "image": "busybox"}]}}}}}});
        default(&mut c);
        let causes: Vec<String> = validate(&c, None).iter().map(|c| c.rendered()).collect();
        assert_eq!(
            causes,
            vec![
                r#"spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]"#
            ]
        );
        c["spec"]["schedule"] = json!("*/1 * * * *");
        assert!(validate(&c, None).is_empty());
        assert_eq!(c["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(c["spec"]["successfulJobsHistoryLimit"], 3);
    }
}

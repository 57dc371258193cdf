//! batch/v1 Job (upstream `pkg/registry/batch/job/strategy.go`, `pkg/apis/batch/v1/defaults.go`
//! and `pkg/apis/batch/validation`): the generated selector and its four template labels, the
//! scheme's defaults, `ValidateJob`'s causes, and the printer kubectl 1.33 shows
//! (NAME STATUS COMPLETIONS DURATION AGE).

use k8s_openapi::api::batch::v1::Job as JobType;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::apiserver::registry::apps::workload::{
    containers_and_images, containers_column, default_field, default_template, format_selector,
    go_map, go_selector, images_column, int_at, nonnegative, selector_matches,
};
use crate::apiserver::registry::batch::{indexed, job_update, pod_failure_policy};
use crate::apiserver::registry::pod_warnings;
use crate::apiserver::registry::strategy::{
    AGE_DESCRIPTION, NAME_DESCRIPTION, Strategy, age_of, column, kind_type, str_at,
    validate_into_trace,
};
use crate::apiserver::registry::{formats, validation, validation_meta};
use crate::apiserver::request::context::Api;
use crate::apiserver::request::status::{ApiError, Cause};
use crate::apiserver::request::trace::RequestTrace;
use crate::apiserver::util;

pub(crate) const GROUP: &str = "batch";

/// The labels `generateSelector` puts on the template (`pkg/apis/batch/types.go`): the
/// prefixed ones since 1.27, the legacy ones still set.
pub(crate) const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
pub(crate) const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
pub(crate) const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
pub(crate) const LEGACY_JOB_NAME_LABEL: &str = "job-name";
/// The pod finalizer the Job controller counts finished pods by.
pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// An Indexed Job's pod's index, as annotation and label.
pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// `maxManagedByLength`.
const MAX_MANAGED_BY: usize = 63;
/// The one `managedBy` this server's job controller acts for (upstream's default).
pub(crate) const JOB_CONTROLLER: &str = "kubernetes.io/job-controller";

pub(crate) struct Job;

/// `SetDefaults_Job`: completions and parallelism 1 when both are unset, parallelism 1,
/// backoffLimit 6 (unbounded under a per-index limit), NonIndexed, not suspended, pods replaced once terminating or failed (only
/// once failed under a podFailurePolicy, whose pod-condition patterns default to status True).
pub(crate) fn default_spec(spec: &mut Value) {
    if !spec.is_object() {
        *spec = json!({});
    }
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec["completions"] = json!(1);
    }
    default_field(spec, "parallelism", json!(1));
    // A per-index backoff leaves the Job-wide one unbounded (`math.MaxInt32`).
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|v| !v.is_null());
    default_field(
        spec,
        "backoffLimit",
        json!(if per_index { i64::from(i32::MAX) } else { 6 }),
    );
    default_field(spec, "completionMode", json!("NonIndexed"));
    default_field(spec, "suspend", json!(false));
    if spec.get("podFailurePolicy").is_none_or(Value::is_null) {
        default_field(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    } else {
        default_field(spec, "podReplacementPolicy", json!("Failed"));
        // A pod-condition pattern without a status matches the condition being True.
        let patterns = spec
            .pointer_mut("/podFailurePolicy/rules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get_mut("onPodConditions").and_then(Value::as_array_mut))
            .flatten();
        for p in patterns.filter(|p| p.is_object()) {
            if p.get("status")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                p["status"] = json!("True");
            }
        }
    }
    default_template(spec);
}

fn default(o: &mut Value) {
    if !o.get("spec").is_some_and(Value::is_object) {
        o["spec"] = json!({});
    }
    default_spec(&mut o["spec"]);
    if labels_empty(o) {
        labels_from_template(o);
    }
}

fn labels_empty(o: &Value) -> bool {
    o.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_none_or(|l| l.is_empty())
}

/// `SetDefaults_Job`'s last rule: a Job without labels takes its template's.
fn labels_from_template(o: &mut Value) {
    if let Some(labels) = o
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
    {
        o["metadata"]["labels"] = labels.clone();
    }
}

/// `generateSelector`: unless `manualSelector`, the selector is the job's uid and the template
/// carries the uid and name under both the prefixed and the legacy keys.
fn generate_selector(o: &mut Value) {
    if o.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    let uid = str_at(o, "/metadata/uid").to_string();
    let name = str_at(o, "/metadata/name").to_string();
    let Some(t) = o.pointer_mut("/spec/template").filter(|t| t.is_object()) else {
        return;
    };
    if !t.get("metadata").is_some_and(Value::is_object) {
        t["metadata"] = json!({});
    }
    if !t["metadata"].get("labels").is_some_and(Value::is_object) {
        t["metadata"]["labels"] = json!({});
    }
    let labels = &mut t["metadata"]["labels"];
    for (k, v) in [
        (CONTROLLER_UID_LABEL, &uid),
        (JOB_NAME_LABEL, &name),
        (LEGACY_CONTROLLER_UID_LABEL, &uid),
        (LEGACY_JOB_NAME_LABEL, &name),
    ] {
        if labels.get(k).is_none() {
            labels[k] = json!(v);
        }
    }
    if o.pointer("/spec/selector").is_none_or(Value::is_null) {
        o["spec"]["selector"] = json!({"matchLabels": {CONTROLLER_UID_LABEL: uid}});
    }
}

/// `validateJobSpec` (what a Job and a CronJob's jobTemplate share), its fields under `path`.
pub(crate) fn validate_job_spec(spec: &Value, path: &str, out: &mut Vec<Cause>) {
    for f in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        nonnegative(spec, &format!("/{f}"), &format!("{path}.{f}"), out);
    }
    if let Some(m) = spec.get("managedBy").and_then(Value::as_str) {
        let at = format!("{path}.managedBy");
        formats::domain_prefixed_path(&at, m, out);
        if m.len() > MAX_MANAGED_BY {
            out.push(Cause::too_long(&at, MAX_MANAGED_BY));
        }
    }
    if let Some(m) = spec.get("completionMode").and_then(Value::as_str)
        && !matches!(m, "NonIndexed" | "Indexed")
    {
        out.push(Cause::not_supported(
            &format!("{path}.completionMode"),
            &json!(m),
            &["NonIndexed", "Indexed"],
        ));
    }
    indexed::validate(spec, path, out);
    pod_failure_policy::validate(spec, path, out);
    // `validatePodReplacementPolicy`: under a podFailurePolicy only Failed.
    if let Some(r) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        let allowed: &[&str] = if spec.get("podFailurePolicy").is_some_and(|p| !p.is_null()) {
            &["Failed"]
        } else {
            &["Failed", "TerminatingOrFailed"]
        };
        if !allowed.contains(&r) {
            out.push(Cause::not_supported(
                &format!("{path}.podReplacementPolicy"),
                &json!(r),
                allowed,
            ));
        }
    }
    let Some(template) = spec.get("template").filter(|t| t.is_object()) else {
        out.push(Cause::required(&format!("{path}.template"), ""));
        return;
    };
    validation_meta::template(Some(template), &format!("{path}.template"), out);
    let pod = json!({"metadata": {"name": "template"}, "spec": template.get("spec").cloned().unwrap_or(json!({}))});
    match serde_json::from_value::<Pod>(pod) {
        Ok(p) => {
            for mut c in validation::validate_pod(&p) {
                if c.field == "spec.restartPolicy" {
                    continue;
                }
                if let Some(rest) = c.field.strip_prefix("spec.") {
                    c.field = format!("{path}.template.spec.{rest}");
                }
                out.push(c);
            }
        }
        Err(e) => out.push(Cause::invalid(
            &format!("{path}.template.spec"),
            &Value::Null,
            &e.to_string(),
        )),
    }
    // The pod default is Always, so "" and Always are both "not chosen" (upstream's comment).
    let field = format!("{path}.template.spec.restartPolicy");
    match str_at(template, "/spec/restartPolicy") {
        "" | "Always" => out.push(Cause::required(
            &field,
            r#"valid values: "OnFailure", "Never""#,
        )),
        "OnFailure" | "Never" => {}
        other => out.push(Cause::not_supported(
            &field,
            &json!(other),
            &["OnFailure", "Never"],
        )),
    }
}

/// `ValidateJob`: the generated selector's labels, the spec, and a selector that picks the
/// template's labels.
fn validate(o: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let manual = o.pointer("/spec/manualSelector") == Some(&json!(true));
    let sel = o.pointer("/spec/selector").filter(|s| !s.is_null());
    if !manual && sel.is_some() {
        let labels = o.pointer("/spec/template/metadata/labels");
        let uid = str_at(o, "/metadata/uid");
        let name = str_at(o, "/metadata/name");
        for (k, want) in [
            (LEGACY_CONTROLLER_UID_LABEL, uid),
            (LEGACY_JOB_NAME_LABEL, name),
            (CONTROLLER_UID_LABEL, uid),
            (JOB_NAME_LABEL, name),
        ] {
            // `ValidateHasLabel`
            let field = format!("spec.template.metadata.labels[{k}]");
            let detail = format!("must be '{want}'");
            match labels.and_then(|l| l.get(k)).and_then(Value::as_str) {
                None => out.push(Cause::required(&field, &detail)),
                Some(v) if v != want => out.push(Cause {
                    reason: "FieldValueInvalid",
                    message: format!("Invalid value: {}: {detail}", go_map(labels)),
                    field,
                }),
                Some(_) => {}
            }
        }
        let expected = json!({LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name,
                              CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name});
        if !selector_matches(sel, Some(&expected)) {
            out.push(Cause {
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: `selector` not auto-generated",
                    sel.map(go_selector).unwrap_or_default()
                ),
                field: "spec.selector".into(),
            });
        }
    }
    let spec = o.get("spec").cloned().unwrap_or(json!({}));
    validate_job_spec(&spec, "spec", &mut out);
    match sel {
        None => out.push(Cause::required("spec.selector", "")),
        Some(s) => {
            let labels = o.pointer("/spec/template/metadata/labels");
            if !selector_matches(Some(s), labels) {
                out.push(Cause {
                    reason: "FieldValueInvalid",
                    message: format!(
                        "Invalid value: {}: `selector` does not match template `labels`",
                        go_map(labels)
                    ),
                    field: "spec.template.metadata.labels".into(),
                });
            }
        }
    }
    out
}

/// `ValidateJob`'s last check: the hostname of an Indexed Job's last pod, `<name>-<completions
/// - 1>`, must be a DNS label, or the controller could never create that pod.
fn indexed_hostname(o: &Value) -> Option<Cause> {
    if str_at(o, "/spec/completionMode") != "Indexed" {
        return None;
    }
    let last = o.pointer("/spec/completions").and_then(Value::as_i64)? - 1;
    let name = str_at(o, "/metadata/name");
    let host = format!("{name}-{last}");
    (last >= 0 && !formats::dns1123_label(&host).is_empty()).then(|| {
        Cause::invalid(
            "metadata.name",
            &json!(name),
            &format!("will not able to create pod with invalid DNS label: {host}"),
        )
    })
}

fn condition_true(o: &Value, ty: &str) -> bool {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| str_at(c, "/type") == ty && str_at(c, "/status") == "True")
        })
}

/// The STATUS cell (`printJob`): the first of Complete, Failed, Terminating, Suspended,
/// FailureTarget that holds, else Running.
pub(crate) fn status_cell(o: &Value) -> &'static str {
    if condition_true(o, "Complete") {
        "Complete"
    } else if condition_true(o, "Failed") {
        "Failed"
    } else if o
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        "Terminating"
    } else if condition_true(o, "Suspended") {
        "Suspended"
    } else if condition_true(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

/// The COMPLETIONS cell: `succeeded/completions`, or `n/1 of <parallelism>` for a work queue.
fn completions_cell(o: &Value) -> String {
    let succeeded = int_at(o, "/status/succeeded");
    match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int_at(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

/// The DURATION cell: start to completion, or start to now while running.
fn duration_cell(o: &Value) -> String {
    let Some(start) = util::parse_time(str_at(o, "/status/startTime")) else {
        return String::new();
    };
    let end = util::parse_time(str_at(o, "/status/completionTime"))
        .unwrap_or_else(time::OffsetDateTime::now_utc);
    util::human_duration((end - start).whole_seconds())
}

impl Strategy for Job {
    fn group(&self) -> &'static str {
        GROUP
    }
    fn kind(&self) -> &'static str {
        "Job"
    }
    kind_type!(JobType);
    fn columns(&self) -> Vec<Value> {
        vec![
            column("Name", "string", 0, NAME_DESCRIPTION),
            column("Status", "string", 0, "Status of the job."),
            column(
                "Completions",
                "string",
                0,
                "The number of pods which reached phase Succeeded.",
            ),
            column(
                "Duration",
                "string",
                0,
                "Time required to complete the job.",
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
        let (containers, images) = containers_and_images(o);
        vec![
            json!(str_at(o, "/metadata/name")),
            json!(status_cell(o)),
            json!(completions_cell(o)),
            json!(duration_cell(o)),
            json!(age_of(o)),
            json!(containers),
            json!(images),
            json!(format_selector(o.pointer("/spec/selector"))),
        ]
    }
    fn field(&self, field: &str, o: &Value) -> Option<Option<String>> {
        // `JobToSelectableFields`: status.successful is the count of succeeded pods.
        (field == "status.successful").then(|| Some(int_at(o, "/status/succeeded").to_string()))
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
        // A Job created without labels ends with its template's final ones, the generated
        // `job-name` among them, so `get jobs -l job-name=pi` finds it. Upstream gets there
        // two ways: the defaulted labels are the template's very map, which generateSelector
        // then fills, or, when the template had none, the Job is defaulted again as it is
        // read back from etcd.
        let inherit = labels_empty(obj);
        default(obj);
        generate_selector(obj);
        if inherit {
            labels_from_template(obj);
        }
        obj["status"] = json!({});
        let mut causes = validate(obj);
        causes.extend(indexed_hostname(obj));
        validate_into_trace(GROUP, "Job", obj, trace, causes)
    }
    fn validate_update(&self, sub: &str, next: &Value, current: &Value) -> Vec<Cause> {
        if sub == "status" {
            return Vec::new();
        }
        let mut out = validate(next);
        // Upstream defaults what it reads from etcd: a Job stored before a default was added
        // (by an older kexplore, on etcd) compares as defaulted, as `next` is.
        let mut stored = current.clone();
        default(&mut stored);
        out.extend(job_update::validate(next, &stored));
        out
    }
    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        pod_warnings::workload_on_create(obj, true, "/spec/template", "spec.template")
    }
    fn warnings_on_update(&self, next: &Value, current: &Value) -> Vec<String> {
        pod_warnings::workload_on_update(next, current, "/spec/template", "spec.template")
    }
    fn bumps_generation(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(restart: &str) -> Value {
        json!({"metadata": {"name": "pi", "namespace": "default", "uid": "u-1"},
               "spec": {"template": {"spec": {"restartPolicy": restart,
                   "containers": [{"name": "pi", "image": "perl"}]}}}})
    }

    #[test]
    fn the_selector_and_labels_are_generated_from_the_uid() {
        let mut j = job("Never");
        default(&mut j);
        generate_selector(&mut j);
        assert_eq!(
            j["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        let labels = &j["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels["controller-uid"], "u-1");
        assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
        assert_eq!(j["spec"]["completions"], 1);
        assert_eq!(j["spec"]["parallelism"], 1);
        assert_eq!(j["spec"]["backoffLimit"], 6);
        assert!(validate(&j).is_empty(), "{:?}", validate(&j));
    }

    #[test]
    fn a_pod_failure_policy_defaults_its_condition_status_and_replacement() {
        let mut j = job("Never");
        j["spec"]["podFailurePolicy"] = json!({"rules": [{"action": "Ignore",
            "onPodConditions": [{"type": "DisruptionTarget"}, {"type": "Ready", "status": ""},
                                {"type": "X", "status": "False"}]}]});
        default(&mut j);
        let statuses: Vec<&Value> = j["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"]
            .as_array()
            .map(|a| a.iter().map(|p| &p["status"]).collect())
            .unwrap_or_default();
        assert_eq!(statuses, [&json!("True"), &json!("True"), &json!("False")]);
        assert_eq!(j["spec"]["podReplacementPolicy"], "Failed");
    }

    #[test]
    fn a_job_without_labels_takes_its_templates_final_ones() {
        let api = Api::new(Default::default(), None);
        let mut trace = RequestTrace::new("a".into(), "t".into(), "POST", "/apis/batch/v1/jobs");
        let mut j = job("Never");
        j["spec"]["template"]["metadata"] = json!({"labels": {"app": "pi"}});
        Job.prepare_create(&api, &mut j, &mut trace).unwrap();
        assert_eq!(
            j["metadata"]["labels"],
            j["spec"]["template"]["metadata"]["labels"]
        );
        assert_eq!(j["metadata"]["labels"]["app"], "pi");
        assert_eq!(j["metadata"]["labels"]["job-name"], "pi");

        let mut own = job("Never");
        own["metadata"]["labels"] = json!({"team": "a"});
        Job.prepare_create(&api, &mut own, &mut trace).unwrap();
        assert_eq!(own["metadata"]["labels"], json!({"team": "a"}));
    }

    #[test]
    fn restart_always_and_negative_counts_are_refused_as_upstream() {
        let mut j = job("Always");
        j["spec"]["completions"] = json!(-1);
        default(&mut j);
        generate_selector(&mut j);
        let causes: Vec<String> = validate(&j).iter().map(|c| c.rendered()).collect();
        assert!(
            causes.contains(
                &r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#
                    .to_string()
            ),
            "{causes:?}"
        );
        assert!(
            causes.contains(
                &"spec.completions: Invalid value: -1: must be greater than or equal to 0"
                    .to_string()
            ),
            "{causes:?}"
        );
    }

    #[test]
    fn cells_as_kubectl_prints_them() {
        let j = json!({"metadata": {"name": "pi"}, "spec": {"completions": 3, "parallelism": 1},
            "status": {"succeeded": 3, "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:00:12Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}});
        assert_eq!(status_cell(&j), "Complete");
        assert_eq!(completions_cell(&j), "3/3");
        assert_eq!(duration_cell(&j), "12s");
        let q = json!({"spec": {"parallelism": 2}, "status": {}});
        assert_eq!(completions_cell(&q), "0/1 of 2");
        assert_eq!(status_cell(&q), "Running");
    }
}

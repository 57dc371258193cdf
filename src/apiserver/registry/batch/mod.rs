//! The batch kinds (upstream `pkg/registry/batch/<kind>`).

pub(crate) mod cron;
pub(crate) mod cronjob;
pub(crate) mod indexed;
pub(crate) mod job;
pub(crate) mod job_update;
pub(crate) mod pod_failure_policy;

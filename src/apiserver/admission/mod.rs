//! Admission plugins, run by the create and update endpoints after decoding and defaulting.

pub(crate) mod changes;
pub(crate) mod default_storage_class;
pub(crate) mod limit_ranger;
pub(crate) mod persistent_volume_claim_resize;
pub(crate) mod plugins;
pub(crate) mod pod_security;
pub(crate) mod resource_quota;
pub(crate) mod runtime_class;
pub(crate) mod storage_object_in_use_protection;
pub(crate) mod typed_diff;

use crate::apiserver::admission::plugins::{Admission, PluginRecord};
use crate::apiserver::request::trace::{RequestTrace, Stage, Status};

/// Record the mutating plugins a kind's create ran, in their order, as one admission stage.
pub(crate) fn record_mutating(trace: &mut RequestTrace, records: &[PluginRecord]) {
    trace.stage(
        Stage::Admission,
        Status::Ok,
        Admission {
            phase: "mutating",
            plugins: records,
        },
    );
}

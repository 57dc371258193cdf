//! Admission plugins, run by the create and update endpoints after decoding and defaulting.

pub(crate) mod changes;
pub(crate) mod default_storage_class;
pub(crate) mod limit_ranger;
pub(crate) mod plugins;
pub(crate) mod pod_security;
pub(crate) mod resource_quota;
pub(crate) mod typed_diff;

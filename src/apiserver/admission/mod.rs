//! Admission plugins, run by the create and update endpoints after decoding and defaulting.

pub(crate) mod plugins;

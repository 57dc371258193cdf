//! The policy kinds (upstream `pkg/registry/policy/<kind>`).

pub(crate) mod poddisruptionbudget;

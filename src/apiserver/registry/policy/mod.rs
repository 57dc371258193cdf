//! The policy kinds (upstream `pkg/registry/policy/<kind>`).

//! The batch kinds (upstream `pkg/registry/batch/<kind>`).

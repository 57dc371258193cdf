//! The apps kinds (upstream `pkg/registry/apps/<kind>`).

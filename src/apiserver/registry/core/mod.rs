//! The core/v1 kinds (upstream `pkg/registry/core/<kind>`).

pub(crate) mod binding;
pub(crate) mod componentstatus;
pub(crate) mod configmap;
pub(crate) mod endpoints;
pub(crate) mod ephemeral_containers;
pub(crate) mod event;
pub(crate) mod limitrange;
pub(crate) mod namespace;
pub(crate) mod node;
pub(crate) mod persistentvolume;
pub(crate) mod persistentvolumeclaim;
pub(crate) mod pod;
pub(crate) mod replicationcontroller;
pub(crate) mod resourcequota;
pub(crate) mod secret;
pub(crate) mod service;
pub(crate) mod serviceaccount;

//! Storage: the etcd-like MVCC store with its history, views kept current from it, and the
//! etcd backend (its watch-fed mirror is that same store, fed at etcd's revisions).

pub(crate) mod container_logs;
pub(crate) mod controller_view;
pub(crate) mod deletion;
pub mod etcd;
pub mod etcd_baseline;
pub mod etcd_config;
pub(crate) mod etcd_dial;
pub mod etcd_local;
pub(crate) mod etcd_mirror;
pub(crate) mod etcd_own_writes;
pub(crate) mod event_correlator;
pub(crate) mod interface;
pub(crate) mod list_cache;
pub(crate) mod parsed_cache;
pub mod service_alloc;
pub mod store;
pub(crate) mod tracked_keys;

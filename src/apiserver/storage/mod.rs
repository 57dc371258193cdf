//! Storage: the etcd-like MVCC store with its history, and views kept current from it.

pub(crate) mod container_logs;
pub(crate) mod interface;
pub(crate) mod list_cache;
pub mod service_alloc;
pub mod store;
pub(crate) mod tracked_keys;

//! Storage: the etcd-like MVCC store with its history, and views kept current from it.

pub mod list_cache;
pub mod store;
pub mod tracked_keys;

//! The shared request types every stage may import: what a request asks for (`info`), who asks
//! (`user`), its per-stage trace, the Status errors, and the context a handler runs with, with
//! the server state it shares with the control loops (`components`: which of them run here).

pub(crate) mod components;
pub mod context;
pub(crate) mod info;
pub(crate) mod metrics;
pub(crate) mod packed_json;
pub(crate) mod status;
pub mod trace;
pub(crate) mod user;

//! Small pieces shared by the views.

pub mod big;
pub mod expiry;
pub mod field;
pub mod flow;
pub mod status;

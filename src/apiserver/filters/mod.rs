//! The handler chain before routing (upstream `DefaultBuildHandlerChain`): authentication,
//! impersonation, authorization, in-flight limits and audit, in `chain` order.

pub(crate) mod audit;
pub mod authn;
pub(crate) mod authz;
pub mod chain;
pub(crate) mod impersonation;
pub mod inflight;
pub(crate) mod jwt;
pub mod sa_token;

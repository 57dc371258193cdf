//! The handler chain before routing (upstream `DefaultBuildHandlerChain`): authentication,
//! impersonation, authorization, in-flight limits and audit, in `chain` order.

pub mod audit;
pub mod authn;
pub mod authz;
pub mod chain;
pub mod impersonation;
pub mod inflight;

//! Published sample extensions of the A2A project, wire-compatible with their reference
//! implementations. Enabled with the `samples` feature; like every extension that ships inside
//! a2a-runtime, none is enabled by being linked: add it to a server or client builder with
//! `.extension(..)`.
//!
//! - [`secure_passport`]: a caller shares a structured, optionally signed context with the
//!   agent it calls.
//! - [`traceability`]: a trace of the steps (agent and tool calls) behind a response.

pub mod secure_passport;
pub mod traceability;

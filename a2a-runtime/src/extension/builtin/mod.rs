//! Extensions that ship with a2a-runtime. None is enabled by being linked: add them to a builder
//! explicitly.

pub mod secure_passport;
mod timestamp;
pub mod traceability;

pub use secure_passport::{CallerContext, Passport, SecurePassport, Verification, Verifier};
pub use timestamp::Timestamp;
pub use traceability::{
    AgentInvocation, CallType, OpenStep, ResponseTrace, Step, StepAction, ToolInvocation,
    Traceability, Tracer,
};

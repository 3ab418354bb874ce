//! The protocol core: operations, task lifecycle, event streams, and the agent API.
//!
//! Nothing here knows about HTTP: bindings in [`crate::server`] (and a client, a CLI, a gRPC
//! binding) translate their transport to [`A2aService`] calls and back.

mod context;
mod events;
mod executor;
mod handler;
pub mod lifecycle;
mod limits;
mod operation;
mod service;

pub use context::{Principal, RequestContext, RequestHeaders};
pub use events::{EventStream, SeqEvent};
pub use executor::{AgentContext, AgentExecutor, AgentInput, EventSink};
pub use handler::{DefaultRequestHandler, RequestHandler};
pub use limits::Limits;
pub use operation::{A2aRequest, A2aResponse, Operation};
pub use service::{A2aService, SUPPORTED_VERSIONS, Served, check_version, dispatch};

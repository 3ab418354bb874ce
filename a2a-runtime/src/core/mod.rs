//! The core: the request handler that runs the [operations](crate::protocol::Operation), the
//! task lifecycle, event streams, and the agent API.
//!
//! Nothing here knows about HTTP: bindings in [`crate::server`] (and a client, a CLI, a gRPC
//! binding) translate their transport to [`A2aService`] calls and back.

mod cluster;
mod events;
mod executor;
mod handler;
mod idempotency;
pub mod lifecycle;
mod limits;
mod push;
mod recovery;
mod response;
mod resume;
mod retention;
mod service;

pub use cluster::ClusterOptions;
pub use events::{EventStream, SeqEvent};
pub use executor::{AgentContext, AgentExecutor, AgentInput, EventSink};
pub use handler::{DefaultRequestHandler, RequestHandler};
pub use idempotency::Idempotency;
pub use limits::Limits;
pub use push::PushDispatcher;
pub use recovery::{RECOVERY_METADATA, Recovered, Recovery, RecoveryMetrics, RecoveryPolicy};
pub use response::A2aResponse;
pub use resume::RESUME_EXTENSION;
pub use retention::{DURABLE_MAX_FINISHED, MAX_BATCHES, Retention, RetentionMetrics, Swept};
pub(crate) use service::note_operation;
#[cfg(feature = "metrics")]
pub(crate) use service::noting_operation;
pub use service::{A2aService, OperationResponse, SUPPORTED_VERSIONS, check_version};

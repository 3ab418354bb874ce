//! The request model every layer above shares: the operations ([`Operation`]) and their typed
//! params ([`A2aRequest`]), who asks ([`Principal`]) and who owns what it stores ([`Scope`]), with which headers ([`RequestHeaders`]) and
//! trace ([`TraceContext`]), and on which end of the call ([`Side`]).
//!
//! It sits below the extensions and the core: both read it, it reads neither (see "Module
//! layers" in the crate docs). What the extensions add to a request, the negotiation, is held
//! with this metadata in the [`RequestContext`](crate::extension::RequestContext).

mod operation;
mod request;
mod scope;
mod seq_event;
mod trace_context;
pub(crate) mod uri;

pub use operation::{A2aRequest, Operation};
pub use request::{Principal, RequestHeaders, Side};
pub use scope::Scope;
pub use seq_event::SeqEvent;
#[cfg(feature = "otel")]
pub(crate) use trace_context::export_spans;
pub use trace_context::{TRACEPARENT, TRACESTATE, TraceContext, trace_headers};

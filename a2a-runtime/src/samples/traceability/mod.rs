//! The Traceability extension of the A2A samples (`extensions/traceability/v1`): an agent
//! returns a trace of the steps it took — tool calls, calls to other agents, with cost, tokens
//! and latency — in the metadata of its messages.
//!
//! Wire format, as the published specification defines it:
//!
//! - URI: `https://github.com/a2aproject/a2a-samples/extensions/traceability/v1` (the only one
//!   accepted).
//! - The data, a [`ResponseTrace`], lives in `metadata` of a Message or Artifact under the key
//!   `github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability`.
//! - The specification gives the data as protobuf messages (`ResponseTrace`, `Step`,
//!   `StepAction` with its `tool_invocation` / `agent_invocation` oneof, `ToolInvocation`,
//!   `AgentInvocation`, `CallTypeEnum`). Their JSON members are the proto field names,
//!   `snake_case` — which is what the reference (Python) implementation emits, and what every
//!   protobuf JSON parser accepts:
//!
//! ```json
//! {"trace_id": "trace-1", "steps": [{"step_id": "step-1", "trace_id": "trace-1",
//!   "call_type": "TOOL", "step_action": {"tool_invocation": {"tool_name": "get_exchange_rate",
//!   "parameters": {"currency_from": "USD"}}}, "cost": 2, "total_tokens": 120, "latency": 35,
//!   "start_time": "2025-10-01T12:00:00.000Z", "end_time": "2025-10-01T12:00:00.035Z"}]}
//! ```
//!
//!   On input the protobuf JSON alternatives are accepted too: lowerCamelCase names
//!   (`traceId`), int64 as strings (`"cost": "2"`), enum numbers (`"call_type": 2`), `null` for
//!   absent fields, and members the specification does not define (the reference
//!   implementation's `name`, `parameters`, `step_type`, `error` on a step), which are kept in
//!   [`Step::extra`] and written back unchanged.
//!
//! Behaviour, when a client activates the extension on a SendMessage / SendStreamingMessage:
//!
//! - the request gets a [`Tracer`], the agent's activation value (`ctx.extension::<Traceability>()`),
//!   holding a new trace (`trace-<uuid>`) and its root step: this agent's handling of the
//!   request (`call_type` AGENT, with the agent's name and URL when configured with
//!   [`Traceability::agent`]);
//! - the agent records its steps with the tracer ([`Tracer::tool`], [`Tracer::agent_call`],
//!   [`Tracer::record`]); a step is a child of the root step unless it names another parent;
//! - the trace, root step closed, goes into the metadata of the agent's message that ends the
//!   turn: its direct reply, or the message of its terminal or interrupted status (when that
//!   status has no message, the extension gives it one, with a one-line summary). A trace the
//!   agent put there itself is kept;
//! - trace context propagates: when the incoming message carries a trace under the metadata key
//!   (as [`OpenStep::propagate`] writes it for an outgoing call), the agent's trace takes its
//!   `trace_id`, and the root step's parent is that trace's last step. A caller nests the trace
//!   the callee returned in its `agent_invocation.response_trace`
//!   ([`OpenStep::set_response_trace`]), as the specification describes.
//!
//! # Example
//!
//! ```standalone_crate
//! use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
//! use a2a_runtime::extension::{Extension, MetadataExt};
//! use a2a_runtime::samples::traceability::Traceability;
//! use a2a_runtime::server::A2aServer;
//! use a2a_runtime::types::{AgentCard, Message};
//! use a2a_runtime::A2aError;
//!
//! struct Currency;
//!
//! impl AgentExecutor for Currency {
//!     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
//!         let tracer = ctx.extension::<Traceability>(); // None unless the client activated it
//!         let mut params = serde_json::Map::new();
//!         params.insert("currency_from".into(), "USD".into());
//!         let step = tracer.as_ref().map(|t| t.tool("get_exchange_rate", params));
//!         let rate = 0.79; // ... the tool call ...
//!         if let Some(mut step) = step {
//!             step.set_total_tokens(120);
//!             step.finish();
//!         }
//!         // The extension puts the trace on this reply.
//!         events.reply(Message::agent_text(format!("1 USD = {rate} GBP"))).await
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let card = AgentCard { name: "Currency".into(), description: "Converts".into(), version: "1.0.0".into(), ..Default::default() };
//! let server = A2aServer::builder()
//!     .card(card)
//!     .executor(Currency)
//!     .extension(Traceability::new().agent("Currency", "http://127.0.0.1:8080"))
//!     .build()?;
//! assert_eq!(server.card().capabilities.extensions[0].uri, Traceability::URI);
//!
//! // What a client reads from the reply:
//! let tracer = a2a_runtime::samples::traceability::Tracer::new();
//! tracer.tool("get_exchange_rate", serde_json::Map::new()).finish();
//! let mut reply = Message::agent_text("1 USD = 0.79 GBP");
//! tracer.attach(&mut reply);
//! let trace = reply.metadata_of::<Traceability>()?.expect("a trace");
//! assert_eq!(trace.steps.len(), 2); // the root step and the tool call
//! assert_eq!(trace.steps[1].parent_step_id.as_deref(), Some(trace.steps[0].step_id.as_str()));
//! # Ok(()) }
//! ```

mod declaration;
mod trace;
mod tracer;

pub use declaration::Traceability;
pub use trace::{AgentInvocation, CallType, ResponseTrace, Step, StepAction, ToolInvocation};
pub use tracer::{OpenStep, Tracer};

use crate::error::A2aError;
use crate::extension::{Activate, Extension, ExtensionHooks, MetadataExt, RequestContext};
use crate::protocol::A2aRequest;
use crate::types::{ContextId, Message, Part, Role, StreamResponse, TaskId, TaskStatus};

impl ExtensionHooks for Traceability {
    type Activation = Tracer;

    fn activate(&self, _: &[String], _: &RequestContext) -> Activate<Tracer> {
        let action = self.agent.clone().map(StepAction::AgentInvocation);
        Activate::Activated(Tracer::with_root_action(action))
    }

    fn handle_request(
        &self,
        request: &mut A2aRequest,
        tracer: &mut Tracer,
        _: &RequestContext,
    ) -> Result<(), A2aError> {
        let Some(message) = request.message() else {
            return Ok(());
        };
        let caller = message.metadata_of::<Self>().map_err(|e| {
            A2aError::invalid_field(
                format!("message.metadata[{:?}]", Self::METADATA_KEY),
                format!("malformed trace context: {}", e.source),
            )
        })?;
        if let Some(caller) = caller {
            tracer.continue_trace(&caller);
        }
        Ok(())
    }

    fn handle_event(
        &self,
        event: &mut StreamResponse,
        tracer: &mut Tracer,
    ) -> Result<(), A2aError> {
        match event {
            StreamResponse::Message(m) if m.role == Role::Agent && !m.has_metadata_of::<Self>() => {
                tracer.attach(m);
            }
            StreamResponse::StatusUpdate(e) => {
                attach_to_status(&mut e.status, &e.task_id, &e.context_id, tracer);
            }
            StreamResponse::Task(t) => {
                attach_to_status(&mut t.status, &t.id, &t.context_id, tracer);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Puts the trace on the message of a status that ends the turn, giving it one if needed.
fn attach_to_status(
    status: &mut TaskStatus,
    task_id: &TaskId,
    context_id: &ContextId,
    tracer: &Tracer,
) {
    if !(status.state.is_terminal() || status.state.is_interrupted()) {
        return;
    }
    if status
        .message
        .as_ref()
        .is_some_and(|m| m.has_metadata_of::<Traceability>())
    {
        return;
    }
    let trace = tracer.snapshot();
    let message = status.message.get_or_insert_with(|| {
        let summary = format!("trace {}: {} steps", trace.trace_id, trace.steps.len());
        let mut m = Message::new(Role::Agent, [Part::text(summary)]);
        m.task_id = task_id.clone();
        m.context_id = context_id.clone();
        m
    });
    message.set_metadata_of::<Traceability>(&trace);
}

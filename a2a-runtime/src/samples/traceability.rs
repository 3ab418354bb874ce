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

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::a2a_extension;
use crate::error::A2aError;
use crate::extension::{
    Activate, Extension, ExtensionHooks, MetadataError, MetadataExt, RequestContext,
};
use crate::protocol::A2aRequest;
use crate::types::{
    ContextId, Message, Part, Role, SendMessageResponse, StreamResponse, Task, TaskId, TaskStatus,
    Timestamp,
};

/// `null` or absent → the default.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An optional protobuf `int64`: written as a JSON number, read from a number (integral) or a
/// decimal string, `null` meaning absent.
mod int64 {
    use super::{Deserializer, Serializer, de};

    #[allow(clippy::ref_option)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_i64(*n),
            None => s.serialize_none(),
        }
    }

    struct Visitor;

    impl<'de> de::Visitor<'de> for Visitor {
        type Value = Option<i64>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an int64 (a JSON integer or a decimal string)")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            i64::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is out of the int64 range")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            // i64::MAX as f64 rounds up to 2^63, so the upper bound is exclusive.
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            if v.fract() == 0.0 && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                Ok(Some(v as i64))
            } else {
                Err(E::custom(format!("{v} is not an int64")))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| E::custom(format!("{v:?} is not an int64")))
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_option(Visitor)
    }
}

/// A trace: the steps an agent took to produce a response (`ResponseTrace` in the
/// specification).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseTrace {
    /// A unique identifier of the trace.
    #[serde(default, alias = "traceId", deserialize_with = "null_default")]
    pub trace_id: String,
    /// The steps that make up the trace.
    #[serde(default, deserialize_with = "null_default")]
    pub steps: Vec<Step>,
}

impl ResponseTrace {
    /// The step with `step_id`.
    pub fn step(&self, step_id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.step_id == step_id)
    }

    /// The steps whose parent is `step_id`.
    pub fn children<'a>(&'a self, step_id: &'a str) -> impl Iterator<Item = &'a Step> + 'a {
        self.steps
            .iter()
            .filter(move |s| s.parent_step_id.as_deref() == Some(step_id))
    }
}

/// The kind of operation a step represents (`CallTypeEnum`): `"AGENT"` or `"TOOL"` on the
/// wire (the enum numbers 1 and 2 are accepted too).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CallType {
    /// A call to an agent (`AGENT = 1`).
    Agent,
    /// A call to a tool (`TOOL = 2`).
    Tool,
    /// A name the specification does not define (the reference implementation also emits
    /// `"HOST"`), kept as received.
    Other(String),
}

impl CallType {
    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Agent => "AGENT",
            Self::Tool => "TOOL",
            Self::Other(s) => s,
        }
    }
}

impl Serialize for CallType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CallType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = CallType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a CallTypeEnum name (\"AGENT\", \"TOOL\") or number (1, 2)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CallType, E> {
                Ok(match v {
                    "AGENT" => CallType::Agent,
                    "TOOL" => CallType::Tool,
                    other => CallType::Other(other.to_owned()),
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CallType, E> {
                match v {
                    1 => Ok(CallType::Agent),
                    2 => Ok(CallType::Tool),
                    n => Err(E::custom(format!("{n} is not a CallTypeEnum value"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CallType, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("{v} is not a CallTypeEnum value")))
                    .and_then(|v| self.visit_u64(v))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// What a step did (`StepAction`, a oneof): `{"tool_invocation": …}` or
/// `{"agent_invocation": …}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StepAction {
    /// A tool call.
    #[serde(rename = "tool_invocation", alias = "toolInvocation")]
    ToolInvocation(ToolInvocation),
    /// A call to another agent.
    #[serde(rename = "agent_invocation", alias = "agentInvocation")]
    AgentInvocation(AgentInvocation),
}

/// A tool call (`ToolInvocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The tool's name.
    #[serde(default, alias = "toolName", deserialize_with = "null_default")]
    pub tool_name: String,
    /// Its parameters (a `google.protobuf.Struct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Map<String, Value>>,
}

/// A call to another agent (`AgentInvocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInvocation {
    /// The URL of the agent that was invoked.
    #[serde(
        default,
        alias = "agentUrl",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub agent_url: String,
    /// The agent's name.
    #[serde(
        default,
        alias = "agentName",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub agent_name: String,
    /// The request sent to the agent (a `google.protobuf.Struct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Map<String, Value>>,
    /// The callee's own trace of this call, when it supports the extension and the caller
    /// activated it.
    #[serde(
        default,
        alias = "responseTrace",
        skip_serializing_if = "Option::is_none"
    )]
    pub response_trace: Option<Box<ResponseTrace>>,
}

/// One operation within a trace (`Step`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// A unique identifier of the step.
    #[serde(default, alias = "stepId", deserialize_with = "null_default")]
    pub step_id: String,
    /// The trace the step belongs to.
    #[serde(default, alias = "traceId", deserialize_with = "null_default")]
    pub trace_id: String,
    /// The parent step; absent for a root step.
    #[serde(
        default,
        alias = "parentStepId",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_step_id: Option<String>,
    /// The kind of operation.
    #[serde(default, alias = "callType", skip_serializing_if = "Option::is_none")]
    pub call_type: Option<CallType>,
    /// What the step did.
    #[serde(default, alias = "stepAction", skip_serializing_if = "Option::is_none")]
    pub step_action: Option<StepAction>,
    /// The cost of the operation.
    #[serde(default, with = "int64", skip_serializing_if = "Option::is_none")]
    pub cost: Option<i64>,
    /// The tokens the operation used.
    #[serde(
        default,
        alias = "totalTokens",
        with = "int64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_tokens: Option<i64>,
    /// Additional details (a `map<string, string>`).
    #[serde(
        default,
        alias = "additionalAttributes",
        deserialize_with = "null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub additional_attributes: BTreeMap<String, String>,
    /// The latency of the operation, in milliseconds.
    #[serde(default, with = "int64", skip_serializing_if = "Option::is_none")]
    pub latency: Option<i64>,
    /// When the operation started.
    #[serde(default, alias = "startTime", skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Timestamp>,
    /// When the operation ended.
    #[serde(default, alias = "endTime", skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Timestamp>,
    /// Members the specification does not define (e.g. the reference implementation's `name`,
    /// `step_type`, `error`), kept as received and written back after the others.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A fresh `<prefix>-<uuid>` identifier, the form the reference implementation uses.
fn new_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4())
}

fn elapsed_ms(since: Instant) -> i64 {
    i64::try_from(since.elapsed().as_millis()).unwrap_or(i64::MAX)
}

#[derive(Debug)]
struct TraceState {
    trace_id: String,
    root: Step,
    root_started: Instant,
    steps: Vec<Step>,
}

/// Records the steps of one request's trace: the activation value of [`Traceability`], read by
/// the agent with `ctx.extension::<Traceability>()`. Clones share the trace.
#[derive(Clone, Debug)]
pub struct Tracer {
    inner: Arc<Mutex<TraceState>>,
}

impl Default for Tracer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tracer {
    /// A new trace, with its root step (call type AGENT) started now.
    pub fn new() -> Self {
        Self::with_root_action(None)
    }

    fn with_root_action(action: Option<StepAction>) -> Self {
        let trace_id = new_id("trace");
        let root = Step {
            step_id: new_id("step"),
            trace_id: trace_id.clone(),
            call_type: Some(CallType::Agent),
            step_action: action,
            start_time: Some(Timestamp::now()),
            ..Step::default()
        };
        Self {
            inner: Arc::new(Mutex::new(TraceState {
                trace_id,
                root,
                root_started: Instant::now(),
                steps: Vec::new(),
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TraceState> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The trace's id.
    pub fn trace_id(&self) -> String {
        self.state().trace_id.clone()
    }

    /// The root step's id (the default parent of recorded steps).
    pub fn root_step_id(&self) -> String {
        self.state().root.step_id.clone()
    }

    /// Joins the trace of a caller: takes its `trace_id`, and makes its last step the parent
    /// of the root step.
    pub fn continue_trace(&self, caller: &ResponseTrace) {
        let mut st = self.state();
        if !caller.trace_id.is_empty() {
            st.trace_id.clone_from(&caller.trace_id);
            let id = st.trace_id.clone();
            st.root.trace_id.clone_from(&id);
            st.steps.iter_mut().for_each(|s| s.trace_id.clone_from(&id));
        }
        if let Some(last) = caller.steps.last().filter(|s| !s.step_id.is_empty()) {
            st.root.parent_step_id = Some(last.step_id.clone());
        }
    }

    /// Starts a step of `call_type`, child of the root step; it is recorded when finished or
    /// dropped.
    pub fn start(&self, call_type: CallType, action: Option<StepAction>) -> OpenStep {
        let (trace_id, parent) = {
            let st = self.state();
            (st.trace_id.clone(), st.root.step_id.clone())
        };
        OpenStep {
            tracer: self.clone(),
            started: Instant::now(),
            step: Some(Step {
                step_id: new_id("step"),
                trace_id,
                parent_step_id: Some(parent),
                call_type: Some(call_type),
                step_action: action,
                start_time: Some(Timestamp::now()),
                ..Step::default()
            }),
        }
    }

    /// Starts a tool call step.
    pub fn tool(&self, tool_name: impl Into<String>, parameters: Map<String, Value>) -> OpenStep {
        let action = StepAction::ToolInvocation(ToolInvocation {
            tool_name: tool_name.into(),
            parameters: Some(parameters),
        });
        self.start(CallType::Tool, Some(action))
    }

    /// Starts a step calling another agent. Give the callee the trace context with
    /// [`OpenStep::propagate`] and nest its trace with [`OpenStep::set_response_trace`].
    pub fn agent_call(
        &self,
        agent_url: impl Into<String>,
        agent_name: impl Into<String>,
    ) -> OpenStep {
        let action = StepAction::AgentInvocation(AgentInvocation {
            agent_url: agent_url.into(),
            agent_name: agent_name.into(),
            ..AgentInvocation::default()
        });
        self.start(CallType::Agent, Some(action))
    }

    /// Records a finished step: it joins this trace, gets an id if it has none, and becomes a
    /// child of the root step if it names no parent.
    pub fn record(&self, mut step: Step) {
        let mut st = self.state();
        step.trace_id.clone_from(&st.trace_id);
        if step.step_id.is_empty() {
            step.step_id = new_id("step");
        }
        if step.parent_step_id.is_none() {
            step.parent_step_id = Some(st.root.step_id.clone());
        }
        st.steps.push(step);
    }

    /// The trace so far: the root step (closed now) and the recorded steps, in order.
    pub fn snapshot(&self) -> ResponseTrace {
        let st = self.state();
        let mut root = st.root.clone();
        root.end_time = Some(Timestamp::now());
        root.latency = Some(elapsed_ms(st.root_started));
        let mut steps = Vec::with_capacity(st.steps.len() + 1);
        steps.push(root);
        steps.extend(st.steps.iter().cloned());
        ResponseTrace {
            trace_id: st.trace_id.clone(),
            steps,
        }
    }

    /// Writes the trace so far into the metadata of a message or an artifact (listing the
    /// extension in its `extensions`).
    pub fn attach<T: MetadataExt + ?Sized>(&self, target: &mut T) {
        target.set_metadata_of::<Traceability>(&self.snapshot());
    }
}

/// A step in progress, from [`Tracer::start`] and friends. Recorded in its trace by
/// [`OpenStep::finish`], or when dropped (so an early return or `?` still records it).
#[derive(Debug)]
pub struct OpenStep {
    tracer: Tracer,
    started: Instant,
    step: Option<Step>,
}

impl OpenStep {
    fn step_mut(&mut self) -> Option<&mut Step> {
        self.step.as_mut()
    }

    /// The step's id.
    pub fn step_id(&self) -> &str {
        self.step.as_ref().map_or("", |s| s.step_id.as_str())
    }

    /// Makes the step a child of `parent_step_id` instead of the root step.
    pub fn set_parent(&mut self, parent_step_id: impl Into<String>) {
        if let Some(s) = self.step_mut() {
            s.parent_step_id = Some(parent_step_id.into());
        }
    }

    /// Sets the cost.
    pub fn set_cost(&mut self, cost: i64) {
        if let Some(s) = self.step_mut() {
            s.cost = Some(cost);
        }
    }

    /// Sets the tokens used.
    pub fn set_total_tokens(&mut self, tokens: i64) {
        if let Some(s) = self.step_mut() {
            s.total_tokens = Some(tokens);
        }
    }

    /// Adds an attribute.
    pub fn set_attribute(&mut self, key: impl Into<String>, value: impl Into<String>) {
        if let Some(s) = self.step_mut() {
            s.additional_attributes.insert(key.into(), value.into());
        }
    }

    /// For an agent call: records the request sent (`requests`).
    pub fn set_requests(&mut self, requests: Map<String, Value>) {
        if let Some(Step {
            step_action: Some(StepAction::AgentInvocation(a)),
            ..
        }) = self.step_mut()
        {
            a.requests = Some(requests);
        }
    }

    /// For an agent call: nests the callee's trace (`response_trace`).
    pub fn set_response_trace(&mut self, trace: ResponseTrace) {
        if let Some(Step {
            step_action: Some(StepAction::AgentInvocation(a)),
            ..
        }) = self.step_mut()
        {
            a.response_trace = Some(Box::new(trace));
        }
    }

    /// For an agent call: writes the trace context into the outgoing message's metadata (the
    /// trace id and this step), so a callee running this extension continues the trace under
    /// this step.
    pub fn propagate(&self, message: &mut Message) {
        if let Some(step) = &self.step {
            let context = ResponseTrace {
                trace_id: step.trace_id.clone(),
                steps: vec![Step {
                    step_id: step.step_id.clone(),
                    trace_id: step.trace_id.clone(),
                    parent_step_id: step.parent_step_id.clone(),
                    call_type: step.call_type.clone(),
                    start_time: step.start_time,
                    ..Step::default()
                }],
            };
            message.set_metadata_of::<Traceability>(&context);
        }
    }

    /// Ends the step now (end time, latency in milliseconds), records it, and returns it.
    pub fn finish(mut self) -> Step {
        self.close().unwrap_or_default()
    }

    fn close(&mut self) -> Option<Step> {
        let mut step = self.step.take()?;
        step.end_time = Some(Timestamp::now());
        step.latency = Some(elapsed_ms(self.started));
        self.tracer.record(step.clone());
        Some(step)
    }
}

impl Drop for OpenStep {
    fn drop(&mut self) {
        self.close();
    }
}

/// Traceability: the agent returns the trace of its steps in its messages' metadata.
///
/// No params. Off unless added with `.extension(..)` to a server builder. See the
/// [module documentation](self) for the wire format and behaviour.
#[a2a_extension(
    uri = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1",
    metadata_key = "github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability",
    metadata = ResponseTrace,
    description = "Adds traceability information to messages and artifacts."
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Traceability {
    /// The agent's own name and URL, for the root step.
    #[serde(skip)]
    agent: Option<AgentInvocation>,
}

impl Traceability {
    /// The extension.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names this agent in the root step of its traces (`agent_invocation` with `agent_name`
    /// and `agent_url`).
    pub fn agent(mut self, name: impl Into<String>, url: impl Into<String>) -> Self {
        self.agent = Some(AgentInvocation {
            agent_name: name.into(),
            agent_url: url.into(),
            ..AgentInvocation::default()
        });
        self
    }

    /// The trace in a SendMessage result: on the direct reply, or the latest one on the task
    /// (status message, then history from the newest, then artifacts from the newest).
    pub fn trace_of(
        response: &SendMessageResponse,
    ) -> Result<Option<ResponseTrace>, MetadataError> {
        match response {
            SendMessageResponse::Message(m) => m.metadata_of::<Self>(),
            SendMessageResponse::Task(t) => Self::trace_of_task(t),
        }
    }

    /// The latest trace on a task (status message, then history from the newest, then
    /// artifacts from the newest).
    pub fn trace_of_task(task: &Task) -> Result<Option<ResponseTrace>, MetadataError> {
        if let Some(m) = &task.status.message
            && let Some(t) = m.metadata_of::<Self>()?
        {
            return Ok(Some(t));
        }
        for m in task.history.iter().rev() {
            if let Some(t) = m.metadata_of::<Self>()? {
                return Ok(Some(t));
            }
        }
        for a in task.artifacts.iter().rev() {
            if let Some(t) = a.metadata_of::<Self>()? {
                return Ok(Some(t));
            }
        }
        Ok(None)
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
            .is_some_and(|m| m.has_metadata_of::<Self>())
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
        message.set_metadata_of::<Self>(&trace);
    }
}

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
                Self::attach_to_status(&mut e.status, &e.task_id, &e.context_id, tracer);
            }
            StreamResponse::Task(t) => {
                Self::attach_to_status(&mut t.status, &t.id, &t.context_id, tracer);
            }
            _ => {}
        }
        Ok(())
    }
}

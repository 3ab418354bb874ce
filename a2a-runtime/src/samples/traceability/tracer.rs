//! [`Tracer`]: records the steps of one request's trace.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Map, Value};

use super::declaration::Traceability;
use super::trace::{AgentInvocation, CallType, ResponseTrace, Step, StepAction, ToolInvocation};
use crate::extension::MetadataExt;
use crate::types::{Message, Timestamp};

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

    pub(super) fn with_root_action(action: Option<StepAction>) -> Self {
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

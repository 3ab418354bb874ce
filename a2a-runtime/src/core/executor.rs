//! The agent API: the [`AgentExecutor`] trait users implement, the [`AgentContext`] it receives,
//! and the [`EventSink`] it publishes to; and what happens when an execution returns (its
//! failure recorded, its listeners told, its runtime released).

use std::future::Future;
use std::sync::Arc;

use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;
use futures::future::{BoxFuture, Either};
use tokio_util::sync::CancellationToken;

use super::events::{Registry, TaskRuntime};
use super::lifecycle::HistoryPolicy;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::TaskStore;
use crate::types::{
    Artifact, ArtifactId, ContextId, Message, Metadata, Part, Role, SendMessageConfiguration,
    StreamResponse, Task, TaskArtifactUpdateEvent, TaskId, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

/// The agent: what runs when a message arrives, and what runs when its task is canceled.
///
/// `execute` publishes the task's progress to the [`EventSink`] as it goes: status updates,
/// artifacts (whole or in chunks), or a single direct [`Message`] reply. The runtime creates the
/// task on the first non-message event, keeps it in the store, streams every event to
/// subscribers, and answers blocking requests once the task is terminal or interrupted.
///
/// An echo agent:
///
/// ```
/// use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
/// use a2a_runtime::types::{Artifact, Part};
/// use a2a_runtime::A2aError;
///
/// struct Echo;
///
/// impl AgentExecutor for Echo {
///     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
///         let reply = format!("echo: {}", ctx.text());
///         events.artifact(Artifact::new([Part::text(reply)])).await?;
///         events.complete().await
///     }
/// }
/// ```
///
/// A streaming agent emits as it goes, and stops when the task is canceled:
///
/// ```
/// # use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
/// # use a2a_runtime::types::{Part};
/// # use a2a_runtime::A2aError;
/// struct Counter;
///
/// impl AgentExecutor for Counter {
///     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
///         events.working().await?;
///         for i in 0..3 {
///             if ctx.is_cancelled() {
///                 return Ok(());
///             }
///             events.artifact_chunk("count", [Part::text(i.to_string())], i > 0, i == 2).await?;
///         }
///         events.complete().await
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an A2A agent",
    note = "implement `a2a_runtime::core::AgentExecutor` for `{Self}`: `async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError>`"
)]
pub trait AgentExecutor: Send + Sync + 'static {
    /// Handles one incoming message (a new task, or a new turn of an existing one).
    ///
    /// Returning an error before any event answers the request with that error; returning an
    /// error after the task exists moves it to FAILED with the error text as status message.
    fn execute(
        &self,
        ctx: AgentContext,
        events: EventSink,
    ) -> impl Future<Output = Result<(), A2aError>> + Send;

    /// Called when a client cancels the running task, after [`AgentContext::cancelled`] fired.
    ///
    /// The default publishes the CANCELED status. Whatever this does, the runtime moves the
    /// task to CANCELED afterwards if it is not terminal yet.
    fn cancel(
        &self,
        ctx: AgentContext,
        events: EventSink,
    ) -> impl Future<Output = Result<(), A2aError>> + Send {
        let _ = ctx;
        async move { events.status(TaskState::Canceled, None).await.map(|_| ()) }
    }
}

/// Object-safe form of [`AgentExecutor`], implemented for every executor.
pub(crate) trait DynExecutor: Send + Sync + 'static {
    fn cancel_boxed(
        self: Arc<Self>,
        ctx: AgentContext,
        events: EventSink,
    ) -> BoxFuture<'static, Result<(), A2aError>>;
    /// The agent's whole run for one message: `execute` (panics caught), then `finish`; one
    /// allocation.
    fn run_boxed(
        self: Arc<Self>,
        ctx: AgentContext,
        events: EventSink,
        finish: ExecutionEnd,
    ) -> BoxFuture<'static, ()>;
}

impl<T: AgentExecutor> DynExecutor for T {
    fn cancel_boxed(
        self: Arc<Self>,
        ctx: AgentContext,
        events: EventSink,
    ) -> BoxFuture<'static, Result<(), A2aError>> {
        Box::pin(async move { self.cancel(ctx, events).await })
    }
    fn run_boxed(
        self: Arc<Self>,
        ctx: AgentContext,
        events: EventSink,
        finish: ExecutionEnd,
    ) -> BoxFuture<'static, ()> {
        use tracing::Instrument as _;
        // One span per execution, a child of the request's; the request's trace context
        // goes with it into the agent's task (its client calls carry it on).
        // Not even made when unwanted (see `server::observe::request_span`).
        let span = if tracing::span_enabled!(tracing::Level::INFO) {
            tracing::info_span!(
                "a2a.agent",
                task_id = %ctx.task_id(),
                context_id = %ctx.context_id(),
                outcome = tracing::field::Empty,
            )
        } else {
            tracing::Span::none()
        };
        let trace = crate::protocol::TraceContext::current();
        // Without a subscriber that wants the span, the run goes without it: entering and
        // leaving a disabled span at every poll costs instructions for nothing.
        let traced = !span.is_disabled();
        let run = async move {
            let outcome = AssertUnwindSafe(self.execute(ctx, events))
                .catch_unwind()
                .await;
            if traced {
                let result = match &outcome {
                    Ok(Ok(())) => "ok",
                    Ok(Err(_)) => "error",
                    Err(_) => "panic",
                };
                tracing::Span::current().record("outcome", result);
            }
            finish.after(outcome).await;
        };
        let run = if traced {
            futures::future::Either::Left(run.instrument(span))
        } else {
            futures::future::Either::Right(run)
        };
        Box::pin(crate::protocol::TraceContext::scope_of(trace, run))
    }
}

/// What the agent knows about the message it handles: the fields of [`AgentInput`] (read
/// through `Deref`: `ctx.message`, `ctx.task`...) and the cancellation of its task.
///
/// One pointer wide, so that an agent's future, and every `async fn` it hands the context to,
/// holds a word rather than a copy of the message, task and configuration.
#[derive(Clone, Debug)]
pub struct AgentContext(Box<AgentInput>);

impl std::ops::Deref for AgentContext {
    type Target = AgentInput;

    fn deref(&self) -> &AgentInput {
        &self.0
    }
}

impl std::ops::DerefMut for AgentContext {
    fn deref_mut(&mut self) -> &mut AgentInput {
        &mut self.0
    }
}

/// The message an agent handles, with its request and task: what [`AgentContext`] holds.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AgentInput {
    /// The request: protocol version, tenant, principal, headers, activated extensions.
    pub request: Arc<RequestContext>,
    /// The incoming message (its `taskId` and `contextId` are filled in).
    pub message: Message,
    /// The task as it stood before this message, when the message continues a task.
    pub task: Option<Task>,
    /// The request's configuration (accepted output modes, history length...).
    pub configuration: Option<SendMessageConfiguration>,
    /// The request's metadata.
    pub metadata: Metadata,
    /// True when the runtime runs the agent again on a task whose earlier execution stopped
    /// before finishing ([`RecoveryPolicy::Rerun`](crate::core::RecoveryPolicy::Rerun)):
    /// `task` is the task as it stands (with what the earlier execution published), `message`
    /// the user message its turn began with, and there is no client request behind it.
    pub recovered: bool,
    pub(crate) cancel: CancellationToken,
}

impl AgentContext {
    /// The context of one execution.
    pub(crate) fn new(input: AgentInput) -> Self {
        Self(Box::new(input))
    }

    /// The task id (generated by the server for a new task).
    pub fn task_id(&self) -> &TaskId {
        &self.message.task_id
    }

    /// The context id (generated by the server when the client sent none).
    pub fn context_id(&self) -> &ContextId {
        &self.message.context_id
    }

    /// The concatenated text parts of the incoming message.
    pub fn text(&self) -> String {
        self.message.text()
    }

    /// True when extension `E` was activated for this request.
    pub fn is_active<E: crate::extension::Extension>(&self) -> bool {
        self.request.is_active::<E>()
    }

    /// `E`'s activation value, when `E` was activated for this request.
    pub fn extension<E: crate::extension::ExtensionHooks>(&self) -> Option<E::Activation> {
        self.request.extension::<E>()
    }

    /// True once the task has been canceled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the task is canceled (use it in `tokio::select!`).
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// The token that fires on cancellation (to hand to other code).
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// Where an agent publishes its task's progress.
///
/// Each call applies the event to the task, persists it, and streams it to every subscriber,
/// in order, before it returns. An event the task lifecycle forbids (anything after a terminal
/// state, a move back to SUBMITTED, a direct message once a task exists) is refused with an
/// error and leaves the task unchanged.
#[derive(Clone)]
pub struct EventSink {
    pub(crate) rt: Arc<TaskRuntime>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) policy: HistoryPolicy,
    pub(crate) task_id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) extensions: Arc<crate::extension::Negotiated>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("task_id", &self.task_id)
            .field("context_id", &self.context_id)
            .finish()
    }
}

impl EventSink {
    /// The task id events are published for.
    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }

    /// The context id events are published for.
    pub fn context_id(&self) -> &ContextId {
        &self.context_id
    }

    /// Publishes any event; resolves to its sequence number.
    ///
    /// On a store that writes at once (the in-memory one) the event is applied, stored and
    /// delivered by this call, and the future returned is a ready value.
    pub fn publish(
        &self,
        mut event: StreamResponse,
    ) -> impl Future<Output = Result<u64, A2aError>> + Send + '_ {
        if !self.extensions.activated.is_empty()
            && let Err(e) = self.extensions.handle_event(&mut event)
        {
            return Either::Left(std::future::ready(Err(e)));
        }
        Either::Right(
            self.rt
                .publish(self.store.as_ref(), self.policy, &self.extensions, event),
        )
    }

    /// Replies with a direct message instead of a task (only as the first and only event).
    pub fn reply(
        &self,
        mut message: Message,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        message.role = Role::Agent;
        if message.context_id.is_empty() {
            message.context_id = self.context_id.clone();
        }
        without_seq(self.publish(StreamResponse::Message(message)))
    }

    /// An agent message with the task's ids, holding one text part.
    pub fn agent_message(&self, text: impl Into<String>) -> Message {
        let mut m = Message::agent_text(text);
        m.task_id = self.task_id.clone();
        m.context_id = self.context_id.clone();
        m
    }

    /// Publishes a status update; the message (if any) is also recorded in the history.
    pub fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> impl Future<Output = Result<u64, A2aError>> + Send + '_ {
        let status = TaskStatus {
            state,
            message,
            timestamp: None,
        };
        self.publish(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status,
            metadata: Metadata::default(),
        }))
    }

    /// [`status`](Self::status), resolving to `()`.
    fn set_state(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        without_seq(self.status(state, message))
    }

    /// Moves the task to WORKING.
    pub fn working(&self) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Working, None)
    }

    /// Moves the task to WORKING with a progress message.
    pub fn progress(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Working, Some(self.agent_message(text)))
    }

    /// Completes the task.
    pub fn complete(&self) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Completed, None)
    }

    /// Completes the task with a final agent message.
    pub fn complete_with(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Completed, Some(self.agent_message(text)))
    }

    /// Fails the task with an explanation.
    pub fn fail(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Failed, Some(self.agent_message(text)))
    }

    /// Rejects the task with an explanation.
    pub fn reject(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::Rejected, Some(self.agent_message(text)))
    }

    /// Asks the client for input (the task waits in INPUT_REQUIRED).
    pub fn input_required(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::InputRequired, Some(self.agent_message(text)))
    }

    /// Asks the client for authorization (the task waits in AUTH_REQUIRED).
    pub fn auth_required(
        &self,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        self.set_state(TaskState::AuthRequired, Some(self.agent_message(text)))
    }

    /// Moves the task to `state` in the sub-state `name` of the state-machine extension `E`
    /// (carried in the status message's metadata under `E`'s key). While `E` is active, its
    /// `check_transition` decides whether the move is allowed; a refused move is an error and
    /// leaves the task unchanged.
    pub fn sub_state<E: crate::extension::Extension>(
        &self,
        state: TaskState,
        name: &str,
    ) -> impl Future<Output = Result<u64, A2aError>> + Send + '_ {
        let mut m = self.agent_message(name);
        m.metadata.insert(
            E::METADATA_KEY.to_owned(),
            serde_json::Value::String(name.to_owned()),
        );
        m.extensions.push(E::URI.to_owned());
        self.status(state, Some(m))
    }

    /// Publishes a whole artifact (one update with `lastChunk`).
    pub fn artifact(
        &self,
        artifact: Artifact,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        without_seq(
            self.publish(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: self.task_id.clone(),
                context_id: self.context_id.clone(),
                artifact,
                append: false,
                last_chunk: true,
                metadata: Metadata::default(),
            })),
        )
    }

    /// Publishes a chunk of the artifact `artifact_id`: `append` adds the parts to what was sent
    /// before, `last_chunk` marks the end.
    pub fn artifact_chunk(
        &self,
        artifact_id: impl Into<ArtifactId>,
        parts: impl IntoIterator<Item = Part>,
        append: bool,
        last_chunk: bool,
    ) -> impl Future<Output = Result<(), A2aError>> + Send + '_ {
        let artifact = Artifact {
            artifact_id: artifact_id.into(),
            parts: parts.into_iter().collect(),
            ..Artifact::default()
        };
        without_seq(
            self.publish(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: self.task_id.clone(),
                context_id: self.context_id.clone(),
                artifact,
                append,
                last_chunk,
                metadata: Metadata::default(),
            })),
        )
    }
}

/// `publish` resolving to `()` rather than the event's sequence number.
fn without_seq(
    publish: impl Future<Output = Result<u64, A2aError>> + Send,
) -> impl Future<Output = Result<(), A2aError>> + Send {
    publish.map(|r| r.map(drop))
}

/// After an agent error: a task that exists (and is not terminal) moves to FAILED with the error
/// text (an internal error's as its caller sees it); an error before any event is reported to
/// the waiting request instead.
async fn fail_or_report(finish: &ExecutionEnd, error: A2aError) -> Option<A2aError> {
    let (state, context_id) = {
        let st = finish.rt.state.lock().await;
        if st.replied {
            return None;
        }
        match st.task.as_ref() {
            Some(t) => (t.status.state, t.context_id.clone()),
            None => return Some(error),
        }
    };
    if state.is_terminal() {
        return None;
    }
    // The status message is stored and sent to every reader: an internal error's cause stays
    // in the log, under the correlation id the message gives.
    let error = error.for_caller(false);
    tracing::warn!(task_id = %finish.rt.id, %error, "agent failed; marking the task FAILED");
    let sink = EventSink {
        rt: finish.rt.clone(),
        store: finish.store.clone(),
        policy: finish.policy,
        task_id: finish.rt.id.clone(),
        context_id,
        extensions: finish.extensions.clone(),
    };
    let _ = sink.fail(error.to_string()).await;
    None
}

/// What happens when an execution of the agent returns: a failure is recorded, the listeners
/// learn that it ended, and the runtime is released if nobody needs it any more.
pub(crate) struct ExecutionEnd {
    pub(crate) rt: Arc<TaskRuntime>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) execution: u64,
    /// With `rt`, what a sink needs to record a failure (built only then: the agent's own sink
    /// is not copied for the rare failure).
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) policy: HistoryPolicy,
    pub(crate) extensions: Arc<crate::extension::Negotiated>,
}

impl ExecutionEnd {
    /// Runs the end of an execution, given how the agent's `execute` returned (or panicked).
    pub(crate) async fn after(self, outcome: std::thread::Result<Result<(), A2aError>>) {
        let error = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(_) => Some(A2aError::Internal(
                "the agent panicked while handling the message".into(),
            )),
        };
        let report = match error {
            Some(e) => fail_or_report(&self, e).await,
            None => None,
        };
        self.rt.finish_execution(self.execution, report).await;
        self.registry.release(&self.rt);
    }
}

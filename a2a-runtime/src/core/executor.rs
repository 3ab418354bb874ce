//! The agent API: the [`AgentExecutor`] trait users implement, the [`AgentContext`] it receives,
//! and the [`EventSink`] it publishes to.

use std::future::Future;
use std::sync::Arc;

use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::context::RequestContext;
use super::events::TaskRuntime;
use super::handler::Finish;
use super::lifecycle::HistoryPolicy;
use crate::error::A2aError;
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
        finish: Finish,
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
        finish: Finish,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let outcome = AssertUnwindSafe(self.execute(ctx, events))
                .catch_unwind()
                .await;
            finish.after(outcome).await;
        })
    }
}

/// What the agent knows about the message it handles.
#[derive(Clone, Debug)]
pub struct AgentContext {
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
    pub(crate) cancel: CancellationToken,
}

impl AgentContext {
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

    /// Publishes any event; returns its sequence number.
    pub async fn publish(&self, mut event: StreamResponse) -> Result<u64, A2aError> {
        if !self.extensions.activated.is_empty() {
            self.extensions.handle_event(&mut event)?;
        }
        self.rt
            .publish(self.store.as_ref(), self.policy, &self.extensions, event)
            .await
    }

    /// Replies with a direct message instead of a task (only as the first and only event).
    pub async fn reply(&self, mut message: Message) -> Result<(), A2aError> {
        message.role = Role::Agent;
        if message.context_id.is_empty() {
            message.context_id = self.context_id.clone();
        }
        self.publish(StreamResponse::Message(message))
            .await
            .map(|_| ())
    }

    /// An agent message with the task's ids, holding one text part.
    pub fn agent_message(&self, text: impl Into<String>) -> Message {
        let mut m = Message::agent_text(text);
        m.task_id = self.task_id.clone();
        m.context_id = self.context_id.clone();
        m
    }

    /// Publishes a status update; the message (if any) is also recorded in the history.
    pub async fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> Result<u64, A2aError> {
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
        .await
    }

    /// Moves the task to WORKING.
    pub async fn working(&self) -> Result<(), A2aError> {
        self.status(TaskState::Working, None).await.map(|_| ())
    }

    /// Moves the task to WORKING with a progress message.
    pub async fn progress(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::Working, Some(m)).await.map(|_| ())
    }

    /// Completes the task.
    pub async fn complete(&self) -> Result<(), A2aError> {
        self.status(TaskState::Completed, None).await.map(|_| ())
    }

    /// Completes the task with a final agent message.
    pub async fn complete_with(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::Completed, Some(m)).await.map(|_| ())
    }

    /// Fails the task with an explanation.
    pub async fn fail(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::Failed, Some(m)).await.map(|_| ())
    }

    /// Rejects the task with an explanation.
    pub async fn reject(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::Rejected, Some(m)).await.map(|_| ())
    }

    /// Asks the client for input (the task waits in INPUT_REQUIRED).
    pub async fn input_required(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::InputRequired, Some(m))
            .await
            .map(|_| ())
    }

    /// Asks the client for authorization (the task waits in AUTH_REQUIRED).
    pub async fn auth_required(&self, text: impl Into<String>) -> Result<(), A2aError> {
        let m = self.agent_message(text);
        self.status(TaskState::AuthRequired, Some(m))
            .await
            .map(|_| ())
    }

    /// Moves the task to `state` in the sub-state `name` of the state-machine extension `E`
    /// (carried in the status message's metadata under `E`'s key). While `E` is active, its
    /// `check_transition` decides whether the move is allowed; a refused move is an error and
    /// leaves the task unchanged.
    pub async fn sub_state<E: crate::extension::Extension>(
        &self,
        state: TaskState,
        name: &str,
    ) -> Result<u64, A2aError> {
        let mut m = self.agent_message(name);
        m.metadata.insert(
            E::METADATA_KEY.to_owned(),
            serde_json::Value::String(name.to_owned()),
        );
        m.extensions.push(E::URI.to_owned());
        self.status(state, Some(m)).await
    }

    /// Publishes a whole artifact (one update with `lastChunk`).
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), A2aError> {
        self.publish(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append: false,
            last_chunk: true,
            metadata: Metadata::default(),
        }))
        .await
        .map(|_| ())
    }

    /// Publishes a chunk of the artifact `artifact_id`: `append` adds the parts to what was sent
    /// before, `last_chunk` marks the end.
    pub async fn artifact_chunk(
        &self,
        artifact_id: impl Into<ArtifactId>,
        parts: impl IntoIterator<Item = Part>,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), A2aError> {
        let artifact = Artifact {
            artifact_id: artifact_id.into(),
            parts: parts.into_iter().collect(),
            ..Artifact::default()
        };
        self.publish(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append,
            last_chunk,
            metadata: Metadata::default(),
        }))
        .await
        .map(|_| ())
    }
}

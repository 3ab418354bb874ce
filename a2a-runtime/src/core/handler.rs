//! [`RequestHandler`]: one async method per A2A operation, and [`DefaultRequestHandler`], which
//! implements them over an [`AgentExecutor`], a [`TaskStore`] and a [`PushConfigStore`].

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::{BoxFuture, Either};
use futures::{FutureExt as _, StreamExt as _};
use tokio_util::sync::CancellationToken;

use super::cluster::{ClusterOptions, Member};
use super::events::{
    BusItem, EventStream, Listen, Listener, Registry, SeqEvent, Subscription, TaskRuntime,
    WaitOutcome,
};
use super::executor::{AgentContext, AgentExecutor, AgentInput, DynExecutor, EventSink};
use super::lifecycle::HistoryPolicy;
use super::limits::Limits;
use super::push::PushDispatcher;
use super::retention::{Retention, RetentionMetrics, Sweeper, Swept};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::{Cluster, PushConfigStore, Scope, TaskQuery, TaskStore};
use crate::types::{
    AgentCard, CancelTaskRequest, ContextId, DeleteTaskPushNotificationConfigRequest, Empty,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, PushConfigId, Role, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskId,
    TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};

/// The eleven A2A operations, transport-independent.
///
/// Bindings (JSON-RPC, HTTP+JSON, and later gRPC) decode a request, call one method, and encode
/// the result; they never implement protocol rules themselves. Requests arrive validated (see
/// [`crate::types::Validate`]), with the tenant resolved into the context.
#[async_trait::async_trait]
pub trait RequestHandler: Send + Sync + 'static {
    /// SendMessage: a Task (after it is terminal or interrupted, unless `returnImmediately`) or a
    /// direct Message.
    async fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError>;
    /// SendStreamingMessage: the task's events as they happen.
    async fn send_streaming_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError>;
    /// GetTask.
    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError>;
    /// ListTasks.
    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError>;
    /// CancelTask.
    async fn cancel_task(
        &self,
        ctx: RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError>;
    /// SubscribeToTask: the task as it stands, then its live events until it is terminal.
    async fn subscribe_to_task(
        &self,
        ctx: RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2aError>;
    /// CreateTaskPushNotificationConfig.
    async fn create_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError>;
    /// GetTaskPushNotificationConfig.
    async fn get_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError>;
    /// ListTaskPushNotificationConfigs.
    async fn list_task_push_notification_configs(
        &self,
        ctx: RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError>;
    /// DeleteTaskPushNotificationConfig (idempotent).
    async fn delete_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, A2aError>;
    /// GetExtendedAgentCard.
    async fn get_extended_agent_card(
        &self,
        ctx: RequestContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError>;
    /// The server is shutting down and its grace period is over: with `cancel_running`, cancel
    /// the tasks still running (as CancelTask would); otherwise leave them to finish or to be
    /// resumed from a durable store. The default does nothing.
    async fn shutdown(&self, cancel_running: bool) {
        let _ = cancel_running;
    }
}

/// The handler a service dispatches to: the default one, whose SendMessage answer comes with
/// the task's JSON when its store encoded the final task already (the reply then reuses those
/// bytes), or any other, whose answer the binding encodes.
#[derive(Clone)]
pub(crate) enum ServedHandler {
    Default(Arc<DefaultRequestHandler>),
    Custom(Arc<dyn RequestHandler>),
}

impl ServedHandler {
    /// The handler, for the operations that need nothing more.
    pub(crate) fn as_dyn(&self) -> &dyn RequestHandler {
        match self {
            ServedHandler::Default(h) => h.as_ref(),
            ServedHandler::Custom(h) => h.as_ref(),
        }
    }

    /// SendMessage, with the task's JSON when the default handler has it at hand.
    pub(crate) fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> BoxFuture<'_, Result<(SendMessageResponse, Option<bytes::Bytes>), A2aError>> {
        match self {
            ServedHandler::Default(h) => Box::pin(h.send(ctx, req)),
            ServedHandler::Custom(h) => Box::pin(
                h.send_message(ctx, req)
                    .map(|r| r.map(|response| (response, None))),
            ),
        }
    }
}

/// The standard [`RequestHandler`]: runs an [`AgentExecutor`] and keeps tasks in a [`TaskStore`].
pub struct DefaultRequestHandler {
    executor: Arc<dyn DynExecutor>,
    store: Arc<dyn TaskStore>,
    push_store: Arc<dyn PushConfigStore>,
    registry: Arc<Registry>,
    card: Arc<AgentCard>,
    extended_card: Option<Arc<AgentCard>>,
    limits: Limits,
    /// Push notifications (`None`: off, and every push operation is refused).
    push: Option<Arc<dyn PushDispatcher>>,
    /// Membership in a cluster of instances sharing the store (`None`: this instance alone).
    cluster: Option<Arc<Member>>,
    /// Retention's passes.
    sweeper: Arc<Sweeper>,
}

impl std::fmt::Debug for DefaultRequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefaultRequestHandler")
            .field("store", &self.store)
            .field("push_store", &self.push_store)
            .field("card", &self.card.name)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl DefaultRequestHandler {
    /// A handler running `executor`, storing tasks in `store` and push configs in `push_store`,
    /// with the capabilities declared by `card`.
    pub fn new(
        executor: impl AgentExecutor,
        store: Arc<dyn TaskStore>,
        push_store: Arc<dyn PushConfigStore>,
        card: Arc<AgentCard>,
        limits: Limits,
    ) -> Self {
        let registry = Arc::new(Registry::new(limits.subscriber_buffer));
        let policy = HistoryPolicy {
            max_messages: limits.max_history_messages,
        };
        let retention = if store.is_durable() {
            Retention::durable()
        } else {
            Retention::in_memory()
        };
        let sweeper = Arc::new(Sweeper::new(
            retention,
            store.clone(),
            registry.clone(),
            policy,
        ));
        Self {
            executor: Arc::new(executor),
            store,
            push_store,
            registry,
            card,
            extended_card: None,
            limits,
            push: None,
            cluster: None,
            sweeper,
        }
    }

    /// Serves the store together with other instances (see [`ClusterOptions`]): live tasks
    /// follow the writes of other instances (a stream here sees the events of an agent running
    /// there; a CancelTask served there reaches the agent running here), and every running
    /// execution holds a lease through `cluster`, so that the tasks of an instance that died
    /// are ended as FAILED by another. `cluster` is the store the tasks live in (the
    /// PostgreSQL store for many instances). Call inside a tokio runtime: it starts the
    /// background work, which stops when the handler is dropped.
    pub fn with_cluster(mut self, cluster: Arc<dyn Cluster>, options: ClusterOptions) -> Self {
        self.cluster = Some(Arc::new(Member::join(
            cluster,
            options,
            &self.registry,
            self.store.clone(),
            self.policy(),
        )));
        self
    }

    /// How long tasks are kept (default: [`Retention::durable`] with a durable store, see
    /// [`TaskStore::is_durable`], else [`Retention::in_memory`]). The passes start with the
    /// first request served inside a tokio runtime (or with
    /// [`start_retention`](Self::start_retention)).
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.sweeper = Arc::new(Sweeper::new(
            retention,
            self.store.clone(),
            self.registry.clone(),
            self.policy(),
        ));
        self
    }

    /// The retention in force.
    pub fn retention(&self) -> &Retention {
        &self.sweeper.retention
    }

    /// Starts retention's periodic passes now, when called inside a tokio runtime (they also
    /// start with the first SendMessage). They stop when the handler is dropped.
    pub fn start_retention(&self) {
        self.sweeper.ensure_started();
    }

    /// Runs one retention pass as of `now` (the periodic passes call it with the current
    /// time): purges finished tasks older than the retention's `finished_ttl`, ends interrupted
    /// tasks untouched for longer than its `interrupted_ttl`; each at most `batch`.
    pub async fn sweep(&self, now: std::time::SystemTime) -> Result<Swept, A2aError> {
        self.sweeper.sweep(now).await
    }

    /// What retention did so far.
    pub fn retention_metrics(&self) -> RetentionMetrics {
        self.sweeper.metrics()
    }

    /// Enables push notifications: configs are checked by `push` and every task's events are
    /// handed to it. Without this, every push operation answers PushNotificationNotSupported.
    pub fn with_push(mut self, push: Arc<dyn PushDispatcher>) -> Self {
        self.registry =
            Arc::new(Registry::new(self.limits.subscriber_buffer).with_push(push.clone()));
        self.push = Some(push);
        let retention = self.sweeper.retention.clone();
        self.with_retention(retention)
    }

    /// Serves `card` as the extended agent card.
    pub fn with_extended_card(mut self, card: Arc<AgentCard>) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// The number of tasks with live state in memory (running, or with subscribers).
    pub fn live_tasks(&self) -> usize {
        self.registry.live_count()
    }

    /// The number of open stream subscriptions (SendStreamingMessage and SubscribeToTask
    /// streams whose client is still connected).
    pub fn subscribers(&self) -> usize {
        self.registry.queue_count()
    }

    fn policy(&self) -> HistoryPolicy {
        HistoryPolicy {
            max_messages: self.limits.max_history_messages,
        }
    }

    fn streaming(&self) -> bool {
        self.card.capabilities.streaming == Some(true)
    }

    fn push_supported(&self) -> Result<&dyn PushDispatcher, A2aError> {
        match &self.push {
            Some(push) if self.card.capabilities.push_notifications == Some(true) => {
                Ok(push.as_ref())
            }
            _ => Err(A2aError::PushNotificationNotSupported),
        }
    }

    /// Resolves the task of a message, registers the execution, subscribes, and starts the agent.
    /// A new task without a push config needs no I/O: it is begun by this call and the future is
    /// a ready value; a continued task (read from the store) or a push config (written to its
    /// store) is begun in one boxed future.
    fn start(&self, ctx: RequestContext, req: SendMessageRequest, listen: Listen) -> Start<'_> {
        self.sweeper.ensure_started();
        if req.message.task_id.is_empty() && push_config_of(req.configuration.as_ref()).is_none() {
            return Either::Left(std::future::ready(self.start_new(ctx, req, listen)));
        }
        Either::Right(Box::pin(self.start_with_io(ctx, req, listen)))
    }

    /// [`start`](Self::start) for a new task without a push config.
    fn start_new(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
        listen: Listen,
    ) -> Result<Started, A2aError> {
        let mut message = req.message;
        let execution = self.registry.next_execution_id();
        let token = CancellationToken::new();
        let (rt, listener) =
            self.create_runtime(ctx.scope(), &mut message, execution, token.clone(), listen);
        let input = AgentInput {
            request: Arc::new(ctx),
            message,
            task: None,
            configuration: req.configuration,
            metadata: req.metadata,
            cancel: token,
        };
        Ok(self.launch(input, rt, None, listener, execution))
    }

    /// [`start`](Self::start) for a continued task or one with a push config.
    async fn start_with_io(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
        listen: Listen,
    ) -> Result<Started, A2aError> {
        let scope = ctx.scope();
        let mut message = req.message;
        if let Some(push) = push_config_of(req.configuration.as_ref()) {
            self.push_supported()?
                .check(push, "configuration.taskPushNotificationConfig.")
                .await?;
        }
        let execution = self.registry.next_execution_id();
        let token = CancellationToken::new();
        let (rt, first, listener, prior) = if message.task_id.is_empty() {
            let (rt, listener) = self.create_runtime(
                scope.clone(),
                &mut message,
                execution,
                token.clone(),
                listen,
            );
            (rt, None, listener, None)
        } else {
            self.continue_task(&scope, &mut message, execution, token.clone(), listen)
                .await?
        };
        if let Some(mut push) = push_config_of(req.configuration.as_ref()).cloned() {
            push.task_id = rt.id.clone();
            push.tenant.clone_from(&ctx.tenant);
            if push.id.is_empty() {
                push.id = PushConfigId::random();
            }
            self.push_store.put(&scope, &push).await?;
        }
        let input = AgentInput {
            request: Arc::new(ctx),
            message,
            task: prior,
            configuration: req.configuration,
            metadata: req.metadata,
            cancel: token,
        };
        Ok(self.launch(input, rt, first, listener, execution))
    }

    /// The runtime of a new task (created by the agent's first event), with ids given to the
    /// message: a fresh task id, and a fresh context id unless the message names one.
    fn create_runtime(
        &self,
        scope: Scope,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> (Arc<TaskRuntime>, Listener) {
        // One clock read for both ids and the SUBMITTED status.
        let millis = crate::types::unix_millis();
        let task_id = TaskId::at_millis(millis);
        if message.context_id.is_empty() {
            message.context_id = ContextId::at_millis(millis);
        }
        message.task_id = task_id.clone();
        let submitted = i64::try_from(millis)
            .ok()
            .and_then(Timestamp::from_millis)
            .unwrap_or_else(Timestamp::now);
        let template = Task {
            id: task_id,
            context_id: message.context_id.clone(),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(submitted),
            },
            history: vec![message.clone()],
            ..Task::default()
        };
        self.registry
            .create(scope, template, execution, token, listen)
    }

    /// The agent's run for `input`, publishing to `rt`.
    fn launch(
        &self,
        input: AgentInput,
        rt: Arc<TaskRuntime>,
        first: Option<SeqEvent>,
        listener: Listener,
        execution: u64,
    ) -> Started {
        let extensions = input.request.extensions.clone();
        let sink = EventSink {
            rt: rt.clone(),
            store: self.store.clone(),
            policy: self.policy(),
            task_id: rt.id.clone(),
            context_id: input.message.context_id.clone(),
            extensions: extensions.clone(),
        };
        let finish = Finish {
            rt: rt.clone(),
            registry: self.registry.clone(),
            execution,
            store: self.store.clone(),
            policy: self.policy(),
            extensions,
        };
        let mut run = self
            .executor
            .clone()
            .run_boxed(AgentContext::new(input), sink, finish);
        if let Some(member) = &self.cluster {
            run = member.hold(&rt, execution, run);
        }
        Started {
            rt,
            first: first.map(Box::new),
            listener,
            execution,
            run,
        }
    }

    /// SendMessage: begins the task at once, then waits. The answer comes with the task's JSON
    /// when the store encoded the final task already (the service then sends those bytes).
    pub(super) fn send(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> impl Future<Output = Result<(SendMessageResponse, Option<bytes::Bytes>), A2aError>> + Send + '_
    {
        let history_length = req.configuration.as_ref().and_then(|c| c.history_length);
        let return_immediately = req
            .configuration
            .as_ref()
            .is_some_and(|c| c.return_immediately);
        // `returnImmediately`: a new task is answered once it exists, a continued one at once.
        let continued = !req.message.task_id.is_empty();
        let listen = if return_immediately && continued {
            Listen::Nothing
        } else {
            Listen::Wait {
                until_created: return_immediately,
            }
        };
        let start = self.start(ctx, req, listen);
        self.answer(start, history_length)
    }

    /// The blocking SendMessage's wait: drives the agent until its answer.
    async fn answer(
        &self,
        start: Start<'_>,
        history_length: Option<i32>,
    ) -> Result<(SendMessageResponse, Option<bytes::Bytes>), A2aError> {
        let Started {
            rt, listener, run, ..
        } = start.await?;
        let outcome = match listener {
            Listener::Wait(rx) => run_until_answered(run, rx).await,
            Listener::Nothing | Listener::Stream(_) => {
                // `returnImmediately` on a continued task: the agent runs on its own.
                tokio::spawn(run);
                match rt.snapshot().await {
                    Some(task) => WaitOutcome::Task(Arc::new(task), None),
                    None => WaitOutcome::Failed(A2aError::Internal(
                        "the agent ended without publishing anything".into(),
                    )),
                }
            }
        };
        self.registry.release(&rt);
        // Usually the last reference to the runtime: the task it holds is then ours, not a copy.
        drop(rt);
        match outcome {
            WaitOutcome::Message(message) => Ok((SendMessageResponse::Message(message), None)),
            WaitOutcome::Task(task, json) => {
                let mut task = Arc::try_unwrap(task).unwrap_or_else(|shared| Task::clone(&shared));
                // The JSON is of the whole task: it goes when the history is cut.
                let json = json.filter(|_| !trim_history(&mut task, history_length));
                Ok((SendMessageResponse::Task(task), json))
            }
            WaitOutcome::Failed(e) => Err(e),
        }
    }

    /// Resolves the task a message continues and begins its turn.
    async fn continue_task(
        &self,
        scope: &Scope,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> Result<(Arc<TaskRuntime>, Option<SeqEvent>, Listener, Option<Task>), A2aError> {
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), scope, &message.task_id)
            .await?
        else {
            return Err(A2aError::TaskNotFound {
                task_id: message.task_id.to_string(),
            });
        };
        let prior = rt.snapshot().await;
        match rt
            .begin_turn(
                self.store.as_ref(),
                self.policy(),
                message,
                execution,
                token,
                listen,
            )
            .await
        {
            Ok((first, listener)) => Ok((rt, first, listener, prior)),
            Err(e) => {
                self.registry.release(&rt);
                Err(e)
            }
        }
    }

    async fn task_or_not_found(&self, ctx: &RequestContext, id: &TaskId) -> Result<Task, A2aError> {
        match self.store.get(&ctx.scope(), id).await? {
            Some(stored) => Ok(stored.task),
            None => Err(A2aError::TaskNotFound {
                task_id: id.to_string(),
            }),
        }
    }
}

/// How often a CancelTask writes CANCELED against concurrent writers before it gives up.
const CANCEL_ATTEMPTS: usize = 4;

/// After an agent error: a task that exists (and is not terminal) moves to FAILED with the error
/// text; an error before any event is reported to the waiting request instead.
async fn fail_or_report(finish: &Finish, error: A2aError) -> Option<A2aError> {
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

/// The push config a SendMessage asks for.
fn push_config_of(
    configuration: Option<&SendMessageConfiguration>,
) -> Option<&TaskPushNotificationConfig> {
    configuration.and_then(|c| c.task_push_notification_config.as_ref())
}

/// The future of [`DefaultRequestHandler::start`].
type Start<'a> =
    Either<std::future::Ready<Result<Started, A2aError>>, BoxFuture<'a, Result<Started, A2aError>>>;

struct Started {
    rt: Arc<TaskRuntime>,
    /// The snapshot that opens the stream of a continued task.
    // Boxed: rare, and a whole task inline made every `Started` (moved several times per
    // SendMessage) about as large as a task.
    first: Option<Box<SeqEvent>>,
    listener: Listener,
    execution: u64,
    /// The agent's run, not started yet: spawned, or driven by a blocking request.
    run: BoxFuture<'static, ()>,
}

/// What happens when an execution of the agent returns: a failure is recorded, the listeners
/// learn that it ended, and the runtime is released if nobody needs it any more.
pub(crate) struct Finish {
    rt: Arc<TaskRuntime>,
    registry: Arc<Registry>,
    execution: u64,
    /// With `rt`, what a sink needs to record a failure (built only then: the agent's own sink
    /// is not copied for the rare failure).
    store: Arc<dyn TaskStore>,
    policy: HistoryPolicy,
    extensions: Arc<crate::extension::Negotiated>,
}

impl Finish {
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

/// Drives an agent's run inside the request that waits for it, until the wait is answered; a run
/// still going then (or when the request is dropped, e.g. the client went away) continues as a
/// task of its own. Running the agent inline saves a task spawn and a cross-task wake-up per
/// blocking SendMessage.
async fn run_until_answered(
    run: BoxFuture<'static, ()>,
    mut rx: tokio::sync::oneshot::Receiver<WaitOutcome>,
) -> WaitOutcome {
    let mut detach = Detach(Some(run));
    let answer = std::future::poll_fn(|cx| {
        if let Some(run) = detach.0.as_mut()
            && run.as_mut().poll(cx).is_ready()
        {
            detach.0 = None;
        }
        std::pin::Pin::new(&mut rx).poll(cx)
    })
    .await;
    drop(detach);
    answer.unwrap_or_else(|_| {
        WaitOutcome::Failed(A2aError::Internal(
            "the task's execution ended without an answer".into(),
        ))
    })
}

/// Spawns an unfinished run when dropped.
struct Detach(Option<BoxFuture<'static, ()>>);

impl Drop for Detach {
    fn drop(&mut self) {
        if let Some(run) = self.0.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(run);
                }
                Err(_) => tracing::warn!("no runtime to finish an agent's run; it is dropped"),
            }
        }
    }
}

/// Does this event end a stream? Terminal states do, and INPUT_REQUIRED (the client must send a
/// message); AUTH_REQUIRED keeps the stream open while credentials arrive out of band. A task
/// snapshot still INPUT_REQUIRED whose newest message is the user's is the start of the turn
/// that answers it (as a continued task's turn is logged): the turn's events follow.
fn ends_stream(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => {
            let answered = t.history.last().is_some_and(|m| m.role == Role::User);
            t.status.state.is_terminal()
                || (t.status.state == TaskState::InputRequired && !answered)
        }
        StreamResponse::StatusUpdate(e) => {
            e.status.state.is_terminal() || e.status.state == TaskState::InputRequired
        }
        StreamResponse::ArtifactUpdate(_) => false,
    }
}

struct StreamState {
    sub: Subscription,
    first: Option<SeqEvent>,
    /// Where a subscriber that fell behind catches up from (the store's log).
    store: Arc<dyn TaskStore>,
    /// Events from the log, delivered before the queue's.
    replay: Option<futures::stream::BoxStream<'static, Result<SeqEvent, A2aError>>>,
    /// The sequence number of the last event delivered.
    last: u64,
    /// End when this execution ends (streams opened by SendStreamingMessage).
    execution: Option<u64>,
    done: bool,
    guard: ReleaseGuard,
}

/// Releases the runtime when the stream is dropped (client gone or stream finished), after the
/// subscription (declared before it in [`StreamState`]) was dropped.
struct ReleaseGuard {
    rt: Arc<TaskRuntime>,
    registry: Arc<Registry>,
}

impl Drop for ReleaseGuard {
    fn drop(&mut self) {
        self.registry.release(&self.rt);
    }
}

/// A stream of a task's events from its queue `sub`, opening with `first` and, with `resume`
/// `(after, upto)`, the logged events after `after` up to `upto` (where `sub` starts).
fn bus_stream(
    registry: Arc<Registry>,
    store: Arc<dyn TaskStore>,
    sub: Subscription,
    first: Option<SeqEvent>,
    execution: Option<u64>,
    resume: Option<(u64, u64)>,
) -> EventStream {
    let rt = sub.runtime().clone();
    let replay = resume.map(|(after, upto)| {
        super::resume::replay(store.clone(), rt.scope.clone(), rt.id.clone(), after, upto).boxed()
    });
    let state = StreamState {
        sub,
        first,
        store,
        replay,
        last: resume.map_or(0, |(after, _)| after),
        execution,
        done: false,
        guard: ReleaseGuard { rt, registry },
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        if let Some(first) = s.first.take() {
            // The opening snapshot of a continued task is INPUT_REQUIRED or AUTH_REQUIRED: the
            // turn that follows is still to come, so only a terminal snapshot ends the stream.
            s.done =
                matches!(&first.event, StreamResponse::Task(t) if t.status.state.is_terminal());
            s.last = first.seq;
            return Some((Ok(Arc::new(first)), s));
        }
        loop {
            if let Some(replay) = s.replay.as_mut() {
                match replay.next().await {
                    Some(Ok(ev)) => {
                        s.done = ends_stream(&ev.event);
                        s.last = ev.seq;
                        return Some((Ok(Arc::new(ev)), s));
                    }
                    Some(Err(e)) => {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                    None => s.replay = None,
                }
            }
            match s.sub.recv().await {
                Some(BusItem::Event(ev)) => {
                    if ev.seq <= s.last && s.last > 0 {
                        // Already delivered from the log.
                        continue;
                    }
                    s.done = ends_stream(&ev.event);
                    s.last = ev.seq;
                    // Shared with the log and the other subscribers: no copy.
                    return Some((Ok(ev), s));
                }
                Some(BusItem::ExecutionEnded { execution, error }) => {
                    if s.execution == Some(execution) {
                        s.done = true;
                        return error.map(|e| (Err(e), s));
                    }
                }
                Some(BusItem::Lagged) => {
                    // Fell behind its queue: a new queue from now on, and what it missed from
                    // the log (an error only if the log no longer holds it).
                    let rt = s.guard.rt.clone();
                    if let Some((upto, sub)) = rt.resubscribe().await {
                        s.sub = sub;
                        let replay = super::resume::replay(
                            s.store.clone(),
                            rt.scope.clone(),
                            rt.id.clone(),
                            s.last,
                            upto,
                        );
                        s.replay = Some(replay.boxed());
                        continue;
                    }
                    s.done = true;
                    let msg = format!(
                        "this subscriber fell more than {} events behind task {} and was disconnected; resubscribe to get the task as it stands",
                        s.sub.buffer(),
                        s.guard.rt.id
                    );
                    return Some((Err(A2aError::Internal(msg)), s));
                }
                None => return None,
            }
        }
    }))
}

/// One page of a task's configs (oldest first): `page_token` is the id of the last config of
/// the previous page; `page_size` 0 means all.
fn page_of_configs(
    mut configs: Vec<TaskPushNotificationConfig>,
    page_size: i32,
    page_token: &str,
) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
    if !page_token.is_empty() {
        let Some(at) = configs.iter().position(|c| c.id.as_str() == page_token) else {
            return Err(A2aError::invalid_field(
                "pageToken",
                "is not a token this server issued (or its config was deleted)",
            ));
        };
        configs.drain(..=at);
    }
    let size = usize::try_from(page_size).unwrap_or(0);
    let mut next_page_token = String::new();
    if size > 0 && configs.len() > size {
        configs.truncate(size);
        next_page_token = configs.last().map(|c| c.id.to_string()).unwrap_or_default();
    }
    Ok(ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token,
    })
}

/// Keeps the last `history_length` messages of the history; true when some were dropped.
fn trim_history(task: &mut Task, history_length: Option<i32>) -> bool {
    let before = task.history.len();
    if let Some(n) = history_length {
        task.trim_history(usize::try_from(n).unwrap_or(0));
    }
    task.history.len() != before
}

#[async_trait::async_trait]
impl RequestHandler for DefaultRequestHandler {
    async fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        self.send(ctx, req).await.map(|(response, _)| response)
    }

    async fn send_streaming_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not support streaming".into(),
            ));
        }
        let Started {
            rt,
            first,
            listener,
            execution,
            run,
        } = self.start(ctx, req, Listen::Stream).await?;
        tokio::spawn(run);
        let Listener::Stream(sub) = listener else {
            self.registry.release(&rt);
            return Err(A2aError::Internal("no subscription for the stream".into()));
        };
        Ok(bus_stream(
            self.registry.clone(),
            self.store.clone(),
            sub,
            first.map(|f| *f),
            Some(execution),
            None,
        ))
    }

    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError> {
        let mut task = self.task_or_not_found(&ctx, &req.id).await?;
        trim_history(&mut task, req.history_length);
        Ok(task)
    }

    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        let page_size = req.page_size.unwrap_or(50);
        let query = TaskQuery {
            context_id: (!req.context_id.is_empty()).then(|| req.context_id.clone()),
            state: (req.status != TaskState::Unspecified).then_some(req.status),
            status_timestamp_after: req.status_timestamp_after,
            page_size: usize::try_from(page_size).unwrap_or(50),
            page_token: (!req.page_token.is_empty()).then(|| req.page_token.clone()),
        };
        let page = self.store.list(&ctx.scope(), &query).await?;
        let include_artifacts = req.include_artifacts == Some(true);
        let tasks = page
            .tasks
            .into_iter()
            .map(|mut t| {
                trim_history(&mut t, req.history_length);
                if !include_artifacts {
                    t.artifacts.clear();
                }
                t
            })
            .collect();
        Ok(ListTasksResponse {
            tasks,
            next_page_token: page.next_page_token,
            page_size,
            total_size: i32::try_from(page.total_size).unwrap_or(i32::MAX),
        })
    }

    async fn cancel_task(
        &self,
        ctx: RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError> {
        let scope = ctx.scope();
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &scope, &req.id)
            .await?
        else {
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        let result = self.cancel_on(&rt, ctx, req).await;
        self.registry.release(&rt);
        result
    }

    async fn subscribe_to_task(
        &self,
        ctx: RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not support streaming".into(),
            ));
        }
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &ctx.scope(), &req.id)
            .await?
        else {
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        let resume_after = match super::resume::last_event_id(&ctx.headers) {
            Ok(after) => after,
            Err(e) => {
                self.registry.release(&rt);
                return Err(e);
            }
        };
        let Some((first, state, sub)) = rt.snapshot_and_subscribe().await else {
            self.registry.release(&rt);
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        if let Some(after) = resume_after {
            // Resuming: what followed `after` from the log, then the live events.
            if after > first.seq {
                drop(sub);
                self.registry.release(&rt);
                return Err(A2aError::invalid_field(
                    "Last-Event-ID",
                    format!(
                        "task {} has no event {after} yet (its last is {})",
                        req.id, first.seq
                    ),
                ));
            }
            if state.is_terminal() && after == first.seq {
                drop(sub);
                self.registry.release(&rt);
                return Ok(Box::pin(futures::stream::empty()));
            }
            return Ok(bus_stream(
                self.registry.clone(),
                self.store.clone(),
                sub,
                None,
                None,
                Some((after, first.seq)),
            ));
        }
        if state.is_terminal() {
            drop(sub);
            self.registry.release(&rt);
            return Err(A2aError::UnsupportedOperation(format!(
                "task {} is {state} (terminal); there is nothing to subscribe to — use GetTask",
                req.id
            )));
        }
        // The opening snapshot of an interrupted task does not end the stream: it waits for the
        // next turn.
        let rest = bus_stream(
            self.registry.clone(),
            self.store.clone(),
            sub,
            None,
            None,
            None,
        );
        Ok(Box::pin(
            futures::stream::once(async move { Ok(Arc::new(first)) }).chain(rest),
        ))
    }

    async fn create_task_push_notification_config(
        &self,
        ctx: RequestContext,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let push = self.push_supported()?;
        if req.task_id.is_empty() {
            return Err(A2aError::invalid_field("taskId", "is required"));
        }
        push.check(&req, "").await?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        let scope = ctx.scope();
        let existing = self.push_store.list(&scope, &req.task_id).await?;
        if req.id.is_empty() {
            req.id = PushConfigId::random();
        }
        let replaces = existing.iter().any(|c| c.id == req.id);
        if !replaces && existing.len() >= self.limits.max_push_configs_per_task {
            return Err(A2aError::invalid_field(
                "",
                format!(
                    "task {} already has {} push notification configs, the most this server keeps; delete one first",
                    req.task_id, self.limits.max_push_configs_per_task
                ),
            ));
        }
        req.tenant.clone_from(&ctx.tenant);
        self.push_store.put(&scope, &req).await?;
        Ok(req)
    }

    async fn get_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        self.push_store
            .get(&ctx.scope(), &req.task_id, &req.id)
            .await?
            .ok_or_else(|| A2aError::TaskNotFound {
                task_id: req.task_id.to_string(),
            })
    }

    async fn list_task_push_notification_configs(
        &self,
        ctx: RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        let configs = self.push_store.list(&ctx.scope(), &req.task_id).await?;
        page_of_configs(configs, req.page_size, &req.page_token)
    }

    async fn delete_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        self.push_store
            .delete(&ctx.scope(), &req.task_id, &req.id)
            .await?;
        Ok(Empty {})
    }

    async fn shutdown(&self, cancel_running: bool) {
        if !cancel_running {
            return;
        }
        let running = self.registry.live_runtimes();
        let cancels = running.iter().map(|rt| async move {
            if rt.state.lock().await.running.is_empty() {
                return;
            }
            let ctx = RequestContext {
                tenant: rt.scope.tenant.clone(),
                ..RequestContext::v1()
            };
            let req = CancelTaskRequest {
                tenant: rt.scope.tenant.clone(),
                id: rt.id.clone(),
                ..CancelTaskRequest::default()
            };
            if let Err(e) = self.cancel_on(rt, ctx, req).await {
                tracing::debug!(task_id = %rt.id, error = %e, "not canceled at shutdown");
            }
        });
        futures::future::join_all(cancels).await;
    }

    async fn get_extended_agent_card(
        &self,
        _ctx: RequestContext,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        if self.card.capabilities.extended_agent_card != Some(true) {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not declare an extended agent card".into(),
            ));
        }
        self.extended_card
            .as_deref()
            .cloned()
            .ok_or(A2aError::ExtendedAgentCardNotConfigured)
    }
}

impl DefaultRequestHandler {
    async fn cancel_on(
        &self,
        rt: &Arc<TaskRuntime>,
        ctx: RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError> {
        let (task, tokens) = {
            let st = rt.state.lock().await;
            let Some(task) = st.task.as_deref().cloned() else {
                return Err(A2aError::TaskNotFound {
                    task_id: req.id.to_string(),
                });
            };
            (
                task,
                st.running
                    .iter()
                    .map(|(_, t)| t.clone())
                    .collect::<Vec<_>>(),
            )
        };
        match task.status.state {
            TaskState::Canceled => return Ok(task),
            s if s.is_terminal() => {
                return Err(A2aError::TaskNotCancelable {
                    task_id: req.id.to_string(),
                    state: s.to_string(),
                });
            }
            _ => {}
        }
        let sink = EventSink {
            rt: rt.clone(),
            store: self.store.clone(),
            policy: self.policy(),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            extensions: ctx.extensions.clone(),
        };
        if !tokens.is_empty() {
            let token = tokens[0].clone();
            for t in &tokens {
                t.cancel();
            }
            let message = task
                .history
                .iter()
                .rev()
                .find(|m| m.role == crate::types::Role::User)
                .cloned();
            let actx = AgentContext::new(AgentInput {
                request: Arc::new(ctx),
                message: message.unwrap_or_else(|| Message {
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    ..Message::default()
                }),
                task: Some(task.clone()),
                configuration: None,
                metadata: req.metadata,
                cancel: token,
            });
            let grace = self.limits.cancel_grace;
            let agent_cancel =
                AssertUnwindSafe(self.executor.clone().cancel_boxed(actx, sink.clone()))
                    .catch_unwind();
            match tokio::time::timeout(grace, agent_cancel).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => {
                    tracing::warn!(task_id = %task.id, error = %e, "agent cancel hook failed")
                }
                Ok(Err(_)) => tracing::warn!(task_id = %task.id, "agent cancel hook panicked"),
                Err(_) => tracing::warn!(task_id = %task.id, ?grace, "agent cancel hook timed out"),
            }
        }
        // Whatever the agent did, the task ends CANCELED unless it reached another terminal
        // state first.
        // A write that loses against another (the agent here, or another instance) reloads
        // the task, and the cancel is tried again on what it became.
        let mut current = rt.snapshot().await.unwrap_or(task);
        for _ in 0..CANCEL_ATTEMPTS {
            if current.status.state.is_terminal() {
                break;
            }
            match sink.status(TaskState::Canceled, None).await {
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(task_id = %current.id, error = %e, "cancel raced with a writer")
                }
            }
            current = rt.snapshot().await.unwrap_or(current);
        }
        let after = current;
        rt.answer_finished_waiters().await;
        match after.status.state {
            TaskState::Canceled => Ok(after),
            s => Err(A2aError::TaskNotCancelable {
                task_id: after.id.to_string(),
                state: s.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore};
    use crate::types::{Artifact, Part};
    use tokio::sync::{Semaphore, mpsc};

    /// Reports its task id, waits for one permit, then completes with an artifact.
    struct Gated {
        gate: Arc<Semaphore>,
        started: mpsc::UnboundedSender<TaskId>,
    }

    impl AgentExecutor for Gated {
        async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
            events.working().await?;
            let _ = self.started.send(ctx.task_id().clone());
            let _permit = self.gate.acquire().await;
            events.artifact(Artifact::new([Part::text("done")])).await?;
            events.complete().await
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_dropped_blocking_request_leaves_its_agent_running_to_the_end() {
        let gate = Arc::new(Semaphore::new(0));
        let (started_tx, mut started) = mpsc::unbounded_channel();
        let handler = Arc::new(DefaultRequestHandler::new(
            Gated {
                gate: gate.clone(),
                started: started_tx,
            },
            Arc::new(InMemoryTaskStore::new()),
            Arc::new(InMemoryPushConfigStore::new()),
            Arc::new(AgentCard::default()),
            Limits::default(),
        ));
        let req = SendMessageRequest {
            message: Message::user_text("hi"),
            ..SendMessageRequest::default()
        };
        // The request drives the agent until it waits at its gate; then the request is dropped.
        let mut request = handler.send_message(RequestContext::v1(), req);
        let task_id = tokio::select! {
            _ = &mut request => panic!("answered before the agent finished"),
            id = started.recv() => id.unwrap(),
        };
        drop(request);
        gate.add_permits(1);
        // The run continues as its own task and completes the task.
        let mut state = TaskState::Working;
        for _ in 0..100 {
            tokio::task::yield_now().await;
            let task = handler
                .get_task(
                    RequestContext::v1(),
                    GetTaskRequest {
                        id: task_id.clone(),
                        ..GetTaskRequest::default()
                    },
                )
                .await
                .unwrap();
            state = task.status.state;
            if state == TaskState::Completed {
                assert_eq!(task.artifacts.len(), 1);
                break;
            }
        }
        assert_eq!(state, TaskState::Completed);
        assert_eq!(handler.live_tasks(), 0, "the runtime is released");
    }

    /// Publishes WORKING, then fails as told: with an error, or with a panic; or fails before
    /// publishing anything.
    #[derive(Clone, Copy)]
    enum Failing {
        ErrorAfterWorking,
        PanicAfterWorking,
        ErrorFirst,
    }

    impl AgentExecutor for Failing {
        async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
            if let Failing::ErrorFirst = self {
                return Err(A2aError::Internal("no model".into()));
            }
            events.working().await?;
            match self {
                Failing::PanicAfterWorking => panic!("agent bug"),
                _ => Err(A2aError::Internal("the model went away".into())),
            }
        }
    }

    fn handler_with(agent: impl AgentExecutor) -> DefaultRequestHandler {
        DefaultRequestHandler::new(
            agent,
            Arc::new(InMemoryTaskStore::new()),
            Arc::new(InMemoryPushConfigStore::new()),
            Arc::new(AgentCard::default()),
            Limits::default(),
        )
    }

    fn send_hi() -> SendMessageRequest {
        SendMessageRequest {
            message: Message::user_text("hi"),
            ..SendMessageRequest::default()
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_agent_failing_after_its_first_event_leaves_a_failed_task_with_the_reason() {
        for (agent, reason) in [
            (Failing::ErrorAfterWorking, "the model went away"),
            (Failing::PanicAfterWorking, "panicked"),
        ] {
            let handler = handler_with(agent);
            let reply = handler
                .send_message(RequestContext::v1(), send_hi())
                .await
                .unwrap();
            let SendMessageResponse::Task(task) = reply else {
                panic!("{reply:?}");
            };
            assert_eq!(task.status.state, TaskState::Failed);
            let text = task.status.message.as_ref().map(Message::text).unwrap();
            assert!(text.contains(reason), "{text}");
            let stored = handler
                .get_task(
                    RequestContext::v1(),
                    GetTaskRequest {
                        id: task.id.clone(),
                        ..GetTaskRequest::default()
                    },
                )
                .await
                .unwrap();
            assert_eq!(stored.status.state, TaskState::Failed);
            assert_eq!(handler.live_tasks(), 0);
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_agent_failing_before_any_event_is_the_requests_error() {
        let handler = handler_with(Failing::ErrorFirst);
        let err = handler
            .send_message(RequestContext::v1(), send_hi())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no model"), "{err}");
        assert_eq!(handler.live_tasks(), 0);
    }
}

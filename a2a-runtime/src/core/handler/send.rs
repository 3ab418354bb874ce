//! SendMessage and SendStreamingMessage begin a task's turn: the task resolved (created, or
//! loaded and continued), the execution registered, the listener subscribed, and the agent's
//! run made; a blocking SendMessage then drives the run until its answer.

use std::sync::Arc;

use futures::future::{BoxFuture, Either};
use tokio_util::sync::CancellationToken;

use super::super::events::{Listen, Listener, SeqEvent, TaskRuntime, WaitOutcome};
use super::super::executor::{AgentContext, AgentInput, EventSink, ExecutionEnd};
use super::default::DefaultRequestHandler;
use super::default::trim_history;
use super::repeat::Claim;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::Scope;
use crate::types::{
    ContextId, Message, PushConfigId, SendMessageConfiguration, SendMessageRequest,
    SendMessageResponse, Task, TaskId, TaskPushNotificationConfig, TaskState, TaskStatus,
    Timestamp,
};

impl DefaultRequestHandler {
    /// Resolves the task of a message, registers the execution, subscribes, and starts the agent.
    /// A new task without a push config needs no I/O: it is begun by this call and the future is
    /// a ready value; a continued task (read from the store) or a push config (written to its
    /// store) is begun in one boxed future.
    /// `reserved`: the id claimed for a new task (see [`claim`](Self::claim)).
    pub(super) fn start(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
        listen: Listen,
        reserved: Option<TaskId>,
    ) -> Start<'_> {
        self.sweeper.ensure_started();
        self.start_recovery();
        if req.message.task_id.is_empty() && push_config_of(req.configuration.as_ref()).is_none() {
            return Either::Left(std::future::ready(
                self.start_new(ctx, req, listen, reserved),
            ));
        }
        Either::Right(Box::pin(self.start_with_io(ctx, req, listen, reserved)))
    }

    /// [`start`](Self::start) for a new task without a push config.
    fn start_new(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
        listen: Listen,
        reserved: Option<TaskId>,
    ) -> Result<Started, A2aError> {
        let mut message = req.message;
        let execution = self.registry.next_execution_id();
        let token = CancellationToken::new();
        let (rt, listener) = self.create_runtime(
            ctx.scope(),
            &mut message,
            execution,
            token.clone(),
            listen,
            reserved,
        );
        let input = AgentInput {
            request: Arc::new(ctx),
            message,
            task: None,
            configuration: req.configuration,
            metadata: req.metadata,
            recovered: false,
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
        reserved: Option<TaskId>,
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
                reserved,
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
            recovered: false,
            cancel: token,
        };
        Ok(self.launch(input, rt, first, listener, execution))
    }

    /// The runtime of a new task (created by the agent's first event), with ids given to the
    /// message: the `reserved` task id or a fresh one, and a fresh context id unless the
    /// message names one.
    fn create_runtime(
        &self,
        scope: Scope,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
        reserved: Option<TaskId>,
    ) -> (Arc<TaskRuntime>, Listener) {
        // One clock read for both ids and the SUBMITTED status.
        let millis = crate::types::unix_millis();
        let task_id = reserved.unwrap_or_else(|| TaskId::at_millis(millis));
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
        let finish = ExecutionEnd {
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

    /// SendMessage: begins the task at once (a repeated message: answers with the task its
    /// first request started, see [`Idempotency`](super::super::Idempotency)), then waits. The answer comes with the task's JSON
    /// when the store encoded the final task already (the service then sends those bytes).
    pub(crate) fn send(
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
        async move {
            let scope = ctx.scope();
            let reserved = match self.claim(&scope, &req.message).await? {
                Claim::First(reserved) => reserved,
                Claim::Repeat(task_id) => {
                    let answer = self
                        .answer_repeat(&scope, &task_id, history_length, return_immediately)
                        .await?;
                    return Ok((answer, None));
                }
            };
            let message_id = req.message.message_id.clone();
            let start = self.start(ctx, req, listen, reserved.clone());
            let answer = self.answer(start, history_length).await;
            if answer.is_err()
                && let Some(task_id) = reserved
            {
                self.release_claim(&scope, &message_id, &task_id).await;
            }
            answer
        }
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
}

/// The push config a SendMessage asks for.
fn push_config_of(
    configuration: Option<&SendMessageConfiguration>,
) -> Option<&TaskPushNotificationConfig> {
    configuration.and_then(|c| c.task_push_notification_config.as_ref())
}

/// The future of [`DefaultRequestHandler::start`].
pub(super) type Start<'a> =
    Either<std::future::Ready<Result<Started, A2aError>>, BoxFuture<'a, Result<Started, A2aError>>>;

pub(super) struct Started {
    pub(super) rt: Arc<TaskRuntime>,
    /// The snapshot that opens the stream of a continued task.
    // Boxed: rare, and a whole task inline made every `Started` (moved several times per
    // SendMessage) about as large as a task.
    pub(super) first: Option<Box<SeqEvent>>,
    pub(super) listener: Listener,
    pub(super) execution: u64,
    /// The agent's run, not started yet: spawned, or driven by a blocking request.
    pub(super) run: BoxFuture<'static, ()>,
}

/// Drives an agent's run inside the request that waits for it, until the wait is answered; a run
/// still going then (or when the request is dropped, e.g. the client went away) continues as a
/// task of its own. Running the agent inline saves a task spawn and a cross-task wake-up per
/// blocking SendMessage.
async fn run_until_answered(
    run: BoxFuture<'static, ()>,
    mut rx: tokio::sync::oneshot::Receiver<WaitOutcome>,
) -> WaitOutcome {
    let mut detach = SpawnOnDrop(Some(run));
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
struct SpawnOnDrop(Option<BoxFuture<'static, ()>>);

impl Drop for SpawnOnDrop {
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

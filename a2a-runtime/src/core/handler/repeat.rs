//! Repeated SendMessage requests (see [`Idempotency`](super::super::Idempotency)): which
//! message is a repeat, and its answer, the task its first request started.

use std::time::{Duration, Instant};

use futures::StreamExt as _;

use super::super::events::{EventStream, SeqEvent, Subscription, TaskRuntime};
use super::default::{DefaultRequestHandler, trim_history};
use super::stream::{OnFinished, bus_stream, ends_stream, task_stream};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::Scope;
use crate::types::{
    Message, MessageId, SendMessageResponse, StreamResponse, TaskId, TaskState, Timestamp,
};

/// How often a repeat looks again for its first request's task while that one is starting.
const POLL: Duration = Duration::from_millis(20);

/// What a SendMessage's message is.
#[derive(Debug)]
pub(super) enum Claim {
    /// The first request with this message: for a new task, the id claimed for it (`None`:
    /// nothing claimed).
    First(Option<TaskId>),
    /// A repeat of the message that started, or continued, this task.
    Repeat(TaskId),
}

/// A task subscribed to: its runtime, opening snapshot, state and queue.
type Subscribed = (
    std::sync::Arc<TaskRuntime>,
    SeqEvent,
    TaskState,
    Subscription,
);

impl DefaultRequestHandler {
    /// Whether `message`, sent in `scope`, repeats one already served; for a new task, claims
    /// its id (the store decides between racing claims).
    pub(super) async fn claim(&self, scope: &Scope, message: &Message) -> Result<Claim, A2aError> {
        let Some(idem) = &self.sweeper.idempotency else {
            return Ok(Claim::First(None));
        };
        if message.message_id.is_empty() {
            return Ok(Claim::First(None));
        }
        if !message.task_id.is_empty() {
            // A continued task holds the ids of the messages it was sent in its history.
            let Some(rt) = self
                .registry
                .load(self.store.as_ref(), scope, &message.task_id)
                .await?
            else {
                // Answered TaskNotFound by the turn.
                return Ok(Claim::First(None));
            };
            // The same id with the same parts is a retry; with other parts, a client reusing an
            // id for a new message: refused, as before there were repeats.
            let held = rt.snapshot().await.and_then(|t| {
                t.history
                    .iter()
                    .find(|m| m.message_id == message.message_id)
                    .map(|m| m.parts == message.parts)
            });
            self.registry.release(&rt);
            return match held {
                Some(true) => Ok(Claim::Repeat(message.task_id.clone())),
                Some(false) => Err(A2aError::invalid_field(
                    "message.messageId",
                    format!(
                        "task {} already holds another message with id {}; give each new \
                         message a new id",
                        message.task_id,
                        crate::error::quoted(message.message_id.as_str())
                    ),
                )),
                None => Ok(Claim::First(None)),
            };
        }
        let now = crate::types::unix_millis();
        let window = i64::try_from(idem.window.as_millis()).unwrap_or(i64::MAX);
        let since = i64::try_from(now)
            .unwrap_or(i64::MAX)
            .saturating_sub(window);
        let since = Timestamp::from_millis(since.max(0)).unwrap_or_else(Timestamp::now);
        let task_id = TaskId::at_millis(now);
        match self
            .store
            .claim_message(scope, &message.message_id, &task_id, since)
            .await?
        {
            None => Ok(Claim::First(Some(task_id))),
            Some(first) => {
                tracing::debug!(message_id = %message.message_id, task_id = %first, "a repeated SendMessage: answered with its first task");
                Ok(Claim::Repeat(first))
            }
        }
    }

    /// A repeated blocking SendMessage's answer: the task, once in a state that answers a
    /// SendMessage (at once with `return_immediately`).
    pub(super) async fn answer_repeat(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        history_length: Option<i32>,
        return_immediately: bool,
    ) -> Result<SendMessageResponse, A2aError> {
        let (rt, first, state, sub) = self.subscribe_repeat(scope, task_id).await?;
        let answers = |event: &StreamResponse| {
            ends_stream(event)
                || matches!(event, StreamResponse::StatusUpdate(e) if e.status.state == TaskState::AuthRequired)
        };
        let settled =
            return_immediately || state == TaskState::AuthRequired || answers(&first.event);
        let mut task = if settled {
            drop(sub);
            self.registry.release(&rt);
            match first.event {
                StreamResponse::Task(task) => task,
                _ => return Err(A2aError::Internal("a task snapshot was not a task".into())),
            }
        } else {
            let mut events = bus_stream(
                self.registry.clone(),
                self.store.clone(),
                sub,
                None,
                None,
                None,
            );
            while let Some(event) = events.next().await {
                if answers(&event?.event) {
                    break;
                }
            }
            drop(events);
            rt.snapshot().await.ok_or_else(|| {
                A2aError::Internal(format!(
                    "task {task_id} vanished while a repeat waited for it"
                ))
            })?
        };
        trim_history(&mut task, history_length);
        Ok(SendMessageResponse::Task(task))
    }

    /// Gives up the claim of a send that failed (`message_id` for `task_id`) when its task was
    /// never created: a retry is then a first send, not a repeat waiting for a task that will
    /// not come.
    pub(super) async fn release_claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
    ) {
        if matches!(self.store.get(scope, task_id).await, Ok(None))
            && let Err(e) = self
                .store
                .release_message_claim(scope, message_id, task_id)
                .await
        {
            tracing::warn!(error = %e, "cannot release the message claim of a failed send");
        }
    }

    /// A repeated SendStreamingMessage's answer: the task's stream as SubscribeToTask opens it
    /// (resumable with `Last-Event-ID`), a finished task's snapshot alone.
    pub(super) async fn stream_repeat(
        &self,
        ctx: &RequestContext,
        task_id: &TaskId,
    ) -> Result<EventStream, A2aError> {
        let resume_after = ctx.resume_after;
        let (_, first, state, sub) = self.subscribe_repeat(&ctx.scope(), task_id).await?;
        task_stream(
            self.registry.clone(),
            self.store.clone(),
            (first, state, sub),
            resume_after,
            OnFinished::Snapshot,
        )
    }

    /// The first request's task subscribed to, once it exists (waiting for it up to
    /// [`Idempotency::wait_for_task`](super::super::Idempotency::wait_for_task)).
    async fn subscribe_repeat(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Subscribed, A2aError> {
        let wait = self
            .sweeper
            .idempotency
            .as_ref()
            .map_or(Duration::ZERO, |i| i.wait_for_task);
        let deadline = Instant::now() + wait;
        loop {
            if let Some(rt) = self
                .registry
                .load(self.store.as_ref(), scope, task_id)
                .await?
            {
                if let Some((first, state, sub)) = rt.snapshot_and_subscribe().await {
                    return Ok((rt, first, state, sub));
                }
                self.registry.release(&rt);
            }
            if Instant::now() >= deadline {
                return Err(A2aError::invalid_field(
                    "message.messageId",
                    format!(
                        "this message was sent before and started task {task_id}, which has no \
                         state to answer with (its agent answered with a message alone, or has \
                         not published yet); send a new messageId to start another task"
                    ),
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

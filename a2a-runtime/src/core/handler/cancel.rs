//! CancelTask on a live task: the agent's cancel hook, then CANCELED written against concurrent
//! writers.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt as _;

use super::super::events::TaskRuntime;
use super::super::executor::{AgentContext, AgentInput, EventSink};
use super::default::DefaultRequestHandler;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::types::{CancelTaskRequest, Message, Task, TaskState};

/// How often a CancelTask writes CANCELED against concurrent writers before it gives up.
const CANCEL_ATTEMPTS: usize = 4;

impl DefaultRequestHandler {
    pub(super) async fn cancel_on(
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
                recovered: false,
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

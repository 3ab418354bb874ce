//! A new turn on an existing task: the user's message joins the history, and the turn's start
//! is logged, under the task's lock.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::listeners::Listen;
use super::runtime::{Listener, TaskRuntime};
use super::state::live_task_gone;
use crate::core::lifecycle::{self, HistoryPolicy};
use crate::error::A2aError;
use crate::store::SeqEvent;
use crate::store::TaskStore;
use crate::store::immediate::Write;
use crate::types::{Message, StreamResponse, Task};

impl TaskRuntime {
    /// Starts a new turn on an existing task: checks it can take a message, appends the user
    /// message to the history, registers the execution and the listener — all under the lock,
    /// so a stream's opening snapshot (returned for [`Listen::Stream`]) is exactly the state
    /// before the turn's first event.
    pub(crate) async fn begin_turn(
        self: &Arc<Self>,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> Result<(Option<SeqEvent>, Listener), A2aError> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let version = st.version;
        let Some(current) = st.task.as_mut() else {
            return Err(A2aError::TaskNotFound {
                task_id: self.id.to_string(),
            });
        };
        let current = Arc::make_mut(current);
        if current.status.state.is_terminal() {
            return Err(A2aError::UnsupportedOperation(format!(
                "task {} is {} (terminal) and accepts no more messages; start a new task in context {}",
                current.id, current.status.state, current.context_id
            )));
        }
        if !message.context_id.is_empty() && message.context_id != current.context_id {
            return Err(A2aError::invalid_field(
                "message.contextId",
                format!(
                    "{} does not match the context {} of task {}",
                    message.context_id, current.context_id, current.id
                ),
            ));
        }
        // A turn whose message id the task already holds would run but vanish from the
        // history (which keeps one entry per id): refuse it, as the spec allows.
        if current
            .history
            .iter()
            .any(|m| m.message_id == message.message_id)
        {
            return Err(A2aError::invalid_field(
                "message.messageId",
                format!(
                    "{} was already sent to task {}; give each message a new id",
                    message.message_id, current.id
                ),
            ));
        }
        message.context_id = current.context_id.clone();
        lifecycle::push_history(current, message.clone(), policy);
        // The turn's start is logged as the task it leaves, as a stream's opening snapshot.
        let turn = Arc::new(SeqEvent {
            seq: version + 1,
            event: StreamResponse::Task(current.clone()),
        });
        let Some(task) = st.task.as_ref() else {
            return Err(live_task_gone());
        };
        let written = match store.immediate() {
            // MemoryTask shared with the runtime, as every write of this store's runtimes.
            Some(memory) => {
                let write = Write::Update {
                    expected_version: version,
                    delta: None,
                };
                memory.write_now(&self.scope, task, None, write, Some(turn.clone()))
            }
            None => {
                store
                    .update(&self.scope, task, version, Some(&turn.event))
                    .await
            }
        };
        let version = match written {
            Ok(v) => v,
            Err(e) => {
                self.reload(st, store).await;
                return Err(e.into());
            }
        };
        st.version = version;
        // The turn's start is a logged event: push is told of it (its deliveries were written
        // with it), as of every other.
        st.tap(version, &turn.event);
        let first = match (&st.task, listen) {
            (Some(task), Listen::Stream) => Some(SeqEvent {
                seq: version,
                event: StreamResponse::Task(Task::clone(task)),
            }),
            _ => None,
        };
        self.start_execution(st, execution, token);
        let listener = self.listen(st, listen, execution);
        Ok((first, listener))
    }
}

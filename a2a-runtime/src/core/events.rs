//! Per-task ordered event streams.
//!
//! Each live task has one [`TaskRuntime`]: the task as it stands, its version, and a broadcast
//! channel. Every event an agent publishes is applied to the task, written to the store, and
//! broadcast with a sequence number (the task's version after the write) while the task is
//! locked, so every subscriber sees the same events in the same order and a snapshot taken with a
//! subscription is exactly the state before the next event.
//!
//! Slow subscribers never stall the agent or each other: each subscriber has a bounded buffer
//! ([`Limits::subscriber_buffer`](crate::core::Limits::subscriber_buffer) events); a subscriber
//! that falls further behind gets an error item and its stream ends (the client resubscribes to
//! get the task as it stands). Other subscribers and the agent are unaffected.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::lifecycle::{self, HistoryPolicy, LifecycleError};
use crate::error::A2aError;
use crate::extension::Negotiated;
use crate::store::{Scope, TaskStore};
use crate::types::{Message, StreamResponse, Task, TaskId, TaskState, TaskStatus};

/// One event of a task's stream, with its sequence number (strictly increasing per task).
#[derive(Clone, Debug, PartialEq)]
pub struct SeqEvent {
    /// The per-task sequence number (used as the SSE `id:`).
    pub seq: u64,
    /// The event.
    pub event: StreamResponse,
}

/// A stream of task events, as returned by the streaming operations.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<SeqEvent, A2aError>> + Send>>;

/// What travels on a task's broadcast channel.
#[derive(Clone, Debug)]
pub(crate) enum BusItem {
    Event(Arc<SeqEvent>),
    /// An execution of the agent returned (with its error, if it failed before any event).
    ExecutionEnded {
        execution: u64,
        error: Option<A2aError>,
    },
}

#[derive(Debug)]
pub(crate) struct RuntimeState {
    /// The task; `None` until the agent's first event creates it.
    pub(crate) task: Option<Task>,
    /// The store version of `task` (also the sequence number of its last event).
    pub(crate) version: u64,
    /// A template for a task not created yet: ids and the user message that started it.
    pub(crate) pending: Option<Task>,
    /// True once a direct Message reply was published (no task will exist).
    pub(crate) replied: bool,
    /// Executions currently running, with their cancellation tokens.
    pub(crate) running: Vec<(u64, CancellationToken)>,
}

/// The live state of one task.
#[derive(Debug)]
pub(crate) struct TaskRuntime {
    pub(crate) scope: Scope,
    pub(crate) id: TaskId,
    pub(crate) state: tokio::sync::Mutex<RuntimeState>,
    tx: broadcast::Sender<BusItem>,
    /// Executions running now (mirrors `RuntimeState::running`, readable without the lock).
    executions: std::sync::atomic::AtomicUsize,
}

impl TaskRuntime {
    fn new(scope: Scope, id: TaskId, state: RuntimeState, buffer: usize) -> Self {
        let (tx, _) = broadcast::channel(buffer.max(1));
        Self {
            scope,
            id,
            state: tokio::sync::Mutex::new(state),
            tx,
            executions: Default::default(),
        }
    }

    /// Registers a running execution (call with the state locked).
    pub(crate) fn start_execution(
        &self,
        st: &mut RuntimeState,
        execution: u64,
        token: CancellationToken,
    ) {
        st.running.push((execution, token));
        self.executions.fetch_add(1, Ordering::SeqCst);
    }

    /// Unregisters a finished execution and tells the listeners.
    pub(crate) async fn finish_execution(&self, execution: u64, error: Option<A2aError>) {
        {
            let mut st = self.state.lock().await;
            st.running.retain(|(x, _)| *x != execution);
        }
        self.executions.fetch_sub(1, Ordering::SeqCst);
        self.send(BusItem::ExecutionEnded { execution, error });
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<BusItem> {
        self.tx.subscribe()
    }

    fn send(&self, item: BusItem) {
        // No receiver is fine: nobody is listening.
        let _ = self.tx.send(item);
    }

    /// Applies an agent's event: creates the task on its first event, checks the lifecycle,
    /// writes the store, then broadcasts. Returns the event's sequence number.
    pub(crate) async fn publish(
        &self,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        extensions: &Negotiated,
        mut event: StreamResponse,
    ) -> Result<u64, A2aError> {
        let mut st = self.state.lock().await;
        if st.replied {
            return Err(LifecycleError::MessageAfterTask.into());
        }
        let Some(current) = st.task.as_ref() else {
            return self
                .publish_first(&mut st, store, policy, extensions, event)
                .await;
        };
        if let StreamResponse::Message(_) = event {
            return Err(LifecycleError::MessageAfterTask.into());
        }
        let mut next = current.clone();
        check_extensions(extensions, &current.status, &event)?;
        lifecycle::apply_event(&mut next, &mut event, policy)?;
        let version = store.update(&self.scope, &next, st.version).await?;
        st.task = Some(next);
        st.version = version;
        self.send(BusItem::Event(Arc::new(SeqEvent {
            seq: version,
            event,
        })));
        Ok(version)
    }

    async fn publish_first(
        &self,
        st: &mut RuntimeState,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        extensions: &Negotiated,
        mut event: StreamResponse,
    ) -> Result<u64, A2aError> {
        let template = st.pending.clone().unwrap_or_else(|| Task {
            id: self.id.clone(),
            ..Task::default()
        });
        if let StreamResponse::Message(m) = &mut event {
            if m.context_id.is_empty() {
                m.context_id = template.context_id.clone();
            }
            st.replied = true;
            self.send(BusItem::Event(Arc::new(SeqEvent { seq: 1, event })));
            return Ok(1);
        }
        let mut task = template;
        if let StreamResponse::Task(t) = &mut event {
            if !t.id.is_empty() && t.id != task.id {
                return Err(LifecycleError::WrongTask {
                    task: task.id.to_string(),
                    context: task.context_id.to_string(),
                    event_task: t.id.to_string(),
                    event_context: t.context_id.to_string(),
                }
                .into());
            }
            t.id = task.id.clone();
            t.context_id = task.context_id.clone();
            if t.status.state == TaskState::Unspecified {
                t.status.state = TaskState::Submitted;
            }
        }
        if let StreamResponse::Task(_) = event {
            check_extensions(extensions, &task.status, &event)?;
            lifecycle::apply_event(&mut task, &mut event, policy)?;
            let version = store.create(&self.scope, &task).await?;
            st.task = Some(task.clone());
            st.pending = None;
            st.version = version;
            let seq = SeqEvent {
                seq: version,
                event: StreamResponse::Task(task),
            };
            self.send(BusItem::Event(Arc::new(seq)));
            return Ok(version);
        }
        // Subscribers see the created task first (as it was before this event), then the event.
        let before = task.clone();
        check_extensions(extensions, &task.status, &event)?;
        lifecycle::apply_event(&mut task, &mut event, policy)?;
        let version = store.create(&self.scope, &task).await?;
        st.task = Some(task);
        st.pending = None;
        st.version = version;
        let snapshot = SeqEvent {
            seq: version.saturating_sub(1),
            event: StreamResponse::Task(before),
        };
        self.send(BusItem::Event(Arc::new(snapshot)));
        self.send(BusItem::Event(Arc::new(SeqEvent {
            seq: version,
            event,
        })));
        Ok(version)
    }

    /// Starts a new turn on an existing task: checks it can take a message, appends the user
    /// message to the history, registers the execution, and subscribes — all under the lock, so
    /// the returned snapshot is exactly the state before the turn's first event.
    pub(crate) async fn begin_turn(
        &self,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
    ) -> Result<(SeqEvent, broadcast::Receiver<BusItem>), A2aError> {
        let mut st = self.state.lock().await;
        let Some(current) = st.task.as_ref() else {
            return Err(A2aError::TaskNotFound {
                task_id: self.id.to_string(),
            });
        };
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
        message.context_id = current.context_id.clone();
        let mut next = current.clone();
        lifecycle::push_history(&mut next, message.clone(), policy);
        let version = store.update(&self.scope, &next, st.version).await?;
        st.task = Some(next.clone());
        st.version = version;
        self.start_execution(&mut st, execution, token);
        let rx = self.tx.subscribe();
        Ok((
            SeqEvent {
                seq: version,
                event: StreamResponse::Task(next),
            },
            rx,
        ))
    }

    /// Subscribes to an existing task: the current snapshot and a receiver for what follows.
    pub(crate) async fn snapshot_and_subscribe(
        &self,
    ) -> Option<(SeqEvent, TaskState, broadcast::Receiver<BusItem>)> {
        let st = self.state.lock().await;
        let task = st.task.as_ref()?;
        let rx = self.tx.subscribe();
        let state = task.status.state;
        Some((
            SeqEvent {
                seq: st.version,
                event: StreamResponse::Task(task.clone()),
            },
            state,
            rx,
        ))
    }

    /// The task as it stands (`None` before the first event).
    pub(crate) async fn snapshot(&self) -> Option<Task> {
        self.state.lock().await.task.clone()
    }
}

/// Lets the active extensions check a status change (state-machine extensions).
fn check_extensions(
    extensions: &Negotiated,
    from: &TaskStatus,
    event: &StreamResponse,
) -> Result<(), A2aError> {
    if extensions.activated.is_empty() {
        return Ok(());
    }
    let to = match event {
        StreamResponse::StatusUpdate(e) => &e.status,
        StreamResponse::Task(t) => &t.status,
        _ => return Ok(()),
    };
    extensions.check_transition(from, to)
}

/// The live runtimes, keyed by scope and task id.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    live: Mutex<HashMap<(Scope, TaskId), Arc<TaskRuntime>>>,
    next_execution: AtomicU64,
    buffer: usize,
}

impl Registry {
    pub(crate) fn new(buffer: usize) -> Self {
        Self {
            live: Mutex::default(),
            next_execution: AtomicU64::new(1),
            buffer,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Scope, TaskId), Arc<TaskRuntime>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_execution_id(&self) -> u64 {
        self.next_execution.fetch_add(1, Ordering::Relaxed)
    }

    /// A runtime for a task that does not exist yet (created by the agent's first event).
    pub(crate) fn create(&self, scope: &Scope, template: Task) -> Arc<TaskRuntime> {
        let id = template.id.clone();
        let rt = Arc::new(TaskRuntime::new(
            scope.clone(),
            id.clone(),
            RuntimeState {
                task: None,
                version: 0,
                pending: Some(template),
                replied: false,
                running: Vec::new(),
            },
            self.buffer,
        ));
        self.lock().insert((scope.clone(), id), rt.clone());
        rt
    }

    /// The runtime of an existing task, loading it from the store when it is not live.
    /// `None` when the task does not exist in `scope`.
    pub(crate) async fn load(
        &self,
        store: &dyn TaskStore,
        scope: &Scope,
        id: &TaskId,
    ) -> Result<Option<Arc<TaskRuntime>>, A2aError> {
        let key = (scope.clone(), id.clone());
        if let Some(rt) = self.lock().get(&key) {
            return Ok(Some(rt.clone()));
        }
        let Some(stored) = store.get(scope, id).await? else {
            return Ok(None);
        };
        let rt = Arc::new(TaskRuntime::new(
            scope.clone(),
            id.clone(),
            RuntimeState {
                task: Some(stored.task),
                version: stored.version,
                pending: None,
                replied: false,
                running: Vec::new(),
            },
            self.buffer,
        ));
        Ok(Some(self.lock().entry(key).or_insert(rt).clone()))
    }

    /// Forgets a runtime that nobody uses any more (no execution, no subscriber): the store
    /// holds the task, and the runtime is rebuilt from it when needed.
    pub(crate) fn release(&self, rt: &Arc<TaskRuntime>) {
        if rt.executions.load(Ordering::SeqCst) == 0 && rt.tx.receiver_count() == 0 {
            let mut live = self.lock();
            let key = (rt.scope.clone(), rt.id.clone());
            if live.get(&key).is_some_and(|x| Arc::ptr_eq(x, rt)) {
                live.remove(&key);
            }
        }
    }

    /// The number of live runtimes (for tests and metrics).
    pub(crate) fn live_count(&self) -> usize {
        self.lock().len()
    }
}

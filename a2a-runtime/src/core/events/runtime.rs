//! [`TaskRuntime`]: one live task, its executions and its listeners' ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::listeners::{BusItem, Listen, Receiving, WaitOutcome};
use super::state::RuntimeState;
use crate::error::A2aError;
use crate::store::Scope;
use crate::store::SeqEvent;
use crate::types::{StreamResponse, Task, TaskId, TaskState};

/// The listening end a request got.
#[derive(Debug)]
pub(crate) enum Listener {
    Stream(Subscription),
    Wait(oneshot::Receiver<WaitOutcome>),
    Nothing,
}

/// A stream's queue of a task's events. Dropping it stops the delivery.
#[derive(Debug)]
pub(crate) struct Subscription {
    pub(super) rx: mpsc::Receiver<BusItem>,
    pub(super) rt: Arc<TaskRuntime>,
}

impl Subscription {
    /// The next item; `None` once the runtime stopped delivering (after [`BusItem::Lagged`]).
    pub(crate) async fn recv(&mut self) -> Option<BusItem> {
        self.rx.recv().await
    }

    /// The runtime this subscription listens to.
    pub(crate) fn runtime(&self) -> &Arc<TaskRuntime> {
        &self.rt
    }

    /// How many events the queue holds before the subscriber counts as lagging.
    pub(crate) fn buffer(&self) -> usize {
        self.rt.buffer
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // The stream went away (its client disconnected, or it ended): its queue leaves the
        // task now when the task is not busy (else at the next event or subscription), so
        // that a quiet task does not keep the queues of departed subscribers.
        self.rx.close();
        if let Ok(mut st) = self.rt.state.try_lock() {
            st.subscribers.retain(|q| !q.tx.is_closed());
        }
        self.rt.listeners.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The live state of one task.
#[derive(Debug)]
pub(crate) struct TaskRuntime {
    pub(crate) scope: Scope,
    pub(crate) id: TaskId,
    pub(crate) state: tokio::sync::Mutex<RuntimeState>,
    /// Executions running now (mirrors `RuntimeState::running`, readable without the lock).
    pub(super) executions: AtomicUsize,
    /// Subscriptions alive now.
    pub(super) listeners: AtomicUsize,
    /// Each subscriber's queue length.
    pub(super) buffer: usize,
    /// The registry's count of subscriber queues.
    pub(super) queues: Arc<AtomicUsize>,
}

impl TaskRuntime {
    pub(super) fn new(
        scope: Scope,
        id: TaskId,
        state: RuntimeState,
        buffer: usize,
        queues: Arc<AtomicUsize>,
    ) -> Self {
        Self {
            scope,
            id,
            state: tokio::sync::Mutex::new(state),
            executions: AtomicUsize::new(0),
            listeners: AtomicUsize::new(0),
            buffer: buffer.max(1),
            queues,
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

    /// Registers a listener of `kind` for `execution` (call with the state locked, so it misses
    /// nothing published after).
    pub(crate) fn listen(
        self: &Arc<Self>,
        st: &mut RuntimeState,
        kind: Listen,
        execution: u64,
    ) -> Listener {
        self.attach(st.register(kind, execution, self.buffer, &self.queues))
    }

    /// The listener for what [`register`] set up.
    pub(super) fn attach(self: &Arc<Self>, receiving: Receiving) -> Listener {
        match receiving {
            Receiving::Stream(rx) => {
                self.listeners.fetch_add(1, Ordering::SeqCst);
                Listener::Stream(Subscription {
                    rx,
                    rt: self.clone(),
                })
            }
            Receiving::Wait(rx) => Listener::Wait(rx),
            Receiving::Nothing => Listener::Nothing,
        }
    }

    /// A new subscriber's queue (call with the state locked).
    pub(super) fn subscribe(self: &Arc<Self>, st: &mut RuntimeState) -> Subscription {
        let rx = st.open_queue(self.buffer, &self.queues);
        self.listeners.fetch_add(1, Ordering::SeqCst);
        Subscription {
            rx,
            rt: self.clone(),
        }
    }

    /// Unregisters a finished execution and tells its listeners.
    pub(crate) async fn finish_execution(&self, execution: u64, error: Option<A2aError>) {
        {
            let mut st = self.state.lock().await;
            // An execution that returned because its task is being canceled: the canceling
            // request publishes the final state next, and that answers the wait (a blocking
            // SendMessage must not report the task as still working).
            let canceling = error.is_none()
                && st.task.as_ref().is_some_and(|t| {
                    !t.status.state.is_terminal() && !t.status.state.is_interrupted()
                })
                && st
                    .running
                    .iter()
                    .any(|(x, token)| *x == execution && token.is_cancelled());
            st.running.retain(|(x, _)| *x != execution);
            if !st.waiters.is_empty() {
                let mut i = 0;
                while i < st.waiters.len() {
                    if st.waiters[i].execution != execution || canceling {
                        i += 1;
                        continue;
                    }
                    let w = st.waiters.swap_remove(i);
                    let outcome = match (&error, &st.task) {
                        (Some(e), _) => WaitOutcome::Failed(e.clone()),
                        (None, Some(task)) => WaitOutcome::Task(task.clone(), None),
                        (None, None) => WaitOutcome::Failed(A2aError::Internal(
                            "the agent ended without publishing anything".into(),
                        )),
                    };
                    let _ = w.tx.send(outcome);
                }
            }
            if st.has_subscribers() {
                st.deliver(BusItem::ExecutionEnded { execution, error });
            }
        }
        self.executions.fetch_sub(1, Ordering::SeqCst);
    }

    /// Answers, with the task as it stands, the waiters whose execution is no longer running
    /// (left by [`finish_execution`](Self::finish_execution) for a cancel that has now applied
    /// the final state, or failed to).
    pub(crate) async fn answer_finished_waiters(&self) {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let mut i = 0;
        while i < st.waiters.len() {
            let execution = st.waiters[i].execution;
            if st.running.iter().any(|(x, _)| *x == execution) {
                i += 1;
                continue;
            }
            let w = st.waiters.swap_remove(i);
            let outcome = match &st.task {
                Some(task) => WaitOutcome::Task(task.clone(), None),
                None => WaitOutcome::Failed(A2aError::Internal(
                    "the task was canceled before it was created".into(),
                )),
            };
            let _ = w.tx.send(outcome);
        }
    }

    /// Subscribes to an existing task: the current snapshot and a queue for what follows.
    pub(crate) async fn snapshot_and_subscribe(
        self: &Arc<Self>,
    ) -> Option<(SeqEvent, TaskState, Subscription)> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let task = st.task.as_ref()?;
        let state = task.status.state;
        let snapshot = SeqEvent {
            seq: st.version,
            event: StreamResponse::Task(Task::clone(task)),
        };
        let sub = self.subscribe(st);
        Some((snapshot, state, sub))
    }

    /// A new queue for a subscriber that fell behind, with the sequence number it starts
    /// after (`None` before the task exists).
    pub(crate) async fn resubscribe(self: &Arc<Self>) -> Option<(u64, Subscription)> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        st.task.as_ref()?;
        let version = st.version;
        Some((version, self.subscribe(st)))
    }

    /// The task as it stands (`None` before the first event).
    pub(crate) async fn snapshot(&self) -> Option<Task> {
        self.state.lock().await.task.as_deref().cloned()
    }
}

//! The state of a live task under its lock: the task, its version, its running executions,
//! and its listeners, with the delivery of an event to them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use smallvec::SmallVec;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::listeners::{BusItem, Listen, Queue, Receiving, WaitOutcome, Waiter, ends_wait};
use crate::core::push::PushDispatcher;
use crate::error::A2aError;
use crate::store::Scope;
use crate::types::{StreamResponse, Task, TaskId};

#[derive(Debug)]
pub(crate) struct RuntimeState {
    /// The task; `None` until the agent's first event creates it. Shared (copy on write) with
    /// the blocking requests it answered and with a store that holds it through immediate
    /// writes (the in-memory store), so that neither costs a copy.
    pub(crate) task: Option<Arc<Task>>,
    /// The store version of `task` (also the sequence number of its last event).
    pub(crate) version: u64,
    /// A template for a task not created yet: ids and the user message that started it (in
    /// the allocation it will live in once created).
    pub(crate) pending: Option<Arc<Task>>,
    /// True once a direct Message reply was published (no task will exist).
    pub(crate) replied: bool,
    /// Executions currently running, with their cancellation tokens (the usual one inline: no
    /// allocation per task).
    pub(crate) running: SmallVec<[(u64, CancellationToken); 1]>,
    /// The queues of the streams listening to this task.
    pub(super) subscribers: Vec<Queue>,
    /// Blocking requests waiting for an execution.
    pub(super) waiters: SmallVec<[Waiter; 1]>,
    /// Where the task's events go for push notifications (`None` when push is off).
    pub(super) push: Option<Box<PushTap>>,
}

/// A task's tap to the push dispatcher: every delivered event also goes there.
#[derive(Debug)]
pub(super) struct PushTap {
    pub(super) dispatcher: Arc<dyn PushDispatcher>,
    pub(super) scope: Scope,
    pub(super) id: TaskId,
}

impl RuntimeState {
    pub(super) fn new(task: Option<Task>, version: u64, pending: Option<Task>) -> Self {
        Self {
            task: task.map(Arc::new),
            version,
            pending: pending.map(Arc::new),
            replied: false,
            running: SmallVec::new(),
            subscribers: Vec::new(),
            waiters: SmallVec::new(),
            push: None,
        }
    }

    /// True when someone will receive a delivered event (a subscriber, or push).
    pub(super) fn has_subscribers(&self) -> bool {
        !self.subscribers.is_empty() || self.push.is_some()
    }

    /// Hands an event to push, when it is on.
    pub(super) fn tap(&self, seq: u64, event: &StreamResponse) {
        if let Some(tap) = &self.push {
            tap.dispatcher.dispatch(&tap.scope, &tap.id, seq, event);
        }
    }

    /// Hands `item` to every subscriber; one whose queue is full gets [`BusItem::Lagged`] in its
    /// last slot and is dropped, one that went away is forgotten.
    pub(super) fn deliver(&mut self, item: BusItem) {
        if let BusItem::Event(ev) = &item {
            self.tap(ev.seq, &ev.event);
        }
        self.send_to_subscribers(item);
    }

    /// Hands `item` to every subscriber, as [`deliver`](Self::deliver) does, without push.
    pub(super) fn send_to_subscribers(&mut self, item: BusItem) {
        self.subscribers.retain(|Queue { tx, .. }| {
            if tx.capacity() <= 1 {
                let _ = tx.try_send(BusItem::Lagged);
                return false;
            }
            tx.try_send(item.clone()).is_ok()
        });
    }

    /// Answers the waiters whose wait this event ends (the first gets `reply`, the event's
    /// encoded result from [`reply_for`]).
    pub(super) fn resolve_waiters(&mut self, event: &StreamResponse, reply: Option<Vec<u8>>) {
        if self.waiters.is_empty() {
            return;
        }
        let mut reply = reply.map(bytes::Bytes::from);
        let ends = ends_wait(event);
        let mut i = 0;
        while i < self.waiters.len() {
            if ends || self.waiters[i].until_created {
                let w = self.waiters.swap_remove(i);
                let outcome = match (event, &self.task) {
                    (StreamResponse::Message(m), _) => WaitOutcome::Message(m.clone()),
                    (_, Some(task)) => WaitOutcome::Task(task.clone(), reply.take()),
                    (_, None) => {
                        WaitOutcome::Failed(A2aError::Internal("the task was not created".into()))
                    }
                };
                let _ = w.tx.send(outcome);
            } else {
                i += 1;
            }
        }
    }

    /// A new queue of `buffer` events for a subscriber (the receiving end is returned).
    pub(super) fn open_queue(
        &mut self,
        buffer: usize,
        count: &Arc<AtomicUsize>,
    ) -> mpsc::Receiver<BusItem> {
        // The queues of subscribers that went away without an event since (their connection
        // closed while the task was quiet) go now: a quiet task does not collect them.
        self.subscribers.retain(|q| !q.tx.is_closed());
        // One slot more than the buffer: the last one carries `Lagged`.
        let (tx, rx) = mpsc::channel(buffer + 1);
        count.fetch_add(1, Ordering::Relaxed);
        self.subscribers.push(Queue {
            tx,
            count: count.clone(),
        });
        rx
    }

    /// Registers a listener of `kind` for `execution`.
    pub(super) fn register(
        &mut self,
        kind: Listen,
        execution: u64,
        buffer: usize,
        queues: &Arc<AtomicUsize>,
    ) -> Receiving {
        match kind {
            Listen::Stream => Receiving::Stream(self.open_queue(buffer, queues)),
            Listen::Wait { until_created } => {
                let (tx, rx) = oneshot::channel();
                self.waiters.push(Waiter {
                    execution,
                    until_created,
                    tx,
                });
                Receiving::Wait(rx)
            }
            Listen::Nothing => Receiving::Nothing,
        }
    }
}

/// The error of a write whose live task is not there (it is once the task exists).
pub(super) fn live_task_gone() -> A2aError {
    A2aError::Internal("the live task went away".into())
}

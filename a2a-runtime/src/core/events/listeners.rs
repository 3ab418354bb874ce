//! What a task's listeners receive, and the queue a subscriber receives it through: every
//! event for a stream, one answer for a blocking SendMessage.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{mpsc, oneshot};

use crate::error::A2aError;
use crate::store::SeqEvent;
use crate::types::{Message, StreamResponse, Task};

/// What a subscriber receives.
#[derive(Clone, Debug)]
pub(crate) enum BusItem {
    Event(Arc<SeqEvent>),
    /// An execution of the agent returned (with its error, if it failed before any event).
    ExecutionEnded {
        execution: u64,
        error: Option<A2aError>,
    },
    /// The subscriber fell more than its buffer behind; nothing follows.
    Lagged,
}

/// How a blocking SendMessage's wait ended.
#[derive(Debug)]
pub(crate) enum WaitOutcome {
    /// The agent replied with a direct message.
    Message(Message),
    /// The task as it stood when the wait ended (shared with the runtime until it changes),
    /// and the SendMessage result `{"task":…}` when the runtime encoded it (see
    /// [`reply_for`]).
    Task(Arc<Task>, Option<bytes::Bytes>),
    /// The agent failed before publishing anything.
    Failed(A2aError),
}

/// A blocking SendMessage waiting for its execution.
#[derive(Debug)]
pub(super) struct Waiter {
    pub(super) execution: u64,
    /// Answer as soon as the task exists (`returnImmediately` on a new task).
    pub(super) until_created: bool,
    pub(super) tx: oneshot::Sender<WaitOutcome>,
}

/// What a request listens to while the agent runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listen {
    /// Every event (a stream).
    Stream,
    /// The end of the execution (a blocking SendMessage); with `until_created`, the task's
    /// creation is enough.
    Wait { until_created: bool },
    /// Nothing (`returnImmediately` on an existing task).
    Nothing,
}

/// The receiving end of a listener, before it is tied to its runtime.
pub(super) enum Receiving {
    Stream(mpsc::Receiver<BusItem>),
    Wait(oneshot::Receiver<WaitOutcome>),
    Nothing,
}

/// A subscriber's sending end, counted in its registry while it exists.
#[derive(Debug)]
pub(super) struct Queue {
    pub(super) tx: mpsc::Sender<BusItem>,
    pub(super) count: Arc<AtomicUsize>,
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Does this event end a blocking SendMessage wait? Terminal and interrupted states, and messages.
pub(crate) fn ends_wait(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => t.status.state.is_terminal() || t.status.state.is_interrupted(),
        StreamResponse::StatusUpdate(e) => {
            e.status.state.is_terminal() || e.status.state.is_interrupted()
        }
        StreamResponse::ArtifactUpdate(_) => false,
    }
}
